"""A chat's path as the turns a harness transcript carries, whatever harness it came from.

`turns` walks the path root -> entry and keeps what a model is resent: user
and assistant messages, tool calls each followed by its result, compactions
and summaries as text. Every tool call is kept with its result right after
it (an orphan breaks the target's API): a call never answered, or a result
whose call is not on the path, becomes text. What a target cannot carry is
folded into text or left out by `Capabilities`, each noted in `Folded`, which
the command prints.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from ..model import Entry
from ..text import plural

Block = dict[str, Any]
Role = Literal["user", "assistant"]


@dataclass(slots=True)
class Turn:
    """One message of the transcript: forest blocks (text, image, thinking,
    redacted_thinking, tool_call, and `tool_result` {call_id, output, is_error} in user
    turns) and the entries it carries, in order."""

    role: Role
    blocks: list[Block]
    entries: list[str]
    provider: str | None = None  # an assistant turn's provider (anthropic, openai, google)
    model: str | None = None
    encrypted: str | None = None  # OpenAI reasoning's encrypted_content, resent as it was


@dataclass(slots=True)
class Folded:
    """What the hand-off could not carry as it was: folded into text, or left out."""

    counts: Counter[tuple[str, str, str]] = field(default_factory=Counter)

    def add(self, how: str, what: str, many: str | None = None) -> None:
        """One more `what` (plural `many`, default `what` + s) folded or left out."""
        self.counts[(how, what, many or f"{what}s")] += 1

    def lines(self) -> list[str]:
        """`folded into text: 2 images in tool results`, one line per kind, sorted."""
        counted = sorted(self.counts.items())
        return [f"{how}: {plural(n, what, many)}" for (how, what, many), n in counted]


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a target's transcript can carry as it is."""

    name: str
    # Thinking the target resends: only its own provider's, signed (Anthropic) or
    # encrypted (OpenAI); another provider's thinking would be rejected by its API.
    thinking_from: str | None
    user_images: bool
    result_images: bool


FOLDED = "folded into text"
DROPPED = "left out"

# Kinds a path holds that are no turn for a model (see projection.py): skipped quietly.
_NOT_TURNS = frozenset(
    {"provider.notification", "tool.started", "checkpoint", "session.status", "label"}
)


def turns(path: list[Entry], can: Capabilities, folded: Folded) -> list[Turn]:
    """The path as transcript turns for a target that can carry `can` (module docstring)."""
    raw = _raw(path, folded)
    paired = _paired(raw, folded)
    return _merged([_fit(t, can, folded) for t in paired])


def _raw(path: list[Entry], folded: Folded) -> list[Turn]:
    out: list[Turn] = []
    for entry in path:
        if entry.context_visibility == "hidden" or entry.kind in _NOT_TURNS:
            continue
        payload = entry.payload
        if entry.kind == "user.message":
            blocks = [b for b in _content(payload) if b.get("type") in ("text", "image")]
            blocks += _unsupported(payload, folded)
            out.append(Turn("user", blocks or [_text("")], [entry.id]))
        elif entry.kind == "assistant.message":
            blocks = list(_content(payload)) + _unsupported(payload, folded)
            encrypted = payload.get("encrypted_content")
            out.append(
                Turn(
                    "assistant",
                    blocks,
                    [entry.id],
                    _provider(payload),
                    payload.get("model") if isinstance(payload.get("model"), str) else None,
                    encrypted if isinstance(encrypted, str) else None,
                )
            )
        elif entry.kind == "tool.completed":
            result = {
                "type": "tool_result",
                "call_id": str(payload.get("call_id") or ""),
                "output": payload.get("output", ""),
                "is_error": payload.get("is_error") is True,
            }
            out.append(Turn("user", [result], [entry.id]))
        elif entry.kind == "system.message":
            if payload.get("wrapper") not in (None, "system", "developer"):
                # A harness's own preamble (environment, session context): the target
                # writes its own.
                folded.add(DROPPED, "harness preamble")
                continue
            words = _words(payload)
            out.append(Turn("user", [_text(f"[system message]\n{words}")], [entry.id]))
            folded.add(FOLDED, "system message")
        elif entry.kind == "compaction":
            # As projection does: the summary stands for what it summarised.
            kept = payload.get("first_kept_entry_id")
            ids = {e.id for e in path}
            keep_from = kept if isinstance(kept, str) and kept in ids else None
            dropped = _before(out, keep_from) if keep_from else len(out)
            for _ in range(dropped):
                folded.add(
                    DROPPED,
                    "message before a compaction (its summary stands for it)",
                    "messages before a compaction (its summary stands for them)",
                )
            out = out[dropped:]
            summary = f"Summary of the earlier conversation:\n{payload.get('summary', '')}"
            out.insert(0, Turn("user", [_text(summary)], [entry.id]))
            folded.add(FOLDED, "compaction summary", "compaction summaries")
        elif entry.kind in ("branch.summary", "worker.result"):
            words = payload.get("summary") or payload.get("result") or _words(payload)
            label = "Summary of another branch" if entry.kind == "branch.summary" else "Worker"
            out.append(Turn("user", [_text(f"{label}:\n{_as_text(words)}")], [entry.id]))
            what = entry.kind.replace(".", " ")
            folded.add(FOLDED, what, f"{what}s" if what.endswith("t") else f"{what[:-1]}ies")
    return out


def _before(out: list[Turn], entry_id: str | None) -> int:
    for i, turn in enumerate(out):
        if entry_id in turn.entries:
            return i
    return len(out)


def _paired(raw: list[Turn], folded: Folded) -> list[Turn]:
    """Each answered call followed at once by its result; the rest as text."""
    results: dict[str, tuple[int, Block]] = {}
    for i, turn in enumerate(raw):
        for block in turn.blocks:
            if block.get("type") == "tool_result":
                results.setdefault(block["call_id"], (i, block))
    out: list[Turn] = []
    placed: set[int] = set()  # ids of result blocks already put after their call
    seen_calls: set[str] = set()
    for i, turn in enumerate(raw):
        if turn.role == "assistant":
            blocks: list[Block] = []
            answers: list[tuple[Block, int]] = []
            for block in turn.blocks:
                call_id = str(block.get("id") or "") if block.get("type") == "tool_call" else None
                if call_id is None:
                    blocks.append(block)
                    continue
                found = results.get(call_id)
                if call_id and call_id not in seen_calls and found is not None and found[0] > i:
                    seen_calls.add(call_id)
                    blocks.append(block)
                    answers.append((found[1], found[0]))
                else:
                    blocks.append(_text(_call_text(block)))
                    folded.add(
                        FOLDED,
                        "tool call without a result on the path",
                        "tool calls without a result on the path",
                    )
            turn.blocks = blocks
            out.append(turn)
            for answer, at in answers:
                placed.add(id(answer))
                out.append(Turn("user", [answer], list(raw[at].entries)))
            continue
        kept: list[Block] = []
        for block in turn.blocks:
            if block.get("type") != "tool_result":
                kept.append(block)
            elif id(block) not in placed:
                kept.append(_text(_result_text(block)))
                folded.add(
                    FOLDED,
                    "tool result without its call on the path",
                    "tool results without their call on the path",
                )
        if kept:  # (a result put after its call already carries its entry)
            out.append(Turn("user", kept, turn.entries))
    return out


def _fit(turn: Turn, can: Capabilities, folded: Folded) -> Turn:
    """What `can` cannot carry in `turn`: folded or left out."""
    blocks: list[Block] = []
    for block in turn.blocks:
        kind = block.get("type")
        if kind == "thinking" or kind == "redacted_thinking":
            ours = can.thinking_from is not None and turn.provider == can.thinking_from
            if can.thinking_from == "anthropic":
                signed = bool(block.get("signature")) or kind == "redacted_thinking"
            elif can.thinking_from == "openai":
                signed = turn.encrypted is not None
            else:
                signed = kind == "thinking"  # Gemini resends its thoughts as text
            if ours and signed:
                blocks.append(block)
            else:
                source = turn.provider or "an unnamed provider"
                why = "unsigned " if ours else ""
                folded.add(
                    DROPPED,
                    f"{why}thinking block from {source}",
                    f"{why}thinking blocks from {source}",
                )
        elif kind == "image":
            if can.user_images and turn.role == "user":
                blocks.append(block)
            else:
                blocks.append(_text("[an image was here]"))
                folded.add(FOLDED, "image")
        elif kind == "tool_result":
            blocks.append(_fit_result(block, can, folded))
        else:
            blocks.append(block)
    if turn.role == "assistant" and not any(_says(b) for b in blocks):
        blocks.append(_text("(no text)"))  # an empty assistant message breaks some APIs
    return Turn(turn.role, blocks, turn.entries, turn.provider, turn.model, turn.encrypted)


def _fit_result(block: Block, can: Capabilities, folded: Folded) -> Block:
    output = block.get("output")
    if not isinstance(output, list):
        return block | {"output": output if isinstance(output, str) else _as_text(output)}
    parts: list[Block] = []
    for part in output:
        if isinstance(part, dict) and part.get("type") == "image":
            if can.result_images:
                parts.append(part)
            else:
                parts.append(_text("[an image was here]"))
                folded.add(FOLDED, "image in a tool result", "images in tool results")
        elif isinstance(part, dict) and part.get("type") == "text":
            parts.append(part)
        else:
            parts.append(_text(_as_text(part)))
    return block | {"output": parts}


def _says(block: Block) -> bool:
    if block.get("type") == "text":
        return bool(str(block.get("text", "")).strip())
    return block.get("type") in ("tool_call", "image")


def _merged(turns: list[Turn]) -> list[Turn]:
    """Consecutive turns of one role as one message (a user message holding results puts
    them first, as Anthropic's API wants)."""
    out: list[Turn] = []
    for turn in turns:
        last = out[-1] if out else None
        if last is not None and last.role == turn.role:
            last.blocks += turn.blocks
            last.entries += turn.entries
            last.provider = last.provider or turn.provider
            last.model = last.model or turn.model
            last.encrypted = last.encrypted or turn.encrypted
        else:
            out.append(Turn(turn.role, list(turn.blocks), list(turn.entries), turn.provider,
                            turn.model, turn.encrypted))  # fmt: skip
    for turn in out:
        if turn.role == "user":
            turn.blocks.sort(key=lambda b: b.get("type") != "tool_result")
            texts = [b for b in turn.blocks if b.get("type") != "tool_result"]
            if not texts and not turn.blocks:
                turn.blocks.append(_text(""))
    return out


def _content(payload: dict[str, Any]) -> list[Block]:
    content = payload.get("content")
    if isinstance(content, str):
        return [_text(content)]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _unsupported(payload: dict[str, Any], folded: Folded) -> list[Block]:
    """Provider-specific blocks the source kept as they were: left out, counted by type."""
    other = payload.get("unsupported_blocks")
    if not isinstance(other, list):
        return []
    for block in other:
        kind = block.get("type") if isinstance(block, dict) else None
        folded.add(DROPPED, f"{kind or 'untyped'} block")
    return []


def _provider(payload: dict[str, Any]) -> str | None:
    provider = payload.get("provider")
    return provider if isinstance(provider, str) else None


def _words(payload: dict[str, Any]) -> str:
    return "\n".join(str(b.get("text", "")) for b in _content(payload) if b.get("type") == "text")


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _text(words: str) -> Block:
    return {"type": "text", "text": words}


def _call_text(block: Block) -> str:
    name, call_id = block.get("name"), block.get("id")
    return f"[tool call {name} ({call_id}) {_as_text(block.get('input'))}: no result recorded]"


def _result_text(block: Block) -> str:
    output = block.get("output")
    if isinstance(output, list):
        output = "\n".join(
            str(p.get("text", "")) if isinstance(p, dict) else _as_text(p) for p in output
        )
    return f"[tool result {block.get('call_id')}]\n{_as_text(output)}"


def text_of(blocks: list[Block]) -> str:
    """The text blocks of `blocks`, joined (what a tool result of parts says)."""
    return "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
