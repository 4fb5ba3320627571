"""Instructions per first read of a 2,000-message history, counted under callgrind.

Wall-clock ratios on a shared machine swing 2x with its load; an instruction count
does not. Build the two stores once, then count a process doing N reads and one
doing none (the difference over N is one read's own work):

    PYTHONPATH=src:benchmarks python benchmarks/first_read_ir.py build
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        python benchmarks/first_read_ir.py forest 10 src      # and with 0
    valgrind ... python benchmarks/first_read_ir.py peer 10   # and with 0

What a fresh process pays to open the store, read the history once and close
(docs/benchmarks.md, section 13) is `forest 0 SRC` minus `imports SRC` (the same
process without the open, the read and the close), with FOREST_SEMANTIC set to
on and to off and PYTHONHASHSEED=0 (bytecode compiled first, see TEAM.md).

`forest` drops the path cache and reads every payload (bench_heavy._first_read's
call); `peer` is `SQLiteSession.get_items()`'s own query and `json.loads` loop
(agents/memory/sqlite_session.py) without its event loop and lock, so its count
is a lower bound of the peer's.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

WORK = Path(__file__).parent / ".work"
# FIRST_READ_IR_DB: another file for the forest store (one per tree, for an A/B).
FOREST_DB = Path(os.environ.get("FIRST_READ_IR_DB", WORK / "ir-forest.db"))
PEER_DB = WORK / "ir-peer.db"
MESSAGES = 2000


def build() -> None:
    import harness
    import peers
    from sessionforest import Forest

    WORK.mkdir(exist_ok=True)
    texts = peers._texts(MESSAGES)
    harness.remove_db(FOREST_DB)
    with Forest.open(FOREST_DB) as forest:
        sid = forest.create_session("peers")
        for text in texts:
            forest.append(sid, "user.message", peers._payload(text))
    harness.remove_db(PEER_DB)
    with sqlite3.connect(PEER_DB) as conn:
        conn.execute(
            "CREATE TABLE agent_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, "
            "session_id TEXT NOT NULL, message_data TEXT NOT NULL)"
        )
        conn.executemany(
            "INSERT INTO agent_messages(session_id, message_data) VALUES ('peers', ?)",
            [(json.dumps({"role": "user", "content": text}),) for text in texts],
        )


def forest_reads(n: int, src: str, open_it: bool = True) -> None:
    sys.path.insert(0, src)
    from sessionforest import Forest

    with closing_conn(FOREST_DB) as conn:
        sid = conn.execute("SELECT session_id FROM session_heads").fetchone()[0]
    if not open_it:
        return
    forest = Forest.open(FOREST_DB)
    cache = forest._store.derived.paths  # type: ignore[attr-defined]
    [e.payload for e in forest.active_path(sid)]
    for _ in range(n):
        cache.clear()
        [e.payload for e in forest.active_path(sid)]
    forest.close()


def peer_reads(n: int) -> None:
    conn = sqlite3.connect(PEER_DB, check_same_thread=False)

    def get_items() -> list[Any]:
        cursor = conn.execute(
            "SELECT message_data FROM agent_messages WHERE session_id = ? ORDER BY id ASC",
            ("peers",),
        )
        items = []
        for (message_data,) in cursor.fetchall():
            try:
                items.append(json.loads(message_data))
            except (json.JSONDecodeError, TypeError):
                continue
        return items

    get_items()
    for _ in range(n):
        get_items()


def closing_conn(path: Path) -> Any:
    from contextlib import closing

    return closing(sqlite3.connect(path))


if __name__ == "__main__":
    if sys.argv[1:2] == ["build"]:
        build()
    elif sys.argv[1:2] == ["forest"] and len(sys.argv) == 4:
        forest_reads(int(sys.argv[2]), sys.argv[3])
    elif sys.argv[1:2] == ["imports"] and len(sys.argv) == 3:
        forest_reads(0, sys.argv[2], open_it=False)
    elif sys.argv[1:2] == ["peer"] and len(sys.argv) == 3:
        peer_reads(int(sys.argv[2]))
    else:
        sys.exit(f"usage: {sys.argv[0]} build | forest N SRC | imports SRC | peer N")
