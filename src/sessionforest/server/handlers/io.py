"""Moving chats in and out: `sessions/export` (JSONL text) and `sessions/import`
(files on the server's machine, inside its import roots)."""

from __future__ import annotations

import io
from typing import Annotated, Literal

from msgspec import Meta

from ...errors import TooLarge
from ...io.importers import FORMATS
from ...model.imports import ImportOutcome
from ...wire import Export, Json
from ..changes import imported
from ..context import Call
from ..registry import Group, Id, Params

group = Group("io")


class ExportParams(Params):
    session_id: Id
    format: Literal["native", "yoagent"] = "native"


@group.method("sessions/export", ExportParams, Export, "read")
def export(call: Call, p: ExportParams) -> Json:
    """The session as JSONL text: native (every entry, round-trips) or yoagent. Stops
    with TooLarge as soon as the text passes the answer limit (the chat is never held
    whole: the exporter streams it in batches)."""
    out = _Capped(call.server.limits.max_response)
    if p.format == "native":
        count = call.forest.export_jsonl(p.session_id, out)
    else:
        count = call.forest.export_yoagent(p.session_id, out)[0]
    return Export(p.session_id, p.format, count, out.getvalue()).to_json()


class _Capped(io.StringIO):
    """A text buffer that refuses to grow past `limit` characters (each at least a byte
    of the answer): the export stops where the answer would be refused anyway."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self.size = 0

    def write(self, text: str) -> int:
        self.size += len(text)
        if self.size > self.limit:
            advice = "export it with `forest export` on the server's machine instead"
            raise TooLarge("the export", self.size, self.limit, advice, at_least=True)
        return super().write(text)


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
    for change in imported(call.forest, report):
        call.server.statuses.set(change.session_id, change.status)
        call.changed(change)
    return report.to_json()
