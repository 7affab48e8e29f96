"""Presentation without Streamlit: Plotly figures and the session exports (HTML, Markdown, CSV,
JSON). The pages draw these figures and the HTML report embeds the same ones.

Layering: ui/ and pages/ use this package; it reads lab/ records; lab/ never imports it.
Built for a projector: large fonts, thick lines, one colour per strategy everywhere.
"""
