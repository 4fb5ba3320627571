"""Eight OS processes appending 500 entries each into one session on PostgreSQL.

Each writer waits for "go", then appends onto the head (resolved inside the
write transaction, under the session's row lock): 4,000 rows must be stored,
numbered 1..4,000 with no gap and no repeat, each acknowledged once.
"""

from __future__ import annotations

import json
import subprocess
import sys

from sessionforest import Forest

WRITERS = 8
APPENDS = 500

WRITER = r"""
import json, sys
from sessionforest import Forest

location, sid, name, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
forest = Forest.open(location)
print("ready", flush=True)
sys.stdin.readline()
acks = []
for i in range(n):
    e = forest.append(sid, "user.message", {"content": [{"type": "text", "text": f"{name} {i}"}]})
    acks.append([e.id, e.sequence])
print(json.dumps(acks), flush=True)
"""


def test_eight_writers_store_4000_entries_numbered_without_gaps(
    pg_url: str, pg_forest: Forest
) -> None:
    sid = pg_forest.create_session(title="shared")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, pg_url, sid, f"w{i}", str(APPENDS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(WRITERS)
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    acks: list[list[object]] = []
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0
        acks += json.loads(out.splitlines()[-1])
    entries = pg_forest.entries(sid)
    assert len(entries) == WRITERS * APPENDS == 4000
    assert [e.sequence for e in entries] == list(range(1, 4001))
    assert sorted(a[1] for a in acks) == list(range(1, 4001))  # type: ignore[type-var]
    assert {e.id: e.sequence for e in entries} == {a[0]: a[1] for a in acks}
    # One chain: each entry's parent is the one before it (the head moved under the lock).
    assert [e.parent_id for e in entries[1:]] == [e.id for e in entries[:-1]]
    assert pg_forest.check().ok
