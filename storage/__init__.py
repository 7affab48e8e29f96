"""Saved sessions and sweeps: tables, migrations, the record codec, the repository, the live
tracker, the sweep store. One way down the chain (see storage/store.py, the one public face
the rest of the app imports).

May import: memory/, providers/, lanes/. Never streamlit, ui/, present/, engines/.
"""
