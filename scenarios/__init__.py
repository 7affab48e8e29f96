"""Demo conversations and filler text: the FinCoach fixtures and the filler bank.

May import: memory/ only. Pure data and text, no network, no UI.
"""
