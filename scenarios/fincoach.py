"""FinCoach, the worked example of seed 000: its system prompt, demo turns and simulated turns.

These texts are fixtures: the seed's token tables are reproduced from them exactly
(o200k_base: the system prompt is 132 tokens). docs/seed-figures.md quotes them, with the source.
"""

from __future__ import annotations

SYSTEM_PROMPT = "You are FinCoach, a personal financial advisor assistant.\nYou serve users in India who want guidance on savings, investments, budgeting, and financial planning.\n\nYour principles:\n- Always personalise advice using information the user has shared in this conversation.\n- Be specific with numbers when the user has provided their financial details.\n- Flag when you are making assumptions due to missing information.\n- Keep responses concise: 3 to 5 sentences unless the user asks for detail.\n- Never provide specific buy/sell recommendations on individual stocks.\n- Always recommend consulting a SEBI-registered advisor for major financial decisions.\n\nUse all context in the conversation history to provide personalised, consistent advice."

# The five user turns of the live demo (2, 4, 6, 8, 10 messages sent with the full buffer).
DEMO_TURNS: tuple[str, ...] = (
    "Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000.",
    "I have monthly expenses of about ₹60,000: rent, groceries, transport, and utilities.",
    "I currently have no investments except a small FD of ₹50,000 that matures in 3 months.",
    "What should I do with the FD maturity amount? I'm a bit risk-averse.",
    "Based on everything I've told you, what's the most important financial action I should take this month?",
)

# The ten user turns of the model-free growth table (replies assumed 80 tokens each).
SIMULATED_TURNS: tuple[str, ...] = (
    "Hi, I'm Chiru. My monthly salary is ₹1,20,000.",
    "My monthly expenses are ₹60,000.",
    "I have an FD of ₹50,000 maturing in 3 months.",
    "I'm risk-averse and prefer stable returns.",
    "Should I invest in mutual funds or fixed deposits?",
    "What about SIPs? How much should I invest monthly?",
    "Is ₹10,000 per month in SIPs realistic given my expenses?",
    "Which fund categories would you recommend for a conservative investor?",
    "How long should I stay invested to see meaningful returns?",
    "Can you give me a complete monthly budget breakdown based on my salary?",
)

REPLY_TOKENS = 80

# The seed's table, for tests and for the simulator's "matches the seed" badge.
SEED_SYSTEM_TOKENS = 132
SEED_PROMPTS: tuple[int, ...] = (149, 238, 334, 423, 513, 605, 700, 791, 882, 976)
SEED_TOTAL = 5611
SEED_GROWTH = 6.55
