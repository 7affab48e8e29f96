"""Conversations as data: the FinCoach fixtures, the filler bank, long-memory conversations
and questions (and their generated world), and the one transcript parser.

May import: memory/ only. Pure data and text, no network, no UI.
"""
