"""The command-line front end over the same engines as the pages (`python -m cli`).

May import: anything but streamlit and ui/.
"""
