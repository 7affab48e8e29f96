"""Benchmark the embedded model (SmolLM2-135M in llama.cpp, in this process).

Prints: load time; generation speed of one request (tokens/s); prompt-processing speed on a
FinCoach-sized prompt; the wall time of 6 concurrent short requests divided by the same 6
sent one after another (target <= 0.8 on 2 cores); peak RSS of the process (target <= 600 MB).
Everything goes through providers.stream, the path the app uses.

    .venv/bin/python bench/bench_embedded.py [--requests 6] [--max-tokens 48] [--rounds 3]

Other busy processes skew every figure: the load average is printed alongside.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory.types import Message, Request, TokenCount  # noqa: E402
from providers import embedded, preset, stream  # noqa: E402
from providers.send import Reply  # noqa: E402
from providers.settings import ProviderSettings  # noqa: E402

NO_COUNT = TokenCount(0, 0, "o200k_base", True)
TOPICS = ["rent", "salary", "savings", "insurance", "taxes", "a car loan", "gold", "index funds"]


def request(text: str, system: str = "You are FinCoach, a helpful finance assistant.") -> Request:
    return Request(system=system, messages=(Message("user", text),), tokens=NO_COUNT)


def short_request(i: int) -> Request:
    return request(f"Give me three short tips about {TOPICS[i % len(TOPICS)]}.")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def check(reply: Reply) -> Reply:
    if reply.error is not None:
        raise SystemExit(f"request failed: {reply.error.kind}: {reply.error}")
    return reply


def at_once(requests: list[Request], settings: ProviderSettings) -> list[Reply]:
    """Every request sent at the same time (one thread each); the replies, checked."""
    with ThreadPoolExecutor(max_workers=len(requests)) as pool:
        return [check(r) for r in pool.map(lambda r: stream(r, settings), requests)]


def prompt_speed(settings: ProviderSettings) -> tuple[int, float, float]:
    """(prompt tokens, seconds to the first token, prompt tokens read per second) for one
    long prompt (about 1,000 tokens) answered with a single token."""
    history = " ".join(
        f"Turn {t}: I spend {100 + 7 * t} dollars on {TOPICS[t % len(TOPICS)]} every month."
        for t in range(1, 90)
    )
    long = check(
        stream(request(history + " What do I spend on rent?"), settings.with_(max_tokens=1))
    )
    tokens = long.usage.input if long.usage and long.usage.input else 0
    return tokens, long.ttft_s or 0.0, tokens / max(long.latency_s, 1e-9)


def concurrent_speed(settings: ProviderSettings, n: int) -> tuple[int, float, float]:
    """(tokens written, seconds, tokens written per second) for `n` short requests sent at
    once, each writing up to `settings.max_tokens`."""
    started = time.perf_counter()
    replies = at_once([short_request(i) for i in range(n)], settings)
    seconds = time.perf_counter() - started
    tokens = sum(r.usage.output or 0 for r in replies if r.usage)
    return tokens, seconds, tokens / max(seconds, 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=6, help="parallel requests (default 6)")
    parser.add_argument("--max-tokens", type=int, default=48, help="reply length of each request")
    parser.add_argument("--rounds", type=int, default=3, help="sequential/concurrent rounds")
    args = parser.parse_args()
    n = args.requests

    started = time.perf_counter()
    info = embedded.start()
    load_s = time.perf_counter() - started
    settings = preset("embedded").settings(max_tokens=args.max_tokens)
    print(f"model: {info.model} at {info.base_url}")
    print(
        f"slots: {info.slots} x {info.context_window} tokens per request; threads: {os.cpu_count()}"
    )
    print(f"load time: {load_s:.2f} s (server reported {info.load_s:.2f} s)")

    check(stream(short_request(0), settings.with_(max_tokens=4)))  # warm caches and pages

    one = check(
        stream(request("Write a short story about saving money."), settings.with_(max_tokens=128))
    )
    gen_s = one.latency_s - (one.ttft_s or 0.0)
    out = one.usage.output if one.usage and one.usage.output else 0
    print(
        f"one request: {out} tokens in {one.latency_s:.2f} s "
        f"(TTFT {one.ttft_s or 0:.2f} s), generation {out / gen_s:.1f} tokens/s"
    )

    prompt_tokens, ttft, speed = prompt_speed(settings)
    print(
        f"long prompt: {prompt_tokens} prompt tokens, first token after {ttft:.2f} s "
        f"({speed:.0f} prompt tokens/s)"
    )

    requests = [short_request(i) for i in range(n)]
    seq_times: list[float] = []
    par_times: list[float] = []
    for _ in range(args.rounds):  # alternate, and keep the best of each: other load only adds
        t0 = time.perf_counter()
        sequential = [check(stream(r, settings)) for r in requests]
        seq_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        concurrent = at_once(requests, settings)
        par_times.append(time.perf_counter() - t0)
    seq_tokens = sum(r.usage.output or 0 for r in sequential if r.usage)
    par_tokens = sum(r.usage.output or 0 for r in concurrent if r.usage)
    same = sum(a.text == b.text for a, b in zip(sequential, concurrent, strict=True))
    rounds = ", ".join(f"{p:.2f}/{s:.2f}" for p, s in zip(par_times, seq_times, strict=True))
    print(f"{n} sequential: {min(seq_times):.2f} s best of {args.rounds} ({seq_tokens} tokens)")
    print(
        f"{n} concurrent: {min(par_times):.2f} s best of {args.rounds} ({par_tokens} tokens); "
        f"same text as sequential: {same}/{n}"
    )
    ratio = min(par_times) / min(seq_times)
    print(
        f"concurrent / sequential: {ratio:.2f} (target <= 0.8) {'OK' if ratio <= 0.8 else 'MISS'}"
        f"  [rounds, concurrent/sequential s: {rounds}]"
    )

    rss = peak_rss_mb()
    print(f"peak RSS: {rss:.0f} MB (target <= 600) {'OK' if rss <= 600 else 'MISS'}")
    print(
        f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
