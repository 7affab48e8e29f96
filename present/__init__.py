"""Presentation without Streamlit: Plotly figures and the session exports (HTML, Markdown, CSV,
JSON). The pages draw these figures and the HTML report embeds the same ones.

May import: memory/, providers/, scenarios/, lanes/, storage/, engines/. Never streamlit, ui/.
Built for a projector: large fonts, thick lines, one colour per strategy everywhere.
"""
