"""What of an entry is searchable: the kinds indexed, and the text of a payload.

Every search backend indexes the same text (SQLite's released triggers compute
it in SQL as store/sqlite/search/schema.TEXT_OF, PostgreSQL's forest_entry_text
for a row written without it; writers call `entry_text`), so a query finds the
same entries whichever backend holds them. The released migrations hold these
values as text: changing one here is a new migration of each backend, and the
tests comparing the two say so.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

# Stored kinds whose text is indexed: the conversational kinds plus the legacy
# names that read as them (tests/search checks this against kinds.py).
INDEXED_KINDS: Final = (
    "assistant.message",
    "assistant.text",
    "branch.summary",
    "checkpoint",
    "compaction",
    "user.message",
    "user.prompt",
    "worker.result",
)
USER_KINDS: Final = ("user.message", "user.prompt")
REPLY_KINDS: Final = ("assistant.message", "assistant.text")
SUMMARY_KINDS: Final = ("branch.summary", "checkpoint", "compaction")

# A digest describes a chat; a pasted log as its first message would drown that.
OPENING_CHARS: Final = 2000


def entry_text(kind: str, payload: Any) -> str | None:
    """The searchable text of a payload: the text blocks of a message (v2) or its flat
    text (v1), a summary, a checkpoint's label and summary (as SQL's TEXT_OF)."""
    if not isinstance(payload, dict):
        return None
    if kind == "checkpoint":
        label, summary = payload.get("label"), payload.get("summary")
        if isinstance(label, str) and label == summary:
            return label
        return f"{_sql(label) or ''} {_sql(summary) or ''}".strip(" ")
    if kind in ("worker.result", "compaction", "branch.summary"):
        return _sql(payload.get("summary"))
    content = payload.get("content")
    if isinstance(content, dict | list):
        # json_each walks an array's items, or an object's values.
        blocks = list(content.values()) if isinstance(content, dict) else content
        texts = [
            text
            for block in blocks
            if isinstance(block, dict)
            and block.get("type") == "text"
            and (text := _sql(block.get("text"))) is not None
        ]
        if texts:
            return texts[0] if len(texts) == 1 else "\n".join(texts)  # one block: no copy
    return _sql(payload.get("text"))


def indexed_text(kind: str, payload: Any) -> str | None:
    """`entry_text` of an entry of an indexed kind; None for every other kind."""
    return entry_text(kind, payload) if kind in INDEXED_KINDS else None


def _sql(value: Any) -> str | None:
    """A json_extract result as SQL turns it into text (group_concat, ||, FTS5)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = f"{value:.15g}"
        return text if any(c in text for c in ".en") else text + ".0"
    return orjson.dumps(value).decode()  # an object or array: its JSON text
