"""ChatGPT data exports (`conversations.json`, one conversation object, or `export.zip`).

One chat per conversation with its whole `mapping` tree; the head is
`current_node`. Tool traffic, reasoning and visually hidden nodes are kept as
hidden entries; edits and regenerations are branches. A zip is read in place.
"""

from __future__ import annotations

import hashlib
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import orjson

from ..errors import EntryConflict, ImportRejected
from ..model import ChatSpec
from . import common, jsonstream
from .blocks import text
from .common import BOM, Ids, file_size, file_time, iso_time, unreadable
from .report import MALFORMED, UNMAPPABLE, ImportRun, Notes, Progress, failures

FORMAT = "chatgpt"
PROVIDER = "chatgpt"
HIDDEN = "hidden"
MEMBER = "conversations.json"
Item = tuple[str, dict[str, Any], str | None]


def total_bytes(path: Path) -> int:
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            return archive.getinfo(_member(archive, path)).file_size
    return file_size(path)


def _member(archive: zipfile.ZipFile, path: Path) -> str:
    names = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == MEMBER]
    if not names:
        raise ImportRejected(str(path), None, f"no {MEMBER} in this zip")
    return min(names, key=lambda n: (n.count("/"), n))


@contextmanager
def _open(path: Path) -> Iterator[IO[bytes]]:
    """The conversations document: the file itself, or streamed out of the zip."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive, archive.open(_member(archive, path)) as handle:
            yield handle
    else:
        with path.open("rb") as handle:
            yield handle


def import_file(run: ImportRun, path: Path, notes: Notes) -> None:
    """Every conversation of the file, each in its own transaction: one that fails is
    recorded in `report.failed` and the others are imported."""
    try:
        with _open(path) as handle:
            single = handle.read(4096).removeprefix(BOM).lstrip().startswith(b"{")
        with _open(path) as handle:
            for element in _elements(handle, single, path, run.progress):
                with failures(run.report, path, notes):
                    _element(run, path, element, notes)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise ImportRejected(str(path), None, f"the zip archive is damaged: {exc}") from exc


def _elements(
    handle: IO[bytes], single: bool, path: Path, progress: Progress | None
) -> Iterator[jsonstream.Element]:
    limit = common.MAX_LINE
    # A UTF-8 BOM (Windows tools write one) opens the file: skipped, and counted.
    if handle.read(len(BOM)) == BOM:
        if progress is not None:
            progress.advance(len(BOM))
    else:
        handle.seek(0)
    if single:  # one conversation object, as the ChatGPT web app exports it
        raw = handle.read(limit + 1)
        if progress is not None:
            progress.advance(len(raw))
        if len(raw) > limit:
            yield jsonstream.Element(1, 1, error=f"longer than {limit / 2**20:g} MiB; not loaded")
        else:
            yield jsonstream.Element(1, 1, raw)
        return
    try:
        yield from jsonstream.elements(handle, limit, progress)
    except jsonstream.NotAnArray as exc:
        raise ImportRejected(str(path), None, str(exc)) from exc


def _element(run: ImportRun, path: Path, element: jsonstream.Element, notes: Notes) -> None:
    where = f"conversation {element.index}"
    bad, report = run.bad, run.report
    if element.error is not None:
        bad.bad(path, element.line, f"{where}: {element.error}")
        return
    try:
        conv = orjson.loads(element.raw)
        if not isinstance(conv, dict):
            raise ValueError("not a JSON object")
        cid = conv.get("conversation_id") or conv.get("id")
        if not isinstance(cid, str) or not cid:
            raise ValueError("it has no string 'id'")
        mapping = conv.get("mapping")
        if not isinstance(mapping, dict):
            raise ValueError("it has no 'mapping' object")
        order = _order(mapping, notes)
    except orjson.JSONDecodeError as exc:
        why = unreadable(element.raw, exc, where, element.line)
        bad.bad(path, element.line, why if why.startswith(where) else f"{where}: {why}")
        return
    except MALFORMED as exc:
        bad.unmappable(path, element.line, exc, f"{where}: ")
        return
    skipped, noted = len(report.skipped), notes.mark()
    try:
        _conversation(run, path, element, conv, cid, mapping, order, notes)
    except EntryConflict:
        del report.skipped[skipped:]  # the retry reports them again
        notes.rollback(noted)
        # Conversation ids are UUIDs and nodes never change, so the same id
        # with other content is another conversation (anonymised exports
        # reuse ids): it becomes its own chat, keyed by its bytes as well.
        alias = f"{cid}~{hashlib.sha256(element.raw).hexdigest()[:16]}"
        notes.add(f"{where}: id {cid} is already imported with other content: imported as {alias}")
        _conversation(run, path, element, conv, alias, mapping, order, notes)


def _order(mapping: dict[str, Any], notes: Notes) -> list[str]:
    """Node ids with every parent before its children, children in `children` order."""
    children: dict[str, list[str]] = {}
    roots: list[str] = []
    for nid, node in mapping.items():
        if not isinstance(node, dict):
            raise ValueError(f"node {nid} is not an object")
        parent = node.get("parent")
        if isinstance(parent, str) and parent in mapping:
            children.setdefault(parent, []).append(nid)
        else:
            if parent is not None:
                notes.add(f"node {nid} names parent {parent!r}, not in the mapping: a root")
            roots.append(nid)
    order: list[str] = []
    stack = list(reversed(roots))
    while stack:
        nid = stack.pop()
        order.append(nid)
        kids = children.get(nid, [])
        listed = mapping[nid].get("children")
        if isinstance(listed, list) and len(kids) > 1:
            rank = {c: i for i, c in enumerate(listed) if isinstance(c, str)}
            kids.sort(key=lambda c: rank.get(c, len(rank)))
        stack.extend(reversed(kids))
    if len(order) != len(mapping):
        placed = set(order)
        stuck = next(n for n in mapping if n not in placed)
        raise ValueError(f"the mapping has a cycle through node {stuck}")
    return order


def _conversation(
    run: ImportRun,
    path: Path,
    element: jsonstream.Element,
    conv: dict[str, Any],
    cid: str,
    mapping: dict[str, Any],
    order: list[str],
    notes: Notes,
) -> None:
    ids = Ids(FORMAT, cid)
    created = iso_time(conv.get("create_time"))
    title = conv["title"] if isinstance(conv.get("title"), str) else ""
    spec = ChatSpec(ids.session, title, FORMAT, created or file_time(path), FORMAT, str(path), cid)
    line = element.line
    times: dict[str, str] = {}
    with run.bulk.bulk_chat(spec, path) as writer:
        created = created or writer.created_at  # the stored chat's time on re-imports
        for nid in order:
            node = mapping[nid]
            given = node.get("parent")
            parent_id = given if isinstance(given, str) and given in mapping else ""
            parent = ids.entry(parent_id) if parent_id else None
            if parent is not None and not writer.seen(parent):
                notes.add(f"node {nid}: its parent was skipped: imported as a root")
                parent = None
            message = node.get("message")
            at = (
                (iso_time(message.get("create_time")) if isinstance(message, dict) else None)
                or times.get(parent_id)
                or created
            )
            times[nid] = at
            try:
                kind, payload, visibility = _item(nid, message)
                entry = ids.entry(nid)
                writer.add(entry, parent, kind, payload, at, visibility, line, f"node {nid}")
            except UNMAPPABLE as exc:
                where = f"conversation {element.index} node {nid}: "
                run.bad.unmappable(path, line, exc, where)
        current = conv.get("current_node")
        if isinstance(current, str) and current in mapping and writer.seen(ids.entry(current)):
            writer.head = ids.entry(current)
        elif order:
            notes.add(f"conversation {element.index}: current_node missing: head at the last node")
            writer.head = ids.entry(order[-1]) if writer.seen(ids.entry(order[-1])) else None
    run.report.add(writer.result, FORMAT, path, cid)


def _notification(nid: str, message: Any) -> Item:
    return (
        "provider.notification",
        {"provider": PROVIDER, "event": {"node": nid, "message": message}},
        HIDDEN,
    )


def _item(nid: str, message: Any) -> Item:
    """What one mapping node becomes; anything not plainly conversation stays hidden."""
    if message is None:
        return _notification(nid, None)
    if not isinstance(message, dict):
        raise ValueError("'message' must be an object or null")
    author = message.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    content = message.get("content")
    ctype = content.get("content_type") if isinstance(content, dict) else None
    metadata = message.get("metadata")
    hidden = isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation")
    visibility = HIDDEN if hidden else None
    recipient = message.get("recipient", "all")
    if role == "tool" or (role == "assistant" and recipient not in (None, "all")):
        # Calls to and results from ChatGPT's own tools (browsing, python,
        # image generation): no agent here can run them again.
        return _notification(nid, message)
    if not isinstance(content, dict):
        return _notification(nid, message)
    if role in ("user", "system") and ctype in ("text", "multimodal_text"):
        blocks, attachments = _parts(content)
        payload: dict[str, Any] = {"content": blocks or [text("")]}
        if attachments:
            payload["attachments"] = attachments
        kind = "user.message" if role == "user" else "system.message"
        return kind, payload, visibility
    if role == "assistant":
        payload = {"content": []}
        if isinstance(metadata, dict) and isinstance(metadata.get("model_slug"), str):
            payload["model"] = metadata["model_slug"]
            payload["provider"] = "openai"
        if ctype in ("text", "multimodal_text", "code", "execution_output"):
            payload["content"], attachments = _parts(content)
            if attachments:
                payload["attachments"] = attachments
            return "assistant.message", payload, visibility
        if ctype == "thoughts":
            thoughts = content.get("thoughts")
            payload["content"] = [
                {
                    "type": "thinking",
                    "thinking": "\n".join(
                        str(t.get(k)) for k in ("summary", "content") if t.get(k)
                    ),
                }
                for t in (thoughts if isinstance(thoughts, list) else ())
                if isinstance(t, dict)
            ]
            return "assistant.message", payload, HIDDEN
        if ctype == "reasoning_recap" and isinstance(content.get("content"), str):
            payload["content"] = [text(content["content"])]
            return "assistant.message", payload, HIDDEN
    return _notification(nid, message)


def _parts(content: dict[str, Any]) -> tuple[list[dict[str, Any]], list[Any]]:
    """Text blocks of a message's parts (or `text`); attachments stay beside them."""
    parts = content.get("parts")
    if not isinstance(parts, list):
        value = content.get("text")
        return ([text(value)] if isinstance(value, str) else []), []
    blocks: list[dict[str, Any]] = []
    attachments: list[Any] = []
    for part in parts:
        if isinstance(part, str):
            blocks.append(text(part))
        elif isinstance(part, dict):
            # Asset pointers (sediment://, file-service://) only resolve inside
            # ChatGPT: a model gets a placeholder, the pointer is kept.
            attachments.append(part)
            pointer = part.get("asset_pointer")
            label = part.get("content_type", "attachment")
            blocks.append(text(f"[{label}: {pointer}]" if pointer else f"[{label}]"))
        else:
            blocks.append(text(part))
    return blocks, attachments
