"""Running memory strategies against providers: a lane, a session of lanes, background jobs,
and binding a provider preset to the callables the engines take.

May import: memory/, providers/, scenarios/. Never streamlit, ui/, present/, storage/, engines/.
"""
