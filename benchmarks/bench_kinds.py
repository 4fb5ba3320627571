"""Payload validation: msgspec contracts (kinds.py) against the hand-written checks they replaced.

    .venv/bin/python benchmarks/bench_kinds.py

A standalone script (not a run.py workload): it decided issue 9/10's question
"replace the hand-written validator if msgspec is as fast". The hand-written
validator is loaded from the last commit that had it, so the comparison can be
re-run at any time; each figure is the median of 7 runs of 20,000 calls.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

from sessionforest import kinds

REPO = Path(__file__).resolve().parent.parent
HANDWRITTEN_AT = "1fa31b4"  # the last commit whose kinds.py validated by hand

PAYLOADS: dict[str, dict[str, Any]] = {
    "assistant.message": {
        "content": [
            {"type": "thinking", "thinking": "the lock comes from the importer", "signature": "s"},
            {"type": "text", "text": "The importer opens its own connection with timeout=0."},
            {"type": "tool_call", "id": "c1", "name": "bash", "input": {"cmd": "ls -la"}},
        ],
        "model": "claude-sonnet-4-5",
        "provider": "anthropic",
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 1200, "output_tokens": 80},
    },
    "user.message": {"content": [{"type": "text", "text": "Why does the import lock?"}]},
    "tool.completed": {"call_id": "c1", "output": "a.txt\nb.txt", "is_error": False},
    "session.status": {"status": "stopped", "reason": "user pressed stop"},
}


def handwritten() -> types.ModuleType:
    source = subprocess.run(
        ["git", "show", f"{HANDWRITTEN_AT}:src/sessionforest/kinds.py"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    module = types.ModuleType("sessionforest._kinds_handwritten")
    module.__package__ = "sessionforest"
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, "kinds_handwritten.py", "exec"), module.__dict__)
    return module


def per_call_us(fn: Any, kind: str, payload: dict[str, Any], calls: int = 20_000) -> float:
    runs = []
    for _ in range(7):
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn(kind, payload)
        runs.append((time.perf_counter_ns() - start) / calls / 1e3)
    return statistics.median(runs)


def main() -> int:
    old = handwritten()
    print(f"{'kind':<20} {'hand-written':>13} {'msgspec':>9} {'ratio':>6}")
    for kind, payload in PAYLOADS.items():
        before = per_call_us(old.validate_payload, kind, payload)
        after = per_call_us(kinds.validate_payload, kind, payload)
        print(f"{kind:<20} {before:>10.2f} µs {after:>6.2f} µs {after / before:>5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
