"""The lab's engines: fact survival, the token-growth simulator, transcript import and replay.

May import: memory/, providers/, scenarios/, lanes/, storage/. Never streamlit, ui/, present/.
"""
