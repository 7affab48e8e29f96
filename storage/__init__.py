"""Saved sessions: schema and migrations, redaction, the repository, the live tracker.

May import: memory/, providers/, lanes/. Never streamlit, ui/, present/, engines/.
"""
