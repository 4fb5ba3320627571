"""Instructions per default append against the peers section's raw floor, under callgrind.

The peers row "appends/s, default vs raw floor without FTS (NORMAL)" is a wall-clock
ratio; this splits it into load-independent parts. Each side is one process that
appends APPENDS messages (peers._texts, ~500 bytes) one transaction each, counted
once with APPENDS and once with none (the difference over APPENDS is one append):

- `forest`: `Forest.append` on a fresh store, background index off (the
  benchmark's appends never meet the maintenance thread: it waits for a pause of
  50 ms, and callgrind's slowness would let it run);
- `sql`: the same five statements `Forest.append` runs (BEGIN IMMEDIATE, PRAGMA
  data_version, the entry insert with its trigger, the head upsert, COMMIT) with
  precomputed values on a copy of such a store: what the library's schema costs;
- `floor`: the peers benchmark's floor (peers.FLOOR_SCHEMA, one row and a head
  upsert per transaction, values precomputed).

    PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/append_ir.py

prints instructions per append for each side and the ratios. Needs valgrind.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

WORK = Path(__file__).parent / ".work"
APPENDS = 1000


def _side(mode: str, n: int) -> None:
    os.environ["FOREST_SEMANTIC"] = "off"
    import orjson

    import harness
    import peers
    from sessionforest import Forest
    from sessionforest.ids import iso, new_id, utc_now
    from sessionforest.store.sqlite.paths import APPEND_HEAD
    from sessionforest.store.sqlite.rows import APPEND_ENTRY

    texts = peers._texts(APPENDS)  # the same work on both runs of a side
    payloads = [peers._payload(t) for t in texts]
    bodies = [orjson.dumps(p).decode() for p in payloads]
    ids = [new_id() for _ in texts]
    stamp = iso(utc_now())
    path = WORK / f"append-ir-{mode}.db"
    harness.remove_db(path)
    if mode == "forest":
        forest = Forest.open(path, background_index=False)
        sid = forest.create_session("peers")
        forest.append(sid, "user.message", payloads[0])
        for payload in payloads[:n]:
            forest.append(sid, "user.message", payload)
    elif mode == "sql":
        shutil.copy(WORK / "append-ir-template.db", path)
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        sid, head, seq = conn.execute(
            "SELECT session_id, active_entry_id, path_length FROM session_heads"
        ).fetchone()
        ex = conn.execute
        for i in range(n):
            ex("BEGIN IMMEDIATE")
            ex("PRAGMA data_version").fetchone()
            ex(APPEND_ENTRY, (ids[i], sid, head, seq + 1, 2, "user.message", bodies[i],
                              "visible", stamp, None, seq))  # fmt: skip
            ex(APPEND_HEAD, (sid, ids[i], stamp, ids[i], seq + 1, 1))
            ex("COMMIT")
            head, seq = ids[i], seq + 1
    else:
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        for sql in peers.FLOOR_SCHEMA:
            conn.execute(sql)
        ex = conn.execute
        head = None
        for i in range(n):
            ex("BEGIN IMMEDIATE")
            ex(peers.FLOOR_INSERT, (ids[i], "s", head, i + 1, bodies[i], stamp))
            ex(peers.FLOOR_HEAD, ("s", ids[i], stamp))
            ex("COMMIT")
            head = ids[i]
    os._exit(0)  # no close: its catch-up is not an append's


def _template() -> None:
    os.environ["FOREST_SEMANTIC"] = "off"
    import harness
    import peers
    from sessionforest import Forest

    path = WORK / "append-ir-template.db"
    harness.remove_db(path)
    with Forest.open(path) as forest:
        sid = forest.create_session("peers")
        forest.append(sid, "user.message", peers._payload("the first message"))


def _count(mode: str, n: int) -> int:
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
         sys.executable, __file__, mode, str(n)],
        capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"},
    )  # fmt: skip
    found = re.search(r"Collected : (\d+)", out.stderr)
    assert found is not None, out.stderr
    return int(found.group(1))


def main() -> None:
    WORK.mkdir(exist_ok=True)
    _template()
    per = {m: (_count(m, APPENDS) - _count(m, 0)) / APPENDS for m in ("forest", "sql", "floor")}
    for mode, ir in per.items():
        print(f"{mode:>6}: {ir / 1000:7.1f} K instructions per append")
    print(f"floor / forest: {per['floor'] / per['forest']:.0%} (the row's target: >= 60%)")
    print(f"floor / sql (the schema alone): {per['floor'] / per['sql']:.0%}")
    print(f"forest - sql (the library's Python): {(per['forest'] - per['sql']) / 1000:.1f} K")


if __name__ == "__main__":
    if len(sys.argv) == 3:
        _side(sys.argv[1], int(sys.argv[2]))
    else:
        main()
