"""Listing a big ChatGPT export: seconds and peak memory of the streamed pick list, beside
loading the whole file with `json.load` (what a naive importer does), in one run.

    python bench/bench_transcripts.py               # a generated 200 MB export
    python bench/bench_transcripts.py --mb 50

Each measurement runs in its own child process, so its peak RSS (ru_maxrss) is its own;
"extra RSS" is the peak minus the child's RSS after its imports, before it reads the file.
Goal for the streamed listing of 200 MB: <= 10 s and <= 500 MB extra RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORDS = (
    "budget rent salary invest fund index plan travel goa trip tax regime insurance term "
    "policy savings account monthly expense grocery transport emergency bond gold loan "
    "interest rate credit card bill track subscription review portfolio rebalance"
).split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def conversation(rng: random.Random, number: int, turns: int) -> dict[str, object]:
    """One conversation in the export's shape: a root, a hidden system node, user/assistant
    pairs, and a regenerated reply (a sibling branch) every few turns."""
    mapping: dict[str, dict[str, object]] = {}
    created = 1_700_000_000 + number * 3600

    def add(node_id: str, parent: str | None, role: str | None, text: str) -> None:
        message = None
        if role is not None:
            message = {
                "id": node_id,
                "author": {"role": role, "name": None, "metadata": {}},
                "create_time": created,
                "content": {"content_type": "text", "parts": [text]},
                "status": "finished_successfully",
                "metadata": {"is_visually_hidden_from_conversation": role == "system"},
                "recipient": "all",
            }
        mapping[node_id] = {"id": node_id, "message": message, "parent": parent, "children": []}
        if parent is not None:
            mapping[parent]["children"].append(node_id)  # type: ignore[attr-defined]

    add("root", None, None, "")
    add("sys", "root", "system", "")
    parent = "sys"
    for t in range(turns):
        add(f"u{t}", parent, "user", sentence(rng, rng.randint(10, 60)))
        if t % 5 == 4:
            add(f"x{t}", f"u{t}", "assistant", sentence(rng, 40))  # the reply regenerated
        add(f"a{t}", f"u{t}", "assistant", sentence(rng, rng.randint(40, 160)))
        parent = f"a{t}"
    return {
        "title": f"Conversation {number}: {sentence(rng, 3)}",
        "create_time": created,
        "update_time": created + 600,
        "mapping": mapping,
        "current_node": parent,
        "conversation_id": f"conv-{number:06d}",
        "id": f"conv-{number:06d}",
    }


def write_export(path: Path, megabytes: int, seed: int = 0) -> int:
    """A ChatGPT export of about `megabytes` MB at `path`; returns its conversation count."""
    rng = random.Random(seed)
    target = megabytes * 1_000_000
    written = 0
    count = 0
    with path.open("w", encoding="utf-8") as f:
        f.write("[")
        while written < target:
            text = json.dumps(conversation(rng, count + 1, rng.randint(4, 40)), ensure_ascii=False)
            f.write(("," if count else "") + text)
            written += len(text) + 1
            count += 1
        f.write("]")
    return count


CHILD = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
from scenarios.transcripts import list_conversations
def rss_mb():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024
base = rss_mb()
started = time.perf_counter()
if {mode!r} == 'stream':
    from pathlib import Path
    found = list_conversations(Path({path!r}))
    n = len(found); turns = sum(c.turns for c in found)
else:
    with open({path!r}, encoding='utf-8') as f:
        data = json.load(f)
    n = len(data); turns = -1
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"seconds": seconds, "base_mb": base, "peak_mb": peak, "conversations": n, "turns": turns}}))
"""


def measure(path: Path, mode: str) -> dict[str, float]:
    code = CHILD.format(root=str(ROOT), path=str(path), mode=mode)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=200, help="size of the generated export (200)")
    parser.add_argument("--keep", metavar="FILE", help="write the export here and keep it")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="bench-transcripts-")
    path = Path(args.keep) if args.keep else Path(folder) / "conversations.json"
    started = time.perf_counter()
    count = write_export(path, args.mb)
    size = path.stat().st_size / 1_000_000
    print(
        f"generated {size:.0f} MB, {count:,} conversations in {time.perf_counter() - started:.1f} s"
    )
    stream = measure(path, "stream")
    naive = measure(path, "load")
    print(f"{'':28}{'seconds':>9}{'extra RSS MB':>14}")
    for label, m in (("streamed pick list", stream), ("json.load of the whole file", naive)):
        print(f"{label:28}{m['seconds']:9.2f}{m['peak_mb'] - m['base_mb']:14.0f}")
    print(
        f"listed {stream['conversations']:,} conversations, {stream['turns']:,} turns on their "
        f"active branches; memory ratio streamed/whole "
        f"{(stream['peak_mb'] - stream['base_mb']) / max(naive['peak_mb'] - naive['base_mb'], 1):.2f}, "
        f"time ratio {stream['seconds'] / naive['seconds']:.2f}"
    )
    ok = stream["seconds"] <= 10 and stream["peak_mb"] - stream["base_mb"] <= 500
    print(f"goal (<= 10 s, <= 500 MB extra RSS for 200 MB): {'met' if ok else 'NOT met'}")
    if not args.keep:
        os.unlink(path)
        os.rmdir(folder)


if __name__ == "__main__":
    main()
