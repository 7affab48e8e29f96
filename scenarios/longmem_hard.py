"""A harder long-conversation generator: questions worded away from their evidence.

`generate(seed)` gives dated sessions (about 600 turns) like scenarios/longmem_world.py's,
with what that world lacks and real conversations have (kinds in brackets):

* paraphrase (``single-hop``) - the question names a category or a synonym, the evidence the
  item ("my pet" / "our golden retriever puppy", "where I work" / the company's name);
* bridge (``multi-hop``) - two turns in different sessions that share only an entity (a
  company, a restaurant, a town) and nothing with the question except a person's name;
* inferred (``inferred``) - three small mentions, in different sessions, that together
  answer a question none of them words (a hobby, a diet, a sore back);
* relative time (``temporal``) - "last month", "about N weeks ago", "back in March", "at the
  wedding": a recurring event (near-duplicates in other sessions) told apart only by its
  session's date, which the session's first turn says; "when did I ...?" in other words;
* near-duplicates - each planted line has look-alikes about other people or other times.

Deterministic by seed; it borrows the first world's filler and replies. No public
benchmark's text is used: every line is written here.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from scenarios.longmem import LongConversation, Question, Session
from scenarios.longmem_world import PEOPLE, SYSTEM, _filler, _reply, _Slot

NAMES = ("Priya", "Dev", "Arjun", "Meera", "Rohan", "Kavya", "Sameer", "Farah")
PARAPHRASES = (  # question, evidence line, values, look-alike lines ({o}: another value)
    (
        "What is my pet called?",
        "Brought home our {v} puppy today, we named him {w}.",
        (("golden retriever", "Rufus"), ("beagle", "Juno"), ("dachshund", "Miso")),
        ("{n}'s {o} puppy chewed through a pair of shoes again.", "{n} wants a {o} puppy too."),
    ),
    (
        "Where do I work?",
        "First week at {v} done; the onboarding sessions were endless but my desk has a view.",
        (("Zentrix Labs", ""), ("Halcyon Bank", ""), ("Bluefin Games", "")),
        ("{n} just started a week of onboarding at {o}.", "{n} had a job interview at {o}."),
    ),
    (
        "Which musical instrument am I learning?",
        "Practised {v} scales for forty minutes tonight, my fingers ache.",
        (("cello", ""), ("violin", ""), ("saxophone", "")),
        ("{n}'s kid practises {o} scales at full volume every evening.", "{n} sold an old {o}."),
    ),
    (
        "What food am I allergic to?",
        "Ate one {v} at the party and my throat swelled up again; carrying antihistamines now.",
        (("cashew", ""), ("prawn", ""), ("sesame cracker", "")),
        ("{n} ate a {o} at the party and loved it.", "{n}'s throat swelled up after a bee sting."),
    ),
    (
        "How do I get to the office every morning?",
        "The {v} was packed again today, I stood the whole way and finished a podcast.",
        (("metro", ""), ("number 42 bus", ""), ("ferry", "")),
        ("{n} says the {o} was packed again today.", "{n} finished a podcast on the way home."),
    ),
    (
        "Which city do my parents live in?",
        "Mum and Dad love their flat in {v}, they can walk to the market every morning.",
        (("Kochi", ""), ("Jaipur", ""), ("Mysuru", "")),
        ("{n}'s parents love their flat in {o}.", "{n} can walk to the market in {o}."),
    ),
    (
        "What is my partner's name?",
        "{v} surprised me with breakfast in bed for our anniversary.",
        (("Anjali", ""), ("Kabir", ""), ("Nisha", "")),
        (
            "{n} forgot their anniversary, {o} is furious.",
            "{o} surprised {n} with breakfast in bed.",
        ),
    ),
    (
        "Which sport do I play at the weekend?",
        "Our {v} doubles pair lost the final set 19-21 on Sunday, so close.",
        (("badminton", ""), ("table tennis", ""), ("squash", "")),
        ("{n}'s {o} doubles pair lost on Sunday.", "{n} lost the final set of a {o} match."),
    ),
)
BRIDGES = (  # first line (person, entity), second line (entity, answer), question, pools
    (
        "{n} signed the contract with {e} yesterday, finally!",
        "{e} is shifting its whole staff to {a} in the spring.",
        "Which city is {n} going to end up living in?",
        ("Quillon", "Marrowby", "Tessaro", "Nimbal"),
        ("Lisbon", "Dublin", "Hyderabad", "Indore"),
    ),
    (
        "Dinner with {n} at {e} was lovely, we stayed till closing.",
        "{e} only does {a}, and the portions are huge.",
        "What kind of cuisine did {n} and I have together?",
        ("Saffron Lane", "The Copper Pot", "Blue Lotus", "Casa Verde"),
        ("Kerala seafood", "Oaxacan street food", "Sichuan hotpot", "Lebanese mezze"),
    ),
    (
        "{n} booked the flights to {e} for the long weekend.",
        "{e} sits right on the coast of {a}, apparently.",
        "Which country is {n} flying to?",
        ("Tbilisi", "Porto", "Split", "Galle"),
        ("Georgia", "Portugal", "Croatia", "Sri Lanka"),
    ),
)
INFERRED = (  # question, answer, the three mentions, look-alikes ({n}: someone else)
    (
        "What creative hobby have I picked up?",
        "painting",
        (
            "Bought a new set of watercolour brushes on the way home.",
            "My painting of the lake finally looks like a lake.",
            "Signed up for the Sunday sketching class at the community hall.",
        ),
        ("{n} bought new brushes for the kitchen walls.", "{n} took a class at the hall."),
    ),
    (
        "What kind of diet do I follow?",
        "without meat",
        (
            "Skipped the chicken at lunch and had the paneer instead.",
            "Three months without meat now and I feel good.",
            "Found a great tofu place near the office.",
        ),
        ("{n} had the chicken at lunch again.", "{n} can't stand tofu."),
    ),
    (
        "What part of my body keeps bothering me?",
        "back",
        (
            "Stiff again after the long drive, could barely get out of the car.",
            "The physio gave me stretches for my lower back.",
            "Ordered a standing desk, sitting all day is not helping.",
        ),
        ("{n} ordered a new desk chair.", "{n}'s physio session got cancelled."),
    ),
    (
        "Am I a morning person or a night owl?",
        "sunrise",
        (
            "Up at 5:30 again, I love how quiet the street is.",
            "Watched the sunrise from the terrace with my first coffee.",
            "Asleep by half past nine, as usual.",
        ),
        ("{n} was up at 5:30 for a flight.", "{n} stays up till two most nights."),
    ),
)
RECURRING = (  # the event with its value, the question (when: filled in), values
    (
        "Hosted a dinner party tonight, I made {v} and everyone asked for seconds.",
        "What did I cook for guests {when}?",
        ("lasagne", "biryani", "mushroom risotto", "lemon tart", "ramen", "paella"),
    ),
    (
        "Watched {v} at the cinema with Farah, the sound was incredible.",
        "Which film did I see on the big screen {when}?",
        ("Dune Part Two", "Past Lives", "Oppenheimer", "Perfect Days", "Anatomy of a Fall"),
    ),
)
OCCASIONS = (  # the session's header, a planted line, the question, values, look-alikes
    (
        "I'm writing from my cousin's wedding in Udaipur!",
        "Met someone called {w} who {v} for a living.",
        "What does the person I met at the wedding do for work?",
        (
            ("restores old boats", "Ishaan"),
            ("designs bridges", "Tara"),
            ("trains guide dogs", "Omar"),
        ),
    ),
    (
        "Quick one from the conference hotel in Bengaluru.",
        "The keynote speaker said {v} is the thing to watch this year.",
        "What did the keynote speaker at the conference say to watch?",
        (("battery recycling", ""), ("quantum sensing", ""), ("seaweed farming", "")),
    ),
)
MOVES = (  # when-questions worded away from the event's line
    ("Got the keys to the new flat today, boxes everywhere!", "When did I move house?"),
    ("Passed the road test, I can finally drive on my own!", "When did I get my licence?"),
    ("My first half marathon is done, 2 hours 4 minutes!", "When did I run that long race?"),
)
HEADERS = (
    "Hi again, it's {date}. ",
    "Morning! {date} today. ",
    "Hey, it's {date}. ",
)
MONTHS = (
    "January February March April May June July August September October November December"
).split()


@dataclass
class _Plan:
    planted: dict[int, list[_Slot]] = field(default_factory=dict)
    asked: list[tuple[str, str, tuple[str, ...], str, int | None]] = field(default_factory=list)

    def plant(self, session: int, user: str, reply: str, tag: str = "") -> None:
        self.planted.setdefault(session, []).append(_Slot(user, reply, tag))

    def ask(
        self, kind: str, question: str, tags: tuple[str, ...], answer: str, at: int | None = None
    ) -> None:
        """`at`: asked at the end of that session (None: after the last turn)."""
        self.asked.append((kind, question, tags, answer, at))


def _dates(rng: random.Random, sessions: int) -> list[dt.date]:
    day, out = dt.date(2024, 1, 6), []
    for s in range(sessions):
        day += dt.timedelta(days=rng.randrange(6, 16) if s else 0)
        out.append(day)
    return out


def _when(dates: list[dt.date], event: int, others: list[int], now: int) -> str | None:
    """A relative-time phrase that picks session `event` out of `others` seen from `now`."""
    target, today = dates[event], dates[now]
    month_before = (today.replace(day=1) - dt.timedelta(days=1)).replace(day=1)
    same_month = [o for o in others if dates[o].replace(day=1) == target.replace(day=1)]
    if not same_month and target.replace(day=1) == month_before:
        return "last month"
    weeks = round((today - target).days / 7)
    centre = today - dt.timedelta(days=7 * weeks)
    close = [o for o in others if abs((dates[o] - centre).days) <= 12]
    if weeks >= 2 and not close:
        return f"about {weeks} weeks ago"
    if not same_month and target.year == today.year:
        return f"back in {MONTHS[target.month - 1]}"
    return None


def _plan(rng: random.Random, dates: list[dt.date]) -> _Plan:
    plan = _Plan()
    sessions = len(dates)
    names = list(NAMES)

    def other(n: str) -> str:
        return rng.choice([x for x in names if x != n])

    for i, (question, line, values, lookalikes) in enumerate(PARAPHRASES):
        pick = rng.randrange(len(values))
        v, w = values[pick]
        plan.plant(rng.randrange(sessions), line.format(v=v, w=w), _reply(rng, "work"), f"p{i}")
        for look in lookalikes:
            for o, _w in values:  # the same items for other people: near-duplicates
                text = look.format(n=rng.choice(names), o=o)
                plan.plant(rng.randrange(sessions), text, _reply(rng, "work"))
        plan.ask("single-hop", question, (f"p{i}",), w or v)
    for i, (first, second, question, entities, answers) in enumerate(BRIDGES):
        order = rng.sample(range(len(entities)), k=len(entities))
        people = rng.sample(names, k=len(entities))
        for j, (k, person) in enumerate(zip(order, people, strict=True)):
            e, a = entities[k], answers[k]
            s1 = rng.randrange(sessions - 3)
            s2 = rng.randrange(s1 + 1, sessions)
            tag = f"b{i}.{j}" if j < 2 else ""
            plan.plant(s1, first.format(n=person, e=e), _reply(rng, "travel"), tag and tag + "a")
            if j == 3:  # a near-duplicate whose entity has no second line
                continue
            plan.plant(s2, second.format(e=e, a=a), _reply(rng, "travel"), tag and tag + "b")
            if tag:
                plan.ask("multi-hop", question.format(n=person), (tag + "a", tag + "b"), a)
    for i, (question, answer, mentions, lookalikes) in enumerate(INFERRED):
        spots = rng.sample(range(sessions), k=len(mentions))
        for j, (s, text) in enumerate(zip(spots, mentions, strict=True)):
            plan.plant(s, text, _reply(rng, "fitness"), f"i{i}.{j}")
        for look in lookalikes:
            plan.plant(
                rng.randrange(sessions), look.format(n=rng.choice(names)), _reply(rng, "food")
            )
        plan.ask("inferred", question, tuple(f"i{i}.{j}" for j in range(len(mentions))), answer)
    for i, (line, question, pool) in enumerate(RECURRING):
        spots = sorted(rng.sample(range(1, sessions - 1), k=5))
        chosen = rng.sample(pool, k=len(spots))
        for j, (s, item) in enumerate(zip(spots, chosen, strict=True)):
            plan.plant(s, line.format(v=item), _reply(rng, "food"), f"r{i}.{j}")
        asked = 0
        for j in rng.sample(range(len(spots)), k=len(spots)):
            now = rng.randrange(spots[j] + 1, sessions)
            when = _when(dates, spots[j], [s for s in spots if s != spots[j]], now)
            if when is None or asked == 2:
                continue
            asked += 1
            plan.ask("temporal", question.format(when=when), (f"r{i}.{j}",), chosen[j], now)
    spots = rng.sample(range(sessions), k=len(OCCASIONS) + len(MOVES))
    for i, (header, line, question, values) in enumerate(OCCASIONS):
        pick = rng.randrange(len(values))
        s = spots[i]
        for j, (v, w) in enumerate(values):  # the same line in other sessions: look-alikes
            where = s if j == pick else rng.choice([x for x in range(sessions) if x != s])
            tag = f"o{i}" if j == pick else ""
            plan.plant(where, line.format(v=v, w=w or "x"), _reply(rng, "work"), tag)
        plan.plant(s, header, "", f"head{i}")
        plan.ask("temporal", question, (f"o{i}", f"header{s}"), values[pick][0])
    for i, (line, question) in enumerate(MOVES):
        s = spots[len(OCCASIONS) + i]
        plan.plant(s, line, _reply(rng, "travel", "What a milestone."), f"m{i}")
        plan.ask("temporal", question, (f"m{i}", f"header{s}"), f"date{s}")
    return plan


def generate(seed: int = 0, *, sessions: int = 24, turns_per_session: int = 24) -> LongConversation:
    """A long conversation of `sessions` dated sessions whose questions are worded away from
    their evidence (kinds: single-hop, multi-hop, inferred, temporal)."""
    if sessions < 8 or turns_per_session < 10:
        raise ValueError("a hard long conversation needs at least 8 sessions of 10 turns")
    rng = random.Random(f"hard-{seed}")
    dates = _dates(rng, sessions)
    plan = _plan(rng, dates)
    built: list[Session] = []
    where: dict[str, int] = {}
    ends: list[int] = []
    turn = 0
    for s, day in enumerate(dates):
        date_text = f"{day.day} {day:%B %Y}"
        planted = plan.planted.get(s, [])
        heads = [p for p in planted if p.tag.startswith("head")]
        length = turns_per_session + rng.randrange(-3, 4)
        slots = [_filler(rng, PEOPLE) for _ in range(max(length, len(planted) + 1))]
        for slot in planted:
            if not slot.tag.startswith("head"):
                slots.insert(rng.randrange(1, len(slots)), _Slot(slot.user, slot.reply, slot.tag))
        head = slots[0]
        opening = rng.choice(HEADERS).format(date=date_text)
        if heads:  # the session's occasion is said in its first turn, with the date
            opening += heads[0].user + " "
        slots[0] = _Slot(opening + head.user, head.reply, head.tag)
        pairs = []
        for slot in slots:
            turn += 1
            if slot.tag:
                where[slot.tag] = turn
            pairs.append((slot.user, slot.reply))
        where[f"header{s}"] = turn - len(slots) + 1
        ends.append(turn)
        built.append(Session(day.isoformat(), tuple(pairs)))
    questions = []
    for i, (kind, text, tags, answer, at) in enumerate(plan.asked):
        if answer.startswith("date"):
            day = dates[int(answer[4:])]
            answer = f"{day.day} {day:%B %Y}"
        evidence = tuple(sorted({where[t] for t in tags}))
        after = None if at is None else ends[at]
        questions.append(Question(f"h{i + 1}", kind, text, evidence, answer, after))
    return LongConversation(SYSTEM, tuple(built), tuple(questions))
