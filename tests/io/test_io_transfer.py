"""Whole sessions moved exactly through the BulkStore contract: what `forest copy` is made of.

`stored_session` + `stored_entries` read one session out; `restore_session`
writes it into another store, all or nothing. Driven over two real SQLite
files, each `SQLiteBulk` on its own connection, as the facade will hold one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, closing, contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sessionforest import (
    Forest,
    ImportRejected,
    SessionExists,
    SessionQuarantined,
    UnknownSession,
    UnsupportedSchemaVersion,
)
from sessionforest.model import StoredEntry, StoredSession
from sessionforest.store.base import BulkStore
from sessionforest.store.sqlite.bulk import SQLiteBulk
from sessionforest.store.sqlite.connection import open_store, transaction
from sessionforest.store.sqlite.search import catchup, large

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
CLAUDE = DATA / "claude-code/synthetic/dag_simple.jsonl"
TABLES = ("sessions", "session_entries", "session_heads")
# Not the materialised active path (path_tip, path_length): a cache each store keeps
# as its own heads move, compared with the parent links by `check`.
COLUMNS = {"session_heads": "session_id, active_entry_id, updated_at"}
BIG = large.LARGE_PAYLOAD + 1000  # indexed from Python, not by the triggers


def user(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


@contextmanager
def bulk_at(path: Path) -> Iterator[SQLiteBulk]:
    """A `SQLiteBulk` on a connection of its own, as the facade's database gives it one."""
    target, opened = open_store(
        path, readonly=False, create=True, durability="normal", busy_timeout_ms=5000
    )
    conn = opened.conn

    @contextmanager
    def write() -> Iterator[sqlite3.Connection]:
        with transaction(conn, target, None):
            yield conn

    def read() -> AbstractContextManager[sqlite3.Connection]:
        return nullcontext(conn)

    try:
        yield SQLiteBulk(target, write, read, catchup.catch_up)
    finally:
        opened.close()


def dump(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row a copy must carry, in a stable order (rowids differ between stores)."""
    with closing(sqlite3.connect(path)) as conn:
        return {
            t: conn.execute(f"SELECT {COLUMNS.get(t, '*')} FROM {t} ORDER BY 1, 2").fetchall()
            for t in TABLES
        }


def copy(src: BulkStore, dst: BulkStore, session_ids: list[str]) -> dict[str, int]:
    """What `forest copy` does per session, and its check: the same rows on both sides."""
    copied = {}
    for sid in session_ids:
        session = src.stored_session(sid)
        copied[sid] = dst.restore_session(
            session, src.stored_entries(sid), source=f"source store, session {sid}"
        )
        assert dst.stored_session(sid) == session
        assert list(dst.stored_entries(sid)) == list(src.stored_entries(sid, through=copied[sid]))
    return copied


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A store holding every shape of session a copy must carry exactly."""
    path = tmp_path / "source.db"
    with Forest.open(path) as forest:
        sid = forest.create_session("branched", "claude-code", "/src/app")
        root = forest.append(sid, "user.message", user("why is the db locked?"))
        forest.append(sid, "assistant.message", user("WAL"), stamp={"head": "abc", "dirty": "h"})
        forest.checkpoint(sid, "diagnosed")
        forest.move_head(sid, root.id)
        filler = " ".join(f"filler{i % 997}" for i in range(BIG // 9))
        forest.append(sid, "assistant.message", user(f"retry zanzibar\n{filler}"))
        forest.create_session("never appended", visibility="hidden")
        forest.import_chats("claude-code", CLAUDE)  # source fields, summary, origin cwd
    return path


def test_a_store_copied_session_by_session_holds_the_same_rows(
    source: Path, tmp_path: Path
) -> None:
    target = tmp_path / "target.db"
    Forest.open(target).close()
    with Forest.open(source) as forest:
        sessions = [s.id for s in forest.sessions()]
        counts = {s.id: s.entry_count for s in forest.sessions()}
    with bulk_at(source) as src, bulk_at(target) as dst:
        assert copy(src, dst, sessions) == counts
        assert large.is_large(list(dst.stored_entries(sessions[0]))[3].payload)
    assert dump(target) == dump(source)
    with Forest.open(target) as copied:
        assert copied.check().ok
        # The large message went through the Python indexing path, as on an import.
        [hit] = copied.search_session_entries(sessions[0], "zanzibar")
        assert hit.sequence == 4
        imported = copied.sessions()[-1]
        assert imported.source is not None and imported.source.format == "claude-code"


def test_a_session_never_appended_to_is_copied_with_its_empty_head_row(
    source: Path, tmp_path: Path
) -> None:
    # Every session has a head row from its creation (migration session_listing): one
    # never appended to holds no head, and its time is the session's creation.
    with Forest.open(source) as forest:
        info = next(s for s in forest.sessions() if s.title == "never appended")
    with bulk_at(source) as src, bulk_at(tmp_path / "target.db") as dst:
        session = src.stored_session(info.id)
        assert (session.head, session.head_moved_at) == (None, info.created_at)
        assert dst.restore_session(session, src.stored_entries(info.id), source="copy") == 0
    [kept] = [h for h in dump(source)["session_heads"] if h[0] == info.id]
    assert dump(tmp_path / "target.db")["session_heads"] == [kept]


def test_a_stream_bounded_by_through_is_the_snapshot_a_copy_verifies(source: Path) -> None:
    with Forest.open(source) as forest:
        sid = forest.sessions()[0].id
    with bulk_at(source) as bulk:
        assert [e.sequence for e in bulk.stored_entries(sid, through=2)] == [1, 2]
        assert [e.sequence for e in bulk.stored_entries(sid)] == [1, 2, 3, 4]
        first = next(bulk.stored_entries(sid))
    assert isinstance(first.payload, str) and first.stamp is None  # stored text, as is


def test_restoring_an_existing_session_changes_nothing(source: Path) -> None:
    before = dump(source)
    with bulk_at(source) as bulk:
        sid = next(iter(before["sessions"]))[0]
        with pytest.raises(SessionExists):
            bulk.restore_session(bulk.stored_session(sid), bulk.stored_entries(sid), source="x")
    assert dump(source) == before


SESSION = StoredSession(
    "s1", "t", "h", None, "2025-01-01T00:00:00.000Z", "active", "top-level", "e2",
    "2025-01-01T00:00:00.000Z",
)  # fmt: skip


def row(eid: str, sequence: int, parent: str | None = None, **changed: Any) -> StoredEntry:
    entry = StoredEntry(eid, "s1", parent, sequence, 2, "user.message", '{"content":[]}',
                        "context", "2025-01-01T00:00:00.000Z", None)  # fmt: skip
    return entry._replace(**changed)


def bad_rows() -> list[tuple[str, StoredSession, list[StoredEntry], str, str | None]]:
    """(case, session, rows, what the error says, the entry it names)."""
    ok = [row("e1", 1), row("e2", 2, "e1")]
    repeated = [row("e1", 1), row("e1", 2)]
    return [
        ("gap", SESSION, [row("e1", 1), row("e2", 3, "e1")], "sequence 3 where 2", "e2"),
        ("other session", SESSION, [row("e1", 1, session_id="s2")], "belongs to session s2", "e1"),
        ("unreadable", SESSION, [row("e1", 1, semantic_schema_version=9)], "version 9", "e1"),
        ("repeated id", SESSION, repeated, "repeats the id of sequence 1", "e1"),
        ("forward parent", SESSION, [row("e1", 1, "e2"), row("e2", 2)], "does not precede", "e1"),
        ("missing parent", SESSION, [row("e1", 1), row("e2", 2, "zz")], "zz does not exist", "e2"),
        ("newer parent", SESSION, [row("e1", 1, semantic_schema_version=2),
                                   row("e2", 2, "e1", semantic_schema_version=1)], "newer", "e2"),
        ("head elsewhere", replace(SESSION, head="zz"), ok, "head zz is not an entry", None),
        ("no head", replace(SESSION, head=None), ok, "head is null but", None),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "session", "rows", "needle", "entry"), bad_rows(), ids=[c[0] for c in bad_rows()]
)
def test_rows_that_break_the_tree_are_refused_whole(
    tmp_path: Path,
    case: str,
    session: StoredSession,
    rows: list[StoredEntry],
    needle: str,
    entry: str | None,
) -> None:
    path = tmp_path / "target.db"
    Forest.open(path).close()
    before = dump(path)
    with bulk_at(path) as bulk, pytest.raises(ImportRejected) as err:
        bulk.restore_session(session, rows, source="copy of s1")
    assert needle in err.value.reason, case
    assert (err.value.path, err.value.line, err.value.entry_id) == ("copy of s1", None, entry)
    assert dump(path) == before


def test_an_id_another_session_holds_is_named_with_its_owner(tmp_path: Path) -> None:
    path = tmp_path / "target.db"
    with Forest.open(path) as forest:
        other = forest.create_session("other")
        taken = forest.append(other, "user.message", user("mine")).id
    before = dump(path)

    def lines(sequence: int) -> int:
        return 10 + sequence  # as if the rows stood on lines 11, 12, ...

    with bulk_at(path) as bulk, pytest.raises(ImportRejected) as err:
        rows = [row("e1", 1), row(taken, 2, "e1")]
        bulk.restore_session(replace(SESSION, head="e1"), rows, source="f", locate=lines)
    assert (err.value.line, err.value.entry_id) == (12, taken)
    assert err.value.reason == f"id already exists in this store (session {other})"
    assert dump(path) == before


def test_a_stream_that_fails_midway_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "target.db"
    Forest.open(path).close()
    before = dump(path)

    def rows() -> Iterator[StoredEntry]:
        for n in range(1, 5000):  # past a batch: some rows were inserted already
            yield row(f"e{n}", n, f"e{n - 1}" if n > 1 else None)
        raise ImportRejected("f", 5001, "the source went away")

    with bulk_at(path) as bulk, pytest.raises(ImportRejected, match="went away"):
        bulk.restore_session(SESSION, rows(), source="f")
    assert dump(path) == before


def test_reading_out_fails_closed(source: Path) -> None:
    with Forest.open(source) as forest:
        sid = forest.sessions()[0].id
    with closing(sqlite3.connect(source)) as conn, conn:  # as a newer sessionforest left it
        conn.execute(
            "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
            "semantic_schema_version, kind, payload, context_visibility, created_at) "
            "VALUES ('future', ?, NULL, 5, 99, 'user.message', '{}', 'context', 'x')",
            (sid,),
        )
    with bulk_at(source) as bulk:
        with pytest.raises(UnknownSession):
            bulk.stored_session("nowhere")
        with pytest.raises(UnsupportedSchemaVersion, match="future"):
            list(bulk.stored_entries(sid))
        assert [e.sequence for e in bulk.stored_entries(sid, through=4)] == [1, 2, 3, 4]
    with Forest.open(source) as forest:
        assert forest.check().quarantined == (sid,)
    with bulk_at(source) as bulk, pytest.raises(SessionQuarantined):
        bulk.stored_session(sid)
