"""A generated file with the shape and size of LongMemEval's released `longmemeval_s`, for
benches and tests where the release cannot be fetched: 500 questions, each with a haystack
of about 50 sessions (about 115,000 tokens) of user/assistant messages, the release's
fields (`question_id`, `question_type`, `question`, `answer`, `question_date`,
`haystack_dates`, `haystack_session_ids`, `haystack_sessions` with `has_answer` on the
evidence message, `answer_session_ids`), its six question types and about 6% abstention
questions (ids ending `_abs`). Written question by question, so the generator's memory
stays flat. Touches only the file it is given.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
WORDS = (  # common short and long words: about 4.9 characters a token, as in the release
    "the a to and of in it is my for on you that was with we this but have can so do "
    "garden weekend recipe budget trip museum concert project coffee library weather"
).split()


def _message(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def question(number: int, rng: random.Random, sessions: int = 50, turns: int = 10) -> dict:
    """One question with its haystack; the evidence is one user message in one session."""
    kind = TYPES[number % len(TYPES)]
    qid = f"gen{number:05d}" + ("_abs" if number % 16 == 15 else "")
    pet = f"Pet{number}"
    hit_session = rng.randrange(sessions)
    hit_turn = rng.randrange(turns)
    haystack = []
    for s in range(sessions):
        session = []
        for t in range(turns):
            user = _message(rng, 112)  # ~115 tokens a message, ~2,300 a session
            if (s, t) == (hit_session, hit_turn):
                session.append({"role": "user", "content": f"My dog is called {pet}. {user}",
                                "has_answer": True})  # fmt: skip
            else:
                session.append({"role": "user", "content": user})
            session.append({"role": "assistant", "content": _message(rng, 112)})
        haystack.append(session)
    return {
        "question_id": qid,
        "question_type": kind,
        "question": "What is my dog called?",
        "answer": pet,
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_dates": [
            f"2023/05/{1 + s % 28:02d} (Mon) 10:{s % 60:02d}" for s in range(sessions)
        ],
        "haystack_session_ids": [f"{qid}_s{s}" for s in range(sessions)],
        "haystack_sessions": haystack,
        "answer_session_ids": [f"{qid}_s{hit_session}"],
    }


def write(path: Path, questions: int = 500, *, sessions: int = 50, seed: int = 7) -> int:
    """Write the file; returns its size in bytes."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for n in range(questions):
            out.write(("," if n else "") + json.dumps(question(n, rng, sessions)))
        out.write("]")
    return path.stat().st_size
