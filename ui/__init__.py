"""Streamlit widgets, layout and drawing for app.py and pages/ (the only UI layer).

May import: anything in the project, and streamlit.
"""
