"""`forest copy` between SQLite and PostgreSQL, both ways: exact, idempotent, verified."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from sessionforest import Forest
from sessionforest.cli.main import cli
from sessionforest.demo import build_demo


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
