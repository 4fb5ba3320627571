"""Native JSONL export/import: exact round trips; bad files rejected whole, with file and line."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest

from conformance.backends import Harness
from sessionforest import Forest, ImportRejected, InvalidArgument, SessionExists


def user(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def exported(forest: Forest, sid: str) -> str:
    out = io.StringIO()
    forest.export_jsonl(sid, out)
    return out.getvalue()


@pytest.fixture
def branched(forest: Forest, harness: Harness) -> str:
    sid = forest.create_session(title="sqlite lock", harness="claude-code", cwd="/src/app")
    root = forest.append(sid, "user.message", user("why is the db locked? 🔒"))
    forest.append(
        sid,
        "assistant.message",
        {"content": [{"type": "text", "text": "WAL"}], "model": "m", "usage": {"in": 3}},
    )
    forest.checkpoint(sid, "diagnosed", summary="found the lock")
    forest.append(sid, "provider.notification", {"provider": "p", "event": {"n": 1.5}})
    forest.move_head(sid, root.id)
    forest.append(sid, "assistant.message", {"content": [{"type": "text", "text": "retry"}]})
    forest.append(sid, "user.message", user("stamped"), stamp={"head": "abc", "dirty": "h"})
    return sid


def test_round_trip_is_exact(
    forest: Forest, harness: Harness, branched: str, tmp_path: Path
) -> None:
    text = exported(forest, branched)
    path = tmp_path / "s.jsonl"
    path.write_text(text)
    other = harness.fresh()
    sid = other.import_jsonl(path)
    assert sid == branched
    assert exported(other, sid) == text
    original, copy = forest.session(sid), other.session(sid)
    assert (copy.title, copy.harness, copy.cwd, copy.head) == (
        original.title,
        original.harness,
        original.cwd,
        original.head,
    )
    assert [e.to_json() for e in other.entries(sid)] == [e.to_json() for e in forest.entries(sid)]
    assert [c.payload["label"] for c in other.checkpoints(sid)] == ["diagnosed"]
    assert other.check().ok
    other.close()


def test_importing_an_existing_session_is_refused(
    forest: Forest, branched: str, tmp_path: Path
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(exported(forest, branched))
    with pytest.raises(SessionExists):
        forest.import_jsonl(path)


def _lines(forest: Forest, sid: str) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in exported(forest, sid).splitlines()]


def _corrupt_cases(lines: list[dict[str, Any]]) -> list[tuple[str, list[str], int, str]]:
    """(name, file lines, 1-based bad line, text the error must contain)."""
    dumps = [orjson.dumps(o).decode() for o in lines]
    bad_payload = dict(lines[1], payload={"content": []})
    dup = dict(lines[3], id=lines[1]["id"], sequence=3)
    forward = dict(lines[2], parent_id=lines[4]["id"])
    gap = dict(lines[3], sequence=9)
    future = dict(lines[2], semantic_schema_version=7)
    # No entry may be older than its parent: a reader of the child must read the path.
    older = dict(lines[2], semantic_schema_version=1)
    cases = [
        ("not json", [*dumps[:3], "{oops", *dumps[3:]], 4, "line"),
        ("bad payload", [dumps[0], orjson.dumps(bad_payload).decode(), *dumps[2:]], 2, "content"),
        ("duplicate id", [*dumps[:3], orjson.dumps(dup).decode()], 4, "repeats"),
        ("forward parent", [*dumps[:2], orjson.dumps(forward).decode(), *dumps[3:]], 3, "precede"),
        ("sequence gap", [*dumps[:3], orjson.dumps(gap).decode(), *dumps[4:]], 4, "sequence"),
        ("future version", [*dumps[:2], orjson.dumps(future).decode(), *dumps[3:]], 3, "version"),
        ("older than parent", [*dumps[:2], orjson.dumps(older).decode(), *dumps[3:]], 3, "newer"),
        ("no header", dumps[1:], 1, "header"),
    ]
    return cases


def test_bad_files_name_file_and_line_and_leave_the_store_unchanged(
    forest: Forest, harness: Harness, branched: str, tmp_path: Path
) -> None:
    lines = _lines(forest, branched)
    lines[0]["id"] = "fresh-session"  # so SessionExists is not what fails
    target = harness.fresh()
    keep = target.create_session(title="already here")
    target.append(keep, "user.message", user("precious"))
    before = harness.dump(target)
    for name, file_lines, line, needle in _corrupt_cases(lines):
        path = tmp_path / f"{name.replace(' ', '-')}.jsonl"
        path.write_text("\n".join(file_lines) + "\n")
        with pytest.raises(ImportRejected) as err:
            target.import_jsonl(path)
        assert err.value.path == str(path), name
        assert err.value.line == line, (name, str(err.value))
        assert needle in str(err.value), (name, str(err.value))
        assert harness.dump(target) == before, name
    target.close()


def test_an_id_already_in_the_store_is_rejected(
    forest: Forest, harness: Harness, branched: str, tmp_path: Path
) -> None:
    lines = _lines(forest, branched)
    lines[0]["id"] = "another-session"
    path = tmp_path / "clash.jsonl"
    path.write_text("\n".join(orjson.dumps(o).decode() for o in lines) + "\n")
    before = harness.dump(forest)
    with pytest.raises(ImportRejected, match="already exists") as err:
        forest.import_jsonl(path)
    assert err.value.line == 2
    assert harness.dump(forest) == before


def test_leftovers_of_a_deleted_session_row_are_not_adopted(
    forest: Forest, harness: Harness, branched: str, tmp_path: Path
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(exported(forest, branched))
    harness.delete_session_row(forest, branched)
    before = harness.dump(forest)
    # Before, the row went in and the entries then failed on an internal assertion.
    with pytest.raises(ImportRejected) as err:
        forest.import_jsonl(path)
    assert err.value.line == 1
    assert f"forest repair {branched}" in str(err.value)
    assert harness.dump(forest) == before


# --- nothing in the file is trusted ----------------------------------------------------

# (name, line to change (0: header), field, value, text the error must contain)
UNTRUSTED = [
    ("newer format", 0, "format_version", 2, "format_version 2 is not one this sessionforest"),
    ("no format version", 0, "format_version", None, "header is missing 'format_version'"),
    ("format version as text", 0, "format_version", "1", "'format_version' must be int"),
    ("empty session id", 0, "id", "", "header field 'id' must not be empty"),
    ("session id with a space", 0, "id", "a b", "must not contain whitespace"),
    ("session id with NUL", 0, "id", "a\x00b", "control characters (found '\\x00')"),
    ("session id too long", 0, "id", "x" * 129, "at most 128 characters, got 129"),
    ("session id like an option", 0, "id", "--db", "must not start with '-'"),
    ("status", 0, "status", "paused", "'status' must be one of active, ended, archived"),
    ("visibility", 0, "visibility", "secret", "'visibility' must be one of top-level, hidden"),
    ("header time", 0, "created_at", "yesterday", "must be an ISO 8601 timestamp"),
    ("title a number", 0, "title", 5, "'title' must be str"),
    ("harness with a bidi override", 0, "harness", "ab\u202ec", "'harness' must not contain"),
    ("head id", 0, "head", "a\tb", "header field 'head' must not contain"),
    ("entry id", 2, "id", "a\nb", "entry field 'id' must not contain"),
    ("empty entry id", 2, "id", "", "entry field 'id' must not be empty"),
    ("entry time", 2, "created_at", "2025-13-01T00:00:00Z", "must be an ISO 8601 timestamp"),
    ("entry time a number", 2, "created_at", 1700000000, "'created_at' must be str"),
]


@pytest.mark.parametrize(
    ("name", "index", "field", "value", "needle"), UNTRUSTED, ids=[c[0] for c in UNTRUSTED]
)
def test_untrusted_fields_are_refused_with_file_line_and_entry(
    forest: Forest,
    harness: Harness,
    branched: str,
    tmp_path: Path,
    name: str,
    index: int,
    field: str,
    value: Any,
    needle: str,
) -> None:
    lines = _lines(forest, branched)
    lines[0]["id"] = "fresh-session"
    if value is None:
        del lines[index][field]
    else:
        lines[index][field] = value
    path = tmp_path / "untrusted.jsonl"
    path.write_text("\n".join(orjson.dumps(o).decode() for o in lines) + "\n")
    target = harness.fresh()
    before = harness.dump(target)
    with pytest.raises(ImportRejected) as err:
        target.import_jsonl(path)
    assert (err.value.path, err.value.line) == (str(path), index + 1)
    assert needle in str(err.value), str(err.value)
    # An entry is named when its id is one; a bad id is not echoed as an id.
    expected = lines[index]["id"] if index and field != "id" else None
    assert err.value.entry_id == expected
    assert harness.dump(target) == before
    target.close()


def test_a_title_is_stored_as_every_title_is(
    forest: Forest, harness: Harness, branched: str, tmp_path: Path
) -> None:
    # One rule (ids.title_text) for RPC, the API and every importer: one clean line.
    lines = _lines(forest, branched)
    lines[0]["id"] = "titled"
    lines[0]["title"] = "\x1b[2Ja\nb\u202e\x00 c"
    path = tmp_path / "titled.jsonl"
    path.write_text("\n".join(orjson.dumps(o).decode() for o in lines) + "\n")
    other = harness.fresh()
    other.import_jsonl(path)
    assert other.session("titled").title == "[2Ja b c"
    other.close()


def test_times_are_stored_in_the_forest_form(
    forest: Forest, harness: Harness, branched: str, tmp_path: Path
) -> None:
    lines = _lines(forest, branched)
    lines[0]["id"] = "zoned"
    lines[0]["created_at"] = "2025-03-01T10:00:00+02:00"
    lines[1]["created_at"] = "2025-03-01T10:00:01.123456+02:00"
    path = tmp_path / "zoned.jsonl"
    path.write_text("\n".join(orjson.dumps(o).decode() for o in lines) + "\n")
    other = harness.fresh()
    other.import_jsonl(path)
    assert other.session("zoned").created_at == "2025-03-01T08:00:00.000Z"
    assert other.entries("zoned")[0].created_at == "2025-03-01T08:00:01.123Z"
    other.close()


def test_a_line_over_the_cap_is_refused_before_it_is_loaded(
    forest: Forest, harness: Harness, branched: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sessionforest.io import common

    lines = _lines(forest, branched)
    lines[0]["id"] = "capped"
    lines[2]["payload"]["padding"] = "x" * (3 << 20)
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(orjson.dumps(o).decode() for o in lines) + "\n")
    monkeypatch.setattr(common, "MAX_LINE", 1 << 20)
    before = harness.dump(forest)
    with pytest.raises(ImportRejected, match=r":3: line is longer than 1 MiB; refusing to load"):
        forest.import_jsonl(path)
    assert harness.dump(forest) == before


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"session_id": "a b"}, "invalid session id: 'a b' must not contain whitespace"),
        ({"session_id": "-x"}, "must not start with '-'"),
        ({"session_id": "x" * 200}, "at most 128 characters"),
        ({"session_id": "a\x1bb"}, "must not contain whitespace or control characters"),
    ],
)
def test_create_session_takes_ids_by_the_same_rule(
    forest: Forest, kwargs: dict[str, Any], needle: str
) -> None:
    with pytest.raises(InvalidArgument) as err:
        forest.create_session(**kwargs)
    assert needle in str(err.value)
    assert forest.sessions() == []
