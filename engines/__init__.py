"""The lab's engines: fact survival, the token-growth simulator, the long-recall benchmark,
the auto-tuner, batch sweeps, transcript import and replay.

May import: memory/, providers/, scenarios/, lanes/, storage/. Never streamlit, ui/, present/.
"""
