"""Moving chats in and out: `sessions/export` (JSONL text) and `sessions/import`
(files on the server's machine, inside its import roots)."""

from __future__ import annotations

import io
from typing import Annotated, Literal

from msgspec import Meta

from ...io.importers import FORMATS
from ...model.imports import ImportOutcome
from ...wire import Export, Json
from ..changes import Change
from ..context import Call
from ..limits import MAX_NOTIFIED_IDS
from ..registry import Group, Id, Params

group = Group("io")


class ExportParams(Params):
    session_id: Id
    format: Literal["native", "yoagent"] = "native"


@group.method("sessions/export", ExportParams, Export, "read")
def export(call: Call, p: ExportParams) -> Json:
    """The session as JSONL text: native (every entry, round-trips) or yoagent."""
    out = io.StringIO()
    if p.format == "native":
        count = call.forest.export_jsonl(p.session_id, out)
    else:
        count = call.forest.export_yoagent(p.session_id, out)[0]
    return Export(p.session_id, p.format, count, out.getvalue()).to_json()


class ImportParams(Params):
    format: Annotated[str, Meta(extra_json_schema={"enum": list(FORMATS)})]
    path: Annotated[str, Meta(min_length=1, description="inside one of the --import-root's")]
    skip_bad: bool = False


@group.method("sessions/import", ImportParams, ImportOutcome, "write")
def import_chats(call: Call, p: ImportParams) -> Json:
    """Import every chat of a file or directory on the server's machine.

    Only paths inside the directories the server was started with
    (`--import-root`) are read. Each chat is its own transaction; failed chats
    are reported in `failed`, the others imported.
    """
    path = call.server.import_roots.resolve(p.path)
    report = call.forest.import_chats(p.format, path, skip_bad=p.skip_bad)
    for chat in report.chats:
        if not (chat.created or chat.added):
            continue
        first = chat.entries - chat.added + 1 if chat.added else None
        last = chat.entries if chat.added else None
        ids: tuple[str, ...] | None = ()
        if chat.added and chat.added <= MAX_NOTIFIED_IDS:
            page = call.forest.entries_after(chat.session_id, chat.entries - chat.added, chat.added)
            ids = tuple(e.id for e in page)
        elif chat.added:
            ids = None
        status = call.forest.session(chat.session_id).status
        call.server.statuses.set(chat.session_id, status)
        call.changed(Change(chat.session_id, "imported", chat.head, status, ids, first, last))
    return report.to_json()
