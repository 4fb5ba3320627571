"""The semantic leg's memory and latency at scale, without embedding a million texts.

A store of N entries over N / 200 chats gets one vector per entry through the
leg's own catch-up (Semantic.catch_up: pending rows, put, the same tables),
with a stand-in for the model that returns seeded random unit vectors: what
is measured (loading the vectors into the search matrix, one product per
query) does not depend on what the vectors hold. Then, in a fresh process:
the first search (the matrix loaded whole), later searches, the process's
peak RSS (VmHWM, reset once the model has run) and its RSS after, against
the same process over a store with no vectors (the floor: the interpreter,
the model and the store).

    .venv/bin/python benchmarks/semantic_memory.py --entries 200000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import harness
from sessionforest import Forest

PER_CHAT = 200
QUERIES = ("sqlite lock timeout", "retry the migration", "vector search rank", "docker deploy")


class RandomModel:
    """Seeded random unit vectors of the model's size, one per text (a stand-in)."""

    def __init__(self) -> None:
        import numpy as np

        self._rng = np.random.default_rng(24)

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        from sessionforest.search import embedder

        out = self._rng.standard_normal((len(texts), embedder.DIMENSIONS), dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def build(db: Path, entries: int, vectors: bool) -> None:
    """A store of `entries` user lines over entries / PER_CHAT chats (with vectors)."""
    harness.remove_db(db)
    with Forest.open(db, background_index=False) as forest:
        for chat in range(max(1, entries // PER_CHAT)):
            sid = forest.create_session(f"chat {chat}")
            lines = [
                ("user.message", {"content": [{"type": "text", "text": f"line {chat} {n}"}]}, None)
                for n in range(PER_CHAT)
            ]
            forest.append_many(sid, lines)
        forest.search_chats("index it")  # the full-text index caught up
        leg = forest._semantic
        if vectors:
            assert leg is not None, "the [semantic] extra is needed"
            leg._loaded = RandomModel()  # type: ignore[assignment]
            leg.catch_up()


def _vm(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def measure_child(db: Path) -> None:
    """In a fresh process: the first search, then the others; peak and final RSS."""
    with Forest.open(db, readonly=True) as forest:
        leg = forest._semantic
        assert leg is not None
        for query in QUERIES:  # the model's own memory (its arenas warmed), untimed
            leg._model.embed([query])
        before = _vm("VmRSS")
        # The peak from here on (Linux: 5 resets VmHWM), not the model's own first run.
        Path("/proc/self/clear_refs").write_text("5")
        start = time.perf_counter()
        leg.ranked(QUERIES[0])
        first = time.perf_counter() - start
        later = []
        for query in QUERIES * 3:
            start = time.perf_counter()
            leg.ranked(query)
            later.append(time.perf_counter() - start)
        print(json.dumps({"first": first, "later": harness.median(later), "before": before,
                          "peak": _vm("VmHWM"), "after": _vm("VmRSS")}))  # fmt: skip


def measure(db: Path, src: Path | None = None) -> dict[str, Any]:
    """The child's figures; `src` runs it on another source tree (a before)."""
    env = {**os.environ}
    env.pop("FOREST_SEMANTIC", None)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), str(Path(__file__).parent)])
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(db)],
        check=True, capture_output=True, text=True, env=env, timeout=1800,
    )  # fmt: skip
    found: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--child", type=Path)
    parser.add_argument(
        "--before", type=Path, help="another tree's src/: measured on the same stores"
    )
    args = parser.parse_args()
    if args.child is not None:
        measure_child(args.child)
        return
    os.environ.pop("FOREST_SEMANTIC", None)
    work = harness.WORK
    work.mkdir(parents=True, exist_ok=True)
    for vectors in (False, True):
        db = work / f"semantic-memory-{int(vectors)}.db"
        build(db, args.entries, vectors)
        print(json.dumps({"vectors": vectors, "entries": args.entries, **measure(db)}), flush=True)
        if args.before is not None:
            found = measure(db, args.before)
            print(json.dumps({"before": True, "vectors": vectors, **found}), flush=True)
        harness.remove_db(db)


if __name__ == "__main__":
    main()
