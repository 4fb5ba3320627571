"""Released migrations run their released text: a store built by them has main's schema.

`fixtures/schema_main.json` was captured from a fresh store made by main's code
(commit a4b5ce4), before the search migrations' statements were fixed as text
(first as Python literals, now store/sqlite/sql/*.sql); every object (type,
name, table, SQL text, creation order) must match.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from sessionforest import Forest
from sessionforest.store.sqlite import migrations
from sessionforest.store.sqlite.search import large, schema

FIXTURE = Path(__file__).parent / "fixtures" / "schema_main.json"


def _schema(path: Path) -> list[list[str | None]]:
    with closing(sqlite3.connect(path)) as conn:
        rows = conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid"
        ).fetchall()
    return [list(row) for row in rows]


def test_a_fresh_store_has_exactly_the_schema_main_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    captured = json.loads(FIXTURE.read_text())
    names = [m.name for m in migrations.MIGRATIONS]
    # Only the migrations released when the fixture was captured: later ones may add objects.
    released = captured["migrations"]
    assert names[: len(released)] == released
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[: len(released)])
    path = tmp_path / "fresh.db"
    Forest.open(path).close()
    assert _schema(path) == captured["sqlite_master"]


def test_the_fixture_holds_every_search_object() -> None:
    # A fixture captured from the wrong store would make the test above vacuous.
    names = {row[1] for row in json.loads(FIXTURE.read_text())["sqlite_master"]}
    for name in (
        "session_entry_fts",
        "chat_digest_grams",
        "search_entry_added",
        "search_entry_grams_added",
        "search_digest_grams_summary",
    ):
        assert name in names


def test_the_live_search_code_agrees_with_the_released_triggers() -> None:
    # large.index_large and the queries use these; the released triggers hold them as text.
    released = migrations.released("search_large_payloads_outside_sql")
    triggers = {sql.split()[2]: sql for sql in released if sql.startswith("CREATE")}
    added = triggers["search_entry_added"]
    assert schema.TEXT_OF.format(k="NEW.kind", p="NEW.payload") in added
    assert f"<< {schema.SESSION_SHIFT}) + NEW.sequence" in added
    assert f"length(CAST(NEW.payload AS BLOB)) <= {large.LARGE_PAYLOAD} AND" in added
    grams_added = triggers["search_entry_grams_added"]
    assert f"INSERT INTO {schema.GRAM_ENTRY_TABLE}(rowid, text)" in grams_added
    assert f"|| '{schema.GRAM_PAD}')" in grams_added
    kinds = ", ".join(f"'{k}'" for k in schema.INDEXED_KINDS)
    assert f"NEW.kind IN ({kinds})" in added
    assert "substr(coalesce(" in triggers["search_digest_first_message"]
    assert f", 1, {schema.OPENING_CHARS})" in triggers["search_digest_first_message"]
