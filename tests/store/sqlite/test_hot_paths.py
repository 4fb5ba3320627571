"""How SQLite keeps the hot paths fast: the pending index and the materialised path.

`search_pending` notes what appends have not indexed; a writer's background
thread once its appends pause, a search or a closing writer feeds it through
`search_feed`. Most tests here open stores without the background thread, so
what is pending is what the test did; the background tests open them with it.
`session_path_segments` holds the active path as the head moves; `path_tip`
says which head it is for.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from sessionforest import Entry, Forest
from sessionforest.store.sqlite import derived

from .conftest import NOW, indexed, pending, raw_move, rows, text


@pytest.fixture
def forest(tmp_path: Path) -> Iterator[Forest]:
    """A store whose appends stay pending until a search or close (no background thread)."""
    store = Forest.open(tmp_path / "forest.db", clock=lambda: NOW, background_index=False)
    yield store
    store.close()


def materialised(path: Path, sid: str) -> tuple[str | None, list[str]]:
    [(tip, length)] = rows(
        path, "SELECT path_tip, path_length FROM session_heads WHERE session_id = ?", sid
    )
    if length is None:
        return tip, []  # forgotten: reads walk (stale segment rows are ignored)
    segments = segment_rows(path, sid)
    assert all(depth < length for depth, _ in segments)  # none past the length
    ids: list[str] = []
    ends = [depth for depth, _ in segments[1:]] + [length]
    for (depth, first), end in zip(segments, ends, strict=True):
        ids += [
            r[0]
            for r in rows(
                path,
                "SELECT id FROM session_entries WHERE session_id = ? AND sequence >= ? "
                "AND sequence < ? ORDER BY sequence",
                sid,
                first,
                first + end - depth,
            )
        ]
    return tip, ids


def segment_rows(path: Path, sid: str) -> list[tuple[Any, ...]]:
    return rows(
        path,
        "SELECT depth, from_sequence FROM session_path_segments WHERE session_id = ? "
        "ORDER BY depth",
        sid,
    )


def test_an_append_writes_no_index_row_only_a_pending_note(forest: Forest) -> None:
    a = forest.create_session("a")
    b = forest.create_session("b")
    forest.append(a, "user.message", text("apricot"))
    forest.append(a, "user.message", text("banana"))
    forest.append(b, "user.message", text("cherry"))
    assert pending(forest.path) == sorted([(a, 1), (b, 1)])
    assert rows(forest.path, "SELECT count(*) FROM session_entry_fts") == [(0,)]
    # The next search indexes both sessions' entries in one go, then reads.
    assert [h.session_id for h in forest.search_chats("banana").hits] == [a]
    assert pending(forest.path) == []
    assert rows(forest.path, "SELECT count(*) FROM session_entry_fts") == [(3,)]
    forest.append(a, "user.message", text("damson"))
    assert pending(forest.path) == [(a, 3)]  # from the first entry not yet indexed


def test_at_the_bound_a_writer_indexes_in_the_append(
    forest: Forest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(derived, "BOUND", 40)  # 10,000 in use: the same code path
    sid = forest.create_session("t")
    for i in range(39):
        forest.append(sid, "user.message", text(f"m{i}"))
    assert pending(forest.path) == [(sid, 1)]
    forest.append(sid, "user.message", text("the last one"))
    assert pending(forest.path) == []
    assert rows(forest.path, "SELECT count(*) FROM session_entry_fts") == [(40,)]


def test_a_closing_writer_indexes_what_it_left_pending(tmp_path: Path) -> None:
    path = tmp_path / "close.db"
    with Forest.open(path, background_index=False) as forest:
        sid = forest.create_session("t")
        forest.append(sid, "user.message", text("elderberry"))
        assert pending(path) == [(sid, 1)]
    assert pending(path) == []
    # An immutable reader (no other connection open) needs nothing pending.
    with Forest.open(path, readonly=True) as reader:
        assert [h.session_id for h in reader.search_chats("elderberry").hits] == [sid]


def test_a_read_only_opener_indexes_a_live_writers_appends(tmp_path: Path) -> None:
    path = tmp_path / "live.db"
    with Forest.open(path) as writer:
        sid = writer.create_session("t")
        writer.append(sid, "user.message", text("feijoa"))
        with Forest.open(path, readonly=True) as reader:
            assert [h.session_id for h in reader.search_chats("feijoa").hits] == [sid]
        assert pending(path) == []


def test_paths_follow_appends_branches_and_moves(forest: Forest) -> None:
    sid = forest.create_session("t")
    made = [forest.append(sid, "user.message", text(f"m{i}")).id for i in range(6)]
    assert materialised(forest.path, sid) == (made[-1], made)
    assert segment_rows(forest.path, sid) == [(0, 1)]  # a linear chat: one segment
    forest.move_head(sid, made[2])  # back: only the length changes
    assert materialised(forest.path, sid) == (made[2], made[:3])
    assert segment_rows(forest.path, sid) == [(0, 1)]
    other = forest.append(sid, "user.message", text("x"))  # sequence 7 below sequence 3
    assert materialised(forest.path, sid) == (other.id, [*made[:3], other.id])
    assert segment_rows(forest.path, sid) == [(0, 1), (3, 7)]
    more = forest.append(sid, "user.message", text("y"))  # follows 7: no new segment
    assert segment_rows(forest.path, sid) == [(0, 1), (3, 7)]
    assert materialised(forest.path, sid) == (more.id, [*made[:3], other.id, more.id])
    forest.move_head(sid, made[-1])  # across to the old branch: walked back to the fork
    assert materialised(forest.path, sid) == (made[-1], made)
    assert segment_rows(forest.path, sid) == [(0, 1), (3, 4)]
    low = forest.append(sid, "user.message", text("below the root"), parent=made[0])
    assert materialised(forest.path, sid) == (low.id, [made[0], low.id])
    assert segment_rows(forest.path, sid) == [(0, 1), (1, 9)]
    forest.move_head(sid, other.id)  # from below the root across to the middle branch
    assert materialised(forest.path, sid) == (other.id, [*made[:3], other.id])
    for limit in (1, 2, 4, 9):
        expected = [*made[:3], other.id][-limit:]
        assert [e.id for e in forest.active_path(sid, limit=limit)] == expected
    assert forest.check().ok


def test_a_head_moved_behind_the_api_leaves_the_path_stale_and_reads_walk(
    forest: Forest,
) -> None:
    sid = forest.create_session("t")
    made = [forest.append(sid, "user.message", text(f"m{i}")).id for i in range(5)]
    with closing(sqlite3.connect(forest.path)) as conn, conn:
        raw_move(conn, sid, made[1])  # as an import or repair moves heads: no path columns
    assert materialised(forest.path, sid)[0] == made[-1]  # stale: not the head
    assert [e.id for e in forest.active_path(sid)] == made[:2]
    assert [e.id for e in forest.active_path(sid, limit=1)] == [made[1]]
    assert forest.check().ok
    again = forest.append(sid, "user.message", text("again"))
    assert materialised(forest.path, sid) == (again.id, [*made[:2], again.id])


def test_check_finds_a_corrupted_path_quarantines_and_repair_drops_it(forest: Forest) -> None:
    sid = forest.create_session("t")
    made = [forest.append(sid, "user.message", text(f"m{i}")).id for i in range(5)]
    with closing(sqlite3.connect(forest.path)) as conn, conn:
        # Claim a second segment at depth 3 that starts at the first entry again.
        conn.execute(
            "INSERT INTO session_path_segments VALUES (?, 3, 1)",
            (sid,),
        )
    # Reads check each row's parent link and walk instead: never a wrong path.
    assert [e.id for e in forest.active_path(sid)] == made
    assert [e.id for e in forest.active_path(sid, limit=3)] == made[2:]
    report = forest.check()
    assert [(p.code, p.entry_id) for p in report.problems] == [("path-mismatch", made[0])]
    assert report.quarantined == (sid,)
    fixed = forest.repair(sid)
    assert [a.code for a in fixed.actions] == ["dropped-path"]
    assert fixed.released and forest.check().ok
    assert materialised(forest.path, sid) == (None, [])
    assert [e.id for e in forest.active_path(sid)] == made
    last = forest.append(sid, "user.message", text("on"))
    assert materialised(forest.path, sid) == (last.id, [*made, last.id])
    assert forest.check().ok


def test_check_finds_a_segment_past_the_path_and_repair_drops_the_path(forest: Forest) -> None:
    sid = forest.create_session("t")
    made = [forest.append(sid, "user.message", text(f"m{i}")).id for i in range(3)]
    with closing(sqlite3.connect(forest.path)) as conn, conn:
        conn.execute("INSERT INTO session_path_segments VALUES (?, 5, 1)", (sid,))
    assert [e.id for e in forest.active_path(sid)] == made  # reads ignore it
    report = forest.check()
    assert [p.code for p in report.problems] == ["path-mismatch"]
    assert "depth 5" in report.problems[0].detail
    fixed = forest.repair(sid)
    assert [a.code for a in fixed.actions] == ["dropped-path"] and fixed.released
    assert forest.check().ok
    last = forest.append(sid, "user.message", text("on"))  # stored again from the root
    assert materialised(forest.path, sid) == (last.id, [*made, last.id])
    assert forest.check().ok


def test_a_migrated_store_materialises_paths_as_they_are_written(tmp_path: Path) -> None:
    # Sessions from before session_path_segments have no path: reads walk; the next
    # append stores it.
    path = tmp_path / "old.db"
    with Forest.open(path) as forest:
        sid = forest.create_session("t")
        made = [forest.append(sid, "user.message", text(f"m{i}")).id for i in range(3)]
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("UPDATE session_heads SET path_tip = NULL, path_length = NULL")
        conn.execute("DELETE FROM session_path_segments")
    with Forest.open(path) as forest:
        assert [e.id for e in forest.active_path(sid)] == made
        nxt = forest.append(sid, "user.message", text("next"))
    assert materialised(path, sid) == (nxt.id, [*made, nxt.id])


# Catches up a store full of pending entries (a search), printing when it starts.
SEARCHER = r"""
import sys
from sessionforest import Forest

with Forest.open(sys.argv[1]) as forest:
    print("go", flush=True)
    forest.search_chats("anything")
    print("done", flush=True)
"""


@pytest.mark.parametrize("seed", range(3))
def test_a_catch_up_killed_midway_leaves_all_or_nothing(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(derived, "BOUND", 10**9)  # the appends below leave all of it pending
    path = tmp_path / f"kill{seed}.db"
    forest = Forest.open(path, background_index=False)
    sid = forest.create_session("t")
    for i in range(3000):
        forest.append(sid, "user.message", text(f"word{i} and some filler text to index"))
    db = forest._backend.db  # type: ignore[attr-defined]
    db._opened.conn.close()  # leave without the closing writer's catch-up
    assert pending(path) == [(sid, 1)]
    proc = subprocess.Popen(
        [sys.executable, "-c", SEARCHER, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "go"
    time.sleep(random.Random(seed).uniform(0.0, 0.15))
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    indexed_rows = rows(path, "SELECT count(*) FROM session_entry_fts")[0][0]
    # One transaction: the note and the whole batch, or neither.
    assert (pending(path), indexed_rows) in (([(sid, 1)], 0), ([], 3000))
    indexed(path)
    assert rows(path, "SELECT count(*) FROM session_entry_fts") == [(3000,)]
    with Forest.open(path) as again:
        assert [h.sequence for h in again.search_session_entries(sid, "word2999")] == [3000]
        assert again.check().ok


# Appends from another process, then prints the new head's id.
APPENDER = r"""
import sys
from sessionforest import Forest

with Forest.open(sys.argv[1]) as forest:
    parent = sys.argv[3] if len(sys.argv) > 3 else None
    body = {"content": [{"type": "text", "text": "from elsewhere"}]}
    print(forest.append(sys.argv[2], "user.message", body, parent=parent).id, flush=True)
"""


def other_process_appends(path: Path, sid: str, parent: str | None = None) -> str:
    args = [sys.executable, "-c", APPENDER, str(path), sid, *([parent] if parent else [])]
    done = subprocess.run(args, capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.strip()


def traced(forest: Forest) -> list[str]:
    seen: list[str] = []
    forest._backend.db.trace(seen.append)  # type: ignore[attr-defined]
    return seen


def test_a_cached_path_follows_another_process_appending_and_branching(forest: Forest) -> None:
    sid = forest.create_session("t")
    made = [forest.append(sid, "user.message", text(f"m{i}")).id for i in range(5)]
    assert [e.id for e in forest.active_path(sid)] == made  # read whole, cached
    grown = other_process_appends(forest.path, sid)
    seen = traced(forest)
    assert [e.id for e in forest.active_path(sid)] == [*made, grown]
    # Only the new depth was read: a range from sequence 6.
    ranges = [s for s in seen if "sequence >= " in s and "FROM session_entries" in s]
    assert len(ranges) == 1 and "sequence >= 6 AND sequence <= 6" in ranges[0]
    # Another process branches below the second entry: the cached rows are not a
    # prefix of the new path (the new row's parent is not the cached head).
    branch = other_process_appends(forest.path, sid, made[1])
    assert [e.id for e in forest.active_path(sid)] == [*made[:2], branch]
    assert [e.id for e in forest.active_path(sid, limit=2)] == [made[1], branch]
    # ... and back: a move to the old tip reads that path again.
    forest.move_head(sid, grown)
    assert [e.id for e in forest.active_path(sid)] == [*made, grown]
    assert [e.id for e in forest.active_path(sid, limit=3)] == [*made[3:], grown]
    assert forest.check().ok


def test_a_cached_path_hands_each_load_its_own_payloads(forest: Forest) -> None:
    sid = forest.create_session("t")
    forest.append(sid, "user.message", text("kept"))
    first = forest.active_path(sid)
    first[0].payload["content"][0]["text"] = "changed by a caller"
    again = forest.active_path(sid)
    assert again[0].payload == text("kept")
    assert again[0] is not first[0]


def test_a_path_stale_behind_the_cache_is_not_served_from_it(forest: Forest) -> None:
    # A head moved by a writer that does not keep the path (an import, repair):
    # the load walks the parent links, whatever the cache holds.
    sid = forest.create_session("t")
    made = [forest.append(sid, "user.message", text(f"m{i}")).id for i in range(4)]
    assert [e.id for e in forest.active_path(sid)] == made
    with closing(sqlite3.connect(forest.path)) as conn, conn:
        raw_move(conn, sid, made[1])
    assert [e.id for e in forest.active_path(sid)] == made[:2]
    with closing(sqlite3.connect(forest.path)) as conn, conn:
        raw_move(conn, sid, made[-1])  # the path claims to be the head's again
    assert [e.id for e in forest.active_path(sid)] == made


@pytest.mark.parametrize("seed", range(4))
def test_segments_agree_with_the_parent_links_through_random_branches_and_moves(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    with Forest.open(tmp_path / "random.db") as forest, Forest.open(forest.path) as other:
        sid = forest.create_session("t")
        parents: dict[str, str | None] = {}
        head: str | None = None
        for step in range(120):
            writer = rng.choice([forest, other])  # two stores: each with its own cache
            roll = rng.random()
            if head is not None and roll < 0.15:
                head = rng.choice(list(parents))
                writer.move_head(sid, head)
            else:
                below = rng.choice(list(parents)) if parents and roll < 0.35 else head
                made = writer.append(sid, "user.message", text(f"s{step}"), parent=below)
                parents[made.id] = below
                head = made.id
            walk: list[str] = []
            at: str | None = head
            while at is not None:
                walk.append(at)
                at = parents[at]
            walk.reverse()
            reader = rng.choice([forest, other])
            assert [e.id for e in reader.active_path(sid)] == walk
            limit = rng.randint(1, 8)
            assert [e.id for e in reader.active_path(sid, limit=limit)] == walk[-limit:]
        assert materialised(forest.path, sid) == (head, walk)
        assert forest.check().ok


def test_an_append_sees_every_write_since_its_stores_last_append(tmp_path: Path) -> None:
    # Appends keep the state they leave (head, last sequence, path) in memory and
    # trust it only while nothing else wrote: another connection's commit (PRAGMA
    # data_version) or another write of their own store (a move, a failed append).
    from sessionforest.errors import HeadMoved, SessionQuarantined

    path = tmp_path / "states.db"
    with Forest.open(path) as forest, Forest.open(path) as other:
        sid = forest.create_session("t")
        a1 = forest.append(sid, "user.message", text("a1"))
        a2 = forest.append(sid, "user.message", text("a2"))
        b = other.append(sid, "user.message", text("from the other store"))
        a3 = forest.append(sid, "user.message", text("a3"))
        assert (a2.parent_id, b.parent_id, a3.parent_id) == (a1.id, a2.id, b.id)
        assert a3.sequence == 4
        forest.move_head(sid, a1.id)  # a write of its own store, not an append
        a4 = forest.append(sid, "user.message", text("a4"))
        assert (a4.parent_id, a4.sequence) == (a1.id, 5)
        with pytest.raises(HeadMoved):
            forest.append(sid, "user.message", text("refused"), expect_head=a3.id)
        a5 = forest.append(sid, "user.message", text("a5"))
        assert (a5.parent_id, a5.sequence) == (a4.id, 6)
        assert [e.id for e in forest.active_path(sid)] == [a1.id, a4.id, a5.id]
        assert [e.id for e in other.active_path(sid)] == [a1.id, a4.id, a5.id]
        # A write by a plain connection, as another program would make it.
        with closing(sqlite3.connect(path)) as conn, conn:
            conn.execute("UPDATE sessions SET quarantine = 'checked: broken' WHERE id = ?", (sid,))
        with pytest.raises(SessionQuarantined):
            forest.append(sid, "user.message", text("refused too"))


class _FailingCommit:
    """The writer's cursor, except that its next COMMIT fails as a full disk would."""

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self.cursor = cursor
        self.armed = True

    def execute(self, sql: str, *args: Any) -> Any:
        if sql == "COMMIT" and self.armed:
            self.armed = False
            raise sqlite3.OperationalError("database or disk is full")
        return self.cursor.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.cursor, name)


def test_an_append_whose_commit_failed_leaves_no_remembered_state(forest: Forest) -> None:
    from sessionforest.errors import ForestError

    sid = forest.create_session("t")
    first = forest.append(sid, "user.message", text("kept"))
    db = forest._backend.db  # type: ignore[attr-defined]
    real = db.cursor
    db.cursor = _FailingCommit(real)
    try:
        with pytest.raises(ForestError, match="full"):
            forest.append(sid, "user.message", text("lost with its commit"))
    finally:
        db.cursor = real
    after = forest.append(sid, "user.message", text("next"))
    assert (after.parent_id, after.sequence) == (first.id, 2)
    assert [e.id for e in forest.active_path(sid)] == [first.id, after.id]
    assert forest.check().ok


def branch_rows(path: Path) -> int:
    return rows(
        path,
        "SELECT count(*) FROM session_entries INDEXED BY session_entries_branch "
        "WHERE parent_entry_id IS NOT NULL "
        "AND (parent_sequence IS NULL OR parent_sequence <> sequence - 1)",
    )[0][0]


@pytest.mark.parametrize("seed", range(3))
def test_children_and_tips_agree_with_the_parent_links_whoever_wrote_the_rows(
    forest: Forest, seed: int
) -> None:
    # Appends that continue their parent put nothing in the parent index; children
    # and tips find them by sequence. Rows without a parent sequence (stored before
    # it existed, or imported) stay in the index. Both kinds, randomly branched.
    rng = random.Random(seed)
    sid = forest.create_session("t")
    parents: dict[str, str | None] = {}
    order: list[str] = []
    for step in range(150):
        below = rng.choice(order) if order and rng.random() < 0.3 else None
        if rng.random() < 0.25:  # a raw row, as an older sessionforest wrote it
            parent = below if below is not None else (order[-1] if order else None)
            entry_id = f"raw-{step}"
            with closing(sqlite3.connect(forest.path)) as conn, conn:
                conn.execute(
                    "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
                    "semantic_schema_version, kind, payload, context_visibility, created_at) "
                    "VALUES (?, ?, ?, ?, 2, 'user.message', ?, 'context', "
                    "'2024-01-01T00:00:00.000Z')",
                    (entry_id, sid, parent, len(order) + 1, '{"content": []}'),
                )
                conn.execute(
                    "UPDATE session_heads SET active_entry_id = ?, path_tip = NULL, "
                    "path_length = NULL WHERE session_id = ?",
                    (entry_id, sid),
                )
        else:
            made = forest.append(sid, "user.message", text(f"s{step}"), parent=below)
            entry_id, parent = made.id, made.parent_id
        parents[entry_id] = parent
        order.append(entry_id)
    for entry_id in rng.sample(order, 40):
        want = [e for e in order if parents[e] == entry_id]
        assert [e.id for e in forest.children(sid, entry_id)] == want
    childless = [e for e in order if e not in set(parents.values())]
    assert [e.id for e in forest.tips(sid)] == childless
    assert forest.check().ok


def test_a_linear_chat_leaves_the_parent_index_empty(forest: Forest) -> None:
    sid = forest.create_session("t")
    made = [forest.append(sid, "user.message", text(f"m{i}")).id for i in range(20)]
    assert branch_rows(forest.path) == 0
    forest.append(sid, "user.message", text("a branch"), parent=made[4])
    forest.append(sid, "user.message", text("on the branch"))  # follows it: not indexed
    assert branch_rows(forest.path) == 1


def test_check_finds_a_misstated_parent_sequence(forest: Forest) -> None:
    sid = forest.create_session("t")
    first = forest.append(sid, "user.message", text("one"))
    with closing(sqlite3.connect(forest.path)) as conn, conn:
        conn.execute(
            "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
            "semantic_schema_version, kind, payload, context_visibility, created_at, "
            "parent_sequence) VALUES ('liar', ?, ?, 2, 2, 'user.message', '{}', 'context', "
            "'2024-01-01T00:00:00.000Z', 7)",
            (sid, first.id),
        )
    report = forest.check()
    assert [(p.code, p.entry_id) for p in report.problems] == [("parent-sequence-mismatch", "liar")]
    assert "as 7, but the parent has 1" in report.problems[0].detail


def test_grouped_appends_remember_state_as_single_ones_do(tmp_path: Path) -> None:
    # The server's group commit: several appends in one transaction, one refused.
    from sessionforest.errors import HeadMoved
    from sessionforest.store.base import AppendRequest

    path = tmp_path / "group.db"
    with Forest.open(path) as forest, Forest.open(path) as other:
        a, b = forest.create_session("a"), forest.create_session("b")
        a1 = forest.append(a, "user.message", text("a1"))
        done = forest.append_group(
            [
                AppendRequest(a, "user.message", text("a2")),
                AppendRequest(b, "user.message", text("b1"), expect_head=a1.id),  # refused
                AppendRequest(b, "user.message", text("b1 again")),
                AppendRequest(a, "user.message", text("a3")),
            ]
        )
        assert isinstance(done[1], HeadMoved)
        a2, b1, a3 = done[0], done[2], done[3]
        assert isinstance(a2, Entry) and isinstance(b1, Entry) and isinstance(a3, Entry)
        assert (a2.parent_id, a3.parent_id, b1.parent_id) == (a1.id, a2.id, None)
        b2 = forest.append(b, "user.message", text("b2"))
        assert (b2.parent_id, b2.sequence) == (b1.id, 2)
        o = other.append(a, "user.message", text("from the other store"))
        [a4] = forest.append_group([AppendRequest(a, "user.message", text("a4"))])
        assert isinstance(a4, Entry) and (o.parent_id, a4.parent_id) == (a3.id, o.id)
        assert [e.id for e in forest.active_path(a)] == [a1.id, a2.id, a3.id, o.id, a4.id]
        assert forest.check().ok


def test_a_materialised_read_builds_every_field_the_walk_reads(forest: Forest) -> None:
    # The range read leaves out the session and the sequence (a row's place says
    # them) and puts them back: every field of every entry, through several
    # segments, a tail and the cache's new depths, is what the parent-link walk reads.
    sid = forest.create_session("t")
    stamp = {"commit": "c0ffee", "dirty": False}
    made = [
        forest.append(sid, "user.message", text("q"), stamp=stamp),
        forest.append(sid, "assistant.message", text("a"), visibility="hidden", stamp=None),
        forest.append(sid, "user.message", text("r"), created_at="2026-01-02T03:04:05.000Z"),
    ]
    other = forest.create_session("other")  # rows of another session in between
    forest.append(other, "user.message", text("elsewhere"))
    forest.append(sid, "user.message", text("branch"), parent=made[0].id)
    forest.append(sid, "assistant.message", text("on the branch"), stamp={"n": 1})
    assert len(segment_rows(forest.path, sid)) == 2
    head = forest.head(sid)
    assert head is not None

    def walked(limit: int | None = None) -> list[dict[str, Any]]:
        return [dict(e.to_json()) for e in forest.path_to(sid, head, limit=limit)]

    forest._store.derived.paths.clear()
    assert [dict(e.to_json()) for e in forest.active_path(sid)] == walked()
    forest._store.derived.paths.clear()
    assert [dict(e.to_json()) for e in forest.active_path(sid, limit=2)] == walked(2)
    forest.active_path(sid)  # cached; one more depth read on top of it
    grown = forest.append(sid, "user.message", text("grown"))
    head = grown.id
    assert [dict(e.to_json()) for e in forest.active_path(sid)] == walked()
    assert [e.sequence for e in forest.active_path(sid)] == [1, 4, 5, 6]


def test_a_segment_naming_rows_that_are_not_stored_is_walked_around(forest: Forest) -> None:
    sid = forest.create_session("t")
    made = [forest.append(sid, "user.message", text(f"m{i}")).id for i in range(4)]
    with closing(sqlite3.connect(forest.path)) as conn, conn:
        # Depths 2 and 3 claim sequences 50 and 51, which no entry has.
        conn.execute("INSERT INTO session_path_segments VALUES (?, 2, 50)", (sid,))
    forest._store.derived.paths.clear()
    assert [e.id for e in forest.active_path(sid)] == made
    assert [e.id for e in forest.active_path(sid, limit=3)] == made[1:]
    assert [p.code for p in forest.check().problems] == ["path-mismatch"]
