"""A page for the browser test: a Markdown file ($MEMORY_LAB_TEST_MARKDOWN) rendered by a
Markdown renderer as a reader would open an export (Streamlit's GFM, HTML off)."""

import os
from pathlib import Path

import streamlit as st

with st.container(key="export"):
    st.markdown(Path(os.environ["MEMORY_LAB_TEST_MARKDOWN"]).read_text(encoding="utf-8"))
