"""Native JSONL: the whole tree of one session, exactly, in a portable text file.

Line 1 is a `session` header (ids, title, harness, cwd, origin_cwd, status,
visibility, head, and where the chat ran: git_branch, git_commit,
git_repository, origin_project, each absent from files written before it
existed); every further line is one `entry` in sequence order with its id,
parent, kind, schema version, payload, visibility, time and stamp. Labels
live in checkpoint entries. Import checks each line as it streams the file
into `BulkStore.restore_session` (memory stays flat), which writes it all or
nothing: any bad line rolls the whole session back and names file and line.
Nothing in the file is trusted: ids, status, visibility, one-line text and
times are checked (times are stored in the forest's form), lines are capped.
Export streams `stored_entries` out.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from contextlib import closing
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

import orjson

from ..errors import ImportRejected, InvalidPayload
from ..ids import id_problem, line_problem, normal_time, title_text
from ..jsontext import encode, payload_text
from ..kinds import KINDS, validate_payload
from ..model import (
    LEGACY_KINDS,
    SUPPORTED_SCHEMA_VERSIONS,
    ChatResult,
    SessionStatus,
    SessionVisibility,
    StoredEntry,
    StoredSession,
    Visibility,
)
from ..store.base import BulkStore
from .common import TOO_LONG, Lines, file_size, parse, too_long
from .report import ImportRun, Notes

FORMAT = "sessionforest"
FORMAT_VERSION = 1  # what export writes
FORMAT_VERSIONS = frozenset({1})  # what import reads
SOURCE_FORMAT = "native"  # the importer's name, and the source format it records
BATCH = 2000
# Where the chat ran (migration 0024), in the header after origin_cwd.
PROVENANCE = ("git_branch", "git_commit", "git_repository", "origin_project")


def export_session(bulk: BulkStore, session_id: str, out: IO[str]) -> int:
    """Write the session as native JSONL to `out`; returns how many entries it wrote."""
    info = bulk.stored_session(session_id)
    header = {
        "type": "session",
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "id": info.id,
        "title": info.title,
        "harness": info.harness,
        "cwd": info.cwd,
        "origin_cwd": info.origin_cwd,
        **{key: getattr(info, key) for key in PROVENANCE},
        "status": info.status,
        "visibility": info.visibility,
        "created_at": info.created_at,
        "head": info.head,
    }
    out.write(orjson.dumps(header).decode() + "\n")
    count = 0
    lines = []
    for eid, _, parent, seq, version, kind, payload, vis, created, stamp in bulk.stored_entries(
        session_id
    ):
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
        if len(lines) >= BATCH:
            out.write("\n".join(lines) + "\n")
            count += len(lines)
            lines.clear()
    if lines:
        out.write("\n".join(lines) + "\n")
        count += len(lines)
    return count


def _lines(path: Path) -> Generator[tuple[int, bytes]]:
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


def _header(raw: bytes) -> StoredSession:
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
    # Checked in this order, so the first bad field is the one named.
    sid = _id(header, "id", "header")
    head = _id(header, "head", "header", optional=True)
    title = title_text(_require(header, "title", (str,), "header"))  # as every title is
    harness = _one_line(header, "harness", "header")
    created = _time(header, "created_at", "header")
    cwd = _require(header, "cwd", (str, type(None)), "header")
    origin = (
        _require(header, "origin_cwd", (str, type(None)), "header")
        if "origin_cwd" in header
        else None  # absent from files written before it existed
    )
    provenance = {
        key: _require(header, key, (str, type(None)), "header")
        for key in PROVENANCE
        if key in header  # absent from files written before it existed
    }
    status = _choice(header, "status", "header", SessionStatus, SessionStatus.ACTIVE)
    visibility = _choice(
        header, "visibility", "header", SessionVisibility, SessionVisibility.TOP_LEVEL
    )
    # The file does not say when the head last moved: when the session began.
    return StoredSession(
        sid, title, harness, cwd, created, status, visibility, head, created, origin,
        **provenance,
    )  # fmt: skip


def _entry_row(obj: Any, sid: str, expected_seq: int) -> StoredEntry:
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
    return StoredEntry(
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


def read_file(run: ImportRun, path: Path, notes: Notes) -> None:
    """`forest import native`: one file, one chat, recorded as the chat's source."""
    try:
        result = import_file(run.bulk, path, record_source=True)
    finally:
        if run.progress is not None:
            run.progress.advance(file_size(path))
    run.report.add(result, SOURCE_FORMAT, path, result.session_id)


def import_file(bulk: BulkStore, path: Path, *, record_source: bool) -> ChatResult:
    """Restore the session `path` holds (all or nothing); `record_source`: remember the
    file as the chat's source, as an import does (a plain restore of an export does not)."""
    name = str(path)
    with closing(_lines(path)) as lines:
        first = next(lines, None)
        if first is None:
            raise ImportRejected(name, None, "file is empty: expected a session header line")
        number, raw = first
        try:
            session = _header(raw)
        except ValueError as exc:
            raise ImportRejected(name, number, str(exc)) from exc
        if record_source:
            session = replace(
                session, source_format=SOURCE_FORMAT, source_path=name, source_id=session.id
            )
        count = bulk.restore_session(
            session,
            _entries(name, lines, session.id),
            source=name,
            locate=lambda sequence: _line_at(path, sequence),
        )
    return ChatResult(session.id, True, count, 0, count, 0, session.head)


def _entries(name: str, lines: Iterator[tuple[int, bytes]], sid: str) -> Iterator[StoredEntry]:
    """The file's entry lines as rows, each checked before it is handed on."""
    for count, (number, raw) in enumerate(lines):
        obj = None
        try:
            obj = parse(raw)
            row = _entry_row(obj, sid, count + 1)
        except (ValueError, InvalidPayload) as exc:
            given = obj.get("id") if isinstance(obj, dict) else None
            eid = given if id_problem(given) is None else None
            raise ImportRejected(name, number, str(exc), eid) from exc
        del obj, raw  # a huge line: the stored text is all the store needs
        yield row


def _line_at(path: Path, sequence: int) -> int | None:
    """Error path only: the line of the entry at `sequence` (0: the header). Every line up
    to a failure was checked to hold the next sequence, so it is the sequence-th after
    the header."""
    with closing(_lines(path)) as lines:
        for index, (number, _) in enumerate(lines):
            if index == sequence:
                return number
    return None
