"""Native JSONL: the whole tree of one session, exactly, in a portable text file.

Line 1 is a `session` header (ids, title, harness, cwd, origin_cwd, status,
visibility, head); every further line is one `entry` in sequence order with its id,
parent, kind, schema version, payload, visibility, time and stamp. Labels
live in checkpoint entries. Import streams the file (memory stays flat),
checks parents in the database rather than in a Python set, and is all or
nothing: any bad line rolls the whole session back and names file and line.
Nothing in the file is trusted: ids, status, visibility, one-line text and
times are checked (times are stored in the forest's form), lines are capped.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

import orjson

from ..errors import ImportRejected, InvalidPayload, SessionExists, UnsupportedSchemaVersion
from ..ids import id_problem, line_problem, normal_time
from ..jsontext import encode, payload_text
from ..kinds import KINDS, validate_payload
from ..model import (
    LEGACY_KINDS,
    SUPPORTED_SCHEMA_VERSIONS,
    SessionInfo,
    SessionStatus,
    SessionVisibility,
    Visibility,
)
from ..store.sqlite.search import large
from .common import TOO_LONG, Lines, parse, too_long

FORMAT = "sessionforest"
FORMAT_VERSION = 1  # what export writes
FORMAT_VERSIONS = frozenset({1})  # what import reads
BATCH = 2000

INSERT = (
    "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
    "semantic_schema_version, kind, payload, context_visibility, created_at, stamp) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

# The first entry whose parent is missing, foreign, not earlier in the file, or
# of a newer schema version than the entry (no entry may have an ancestor newer
# than itself: see forest._checked): one indexed query after the bulk insert
# instead of a set of every id in memory.
BAD_PARENT = """
SELECT c.id, c.parent_entry_id, p.session_id, p.sequence < c.sequence,
       p.semantic_schema_version, c.semantic_schema_version
FROM session_entries c LEFT JOIN session_entries p ON p.id = c.parent_entry_id
WHERE c.session_id = ? AND c.parent_entry_id IS NOT NULL
  AND (p.id IS NULL OR p.session_id <> c.session_id OR p.sequence >= c.sequence
       OR p.semantic_schema_version > c.semantic_schema_version)
ORDER BY c.sequence LIMIT 1
"""


def export_session(conn: sqlite3.Connection, info: SessionInfo, out: IO[str]) -> int:
    header = {
        "type": "session",
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "id": info.id,
        "title": info.title,
        "harness": info.harness,
        "cwd": info.cwd,
        "origin_cwd": info.origin_cwd,
        "status": info.status,
        "visibility": info.visibility,
        "created_at": info.created_at,
        "head": info.head,
    }
    out.write(orjson.dumps(header).decode() + "\n")
    count = 0
    cursor = conn.execute(
        "SELECT id, parent_entry_id, sequence, semantic_schema_version, kind, payload, "
        "context_visibility, created_at, stamp FROM session_entries "
        "WHERE session_id = ? ORDER BY sequence",
        (info.id,),
    )
    while rows := cursor.fetchmany(BATCH):
        lines = []
        for eid, parent, seq, version, kind, payload, vis, created, stamp in rows:
            if version not in SUPPORTED_SCHEMA_VERSIONS:
                raise UnsupportedSchemaVersion(eid, version, info.id)
            # Payload and stamp are stored as JSON already: splice them in as-is.
            line = {
                "type": "entry",
                "id": eid,
                "parent_id": parent,
                "sequence": seq,
                "kind": kind,
                "semantic_schema_version": version,
                "payload": orjson.Fragment(payload),
                "context_visibility": vis,
                "created_at": created,
                "stamp": orjson.Fragment(stamp) if stamp is not None else None,
            }
            lines.append(orjson.dumps(line).decode())
        out.write("\n".join(lines) + "\n")
        count += len(rows)
    return count


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """The file's non-blank lines, each at most MAX_LINE bytes (a longer one is refused)."""
    with path.open("rb") as handle:
        for number, raw in Lines(handle):
            if raw == TOO_LONG:
                raise ImportRejected(str(path), number, too_long())
            yield number, raw


def _require(obj: dict[str, Any], key: str, kinds: tuple[type, ...], where: str) -> Any:
    if key not in obj:
        raise ValueError(f"{where} is missing '{key}'")
    value = obj[key]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = "/".join("null" if k is type(None) else k.__name__ for k in kinds)
        raise ValueError(f"{where} field '{key}' must be {names}")
    return value


def _id(obj: dict[str, Any], key: str, where: str, optional: bool = False) -> Any:
    value = _require(obj, key, (str, type(None)) if optional else (str,), where)
    if value is not None and (why := id_problem(value)) is not None:
        raise ValueError(f"{where} field '{key}' {why}")
    return value


def _one_line(obj: dict[str, Any], key: str, where: str) -> str:
    value: str = _require(obj, key, (str,), where)
    if (why := line_problem(value)) is not None:
        raise ValueError(f"{where} field '{key}' {why}")
    return value


def _time(obj: dict[str, Any], key: str, where: str) -> str:
    try:
        return normal_time(_require(obj, key, (str,), where))
    except ValueError as exc:
        raise ValueError(f"{where} field '{key}' {exc}") from None


def _choice(obj: dict[str, Any], key: str, where: str, allowed: type[StrEnum], default: str) -> str:
    value = obj.get(key, default)
    if value not in allowed.__members__.values():
        names = ", ".join(allowed.__members__.values())
        raise ValueError(f"{where} field '{key}' must be one of {names}; got {value!r}")
    return str(value)


def _header(raw: bytes) -> dict[str, Any]:
    """The session header, checked: every value the sessions row takes from it."""
    header = parse(raw)
    if not isinstance(header, dict) or header.get("type") != "session":
        raise ValueError('first line must be a session header ({"type": "session", ...})')
    if header.get("format") != FORMAT:
        raise ValueError(f"format must be {FORMAT!r}, got {header.get('format')!r}")
    version = _require(header, "format_version", (int,), "header")
    if version not in FORMAT_VERSIONS:
        known = ", ".join(map(str, sorted(FORMAT_VERSIONS)))
        raise ValueError(
            f"format_version {version} is not one this sessionforest reads (it reads {known}): "
            "the file was written by a newer sessionforest"
        )
    return {
        "id": _id(header, "id", "header"),
        "head": _id(header, "head", "header", optional=True),
        "title": _one_line(header, "title", "header"),
        "harness": _one_line(header, "harness", "header"),
        "created_at": _time(header, "created_at", "header"),
        "cwd": _require(header, "cwd", (str, type(None)), "header"),
        # Absent from files written before it existed.
        "origin_cwd": _require(header, "origin_cwd", (str, type(None)), "header")
        if "origin_cwd" in header
        else None,
        "status": _choice(header, "status", "header", SessionStatus, SessionStatus.ACTIVE),
        "visibility": _choice(
            header, "visibility", "header", SessionVisibility, SessionVisibility.TOP_LEVEL
        ),
    }


def _entry_row(obj: Any, sid: str, expected_seq: int) -> tuple[Any, ...]:
    if not isinstance(obj, dict) or obj.get("type") != "entry":
        raise ValueError('expected an entry line ({"type": "entry", ...})')
    eid = _id(obj, "id", "entry")
    parent = _id(obj, "parent_id", "entry", optional=True)
    seq = _require(obj, "sequence", (int,), "entry")
    if seq != expected_seq:
        raise ValueError(f"sequence {seq} where {expected_seq} was expected (gap-free 1..n)")
    version = _require(obj, "semantic_schema_version", (int,), "entry")
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        raise ValueError(f"unsupported semantic_schema_version {version} (supported: 1, 2)")
    kind = _require(obj, "kind", (str,), "entry")
    payload = _require(obj, "payload", (dict,), "entry")
    if version == 2 and kind in KINDS:
        validate_payload(kind, payload)
    elif kind not in KINDS and kind not in LEGACY_KINDS:
        raise ValueError(f"unknown kind {kind!r}")
    vis = _require(obj, "context_visibility", (str,), "entry")
    if vis not in Visibility.__members__.values():
        raise ValueError(f"context_visibility must be context or hidden, got {vis!r}")
    created = _time(obj, "created_at", "entry")
    stamp = obj.get("stamp")
    if stamp is not None and not isinstance(stamp, dict):
        raise ValueError("entry field 'stamp' must be an object or null")
    body = payload_text(kind, payload)
    return (
        eid,
        sid,
        parent,
        seq,
        version,
        kind,
        body,
        vis,
        created,
        encode(stamp).decode() if stamp is not None else None,
        large.entry_text(kind, payload) if large.is_large(body) else None,
    )


def _line_of(path: Path, entry_id: str) -> int | None:
    """Error path only: find the line that holds `entry_id` (first occurrence past header)."""
    needle = orjson.dumps(entry_id)
    for number, line in _lines(path):
        if needle in line:
            try:
                if orjson.loads(line).get("id") == entry_id and number > 1:
                    return number
            except orjson.JSONDecodeError:
                continue
    return None


def _duplicate(conn: sqlite3.Connection, path: Path, sid: str) -> tuple[int, str, str]:
    seen: dict[str, int] = {}
    lines = _lines(path)
    next(lines, None)
    for number, line in lines:
        eid = orjson.loads(line)["id"]
        if eid in seen:
            return number, eid, f"repeats the id of line {seen[eid]}"
        # Rows of this file inserted before the failure carry its session id.
        owner = conn.execute("SELECT session_id FROM session_entries WHERE id = ?", (eid,))
        row = owner.fetchone()
        if row is not None and row[0] != sid:
            return number, eid, f"id already exists in this store (session {row[0]})"
        seen[eid] = number
    raise AssertionError("unique constraint failed but no duplicate id was found")


def import_session(conn: sqlite3.Connection, path: Path) -> str:
    """Insert one exported session inside the caller's transaction; returns its id."""
    name = str(path)
    lines = _lines(path)
    first = next(lines, None)
    if first is None:
        raise ImportRejected(name, None, "file is empty: expected a session header line")
    number, raw = first
    try:
        header = _header(raw)
    except ValueError as exc:
        raise ImportRejected(name, number, str(exc)) from exc
    sid, head = header["id"], header["head"]
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone():
        raise SessionExists(sid)
    try:
        conn.execute(
            "INSERT INTO sessions(id, title, harness, cwd, created_at, status, visibility, "
            "origin_cwd) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                sid,
                header["title"],
                header["harness"],
                header["cwd"],
                header["created_at"],
                header["status"],
                header["visibility"],
                header["origin_cwd"],
            ),
        )
    except sqlite3.IntegrityError as exc:
        # Refused by the sessions_no_adoption trigger: a deleted row's entries remain.
        raise ImportRejected(
            name, number, f"session {sid}: {exc}; run `forest repair {sid}`"
        ) from exc
    batch: list[tuple[Any, ...]] = []
    count = 0
    for number, raw in lines:
        obj = None
        try:
            obj = parse(raw)
            batch.append(_entry_row(obj, sid, count + 1))
        except (ValueError, InvalidPayload) as exc:
            given = obj.get("id") if isinstance(obj, dict) else None
            eid = given if id_problem(given) is None else None
            raise ImportRejected(name, number, str(exc), eid) from exc
        count += 1
        if len(batch) >= BATCH or batch[-1][-1] is not None:
            _flush(conn, path, batch)
    _flush(conn, path, batch)
    bad = conn.execute(BAD_PARENT, (sid,)).fetchone()
    if bad is not None:
        eid, parent, owner, earlier, parent_version, version = bad
        if owner is None:
            reason = f"parent {parent} does not exist in this file"
        elif owner != sid:
            reason = f"parent {parent} belongs to another session ({owner})"
        elif earlier and parent_version > version:
            reason = (
                f"parent {parent} has semantic_schema_version {parent_version}, newer than "
                f"this entry's {version}: an entry is never older than its ancestors"
            )
        else:
            reason = f"parent {parent} does not precede it (a forward or cyclic reference)"
        raise ImportRejected(name, _line_of(path, eid), reason, eid)
    if head is not None:
        owner = conn.execute("SELECT session_id FROM session_entries WHERE id = ?", (head,))
        row = owner.fetchone()
        if row is None or row[0] != sid:
            raise ImportRejected(name, 1, f"header head {head} is not an entry of this file")
    elif count:
        raise ImportRejected(name, 1, "header head is null but the file has entries")
    conn.execute(
        "INSERT INTO session_heads(session_id, active_entry_id, updated_at) VALUES (?, ?, ?)",
        (sid, head, header["created_at"]),
    )
    return str(sid)


def _flush(conn: sqlite3.Connection, path: Path, batch: list[tuple[Any, ...]]) -> None:
    """Insert the batch; a row with a large payload (last in its batch) is then indexed."""
    try:
        conn.executemany(INSERT, [row[:-1] for row in batch])
    except sqlite3.IntegrityError as exc:
        number, eid, why = _duplicate(conn, path, batch[0][1])
        raise ImportRejected(str(path), number, why, eid) from exc
    if batch and batch[-1][-1] is not None:
        eid, sid, _, seq, _, kind, *_, text = batch[-1]
        large.index_large(conn, sid, seq, kind, text)
    batch.clear()
