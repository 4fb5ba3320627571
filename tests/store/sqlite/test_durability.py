"""SQLite's durability modes set the PRAGMAs they promise, a bad mode touches no file,
and opening waits out another process holding a fresh file's write lock.

That racing writers lose nothing is pinned for every backend in
tests/conformance/test_concurrency.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.test_concurrency import processes
from sessionforest import Forest, InvalidArgument

# --- durability modes ----------------------------------------------------------------


def pragma(forest: Forest, name: str) -> Any:
    # synchronous is per connection: only the store's own connection can tell.
    writer = forest._backend.db.writer
    assert writer is not None
    return writer.execute(f"PRAGMA {name}").fetchone()[0]


@pytest.mark.parametrize(("durability", "synchronous"), [(None, 1), ("normal", 1), ("full", 2)])
def test_durability_modes_set_their_pragmas_and_work(
    tmp_path: Path, durability: str | None, synchronous: int
) -> None:
    path = tmp_path / "forest.db"
    options = {} if durability is None else {"durability": durability}
    with Forest.open(path, **options) as forest:
        assert pragma(forest, "synchronous") == synchronous
        assert pragma(forest, "journal_mode") == "wal"
        sid = forest.create_session(session_id="s")
        entry = forest.append(sid, "user.message", {"content": [{"type": "text", "text": "hi"}]})
    with Forest.open(path, **options) as forest:
        assert [e.id for e in forest.entries("s")] == [entry.id]
        assert forest.check().ok


@pytest.mark.parametrize("durability", ["off", "FULL", "", "extra"])
def test_invalid_durability_is_refused_before_touching_the_file(
    tmp_path: Path, durability: str
) -> None:
    path = tmp_path / "nested" / "forest.db"
    with pytest.raises(InvalidArgument) as caught:
        Forest.open(path, durability=durability)
    assert caught.value.argument == "durability"
    assert repr(durability) in str(caught.value)
    assert not path.exists()


# --- opening while another process writes --------------------------------------------

# Creates the file and holds its write lock for a moment, as a second process
# opening (and migrating) the same new store would.
LOCK_HOLDER = r"""
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("CREATE TABLE other_tool(x)")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
conn.close()
"""


def test_open_waits_for_a_writer_on_a_fresh_file(tmp_path: Path) -> None:
    path = tmp_path / "forest.db"
    with processes(LOCK_HOLDER, [str(path), "0.5"]) as (holder,):
        assert holder.stdout is not None
        assert holder.stdout.readline() == "locked\n"
        with Forest.open(path, busy_timeout_ms=10_000) as forest:
            assert pragma(forest, "journal_mode") == "wal"
            forest.create_session(session_id="s")
        assert holder.wait(timeout=10) == 0
