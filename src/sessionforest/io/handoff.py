"""An import of a transcript `forest resume` wrote joins the chat it continues.

`forest resume` (sessionforest/resume/) writes the path to an entry as a new
transcript and records a hand-off (store/base/handoffs.py) with its `plan`:
how many lines the written prefix has and which entry each line carries. An
importer reading that transcript derives fresh ids from it like from any
other; `Joining` (the `BulkStore` every import writes through) turns that
chat into the one it continues: each entry read from a prefix line is met as
the chat's own entry of that line (`met`, kept in the plan so an import
resuming past the prefix still knows them), and only what the harness wrote
after the prefix is added, under the entries it continues. The chat keeps its
own title, summary and source.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from ..model import ChatResult, ChatSpec
from ..store.base import BulkStore, ChatWriter, HandoffStore


@dataclass(slots=True)
class Plan:
    """The hand-off's prefix: `prefix` lines, the entry each line carries (a line of
    several entries: its last), and the importer's ids met as the chat's entries."""

    prefix: int
    lines: dict[int, str]
    met: dict[str, str | None] = field(default_factory=dict)

    def to_text(self) -> str:
        lines = {str(k): v for k, v in sorted(self.lines.items())}
        return orjson.dumps({"prefix": self.prefix, "lines": lines, "met": self.met}).decode()

    @classmethod
    def from_text(cls, text: str) -> Plan:
        raw = orjson.loads(text)
        lines = {int(k): str(v) for k, v in raw.get("lines", {}).items()}
        return cls(int(raw.get("prefix", 0)), lines, dict(raw.get("met", {})))

    def entry_of(self, line: int) -> str | None:
        """The chat's entry a prefix line stands for: its own, else the nearest earlier
        line's (a header line of the transcript carries none; None before the first)."""
        found = [k for k in self.lines if k <= line]
        return self.lines[max(found)] if found else None


class Joining:
    """The `BulkStore` imports write through: a chat whose (format, source id) has a
    hand-off is written into the chat it continues (module docstring); any other
    goes to `bulk` as it is."""

    def __init__(self, bulk: BulkStore, handoffs: HandoffStore) -> None:
        self._bulk = bulk
        self._handoffs = handoffs

    def __getattr__(self, name: str) -> Any:
        return getattr(self._bulk, name)

    @contextmanager
    def bulk_chat(self, spec: ChatSpec, source: Path) -> Iterator[ChatWriter]:
        handoff = self._handoffs.handoff(spec.source_format, spec.source_id)
        if handoff is None:
            with self._bulk.bulk_chat(spec, source) as writer:
                yield writer
            return
        plan = Plan.from_text(handoff.plan)
        known = len(plan.met)
        stored = self._bulk.stored_session(handoff.session_id)
        joined = ChatSpec(
            stored.id,
            stored.title,
            stored.harness,
            stored.created_at,
            stored.source_format,  # type: ignore[arg-type]  # a chat not imported: None
            stored.source_path,  # type: ignore[arg-type]
            stored.source_id,  # type: ignore[arg-type]
            visibility=stored.visibility,
            summary=stored.summary,
            git_branch=stored.git_branch,
            origin_cwd=stored.origin_cwd,
        )
        with self._bulk.bulk_chat(joined, source) as inner:
            writer = _JoinedWriter(inner, plan)
            yield writer
        if len(plan.met) != known:
            self._handoffs.keep_handoff(replace(handoff, plan=plan.to_text()))


class _JoinedWriter:
    """A `ChatWriter` into the continued chat: prefix entries met, the rest added under
    the entries they continue; the chat's own description kept."""

    def __init__(self, inner: ChatWriter, plan: Plan) -> None:
        self._inner = inner
        self._plan = plan
        self.created_at = inner.created_at

    # The continued chat keeps its own description: what the importer derives from the
    # transcript (a title from its first prompt, ...) is not written over it.
    title = property(lambda self: self._inner.title, lambda self, value: None)
    summary = property(lambda self: self._inner.summary, lambda self, value: None)
    git_branch = property(lambda self: self._inner.git_branch, lambda self, value: None)

    @property
    def continuing(self) -> bool:
        return self._inner.continuing

    @continuing.setter
    def continuing(self, value: bool) -> None:
        self._inner.continuing = value

    @property
    def session_id(self) -> str:
        return self._inner.session_id

    @property
    def result(self) -> ChatResult | None:
        return self._inner.result

    @result.setter
    def result(self, value: ChatResult | None) -> None:
        self._inner.result = value

    @property
    def head(self) -> str | None:
        return self._inner.head

    @head.setter
    def head(self, value: str | None) -> None:
        # A head on the prefix leaves the chat's head where it is: only a turn the harness
        # wrote after the hand-off moves it.
        if value is not None and value not in self._plan.met:
            self._inner.head = value

    def _entry(self, entry_id: str | None) -> str | None:
        if entry_id is not None and entry_id in self._plan.met:
            return self._plan.met[entry_id]
        return entry_id

    def add(
        self,
        entry_id: str,
        parent: str | None,
        kind: str,
        payload: dict[str, Any],
        created_at: str,
        visibility: str | None = None,
        line: int | None = None,
        source: str | None = None,
        stamp: dict[str, Any] | None = None,
    ) -> None:
        if line is not None and line <= self._plan.prefix:
            self._plan.met[entry_id] = self._plan.entry_of(line)
            return
        under = self._entry(parent)
        self._inner.add(entry_id, under, kind, payload, created_at, visibility, line, source, stamp)

    def seen(self, entry_id: str) -> bool:
        return entry_id in self._plan.met or self._inner.seen(entry_id)

    def flush(self) -> None:
        self._inner.flush()
