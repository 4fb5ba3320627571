"""Native JSONL: the whole tree of one session, exactly, in a portable text file.

Line 1 is a `session` header (ids, title, harness, cwd, origin_cwd, status,
visibility, head); every further line is one `entry` in sequence order with its id,
parent, kind, schema version, payload, visibility, time and stamp. Labels
live in checkpoint entries. Import streams the file (memory stays flat),
checks parents in the database rather than in a Python set, and is all or
nothing: any bad line rolls the whole session back and names file and line.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from ..errors import ImportRejected, InvalidPayload, SessionExists, UnsupportedSchemaVersion
from ..jsontext import encode, payload_text
from ..kinds import KINDS, validate_payload
from ..model import LEGACY_KINDS, SUPPORTED_SCHEMA_VERSIONS, SessionInfo, Visibility

FORMAT = "sessionforest"
FORMAT_VERSION = 1
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
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            line = raw.strip()
            if line:
                yield number, line


def _require(obj: dict[str, Any], key: str, kinds: tuple[type, ...], where: str) -> Any:
    if key not in obj:
        raise ValueError(f"{where} is missing '{key}'")
    value = obj[key]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = "/".join("null" if k is type(None) else k.__name__ for k in kinds)
        raise ValueError(f"{where} field '{key}' must be {names}")
    return value


def _entry_row(obj: Any, sid: str, expected_seq: int) -> tuple[Any, ...]:
    if not isinstance(obj, dict) or obj.get("type") != "entry":
        raise ValueError('expected an entry line ({"type": "entry", ...})')
    eid = _require(obj, "id", (str,), "entry")
    if not eid:
        raise ValueError("entry id must not be empty")
    parent = _require(obj, "parent_id", (str, type(None)), "entry")
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
    created = _require(obj, "created_at", (str,), "entry")
    stamp = obj.get("stamp")
    if stamp is not None and not isinstance(stamp, dict):
        raise ValueError("entry field 'stamp' must be an object or null")
    return (
        eid,
        sid,
        parent,
        seq,
        version,
        kind,
        payload_text(kind, payload),
        vis,
        created,
        encode(stamp).decode() if stamp is not None else None,
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
    seen: set[str] = set()
    lines = _lines(path)
    next(lines, None)
    for number, line in lines:
        eid = orjson.loads(line)["id"]
        if eid in seen:
            return number, eid, "repeats an id used on an earlier line"
        # Rows of this file inserted before the failure carry its session id.
        owner = conn.execute("SELECT session_id FROM session_entries WHERE id = ?", (eid,))
        row = owner.fetchone()
        if row is not None and row[0] != sid:
            return number, eid, f"id already exists in this store (session {row[0]})"
        seen.add(eid)
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
        header = orjson.loads(raw)
        if not isinstance(header, dict) or header.get("type") != "session":
            raise ValueError('first line must be a session header ({"type": "session", ...})')
        if header.get("format") != FORMAT:
            raise ValueError(f"format must be {FORMAT!r}, got {header.get('format')!r}")
        sid = _require(header, "id", (str,), "header")
        head = _require(header, "head", (str, type(None)), "header")
        fields = [
            _require(header, key, (str,), "header") for key in ("title", "harness", "created_at")
        ]
        cwd = _require(header, "cwd", (str, type(None)), "header")
        # Absent from files written before it existed.
        origin_cwd = header.get("origin_cwd")
        if origin_cwd is not None and not isinstance(origin_cwd, str):
            raise ValueError("header field 'origin_cwd' must be str/null")
    except (orjson.JSONDecodeError, ValueError) as exc:
        raise ImportRejected(name, number, str(exc)) from exc
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone():
        raise SessionExists(sid)
    try:
        conn.execute(
            "INSERT INTO sessions(id, title, harness, cwd, created_at, status, visibility, "
            "origin_cwd) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                sid,
                *fields[:2],
                cwd,
                fields[2],
                header.get("status", "active"),
                header.get("visibility", "top-level"),
                origin_cwd,
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
        try:
            batch.append(_entry_row(orjson.loads(raw), sid, count + 1))
        except (orjson.JSONDecodeError, ValueError) as exc:
            raise ImportRejected(name, number, str(exc)) from exc
        except InvalidPayload as exc:
            raise ImportRejected(name, number, str(exc), orjson.loads(raw).get("id")) from exc
        count += 1
        if len(batch) >= BATCH:
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
        (sid, head, header.get("created_at")),
    )
    return str(sid)


def _flush(conn: sqlite3.Connection, path: Path, batch: list[tuple[Any, ...]]) -> None:
    try:
        conn.executemany(INSERT, batch)
    except sqlite3.IntegrityError as exc:
        number, eid, why = _duplicate(conn, path, batch[0][1])
        raise ImportRejected(str(path), number, why, eid) from exc
    batch.clear()
