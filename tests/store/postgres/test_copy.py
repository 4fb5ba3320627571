"""`forest copy` between SQLite and PostgreSQL, both ways: exact, idempotent, verified."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from conformance.backends.postgres import new_schema_url
from sessionforest import Forest
from sessionforest.cli.main import cli
from sessionforest.demo import build_demo
from sessionforest.errors import ImportRejected
from sessionforest.io.copy import copy_store


def _fill(forest: Forest) -> list[str]:
    """A demo session (branches, a checkpoint, stamps), an empty one, a hidden one with
    a moved head, and one in a spaceless script."""
    ids = [build_demo(forest), forest.create_session("empty")]
    hidden = forest.create_session("worker", visibility="hidden")
    first = forest.append(hidden, "user.message", {"content": [{"type": "text", "text": "a"}]})
    forest.append(hidden, "assistant.message", {"content": [{"type": "text", "text": "b"}]})
    forest.move_head(hidden, first.id)
    cjk = forest.create_session("数据库")
    forest.append(cjk, "user.message", {"content": [{"type": "text", "text": "我们的数据库很慢"}]})
    return [*ids, hidden, cjk]


def _stored(forest: Forest) -> dict[str, object]:
    out: dict[str, object] = {}
    bulk = forest._backend.bulk
    for info in forest.sessions():
        out[info.id] = (bulk.stored_session(info.id), list(bulk.stored_entries(info.id)))
    return out


def _copy(source: str, target: str) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["copy", "--from", source, "--to", target, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_sqlite_to_postgres_and_back_is_exact_and_idempotent(tmp_path: Path, pg_url: str) -> None:
    source = str(tmp_path / "source.db")
    with Forest.open(source) as forest:
        ids = _fill(forest)
        before = _stored(forest)
    first = _copy(source, pg_url)
    assert first | {"verified": 4} == {
        "copied": 4, "present": 0, "quarantined": [], "mismatched": [],
        "entries": first["entries"], "verified": 4, "ok": True,
    }  # fmt: skip
    assert first["entries"] == sum(len(v[1]) for v in before.values())  # type: ignore[index]
    again = _copy(source, pg_url)
    assert (again["copied"], again["present"], again["entries"]) == (0, 4, 0)
    with Forest.open(pg_url) as pg:
        assert _stored(pg) == before
        # What reads and search see is the same too.
        assert pg.active_path(ids[0]) == Forest.open(source).active_path(ids[0])
        assert pg.search_chats("数据库").hits[0].session_id == ids[3]
    back = str(tmp_path / "back.db")
    returned = _copy(pg_url, back)
    assert (returned["copied"], returned["ok"]) == (4, True)
    with Forest.open(back) as forest:
        assert _stored(forest) == before


def test_a_session_that_differs_on_the_other_side_fails_the_verification(
    tmp_path: Path, pg_url: str
) -> None:
    source = str(tmp_path / "source.db")
    with Forest.open(source) as forest:
        sid = build_demo(forest)
    _copy(source, pg_url)
    with Forest.open(pg_url) as pg:
        pg.append(sid, "user.message", {"content": [{"type": "text", "text": "only here"}]})
    result = CliRunner().invoke(cli, ["copy", "--from", source, "--to", pg_url])
    assert result.exit_code == 1
    assert f"session {sid} differs between the two stores" in result.stderr


# --- the bulk path: many sessions in one transaction, their rows in one COPY ----------

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
]
QUERIES = ["alpha bravo", "kilo", "delta echo foxtrot", "lima india", "数据库", "nothing here"]


def _appended(forest: Forest) -> list[str]:
    """Sessions written by appends, one at a time: titles, words, a branch, a summary."""
    ids = _fill(forest)
    for n in range(12):
        sid = forest.create_session(f"chat {WORDS[n]} {n}")
        for i in range(8):
            text = " ".join(WORDS[(n * i + k) % len(WORDS)] for k in range(1 + i % 4))
            kind = "user.message" if i % 2 == 0 else "assistant.message"
            forest.append(sid, kind, {"content": [{"type": "text", "text": text}]})
        ids.append(sid)
    return ids


def _index_state(url: str) -> dict[str, object]:
    """What search reads besides the entries: statistics and digests, exactly."""
    with psycopg.connect(url) as conn:
        return {
            table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall())
            for table in ("search_terms", "digest_terms", "chat_digests")
        }


def test_a_bulk_loaded_store_searches_and_checks_as_one_built_by_appends(
    tmp_path: Path, pg_url: str
) -> None:
    with Forest.open(pg_url) as built:
        _appended(built)
    # PostgreSQL (appends) -> SQLite -> another PostgreSQL schema, in groups through COPY.
    middle = str(tmp_path / "middle.db")
    _copy(pg_url, middle)
    loaded = new_schema_url()
    report = _copy(middle, loaded)
    assert (report["copied"], report["ok"]) == (16, True)
    assert _index_state(loaded) == _index_state(pg_url)
    with Forest.open(pg_url) as one, Forest.open(loaded) as other:
        assert _stored(other) == _stored(one)
        assert other.check().to_json() == one.check().to_json()
        for query in QUERIES:
            mine, theirs = one.search_chats(query), other.search_chats(query)
            assert [h.session_id for h in theirs.hits] == [h.session_id for h in mine.hits]
            # Equal but for recency, which moves with the clock between the two calls.
            assert [h.score for h in theirs.hits] == pytest.approx([h.score for h in mine.hits])


def test_restore_sessions_is_all_or_nothing_and_refuses_an_id_staged_twice(
    pg_forest: Forest, tmp_path: Path
) -> None:
    source = Forest.open(str(tmp_path / "s.db"))
    with source:
        first = build_demo(source)
        second = source.create_session("second")
        source.append(second, "user.message", {"content": [{"type": "text", "text": "x"}]})
        bulk = source._backend.bulk
        one = (bulk.stored_session(first), list(bulk.stored_entries(first)))
        two = (bulk.stored_session(second), list(bulk.stored_entries(second)))
    # The second session reuses an id of the first: both are staged before one COPY.
    clash = two[1][0]._replace(id=one[1][3].id)
    target = pg_forest._backend.bulk
    try:
        target.restore_sessions([(*one, "a"), (two[0], [clash], "b")])
    except ImportRejected as exc:
        assert exc.path == "b" and f"session {first}" in str(exc)
    else:
        raise AssertionError("a repeated id was written")
    assert pg_forest.sessions() == []
    assert target.restore_sessions([(*one, "a"), (*two, "b")]) == len(one[1]) + len(two[1])
    assert [s.id for s in pg_forest.sessions()] == [first, second]
    assert pg_forest.check().ok


def test_a_copy_whose_group_fails_writes_the_sessions_before_the_bad_one(
    tmp_path: Path, pg_url: str
) -> None:
    source = str(tmp_path / "source.db")
    with Forest.open(source) as forest:
        ids = [forest.create_session(f"s{n}") for n in range(3)]
        entries = [
            forest.append(sid, "user.message", {"content": [{"type": "text", "text": "t"}]})
            for sid in ids
        ]
        bulk = forest._backend.bulk
        stored = bulk.stored_session(ids[1])
        rows = list(bulk.stored_entries(ids[1]))
    with Forest.open(pg_url) as pg:
        # The destination already holds the middle session's entry id, in another session.
        pg._backend.bulk.restore_session(
            replace(stored, id="other"), [r._replace(session_id="other") for r in rows], source="x"
        )
        with Forest.open(source) as src, pytest.raises(ImportRejected) as caught:
            copy_store(src._backend.store, src._backend.bulk, pg._backend.bulk, source_name="src")
        assert caught.value.path == f"src session {ids[1]}"
        assert caught.value.entry_id == entries[1].id
        assert "session other" in caught.value.reason
        # The group failed whole, then went again one session at a time: the first landed.
        assert [s.id for s in pg.sessions()] == ["other", ids[0]]
        assert pg.check().ok
