"""What the tools said in an entry: the searchable tool text, the index's second field.

The source document's contract indexes the conversational kinds (entrytext.py);
this is an addition beside it, never mixed into it: the commands, paths and
patterns a tool call was given, what a tool answered (its errors, the head and
tail of a long output), what a harness printed of its runs (Aider's output
blocks), and the harness's wrapper text in a user message (wrappers.py), whose
own words stay the conversational field. Every backend
indexes `texts(kind, payload)`: the first field weighs more than this one.

    texts(kind, payload) -> Texts(words, tool): the conversational field (a user
                            message's own words) and the tool field, or None each
    tool_text(kind, payload) -> the tool field alone
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from . import wrappers
from .entrytext import INDEXED_KINDS, USER_KINDS, entry_text

# Kinds with tool text: calls (an assistant message's tool_call blocks, a
# tool.started), results, user messages a harness wrapped, and what a harness
# printed of its own runs (a notification with an `output`: Aider's output
# blocks, where its lint, test and /run results and its errors stand).
TOOL_KINDS: Final = (
    "assistant.message",
    "provider.notification",
    "tool.completed",
    "tool.started",
    "user.message",
    "user.prompt",
)
# The most tool text kept of one entry: a long output keeps its head and its
# tail (where a build's error or a test run's summary stands), a few KB in all,
# so a 1 MB log costs the index what a long reply does.
TOOL_CHARS: Final = 4000
# Input values named like these are what a user remembers of a call (the
# command run, the file read or patched, the pattern searched): kept whole up
# to TOOL_CHARS. Any other string value (a file's new content, an edit's
# replacement) keeps only its first INPUT_CHARS.
REMEMBERED_INPUTS: Final = frozenset(
    {
        "command",
        "cmd",
        "file_path",
        "path",
        "paths",
        "notebook_path",
        "pattern",
        "glob",
        "include",
        "query",
        "url",
        "description",
        "patch",
        "input",
        "args",
        "arguments",
    }
)
INPUT_CHARS: Final = 200
_CUT: Final = "\n…\n"
# A CamelCase or camelCase word: its humps are added as words of their own, so
# "Builder" finds "WheelBuilder" (the tokenizer already splits at _ . / - ::).
_CAMEL = re.compile(r"\b[A-Za-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+\b|\b[A-Z]{2,}[a-z][a-z0-9]+\b")
_HUMP = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z]+")
# Humps added per entry at most (a minified file would add thousands).
CAMEL_WORDS: Final = 64


@dataclass(frozen=True, slots=True)
class Texts:
    """An entry's two indexed fields (None: the entry has no text for that field)."""

    words: str | None  # the conversational field: what the user and the agent said
    tool: str | None  # the tool field: calls, results, harness wrappers


def bounded(text: str, limit: int = TOOL_CHARS) -> str:
    """`text` cut to its head and tail, `limit` characters in all."""
    if len(text) <= limit:
        return text
    half = (limit - len(_CUT)) // 2
    return text[:half] + _CUT + text[-half:]


def with_parts(text: str) -> str:
    """`text`, followed by the humps of its CamelCase words (at most CAMEL_WORDS)."""
    if not any(c.isupper() for c in text):
        return text
    parts: list[str] = []
    seen: set[str] = set()
    for found in _CAMEL.finditer(text):
        word = found.group(0)
        if word in seen:
            continue
        seen.add(word)
        parts.extend(_HUMP.findall(word))
        if len(parts) >= CAMEL_WORDS:
            break
    return text + "\n" + " ".join(parts[:CAMEL_WORDS]) if parts else text


def _input_text(name: Any, value: Any) -> list[str]:
    out = [name] if isinstance(name, str) and name else []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str):
                out.append(item if key in REMEMBERED_INPUTS else item[:INPUT_CHARS])
            elif isinstance(item, list):
                out.extend(x[:INPUT_CHARS] for x in item if isinstance(x, str))
            elif isinstance(item, int | float) and not isinstance(item, bool):
                continue  # offsets and limits say nothing a user remembers
    return out


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(
            b["text"]
            for b in output
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def _joined(pieces: list[str]) -> str | None:
    text = "\n".join(p for p in pieces if p).strip()
    return with_parts(bounded(text)) if text else None


def tool_text(kind: str, payload: Any) -> str | None:
    """The tool field of an entry: None when it holds nothing of the tools' (or the harness's)."""
    if not isinstance(payload, dict) or kind not in TOOL_KINDS:
        return None
    if kind == "tool.completed":
        return _joined([_output_text(payload.get("output"))])
    if kind == "provider.notification":
        event = payload.get("event")
        output = event.get("output") if isinstance(event, dict) else None
        return _joined([output]) if isinstance(output, str) else None
    if kind == "tool.started":
        return _joined(_input_text(payload.get("name"), payload.get("input")))
    content = payload.get("content")
    if not isinstance(content, list):
        return None
    if kind in USER_KINDS:
        wrapped = [
            wrappers.split(b["text"]).wrapped
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        return _joined(wrapped)
    pieces: list[str] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_call":
            pieces.extend(_input_text(block.get("name"), block.get("input")))
    return _joined(pieces)


def words_text(kind: str, payload: Any) -> str | None:
    """The conversational field: `entrytext.indexed_text`, less a user message's wrappers."""
    if kind not in INDEXED_KINDS:
        return None
    text = entry_text(kind, payload)
    if text is not None and kind in USER_KINDS:
        return wrappers.own_words(text)
    return text


def texts(kind: str, payload: Any) -> Texts:
    """Both indexed fields of an entry."""
    return Texts(words_text(kind, payload), tool_text(kind, payload))
