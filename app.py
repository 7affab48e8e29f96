"""Memory Lab: `streamlit run app.py`. The pages and their titles are in ui/navigation.py;
the main page, "Compare strategies", is pages/0_Compare_strategies.py."""

from __future__ import annotations

import streamlit as st

from ui import navigation

st.set_page_config(page_title="Memory Lab", page_icon="🧠", layout="wide")
navigation.run()
