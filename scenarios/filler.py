"""Filler turns for the fact-survival lab: a built-in bank, or an imported transcript.

Filler is what the user says between planting a fact and probing for it. The bank holds
realistic user messages on several topics; none of them states a default fact (a test
checks), so a fact found in a payload came from where it was planted.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scenarios.transcripts import TranscriptError, simple_turns

__all__ = [
    "BANK",
    "TOPICS",
    "FillerTurn",
    "TranscriptError",
    "builtin",
    "cycle",
    "load_transcript",
    "parse_transcript",
]


@dataclass(frozen=True)
class FillerTurn:
    """One filler user message, with the reply it got if a transcript recorded one."""

    user: str
    reply: str | None = None
    topic: str = ""


_BANK_TEXT: dict[str, str] = {
    "money": """
How much of my monthly income should go into an emergency fund before I start investing?
Is it better to pay off a personal loan early or to keep investing the extra cash?
What is the difference between a debt mutual fund and a liquid fund?
My credit card bill came to ₹18,400 this month. How do I stop overspending on it?
Should I choose the old tax regime or the new one if I only claim 80C deductions?
Can you explain how PPF works and when I can withdraw from it?
How does a recurring deposit compare with a SIP in an index fund over five years?
What is a reasonable amount of term life insurance for someone with no dependants yet?
My employer offers NPS. Is it worth putting in extra beyond the mandatory part?
How do I check my CIBIL score, and what counts as a good score?
I keep forgetting small subscriptions. Any simple way to track them?
What happens to my EPF balance if I switch jobs?
Is gold a good hedge, or should I skip it entirely?
How are capital gains on equity mutual funds taxed if I sell after two years?
My parents want to buy a health insurance policy. What should they look for?
What is an expense ratio and how much does it really matter?
Should I keep my savings in one bank or spread it across two?
Is it a good idea to use a credit card for rent payments to earn points?
What does rebalancing a portfolio mean in practice?
How often should I review my budget: weekly, monthly or quarterly?
Is a sovereign gold bond better than buying gold coins?
My friend says real estate always beats the stock market. Is that true?
How do I start investing if I only have ₹2,000 a month to spare?
Can you explain the 50-30-20 budgeting rule in simple words?
What is the difference between term insurance and an endowment plan?
""",
    "cooking": """
What can I cook for dinner tonight with paneer, spinach and a couple of tomatoes?
My dal always turns out watery. What am I doing wrong?
How long can cooked rice stay in the fridge before it is unsafe?
Can you suggest a quick breakfast that is high in protein and not eggs?
What spices should a beginner keep in the kitchen?
How do I make soft rotis that stay soft for a few hours?
Is it worth buying a pressure cooker or an instant pot for a small family?
I want to meal prep lunches for the week. Where do I start?
How do I stop onions from burning when I make a tadka?
What is a good substitute for cream in a curry?
Can you give me a simple recipe for vegetable biryani for four people?
How do I store fresh coriander so it does not wilt in two days?
Why does my homemade curd sometimes turn sour too fast?
What snacks can I pack for a long train journey?
How do I clean a cast iron pan without ruining it?
I burnt the bottom of my steel kadai. How do I get it clean?
What is a healthy dessert I can make without refined sugar?
How much water do I need for one cup of basmati rice?
Any tips for making crispy dosas at home?
What can I make with leftover chapatis?
How do I make cold coffee like the one they serve in cafes?
Which oils are best for deep frying and which for salads?
Can you suggest a menu for a small dinner party of six?
How do I make a basic tomato soup from scratch?
Is air-fried food actually healthier than shallow-fried food?
""",
    "travel": """
I am planning a four-day trip to Goa in December. What should I book first?
Is it cheaper to book train tickets or flights for Bengaluru to Hyderabad?
What are some quiet hill stations near Pune for a weekend?
How early should I reach the airport for a domestic flight?
Do I need travel insurance for a short trip to Thailand?
What should I pack for a monsoon trip to Kerala?
How do I get a tourist visa for Japan from India?
Can you suggest a five-day itinerary for Rajasthan?
Is it safe to drink tap water in Singapore?
What is the best way to get around Mumbai without a car?
Which credit card perks actually matter for someone who flies twice a year?
How do I avoid motion sickness on winding mountain roads?
What is a good budget for a week in Vietnam, roughly?
Should I book hotels directly or through an aggregator site?
My passport expires in eight months. Can I still travel abroad?
What are the must-see places in Varanasi for a first visit?
How do I keep my phone charged on a long road trip?
Is a forex card better than carrying cash abroad?
What is the best time of year to visit Ladakh?
Can you recommend some offbeat places in the North East?
How do I handle jet lag after a long flight to Europe?
Are sleeper buses comfortable for an overnight journey?
What documents should I carry for a road trip across state borders?
What are some good day trips from Chennai?
How do I find decent vegetarian food while travelling in Europe?
""",
    "fitness": """
I want to start running. How many days a week should a beginner run?
What is a good warm-up before lifting weights?
How much water should I drink on a hot day if I exercise?
Is it bad to work out late at night?
My knees hurt after squats. What could be wrong with my form?
Can you suggest a twenty-minute workout I can do at home with no equipment?
How many hours of sleep do I really need?
What are some easy ways to add more fibre to my diet?
Is walking 8,000 steps a day enough exercise?
How do I stay motivated to exercise during the monsoon?
Is yoga enough on its own to stay fit?
What should I eat before a morning workout?
How do I fix my posture after sitting at a desk all day?
Is it worth hiring a personal trainer for a few months?
What is a healthy amount of weight to lose in a month?
How can I reduce screen time before bed?
What stretches help with lower back pain?
Are protein supplements necessary if I eat a normal diet?
How do I prepare for my first 10 km run?
What is the difference between cardio and strength training for fat loss?
How do I build a habit of meditating every day?
Are standing desks actually good for you?
How often should I get a full health check-up?
What are signs that I am overtraining?
Is cycling to work a realistic way to stay fit in a big city?
""",
    "tech": """
My laptop has become really slow. What should I check first?
Is it worth upgrading from 8 GB to 16 GB of RAM?
How do I back up the photos on my phone automatically?
What is a good password manager, and are they safe?
How do I set up two-factor authentication on my email?
Should I buy a refurbished phone or a new budget phone?
My Wi-Fi keeps dropping in the evening. How do I fix it?
What is the difference between an SSD and a hard disk?
How do I free up storage on my phone without deleting photos?
Can you explain what a VPN does in simple words?
What should I look for in a laptop for programming?
How do I recognise a phishing message on WhatsApp?
Is it safe to use public Wi-Fi at the airport for banking?
How do I transfer my contacts from an old phone to a new one?
What is cloud storage and which one should I use?
How do I stop apps from tracking my location all the time?
Should I turn off my router at night?
What is the best way to learn Excel for work?
How can I make my phone battery last longer?
What does it mean when people say a device is end of life?
How do I set up parental controls on a tablet?
Is a smartwatch useful, or just a gadget?
How do I share a large file with a colleague?
What are some good free tools for editing PDFs?
How do I clean up my email inbox without losing anything important?
""",
    "work": """
How do I ask my manager for a raise without sounding demanding?
I have an interview next week. How should I prepare for behavioural questions?
Should I accept a job offer with a higher salary but a longer commute?
How do I write a good summary for my LinkedIn profile?
What is a polite way to decline extra work when I am already overloaded?
How do I negotiate a notice period with my current employer?
Is it a good idea to take a career break for a year?
How do I deal with a colleague who takes credit for my work?
What skills should I learn to move into product management?
How do I make my resume stand out for a data analyst role?
Is it worth doing an MBA after five years of work experience?
How do I stay productive when working from home?
What should I ask at the end of an interview?
How do I handle feedback that I think is unfair?
Should I freelance on the side while keeping my full-time job?
How do I prepare for my annual performance review?
What is a good way to organise my tasks for the week?
How do I build a professional network if I am an introvert?
I keep getting meetings all day. How do I protect time for deep work?
What is the difference between a CTC figure and actual take-home pay?
How do I explain a gap in my resume?
How do I give constructive feedback to a junior teammate?
Should I learn Python or SQL first for analytics work?
How can I avoid burnout during a busy quarter?
What should go into a thirty-sixty-ninety day plan for a new job?
""",
    "home": """
What is the best way to keep my apartment cool in summer without running the AC all day?
How often should I service the water purifier?
My landlord wants to raise the rent. What are my options?
How do I get rid of ants in the kitchen naturally?
What should I check before signing a rental agreement?
How do I reduce my electricity bill in summer?
Is a front-load washing machine better than a top-load one?
What plants are easy to grow on a small balcony?
How do I remove damp patches from a wall?
What should I keep in a basic home toolkit?
How do I organise a small wardrobe better?
Is it worth installing solar panels on an independent house?
How do I deal with noisy neighbours politely?
What is a good routine for cleaning the house every week?
How do I choose a good mattress?
Should I buy an inverter or a generator for power cuts?
How do I make my home safer for an elderly parent?
What should I do before moving to a new city?
How do I keep mosquitoes away without strong chemicals?
How often should I clean the AC filters?
What is the right way to compost kitchen waste at home?
How can I make a small room look bigger?
What are some good budget-friendly ways to decorate a living room?
How do I stop my bathroom tiles from getting slippery?
What should I look for when hiring a plumber or electrician?
""",
    "family": """
My daughter starts school next year. How do I choose between two nearby schools?
How do I talk to my parents about planning for their retirement?
What are some screen-free activities for a six-year-old on weekends?
How do I plan a birthday party for a toddler without overspending?
My son wants a bicycle. What size should I buy for a nine-year-old?
How can I help my teenager manage exam stress?
What are good ways to teach children about money?
How do I split household chores fairly with my partner?
My in-laws are visiting for a month. How do I plan the budget for that?
What are some good books to read aloud to young children?
How do I prepare for a new baby in the family?
What should I consider when choosing a day care?
How do I help my parents use video calls?
What gift would a grandparent appreciate for their seventieth birthday?
How do I handle sibling fights without taking sides?
What vaccinations does a child need before starting school?
How do I plan a family holiday that works for kids and grandparents?
How much pocket money is reasonable for a twelve-year-old?
What are good hobbies for a child who is shy?
How do I keep track of my children's school fees and deadlines?
How do I start a family savings jar that the kids will actually use?
How can we eat together as a family more often on weekdays?
What are good indoor games for a rainy afternoon?
How do I write a will, and do I need a lawyer for it?
How do I explain to my kids that we are cutting back on eating out?
""",
    "learning": """
What are some good books on personal finance for beginners?
How do I build a habit of reading every day?
Is it worth learning a new language at my age?
Can you suggest some podcasts about history?
How do I take better notes when I read non-fiction?
What is the best way to learn to play the guitar as an adult?
How do I stay focused during online courses?
Can you recommend a good introductory book on economics?
What is a simple way to start journaling?
How can I improve my public speaking?
What are good documentaries about space?
How do I learn touch typing quickly?
What is the best way to memorise vocabulary?
How do I get better at chess as a casual player?
Can you suggest a weekend project to learn basic electronics?
How do I improve my handwriting?
What are some classic novels that are easy to get into?
Is it better to learn from videos or from books?
How do I start learning to draw?
What should I read to understand how the stock market works?
How can I learn photography with just a phone camera?
What are good ways to practise mental maths?
How do I pick an online course that is actually worth the money?
What is a good routine for learning on the daily commute?
How do I keep track of the books I want to read?
""",
}


def _parse_bank() -> tuple[FillerTurn, ...]:
    turns: list[FillerTurn] = []
    for topic, block in _BANK_TEXT.items():
        for line in block.strip().splitlines():
            if line.strip():
                turns.append(FillerTurn(line.strip(), None, topic))
    return tuple(turns)


BANK: tuple[FillerTurn, ...] = _parse_bank()
TOPICS: tuple[str, ...] = tuple(_BANK_TEXT)


def builtin(
    n: int,
    *,
    seed: int = 0,
    topics: Sequence[str] | None = None,
) -> list[FillerTurn]:
    """`n` filler turns from the bank, shuffled by `seed` (same seed, same order), cycled if
    more are needed than the bank holds."""
    if n < 0:
        raise ValueError("the number of filler turns cannot be negative")
    chosen = TOPICS if topics is None else tuple(topics)
    unknown = [t for t in chosen if t not in _BANK_TEXT]
    if unknown:
        raise ValueError(f"unknown filler topic(s) {unknown}; choose from {', '.join(TOPICS)}")
    pool = [t for t in BANK if t.topic in chosen]
    if not pool:
        raise ValueError("no filler topics chosen")
    order = list(pool)
    random.Random(seed).shuffle(order)
    return [order[i % len(order)] for i in range(n)]


def cycle(turns: Sequence[FillerTurn], n: int) -> list[FillerTurn]:
    """`n` turns taken from `turns` in order, starting over when they run out."""
    if n and not turns:
        raise ValueError("the filler is empty")
    return [turns[i % len(turns)] for i in range(n)]


def parse_transcript(text: str, *, name: str = "") -> list[FillerTurn]:
    """Filler from a transcript in any shape scenarios/transcripts.py reads (OpenAI or
    Anthropic messages JSON, 'User:'/'Assistant:' text, a JSON list, CSV, one message a line)."""
    return [FillerTurn(user, reply) for user, reply in simple_turns(text, name=name)]


def load_transcript(path: str | Path) -> list[FillerTurn]:
    """Filler from a transcript file (see `parse_transcript` for the shapes accepted)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise TranscriptError(f"cannot read {p}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise TranscriptError(
            f"{p} is not UTF-8 text (byte {exc.start}): save it as UTF-8"
        ) from None
    return parse_transcript(text, name=p.name)
