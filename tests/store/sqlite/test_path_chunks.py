"""Path chunks (store/sqlite/chunks.py): a catch-up packs a long path, a first read
takes the chunks on its path and the rest as rows, `check` compares every chunk
with the entries, and a store without chunks reads as before."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sessionforest import Forest
from sessionforest.store.sqlite import chunks

from .conftest import rows, text

CHUNKS = "SELECT depth, entries, last_sequence FROM session_path_chunks ORDER BY depth, entries"


def fill(forest: Forest, sid: str, n: int, parent: str | None = None) -> list[str]:
    made = []
    for i in range(n):
        entry = forest.append(sid, "user.message", text(f"m{i}"), parent=parent,
                              stamp={"i": i} if i % 3 else None)  # fmt: skip
        parent = None
        made.append(entry.id)
    return made


def seal(forest: Forest) -> None:
    """What the maintenance thread's steps and a writer's close do: index, then pack."""
    forest._store.index_some()  # type: ignore[attr-defined]


def fresh(forest: Forest) -> None:
    forest._store.derived.paths.clear()  # type: ignore[attr-defined]


def as_json(entries: list[Any]) -> list[dict[str, Any]]:
    return [dict(e.to_json()) for e in entries]


def walked(forest: Forest, sid: str, limit: int | None = None) -> list[dict[str, Any]]:
    head = forest.head(sid)
    assert head is not None
    return as_json(forest.path_to(sid, head, limit=limit))


def test_a_catch_up_packs_a_long_path_and_a_first_read_uses_it(forest: Forest) -> None:
    sid = forest.create_session("long")
    fill(forest, sid, 600)
    assert rows(forest.path, CHUNKS) == []  # appends only note the session
    seal(forest)
    assert rows(forest.path, CHUNKS) == [(0, 256, 256), (256, 256, 512), (512, 88, 600)]
    fresh(forest)
    got = forest.active_path(sid)
    assert as_json(got) == walked(forest, sid)
    assert got[0]._row[6] is None  # from a chunk: the payload came decoded
    # Each load hands out its own payloads, cached or not.
    got[0].payload["content"] = "changed"
    assert forest.active_path(sid)[0].payload == text("m0")
    for limit in (1, 40, 88, 89, 300, 600, 700):
        assert as_json(forest.active_path(sid, limit=limit)) == walked(forest, sid, limit)
    # More turns: the short chunk is rewritten with them, once enough have come.
    fill(forest, sid, 20)
    seal(forest)
    assert rows(forest.path, CHUNKS)[-1] == (512, 88, 600)  # 20 < SEAL_AT_LEAST
    assert as_json(forest.active_path(sid)) == walked(forest, sid)
    fill(forest, sid, 200)
    forest.close()  # a writer's close seals too
    with Forest.open(forest.path) as again:
        assert rows(again.path, CHUNKS) == [(0, 256, 256), (256, 256, 512), (512, 256, 768),
                                            (768, 52, 820)]  # fmt: skip
        assert as_json(again.active_path(sid)) == walked(again, sid)
        assert again.check().ok


def test_a_branch_reads_only_its_own_chunks(forest: Forest) -> None:
    sid = forest.create_session("branched")
    made = fill(forest, sid, 300)
    seal(forest)
    fill(forest, sid, 300, parent=made[279])  # at depth 279: the first chunk is shared
    seal(forest)
    assert rows(forest.path, CHUNKS) == [(0, 256, 256), (256, 44, 300), (256, 256, 532),
                                         (512, 68, 600)]  # fmt: skip
    fresh(forest)
    assert as_json(forest.active_path(sid)) == walked(forest, sid)
    forest.move_head(sid, made[-1])  # back to the first line: its chunk is still right
    fresh(forest)
    assert as_json(forest.active_path(sid)) == walked(forest, sid)
    assert forest.check().ok


def test_check_finds_a_chunk_that_is_not_the_entries_and_repair_drops_it(
    forest: Forest,
) -> None:
    sid = forest.create_session("tampered")
    fill(forest, sid, 300)
    seal(forest)
    with closing(sqlite3.connect(forest.path)) as conn, conn:
        (body,) = conn.execute("SELECT body FROM session_path_chunks WHERE depth = 0").fetchone()
        columns = list(msgspec.msgpack.decode(body))
        columns[5][7] = text("not what was said")  # a payload
        conn.execute(
            "UPDATE session_path_chunks SET body = ? WHERE depth = 0",
            (msgspec.msgpack.encode(columns),),
        )
    problems = forest.check().problems
    assert [p.code for p in problems] == ["path-mismatch"]
    assert "payload or stamp differs" in problems[0].detail
    forest.repair(sid)
    assert rows(forest.path, CHUNKS) == []
    assert forest.check().ok
    fresh(forest)
    assert as_json(forest.active_path(sid)) == walked(forest, sid)


def test_check_finds_a_chunk_value_of_another_type(forest: Forest) -> None:
    """A stamp's 4 packed as 4.0 (equal in Python) is a chunk that is not the entries."""
    sid = forest.create_session("retyped")
    fill(forest, sid, 300)
    seal(forest)
    with closing(sqlite3.connect(forest.path)) as conn, conn:
        (body,) = conn.execute("SELECT body FROM session_path_chunks WHERE depth = 0").fetchone()
        columns = list(msgspec.msgpack.decode(body))
        assert columns[8][4] == {"i": 4}
        columns[8][4] = {"i": 4.0}
        conn.execute(
            "UPDATE session_path_chunks SET body = ? WHERE depth = 0",
            (msgspec.msgpack.encode(columns),),
        )
    problems = forest.check().problems
    assert [p.code for p in problems] == ["path-mismatch"]
    assert "payload or stamp differs" in problems[0].detail


def test_a_chunk_whose_links_are_wrong_is_not_trusted(forest: Forest) -> None:
    sid = forest.create_session("relinked")
    fill(forest, sid, 300)
    seal(forest)
    with closing(sqlite3.connect(forest.path)) as conn, conn:
        (body,) = conn.execute("SELECT body FROM session_path_chunks WHERE depth = 0").fetchone()
        columns = list(msgspec.msgpack.decode(body))
        columns[1][10] = columns[0][3]  # entry 10 names entry 3 as its parent
        conn.execute(
            "UPDATE session_path_chunks SET body = ? WHERE depth = 0",
            (msgspec.msgpack.encode(columns),),
        )
    fresh(forest)
    got = forest.active_path(sid)
    assert as_json(got) == walked(forest, sid)
    assert got[0]._row[6] is not None  # read by rows
    assert not forest.check().ok


def test_a_store_without_chunks_and_a_short_path_read_as_before(
    forest: Forest, tmp_path: Path
) -> None:
    sid = forest.create_session("short")
    fill(forest, sid, chunks.CHUNK - 1)
    seal(forest)
    assert rows(forest.path, CHUNKS) == []  # shorter than a chunk: never packed
    long = forest.create_session("long")
    fill(forest, long, 300)
    seal(forest)
    with closing(sqlite3.connect(forest.path)) as conn, conn:
        conn.execute("DELETE FROM session_path_chunks")  # as a store before the migration
    fresh(forest)
    assert as_json(forest.active_path(long)) == walked(forest, long)
    assert as_json(forest.active_path(sid)) == walked(forest, sid)


@pytest.mark.parametrize("version", [1])
def test_entries_a_read_upgrades_end_the_packed_part(forest: Forest, version: int) -> None:
    sid = forest.create_session("old")
    made = fill(forest, sid, 300)
    with closing(sqlite3.connect(forest.path)) as conn, conn:
        # A v1 entry at depth 100, appended by SQL below the head's line.
        conn.execute("DROP TRIGGER session_entries_no_update")
        conn.execute(
            "UPDATE session_entries SET semantic_schema_version = ? WHERE id = ?",
            (version, made[100]),
        )
    forest._store.derived._unsealed.add(sid)  # type: ignore[attr-defined]
    seal(forest)
    assert rows(forest.path, CHUNKS) == [(0, 100, 100)]
    fresh(forest)
    assert as_json(forest.active_path(sid)) == walked(forest, sid)


def test_a_maintenance_step_packs_a_long_path_a_few_chunks_at_a_time(forest: Forest) -> None:
    """A step seals about SEAL_STEP entries (whole chunks, at most one past), and keeps the session
    noted for the next (a 100,000-entry path packed in one transaction held the write
    lock ~150 ms); step by step ends where one unlimited catch-up does."""
    from sessionforest.store.sqlite import derived as derived_module

    sid = forest.create_session("long")
    fill(forest, sid, 700)
    derived = forest._store.derived  # type: ignore[attr-defined]
    db = forest._store._db  # type: ignore[attr-defined]
    with db.write() as conn:
        assert derived.seal_some(conn, 200) is True  # one whole chunk: past the limit
    assert rows(forest.path, CHUNKS) == [(0, 256, 256)]
    with db.write() as conn:
        assert derived.seal_some(conn, 600) is False  # two more: the rest, its short tail
    assert rows(forest.path, CHUNKS) == [(0, 256, 256), (256, 256, 512), (512, 188, 700)]
    fresh(forest)
    assert as_json(forest.active_path(sid)) == walked(forest, sid)
    assert derived_module.SEAL_STEP % chunks.CHUNK == 0
    assert forest.check().ok


def test_depths_between_clips_the_ranges_to_a_window() -> None:
    depths = chunks.Depths([(1, 10), (20, 29), (40, 44)])  # depths 0-9, 10-19, 20-24
    assert depths.between(0, 25) == [(1, 10), (20, 29), (40, 44)]
    assert depths.between(5, 15) == [(6, 10), (20, 24)]
    assert depths.between(10, 20) == [(20, 29)]
    assert depths.between(12, 22) == [(22, 29), (40, 41)]
    assert depths.between(3, 4) == [(4, 4)]


def test_a_searchs_catch_up_indexes_but_packs_nothing(tmp_path: Path) -> None:
    """A search needs the index, not the chunks: its catch-up leaves the paths to the
    maintenance thread and a writer's close (a search after a long import would pack
    the whole import)."""
    with Forest.open(tmp_path / "s.db", background_index=False) as forest:
        sid = forest.create_session("long")
        fill(forest, sid, 300)
        assert forest.search_session_entries(sid, "m299")  # indexed by its catch-up
        assert rows(forest.path, CHUNKS) == []
        seal(forest)
        assert rows(forest.path, CHUNKS) == [(0, 256, 256), (256, 44, 300)]
