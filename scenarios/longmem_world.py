"""A deterministic long-conversation generator: a year of chats with questions about them.

`generate(seed)` gives 24+ dated sessions (500+ turns) of a user talking to an assistant
about people in their life (a sister, a colleague, a neighbour...), work, cooking, fitness,
travel, money and books, with facts planted at known turns and questions about them:

* single-hop - one turn holds the answer (a pet's name, a locker code);
* multi-hop - two turns, in different sessions, must be combined (a person's new employer,
  then that employer's new office city);
* temporal - "when did I ...": the event's turn plus the session's first turn, which is
  the one that says the date;
* update - a value that changed (rent, team size): the evidence is the turn with the
  latest value; the stale values stay in the conversation as look-alikes;
* open - several turns together answer it ("which dishes have I cooked?").

Filler turns reuse the questions' words on purpose (other people adopting pets, other
offices, rent in general), so a keyword match is not enough to find the evidence.

Most of the module is its text bank (people, templates, look-alike lines); the generator
itself is `_plan` and `generate`.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from scenarios.longmem import LongConversation, Question, Session

SYSTEM = (
    "You are Sage, a warm and practical personal assistant. You remember what the user "
    "tells you about their life and use it to give specific, useful answers."
)

PEOPLE = (
    ("Priya", "sister", "she"),
    ("Dev", "brother", "he"),
    ("Arjun", "colleague", "he"),
    ("Meera", "friend", "she"),
    ("Rohan", "neighbour", "he"),
    ("Kavya", "manager", "she"),
    ("Sameer", "cousin", "he"),
    ("Farah", "flatmate", "she"),
)
ANIMALS = ("beagle", "tabby cat", "parrot", "labrador", "rabbit", "tortoise", "dachshund")
PET_NAMES = ("Biscuit", "Mango", "Pepper", "Noodle", "Sultan", "Tofu", "Whiskers", "Ziggy")
COMPANIES = ("Zentrix Labs", "Orbit Foods", "Halcyon Bank", "Tessera Health", "Bluefin Games")
CITIES = ("Pune", "Kochi", "Jaipur", "Lisbon", "Hyderabad", "Mysuru", "Indore", "Dublin")
JOBS = ("data analyst", "product designer", "backend engineer", "brand manager", "nurse")
BOOKS = (
    "The Overstory",
    "Piranesi",
    "A Gentleman in Moscow",
    "The Ministry of Utmost Happiness",
    "Klara and the Sun",
    "The Remains of the Day",
    "Sea of Poppies",
    "Circe",
)
ENDINGS = ("heartbreaking", "too rushed", "perfect", "confusing", "hopeful")
DISHES = ("pav bhaji", "Thai green curry", "mushroom risotto", "lemon tart", "dal makhani")
PLACES = ("Hampi", "Kyoto", "Ladakh", "the Azores", "Meghalaya", "Oaxaca")
EVENTS = (
    ("get my driving licence", "passed the driving test and got my licence"),
    ("have my wisdom tooth taken out", "had my wisdom tooth taken out"),
    ("run the 10K race", "ran the 10K race along the lake"),
    ("sign the lease on the new flat", "signed the lease on the new flat"),
    ("get promoted", "got the promotion letter from HR"),
    ("go to the Coldplay concert", "went to the Coldplay concert with Farah"),
)
UPDATES = (
    (
        "rent",
        "How much rent do I pay now?",
        ("₹{v:,} a month", (24_000, 27_500, 31_000)),
        "My landlord confirmed the rent for the flat: {v} from this month.",
        "Ugh, the landlord raised the rent again. It's {v} now.",
    ),
    (
        "team",
        "How many people are on my team at work now?",
        ("{v} people", (6, 9, 12)),
        "My team at work has {v} right now, counting me.",
        "Reorg news: my team is {v} as of this week.",
    ),
    (
        "gym",
        "Which days do I go to the gym these days?",
        ("{v}", ("Mondays and Thursdays", "Tuesdays and Saturdays", "weekday mornings")),
        "I'm going to the gym on {v} now, that works with my schedule.",
        "Changed my gym routine again: it's {v} from now on.",
    ),
    (
        "car",
        "What car am I driving these days?",
        ("a {v}", ("grey Honda City", "red Tata Nexon", "white Hyundai Creta")),
        "I've been driving {v} since I picked it up from the dealer.",
        "Sold the old one! I'm driving {v} now.",
    ),
)
SINGLES = (  # question, the planted line, values, look-alike lines (no answer in them)
    (
        "What's the code for my locker at the gym?",
        "My gym locker code is {v}, writing it here so I remember.",
        ("4471", "9026", "3358"),
        (
            "Arjun's locker at the office jammed again; he had to call security.",
            "The gym changed its hours; the door code is posted at reception now.",
            "I keep forgetting codes, maybe I need a password manager.",
        ),
    ),
    (
        "What's the wifi password at my parents' house?",
        "The wifi password at my parents' place is {v}, in case I forget again.",
        ("mango-tree-42", "blue_door_7", "chai4ever"),
        (
            "The office wifi password changed again and nobody told us.",
            "My parents want a faster wifi plan for their house.",
        ),
    ),
    (
        "What blood group am I?",
        "The clinic told me my blood type is {v}.",
        ("B positive", "O negative"),
        (
            "Priya donated blood at the camp last weekend.",
            "The clinic sent a reminder about my annual check-up.",
        ),
    ),
    (
        "What's my dentist's name?",
        "My dentist is Dr {v}; her clinic is near the metro.",
        ("Ananya Rao", "Leela Iyer", "Sunita Bose"),
        (
            "Dev hates going to the dentist; he cancelled twice this month.",
            "My dentist appointment got moved to next week.",
        ),
    ),
    (
        "Which zone did I park in at the airport?",
        "Parked at the airport in zone {v}, photo on my phone.",
        ("C4", "F12", "B7"),
        (
            "Airport parking is so expensive now, I might take a cab next time.",
            "I parked at the mall and forgot where; it took ages to find the car.",
        ),
    ),
    (
        "What's my frequent flyer number?",
        "My frequent flyer number is {v}, for the booking.",
        ("AI 55120834", "6E 80417763"),
        (
            "I should sign up for a frequent flyer programme at some point.",
            "Farah's flight was delayed by three hours; she sent me her flight number.",
        ),
    ),
)

TOPICS: dict[str, tuple[str, ...]] = {
    "work": (
        "Work was hectic today, three meetings back to back about the quarterly plan.",
        "{name} and I argued about the office seating plan again.",
        "Any tips for giving feedback to someone on my team without sounding harsh?",
        "The new office coffee machine is broken, so everyone is grumpy.",
        "I have a presentation for the whole team on Friday and I'm nervous.",
        "How do I say no to extra projects without hurting my career?",
        "{name} thinks the company should let people work from another city.",
        "Our company offsite might be in a new city this year.",
    ),
    "pets": (
        "{name} keeps sending me videos of shelter animals; {pron} wants to adopt one someday.",
        "Should I adopt a pet if I travel for work a lot?",
        "What do you call a dog that won't stop barking at the neighbour's cat?",
        "{name} says a rabbit is an easy first pet. Is that true?",
        "The neighbour's dog got out again and ran around the building.",
    ),
    "money": (
        "Rent prices in this city are crazy; {name} pays almost half a salary for a small flat.",
        "How much should I keep in an emergency fund?",
        "Is it worth buying a car now or should I keep saving?",
        "I want to start a monthly SIP. How much is sensible?",
        "My credit card bill was higher than I expected this month.",
    ),
    "fitness": (
        "I skipped the gym this week, feeling guilty about it.",
        "{name} wants me to join a running group on weekends.",
        "What's a good stretching routine after a long run?",
        "Is it fine to go to the gym on consecutive days?",
        "My knees hurt after running downhill. Should I worry?",
    ),
    "food": (
        "What should I cook for dinner when I'm too tired to think?",
        "{name} brought homemade pickles; what can I cook with them?",
        "Any tips for cooking rice so it doesn't get sticky?",
        "I want to eat healthier lunches at the office.",
        "Which spices should every kitchen have?",
    ),
    "travel": (
        "{name} just came back from a trip and won't stop talking about the beaches.",
        "What should I pack for a week of trekking?",
        "How early should I book trains for the holidays?",
        "I'd like to travel somewhere quiet for a long weekend.",
        "{name} asked if I want to visit a new city together next year.",
    ),
    "books": (
        "I can't focus on reading lately; any tricks?",
        "{name} recommended a podcast instead of a book this time.",
        "Should I try audiobooks on my commute?",
        "I abandoned a book halfway through, is that bad?",
    ),
}
ADVICE: dict[str, tuple[str, ...]] = {
    "work": (
        "It helps to write down the two or three outcomes you need before each meeting.",
        "Being specific and kind at the same time is a skill, and it gets easier with practice.",
        "Try blocking focus time on your calendar so the urgent work does not eat everything.",
    ),
    "pets": (
        "Pets need routine more than anything, so think about who covers when you are away.",
        "A visit to the vet in the first week is a good idea for any new animal.",
    ),
    "money": (
        "A common rule is to keep three to six months of expenses in an emergency fund.",
        "Automating a fixed amount on payday makes saving much easier to stick to.",
        "It is worth comparing the total cost, not just the monthly instalment.",
    ),
    "fitness": (
        "Consistency beats intensity; two steady sessions a week add up over a year.",
        "If the pain is sharp or lasts more than a few days, a physiotherapist can check it.",
    ),
    "food": (
        "Batch cooking on Sundays saves a lot of weekday decisions.",
        "Rinsing rice and resting it after cooking keeps the grains separate.",
    ),
    "travel": (
        "Booking early usually gets better fares, especially around holidays.",
        "Layers and a light rain jacket cover most surprises on a trek.",
    ),
    "books": (
        "Short sessions, like twenty pages before bed, are easier to keep up.",
        "It is completely fine to drop a book that is not working for you.",
    ),
}
PERSON_NOISE = (
    "{name} called me last night to talk about {poss} new phone.",
    "{name} has been working late all week and looks exhausted.",
    "{name} wants to move to a new flat closer to work.",
    "I helped {name} pick a name for {poss} new blog.",
    "{name} said {pron} might get a pet next year, but not yet.",
    "{name} is thinking about a new job but hasn't applied anywhere.",
    "{name} read a book about office politics and hated how it ended.",
    "{name} lent me {poss} umbrella and I still haven't given it back.",
    "{name} asked how I feel about the new office rules.",
    "{name} is going to a wedding in another city next month.",
)
COMMON = (  # generic reply sentences that share many words with the questions
    "Give it a few days and see how you feel about it then.",
    "A new routine usually takes a couple of weeks to feel natural.",
    "If work gets busy, keep the plan small so it still happens.",
    "It might help to write it down somewhere you will find it again, like a note on your phone.",
    "Talking it through with a friend or someone in your family can make the choice clearer.",
    "Moving, a new job or a new pet all change your week more than people expect.",
    "When did you last take a proper day off? Rest matters as much as the plan.",
    "Keep the things that matter in one place: codes, names and dates are easy to lose.",
    "Whatever you choose, check again in a month and adjust.",
    "Which part of this worries you most? We can start there.",
)
ASIDES = (
    "{name} says hi, by the way.",
    "I was just on the phone with my {rel} {name}.",
    "{name} and I were talking about this earlier.",
    "My {rel} {name} asked me the same thing last week.",
    "Had lunch with {name} today, it was nice.",
)
OPENERS = ("That makes sense.", "Good question!", "I hear you.", "Thanks for telling me.", "Nice!")


@dataclass
class _Slot:
    user: str
    reply: str
    tag: str = ""


@dataclass
class _Plan:
    """Planted turns per session (positions assigned later) and the questions about them."""

    planted: dict[int, list[_Slot]] = field(default_factory=dict)
    questions: list[tuple[str, str, tuple[str, ...], str]] = field(default_factory=list)

    def plant(self, session: int, user: str, reply: str, tag: str) -> None:
        self.planted.setdefault(session, []).append(_Slot(user, reply, tag))

    def ask(self, kind: str, question: str, tags: tuple[str, ...], answer: str) -> None:
        self.questions.append((kind, question, tags, answer))


def _reply(rng: random.Random, topic: str, echo: str = "") -> str:
    advice = rng.sample(ADVICE[topic], k=min(2, len(ADVICE[topic])))
    common = rng.sample(COMMON, k=2)
    return " ".join(
        filter(None, (rng.choice(OPENERS), echo, advice[0], common[0], *advice[1:], common[1]))
    )


def _plan(rng: random.Random, sessions: int) -> _Plan:
    plan = _Plan()
    people = rng.sample(PEOPLE, k=6)
    for name, _rel, pron in PEOPLE:  # look-alikes: the questions' people and words, no answers
        poss = "her" if pron == "she" else "his"
        for text in rng.sample(PERSON_NOISE, k=4):
            plan.plant(
                rng.randrange(sessions),
                text.format(name=name, pron=pron, poss=poss),
                _reply(rng, rng.choice(tuple(ADVICE))),
                "",
            )

    def later(after: int) -> int:
        return rng.randrange(after + 1, sessions) if after + 1 < sessions else after

    pets = rng.sample(PET_NAMES, k=5)
    for i, (name, rel, pron) in enumerate(people[:5]):  # pets: single-hop
        animal, pet = ANIMALS[i % len(ANIMALS)], pets[i]
        user = f"Big news from my {rel} {name}: {pron} adopted a {animal} and called it {pet}."
        plan.plant(
            rng.randrange(sessions), user, _reply(rng, "pets", f"{pet} is a sweet name."), f"pet{i}"
        )
        plan.ask("single-hop", f"What is the name of {name}'s new pet?", (f"pet{i}",), pet)
    companies = rng.sample(COMPANIES, k=3)
    for i, (name, rel, pron) in enumerate(people[2:5]):  # employer (single) + office (multi)
        company, city, job = companies[i], rng.choice(CITIES), rng.choice(JOBS)
        s1 = rng.randrange(sessions - 4)
        plan.plant(
            s1,
            f"My {rel} {name} accepted a job offer from {company}; {pron} starts as a {job} soon.",
            _reply(rng, "work", f"Congratulations to {name}!"),
            f"job{i}",
        )
        plan.plant(
            later(s1),
            f"Apparently {company} is moving everyone to a new office in {city} next spring.",
            _reply(rng, "work", "Office moves are a big change."),
            f"office{i}",
        )
        plan.ask("single-hop", f"Where is {name} going to work?", (f"job{i}",), company)
        other = rng.choice([c for c in COMPANIES if c != company])
        plan.plant(
            rng.randrange(sessions),
            f"{name} interviewed at {other} too, but turned the offer down.",
            _reply(rng, "work"),
            "",
        )
        plan.ask(
            "multi-hop",
            f"Which city will {name} be working in after the office move?",
            (f"job{i}", f"office{i}"),
            city,
        )
    books = rng.sample(BOOKS, k=6)
    for i, (name, rel, _pron) in enumerate(people[3:6]):  # recommended book -> its ending
        book, ending = books[i], rng.choice(ENDINGS)
        s1 = rng.randrange(sessions - 4)
        plan.plant(
            s1,
            f"My {rel} {name} lent me a novel, {book}, and says I'll love it.",
            _reply(rng, "books"),
            f"lent{i}",
        )
        plan.plant(
            later(s1),
            f"Finished {book} last night. Honestly, the ending was {ending}.",
            _reply(rng, "books", "Endings can make or break a story."),
            f"read{i}",
        )
        plan.ask(
            "multi-hop",
            f"How did I feel about the way the book from {name} ended?",
            (f"lent{i}", f"read{i}"),
            ending,
        )
    for key, question, (fmt, values), first, change in UPDATES:  # updated facts
        picks = sorted(rng.sample(range(sessions), k=len(values)))
        for j, (s, value) in enumerate(zip(picks, values, strict=True)):
            text = (first if j == 0 else change).format(v=fmt.format(v=value))
            plan.plant(s, text, _reply(rng, "money" if key != "gym" else "fitness"), f"{key}{j}")
        plan.ask("update", question, (f"{key}{len(values) - 1}",), fmt.format(v=values[-1]))
    for i, (question, text, options, lookalikes) in enumerate(SINGLES):
        for line in lookalikes:
            plan.plant(rng.randrange(sessions), line, _reply(rng, "work"), "")
        plan.plant(
            rng.randrange(sessions),
            text.format(v=rng.choice(options)),
            _reply(rng, "work"),
            f"single{i}",
        )
        value = text.format(v="\0").split("\0")[0]  # the answer is filled in after planting
        plan.ask("single-hop", question, (f"single{i}",), value)
    for i, (short, long) in enumerate(EVENTS):  # temporal: the event and its session's date
        s = rng.randrange(sessions)
        plan.plant(s, f"Today I {long}!", _reply(rng, "work", "What a day."), f"event{i}@{s}")
        plan.ask("temporal", f"When did I {short}?", (f"event{i}@{s}", f"header{s}"), f"date{s}")
    opens = (
        (
            "Which dishes have I cooked recently?",
            DISHES,
            "Last night I cooked {v} from scratch.",
            "food",
        ),
        (
            "Which places have I said I'd love to visit?",
            PLACES,
            "Someday I'd love to visit {v}.",
            "travel",
        ),
    )
    open_lookalikes = (
        (
            "Meera cooked an amazing biryani for us at her place.",
            "I want to cook more at home but I never find the time recently.",
        ),
        (
            "Farah would love to visit Goa in December, I said maybe.",
            "We're visiting my grandparents this weekend, the whole family.",
        ),
    )
    for i, (question, pool, text, topic) in enumerate(opens):
        for line in open_lookalikes[i]:
            plan.plant(rng.randrange(sessions), line, _reply(rng, topic), "")
        chosen = rng.sample(pool, k=3)
        for j, v in enumerate(chosen):
            plan.plant(
                rng.randrange(sessions), text.format(v=v), _reply(rng, topic), f"open{i}.{j}"
            )
        plan.ask("open", question, tuple(f"open{i}.{j}" for j in range(3)), ", ".join(chosen))
    plan.ask(
        "open",
        "Which books have I finished?",
        tuple(f"read{i}" for i in range(3)),
        ", ".join(books[:3]),
    )
    return plan


def _filler(rng: random.Random, people: tuple[tuple[str, str, str], ...]) -> _Slot:
    topic = rng.choice(tuple(TOPICS))
    name, _rel, pron = rng.choice(people)
    text = rng.choice(TOPICS[topic]).format(name=name, pron=pron)
    if name not in text and rng.random() < 0.5:  # people come up all the time
        other, rel, _pron = rng.choice(people)
        text = rng.choice(ASIDES).format(name=other, rel=rel) + " " + text
    return _Slot(text, _reply(rng, topic))


def generate(seed: int = 0, *, sessions: int = 24, turns_per_session: int = 22) -> LongConversation:
    """A long conversation of `sessions` dated sessions, about `turns_per_session` turns each."""
    if sessions < 6 or turns_per_session < 8:
        raise ValueError("a long conversation needs at least 6 sessions of 8 turns")
    rng = random.Random(seed)
    plan = _plan(rng, sessions)
    day = dt.date(2024, 1, 6)
    built: list[Session] = []
    where: dict[str, int] = {}
    dates: dict[int, str] = {}
    answers: dict[str, str] = {}
    turn = 0
    for s in range(sessions):
        day += dt.timedelta(days=rng.randrange(5, 17) if s else 0)
        date_text = f"{day:%A}, {day.day} {day:%B %Y}"
        dates[s] = date_text
        planted = plan.planted.get(s, [])
        length = turns_per_session + rng.randrange(-3, 4)
        slots = [_filler(rng, PEOPLE) for _ in range(max(length, len(planted) + 1))]
        # temporal events early in the session, the rest anywhere after the greeting
        for slot in planted:
            early = slot.tag.startswith("event")
            pos = rng.randrange(0, 3) if early else rng.randrange(1, len(slots))
            slots.insert(pos, slot)
        head = slots[0]
        slots[0] = _Slot(f"Hi again, it's {date_text}. {head.user}", head.reply, head.tag)
        pairs = []
        for slot in slots:
            turn += 1
            if slot.tag:
                where[slot.tag] = turn
                answers[slot.tag] = slot.user
            pairs.append((slot.user, slot.reply))
        where[f"header{s}"] = turn - len(slots) + 1
        built.append(Session(day.isoformat(), tuple(pairs)))
    questions = []
    for i, (kind, text, tags, answer) in enumerate(plan.questions):
        if answer.startswith("date"):
            answer = dates[int(answer[4:])]
        if kind == "single-hop" and tags[0].startswith("single"):
            planted_text = answers[tags[0]]
            answer = planted_text[len(answer) :].split(",")[0].split(";")[0].rstrip(".")
        evidence = tuple(sorted({where[t] for t in tags}))
        questions.append(Question(f"q{i + 1}", kind, text, evidence, answer))
    return LongConversation(SYSTEM, tuple(built), tuple(questions))
