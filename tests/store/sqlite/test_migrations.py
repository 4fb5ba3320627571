"""Schema migrations on real files: a committed schema-version-5 database (the
linear agent_events era, written by fixtures/make_v5_db.py) opened by today's
Forest, fresh databases, a refused migration, and two processes migrating at once."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from sessionforest import Forest, MigrationError
from sessionforest.kinds import validate_payload
from sessionforest.store.sqlite import migrations

FIXTURES = Path(__file__).parent / "fixtures"
V5_DB = FIXTURES / "v5.db"
MAKE_V5 = FIXTURES / "make_v5_db.py"

NAMES = [m.name for m in migrations.MIGRATIONS]
PRE_NAMES_ERA = NAMES[:5]
LEGACY_SESSIONS = ["legacy-linear", "legacy-shuffled", "legacy-odd", "legacy-orphan"]

# The pre-names era left no record but user_version; these are recorded for it.
BEFORE_NAMES = "before names"


# --- helpers ---------------------------------------------------------------------


def v5_copy(tmp_path: Path, name: str = "forest.db") -> Path:
    target = tmp_path / name
    shutil.copyfile(V5_DB, target)
    return target


def connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def schema(path: Path) -> list[tuple[str, str, str, str | None]]:
    with closing(connect(path)) as conn:
        return sorted(
            conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall(),
            key=lambda row: (row[0], row[1]),
        )


def tables(path: Path) -> set[str]:
    with closing(connect(path)) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def user_version(path: Path) -> int:
    with closing(connect(path)) as conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


def dump(path: Path, *, skip: tuple[str, ...] = ()) -> list[str]:
    """Every schema statement and row, as SQL text; lines mentioning `skip` tables dropped."""
    with closing(connect(path)) as conn:
        lines = list(conn.iterdump())
    return [line for line in lines if not any(f'"{t}"' in line or f" {t} " in line for t in skip)]


def legacy_events(path: Path) -> dict[str, list[tuple[int, int, str, str, str]]]:
    """agent_events per session in the order the migration must follow (seq, then id)."""
    out: dict[str, list[tuple[int, int, str, str, str]]] = {}
    with closing(connect(path)) as conn:
        rows = conn.execute(
            "SELECT session_id, id, seq, event_type, payload, created_at FROM agent_events "
            "ORDER BY session_id, seq, id"
        )
        for sid, *event in rows:
            out.setdefault(sid, []).append(tuple(event))  # type: ignore[arg-type]
    return out


def rows_of(path: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with closing(connect(path)) as conn:
        return conn.execute(sql, args).fetchall()


def strings_in(value: Any) -> list[str]:
    """Every string anywhere inside a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    return []


@pytest.fixture
def v5(tmp_path: Path) -> Path:
    return v5_copy(tmp_path)


@pytest.fixture
def migrated(v5: Path) -> Iterator[Forest]:
    forest = Forest.open(v5)
    yield forest
    forest.close()


# --- the fixture is what it claims to be ------------------------------------------


def test_fixture_has_the_schema_of_the_first_five_migrations(tmp_path: Path) -> None:
    reference = tmp_path / "reference.db"
    conn = connect(reference)
    for migration in migrations.MIGRATIONS[:5]:
        for statement in migrations.statements(migration.sql):
            conn.execute(statement)
    conn.close()

    assert schema(V5_DB) == schema(reference)
    assert "forest_migrations" not in tables(V5_DB)
    assert user_version(V5_DB) == 5
    columns = [r[1] for r in rows_of(V5_DB, "PRAGMA table_info(sessions)")]
    assert columns == ["id", "title", "harness", "cwd", "created_at"]


def test_fixture_content_covers_the_legacy_cases() -> None:
    events = legacy_events(V5_DB)
    assert sorted(events) == sorted(LEGACY_SESSIONS)
    types = {e[2] for session in events.values() for e in session}
    assert {"user_message", "assistant_message", "tool_call", "tool_result", "status"} <= types
    assert "usage_report" in types
    unparsable = []
    for session in events.values():
        for event in session:
            try:
                json.loads(event[3])
            except ValueError:
                unparsable.append(event)
    assert len(unparsable) == 1
    # One session's seq order differs from its insertion (id) order.
    assert [e[0] for e in events["legacy-shuffled"]] != sorted(
        e[0] for e in events["legacy-shuffled"]
    )
    # legacy-orphan has events but no session row; forest-native has entries and no events.
    sessions = {r[0] for r in rows_of(V5_DB, "SELECT id FROM sessions")}
    assert "legacy-orphan" not in sessions
    assert "forest-native" in sessions and "forest-native" not in events
    assert rows_of(V5_DB, "SELECT COUNT(*) FROM session_entries WHERE session_id = 'forest-native'")
    assert rows_of(V5_DB, "SELECT session_id FROM session_heads") == [("forest-native",)]


def test_fixture_script_regenerates_the_committed_database(tmp_path: Path) -> None:
    out = tmp_path / "regenerated.db"
    # -I -S: no site-packages, so the script runs on the standard library alone (it
    # cannot lean on sessionforest, or on anything installed).
    result = subprocess.run(
        [sys.executable, "-I", "-S", str(MAKE_V5), str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr

    assert schema(out) == schema(V5_DB)
    assert user_version(out) == user_version(V5_DB) == 5
    for table in ("sessions", "agent_events", "session_entries", "session_heads"):
        count = f"SELECT COUNT(*) FROM {table}"
        assert rows_of(out, count) == rows_of(V5_DB, count), table
    assert dump(out) == dump(V5_DB)


# --- opening a schema-version-5 database -----------------------------------------


def test_agent_events_table_is_gone(migrated: Forest, v5: Path) -> None:
    assert "agent_events" not in tables(v5)
    assert not [r for r in schema(v5) if r[3] and "agent_events" in r[3]]


def test_every_migration_is_recorded_and_user_version_counts_them(
    migrated: Forest, v5: Path
) -> None:
    recorded = dict(rows_of(v5, "SELECT name, applied_at FROM forest_migrations"))
    assert sorted(recorded) == sorted(NAMES)
    assert len(rows_of(v5, "SELECT name FROM forest_migrations")) == len(NAMES)
    assert {n for n, at in recorded.items() if at == BEFORE_NAMES} == set(PRE_NAMES_ERA)
    # The migrations this open ran are recorded after the pre-names era, in order.
    ran = [r[0] for r in rows_of(v5, "SELECT name FROM forest_migrations ORDER BY rowid")][5:]
    assert ran == NAMES[5:]
    assert user_version(v5) == len(NAMES) == migrations.schema_version()


def test_pre_names_era_is_recorded_in_migration_order(migrated: Forest, v5: Path) -> None:
    in_order = [r[0] for r in rows_of(v5, "SELECT name FROM forest_migrations ORDER BY rowid")]
    assert in_order == NAMES


def test_reopening_a_migrated_database_applies_nothing(migrated: Forest, v5: Path) -> None:
    migrated.close()
    conn = connect(v5)
    try:
        assert migrations.migrate(conn) == []
    finally:
        conn.close()
    with Forest.open(v5) as again:
        assert again.check().ok
    assert len(rows_of(v5, "SELECT name FROM forest_migrations")) == len(NAMES)


# Opens the store in argv[1] read-write; prints whether the released files were read.
OPEN_AND_REPORT = """\
import sys
from sessionforest import Forest
from sessionforest.store.sqlite import migrations
with Forest.open(sys.argv[1]) as forest:
    print(len(forest.migrated), "MIGRATIONS" in vars(migrations))
"""


def opened_in_a_process(path: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", OPEN_AND_REPORT, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_only_a_store_that_needs_migrating_reads_the_released_files(
    v5: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An open of an up-to-date store compares names only (a CLI call's cost, issue 23).
    assert opened_in_a_process(v5) == f"{len(NAMES) - 5} True"
    assert opened_in_a_process(v5) == "0 False"
    short = tmp_path / "short.db"  # one migration short, as a store after an upgrade
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:-1])
    with closing(connect(short)) as conn:
        assert migrations.migrate(conn) == NAMES[:-1]
    monkeypatch.undo()
    assert opened_in_a_process(short) == "1 True"
    assert opened_in_a_process(short) == "0 False"


@pytest.mark.parametrize("sid", LEGACY_SESSIONS)
def test_each_legacy_session_becomes_one_chain_in_seq_order(tmp_path: Path, sid: str) -> None:
    path = v5_copy(tmp_path)
    events = legacy_events(path)[sid]
    with Forest.open(path) as forest:
        entries = forest.entries(sid)
        assert [e.id for e in entries] == [f"legacy-{event[0]}" for event in events]
        assert [e.sequence for e in entries] == list(range(1, len(events) + 1))
        assert [e.parent_id for e in entries] == [None] + [e.id for e in entries[:-1]]
        assert [e.created_at for e in entries] == [event[4] for event in events]
        assert forest.head(sid) == entries[-1].id
        assert [e.id for e in forest.active_path(sid)] == [e.id for e in entries]
        assert [t.id for t in forest.tips(sid)] == [entries[-1].id]


def test_shuffled_session_follows_seq_not_insertion_order(migrated: Forest) -> None:
    kinds = [e.kind for e in migrated.entries("legacy-shuffled")]
    assert kinds == [
        "user.message",
        "assistant.message",
        "tool.started",
        "tool.completed",
        "session.status",
    ]


def test_payloads_read_back_in_v2_shapes_at_schema_version_1(migrated: Forest, v5: Path) -> None:
    linear = migrated.entries("legacy-linear")
    assert [(e.kind, e.context_visibility, e.payload) for e in linear] == [
        (
            "user.message",
            "context",
            {"content": [{"type": "text", "text": "The date test fails on CI"}]},
        ),
        (
            "assistant.message",
            "context",
            {
                "model": "claude-3-5-sonnet",
                "content": [
                    {"type": "text", "text": "Let me run it."},
                    {
                        "type": "tool_call",
                        "id": "toolu_01",
                        "name": "bash",
                        "input": {"command": "pytest -k date"},
                    },
                ],
            },
        ),
        (
            "tool.started",
            "hidden",
            {"call_id": "toolu_01", "name": "bash", "input": {"command": "pytest -k date"}},
        ),
        (
            "tool.completed",
            "context",
            {"call_id": "toolu_01", "output": "1 failed: timezone", "is_error": True},
        ),
        (
            "assistant.message",
            "context",
            {
                "model": "claude-3-5-sonnet",
                "content": [{"type": "text", "text": "The test assumes UTC; pinned the clock."}],
            },
        ),
        ("session.status", "hidden", {"status": "completed", "reason": "done"}),
    ]
    # An empty legacy text adds no empty text block; the tool call still comes through.
    shuffled = migrated.entries("legacy-shuffled")[1]
    assert shuffled.payload["content"] == [
        {
            "type": "tool_call",
            "id": "call_a",
            "name": "rename",
            "input": {"from": "cfg", "to": "config"},
        }
    ]

    legacy = [e for sid in ("legacy-linear", "legacy-shuffled") for e in migrated.entries(sid)]
    # Upgraded on read only: the stored rows keep version 1, and each payload
    # meets today's contract for its kind.
    assert {e.semantic_schema_version for e in legacy} == {1}
    assert {
        r[0]
        for r in rows_of(
            v5,
            "SELECT DISTINCT semantic_schema_version FROM session_entries WHERE id LIKE 'legacy-%'",
        )
    } == {1}
    for entry in legacy:
        validate_payload(entry.kind, entry.payload)
    stored = rows_of(v5, "SELECT payload FROM session_entries WHERE id = 'legacy-4'")[0][0]
    assert json.loads(stored) == {
        "tool_use_id": "toolu_01",
        "name": "bash",
        "arguments": {"command": "pytest -k date"},
    }


def test_unknown_event_type_is_kept_as_hidden_notification(migrated: Forest) -> None:
    usage = migrated.entries("legacy-odd")[1]
    assert usage.kind == "provider.notification"
    assert usage.context_visibility == "hidden"
    assert usage.semantic_schema_version == 1
    event = usage.payload["event"]
    assert event["event_type"] == "usage_report"
    assert (event["input_tokens"], event["output_tokens"]) == (1200, 340)
    validate_payload(usage.kind, usage.payload)


def _unparsable_event(path: Path) -> tuple[int, str]:
    for session in legacy_events(path).values():
        for event_id, _seq, _type, raw, _at in session:
            try:
                json.loads(raw)
            except ValueError:
                return event_id, raw
    raise AssertionError("the fixture has no unparsable event")


def test_nothing_is_lost(tmp_path: Path) -> None:
    path = v5_copy(tmp_path)
    events = legacy_events(path)
    bad_id, raw = _unparsable_event(path)
    with Forest.open(path) as forest:
        for sid, session_events in events.items():
            assert forest.session(sid).entry_count == len(session_events), sid
        bad = next(e for sid in events for e in forest.entries(sid) if e.id == f"legacy-{bad_id}")
        assert raw in strings_in(bad.payload)
        assert forest.check().entries_checked == sum(map(len, events.values())) + 4


def test_unparsable_event_is_kept_as_hidden_notification(tmp_path: Path) -> None:
    path = v5_copy(tmp_path)
    bad_id, raw = _unparsable_event(path)
    with Forest.open(path) as forest:
        bad = forest.entry("legacy-odd", f"legacy-{bad_id}")
        assert bad.kind == "provider.notification"
        assert bad.context_visibility == "hidden"
        assert raw in strings_in(bad.payload)
        validate_payload(bad.kind, bad.payload)


def test_existing_forest_session_is_unchanged(tmp_path: Path) -> None:
    path = v5_copy(tmp_path)
    # The columns the v5 store had (later migrations add columns, NULL on old rows).
    columns = ", ".join(
        r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(session_entries)")
    )
    entries_sql = (
        f"SELECT {columns} FROM session_entries WHERE session_id = 'forest-native' "
        "ORDER BY sequence"
    )
    head_sql = (
        "SELECT session_id, active_entry_id, updated_at FROM session_heads "
        "WHERE session_id = 'forest-native'"
    )
    session_sql = (
        "SELECT id, title, harness, cwd, created_at FROM sessions WHERE id = 'forest-native'"
    )
    before = [rows_of(path, sql) for sql in (entries_sql, head_sql, session_sql)]
    with Forest.open(path) as forest:
        assert [rows_of(path, sql) for sql in (entries_sql, head_sql, session_sql)] == before
        assert forest.head("forest-native") == "native-02"
        assert [e.id for e in forest.active_path("forest-native")] == ["native-01", "native-02"]
        assert [(e.id, e.parent_id) for e in forest.entries("forest-native")] == [
            ("native-01", None),
            ("native-02", "native-01"),
            ("native-03", "native-01"),
            ("native-04", "native-03"),
        ]
        assert {e.semantic_schema_version for e in forest.entries("forest-native")} == {2}
        assert forest.entry("forest-native", "native-02").stamp == {
            "head": "0123456789abcdef0123456789abcdef01234567",
            "dirty": "e3b0c442",
        }


def test_orphan_events_get_a_session_row(migrated: Forest) -> None:
    info = migrated.session("legacy-orphan")
    assert info.entry_count == 2
    assert info.created_at == "2024-03-01T09:20:01.000Z"  # its first event
    assert info.status == "active"
    assert info.quarantine is None
    assert info.head == "legacy-12"
    assert [s.id for s in migrated.sessions()].count("legacy-orphan") == 1
    # Sessions that had a row keep it as it was.
    assert migrated.session("legacy-linear").title == "Fix the flaky test"


def test_check_is_ok_after_migration(migrated: Forest) -> None:
    report = migrated.check()
    assert report.ok, report.problems
    assert report.sessions_checked == 5
    assert report.quarantined == ()


def test_append_to_migrated_session_gets_the_next_sequence(tmp_path: Path) -> None:
    path = v5_copy(tmp_path)
    with Forest.open(path) as forest:
        before = forest.entries("legacy-linear")
        entry = forest.append(
            "legacy-linear", "user.message", {"content": [{"type": "text", "text": "thanks"}]}
        )
        assert entry.sequence == len(before) + 1
        assert entry.parent_id == before[-1].id
        assert entry.semantic_schema_version == 2
    with Forest.open(path) as forest:
        path_ids = [e.id for e in forest.active_path("legacy-linear")]
        assert path_ids == [e.id for e in before] + [entry.id]
        assert [e.semantic_schema_version for e in forest.active_path("legacy-linear")] == [
            1
        ] * len(before) + [2]
        assert forest.check().ok


# --- fresh databases ---------------------------------------------------------------


def test_fresh_database_runs_every_migration_once_in_order(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    conn = connect(path)
    try:
        assert migrations.migrate(conn) == NAMES
        assert migrations.migrate(conn) == []
    finally:
        conn.close()
    with Forest.open(path) as forest:
        forest.create_session(session_id="s")
    conn = connect(path)
    try:
        assert migrations.migrate(conn) == []
    finally:
        conn.close()
    recorded = rows_of(path, "SELECT name, applied_at FROM forest_migrations ORDER BY rowid")
    assert [name for name, _ in recorded] == NAMES
    assert BEFORE_NAMES not in {at for _, at in recorded}
    assert user_version(path) == len(NAMES)
    assert "agent_events" not in tables(path)


def test_each_migration_is_recorded_under_its_own_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert len(set(NAMES)) == len(NAMES)
    every = list(migrations.MIGRATIONS)
    path = tmp_path / "stepwise.db"
    conn = connect(path)
    try:
        # Replay history one release at a time: release k knew the first k migrations.
        for released in range(1, len(every) + 1):
            monkeypatch.setattr(migrations, "MIGRATIONS", every[:released])
            assert migrations.migrate(conn) == [NAMES[released - 1]]
            last = conn.execute(
                "SELECT name, applied_at FROM forest_migrations ORDER BY rowid DESC LIMIT 1"
            ).fetchone()
            assert last[0] == NAMES[released - 1]
            assert last[1] != BEFORE_NAMES
            assert conn.execute("PRAGMA user_version").fetchone()[0] == released
    finally:
        conn.close()
    recorded = [r[0] for r in rows_of(path, "SELECT name FROM forest_migrations ORDER BY rowid")]
    assert recorded == NAMES


# --- a migration that must refuse ------------------------------------------------


def _mixed_history(tmp_path: Path) -> Path:
    """A v5 database where forest-native has agent_events as well as forest entries."""
    path = v5_copy(tmp_path)
    with closing(connect(path)) as conn:
        conn.execute(
            "INSERT INTO agent_events(session_id, seq, event_type, payload, created_at) "
            "VALUES ('forest-native', 1, 'user_message', '{\"text\": \"twice\"}', "
            "'2024-03-02T09:59:00.000Z')"
        )
    return path


def test_mixed_history_refuses_to_migrate_and_keeps_the_data(tmp_path: Path) -> None:
    path = _mixed_history(tmp_path)
    before = dump(path)
    with pytest.raises(MigrationError) as caught:
        Forest.open(path)
    assert caught.value.name == "agent_events_to_forest"
    assert "forest-native" in str(caught.value)
    assert user_version(path) == 5
    assert "agent_events" in tables(path)
    # Every legacy table and row is exactly as it was.
    assert dump(path, skip=("forest_migrations",)) == before
    # And it keeps refusing: no second open slips through half-migrated.
    with pytest.raises(MigrationError):
        Forest.open(path)
    assert user_version(path) == 5


def test_mixed_history_leaves_the_file_unchanged(tmp_path: Path) -> None:
    path = _mixed_history(tmp_path)
    before = dump(path)
    with pytest.raises(MigrationError):
        Forest.open(path)
    assert dump(path) == before


# --- two processes migrating one fresh file ------------------------------------------

OPENER = r"""
import json, sqlite3, sys
from sessionforest import Forest
from sessionforest.store.sqlite import migrations

path, mode = sys.argv[1], sys.argv[2]
print("ready", flush=True)
sys.stdin.readline()
if mode == "open":
    with Forest.open(path) as forest:
        forest.create_session(session_id=sys.argv[3])
    print(json.dumps(None), flush=True)
else:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 30000")
    print(json.dumps(migrations.migrate(conn)), flush=True)
    conn.close()
"""


def race(path: Path, mode: str, processes: int = 2) -> list[Any]:
    """Start `processes` openers, release them together; each one's output, parsed."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, str(path), mode, f"s{i}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(processes)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline() == "ready\n"
        for proc in procs:  # imports are done: release them as close together as we can
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            results.append(json.loads(out))
        return results
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_two_processes_migrating_one_file_run_each_migration_once(tmp_path: Path) -> None:
    for trial in range(3):
        path = tmp_path / f"fresh-{trial}.db"
        # WAL is switched on beforehand: this race is about migrate() alone
        # (the journal-mode switch inside Forest.open is the test below).
        with closing(connect(path)) as conn:
            assert conn.execute("PRAGMA journal_mode = WAL").fetchone() == ("wal",)
        first, second = race(path, "migrate")
        assert sorted(first + second) == sorted(NAMES)
        assert not set(first) & set(second)
        recorded = [
            r[0] for r in rows_of(path, "SELECT name FROM forest_migrations ORDER BY rowid")
        ]
        assert recorded == NAMES
        assert user_version(path) == len(NAMES)


def test_two_processes_opening_a_fresh_file_both_succeed(tmp_path: Path) -> None:
    for trial in range(6):
        path = tmp_path / f"fresh-{trial}.db"
        race(path, "open")
        recorded = [
            r[0] for r in rows_of(path, "SELECT name FROM forest_migrations ORDER BY rowid")
        ]
        assert recorded == NAMES
        assert user_version(path) == len(NAMES)
        with Forest.open(path) as forest:
            assert sorted(s.id for s in forest.sessions()) == ["s0", "s1"]
