"""What a path becomes for each target (resume/path.py): tool calls kept with their results,
orphans as text, another provider's thinking and images a target cannot resend folded or
left out, each counted in what the command prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionforest import Forest
from sessionforest.resume import claude_code, codex
from sessionforest.resume.path import Folded, turns

PNG = {"type": "image", "media_type": "image/png", "data": "iVBORw0KGgo="}


def _t(words: str) -> dict[str, str]:
    return {"type": "text", "text": words}


@pytest.fixture
def forest(tmp_path: Path) -> Forest:
    with Forest.open(tmp_path / "forest.db") as f:
        yield f


def _chat(forest: Forest) -> str:
    sid = forest.create_session("mixed")
    forest.append(sid, "user.message", {"content": [_t("look at this"), PNG]})
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    unsigned = {"type": "thinking", "thinking": "no signature"}
    call = {"type": "tool_call", "id": "call.1/x", "name": "screenshot", "input": {}}
    lost = {"type": "tool_call", "id": "never", "name": "ls", "input": {}}
    said = {"content": [thinking, unsigned, call, lost], "provider": "anthropic"}
    forest.append(sid, "assistant.message", said)
    forest.append(sid, "user.message", {"content": [_t("meanwhile")]})
    forest.append(sid, "tool.completed", {"call_id": "call.1/x", "output": [_t("shot"), PNG]})
    forest.append(sid, "tool.completed", {"call_id": "stray", "output": "from nowhere"})
    forest.append(sid, "assistant.message", {"content": [_t("done")], "provider": "openai"})
    return sid


def test_claude_code_keeps_signed_thinking_and_images_and_pairs_calls(forest: Forest) -> None:
    sid = _chat(forest)
    folded = Folded()
    out = turns(forest.active_path(sid), claude_code.CAN, folded)
    assert [t.role for t in out] == ["user", "assistant", "user", "assistant"]
    assistant = out[1].blocks
    assert [b["type"] for b in assistant] == ["thinking", "tool_call", "text"]
    assert "never" in assistant[2]["text"]  # the unanswered call, as text
    # The result comes right after its call, before the user's words that came between.
    assert [b["type"] for b in out[2].blocks] == ["tool_result", "text", "text"]
    assert out[2].blocks[0]["output"][1] == PNG and "from nowhere" in out[2].blocks[2]["text"]
    assert folded.lines() == [
        "folded into text: 1 tool call without a result on the path",
        "folded into text: 1 tool result without its call on the path",
        "left out: 1 unsigned thinking block from anthropic",
    ]


def test_codex_folds_what_it_cannot_resend(forest: Forest) -> None:
    sid = _chat(forest)
    folded = Folded()
    out = turns(forest.active_path(sid), codex.CAN, folded)
    assert out[0].blocks[1] == PNG  # a user's image goes as input_image
    assert out[2].blocks[0]["output"][1] == _t("[an image was here]")
    assert "left out: 2 thinking blocks from anthropic" in folded.lines()
    assert "folded into text: 1 image in a tool result" in folded.lines()


def test_claude_code_rewrites_ids_its_api_refuses(forest: Forest, tmp_path: Path) -> None:
    sid = _chat(forest)
    path = forest.active_path(sid)
    out = turns(path, claude_code.CAN, Folded())
    env = {"HOME": str(tmp_path)}
    written = claude_code.write(out, ["2026-01-01T00:00:00.000Z"] * len(out), cwd="/w/x",
                                version="2.1.197", env=env)  # fmt: skip
    text = written.path.read_text()
    assert written.path.parent.name == "-w-x" and '"call_1_x"' in text and "call.1/x" not in text
    assert written.prefix == len(out) and written.source_id == written.new_id
