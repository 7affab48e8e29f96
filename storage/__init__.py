"""Saved sessions and sweeps: schema and migrations, redaction, the repository, the live
tracker, the sweep store.

May import: memory/, providers/, lanes/. Never streamlit, ui/, present/, engines/.
"""
