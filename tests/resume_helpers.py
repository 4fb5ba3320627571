"""What the resume tests share: a branched chat with tool calls, and each CLI's request to the
stand-in reduced to the conversation it carries (the harness's own preamble left out), with
the checks its provider's API would make (every tool call answered, no empty text)."""

from __future__ import annotations

import json
import re
from typing import Any

from sessionforest import Forest

PROMPT = "and now one more thing"
REPLY = "the stand-in replies after the resume"
# The conversation of `branched_chat` up to the older branch's answer, as a model sees it.
OLD_PATH = [
    ("user", "list the files"),
    ("assistant", "looking"),
    ("assistant", 'call Bash {"command": "ls"}'),
    ("user", "result a.txt\nb.txt"),
    ("assistant", "two files: a.txt and b.txt"),
    ("user", "OLD BRANCH: what is in a.txt?"),
    ("assistant", "OLD ANSWER: it says hello"),
]
_TEXT = {"type": "text"}


def _t(words: str) -> dict[str, Any]:
    return _TEXT | {"text": words}


def branched_chat(forest: Forest) -> tuple[str, dict[str, str]]:
    """A chat whose path holds a tool call, with two branches after it: the older ends at
    `old`, the newer (the head) at `new`."""
    sid = forest.create_session("resume me", harness="claude-code")
    ids: dict[str, str] = {}
    ids["u1"] = forest.append(sid, "user.message", {"content": [_t("list the files")]}).id
    call = {"type": "tool_call", "id": "toolu_01", "name": "Bash", "input": {"command": "ls"}}
    ids["a1"] = forest.append(
        sid, "assistant.message", {"content": [_t("looking"), call], "provider": "anthropic"}
    ).id
    result = {"call_id": "toolu_01", "output": "a.txt\nb.txt", "is_error": False}
    ids["r1"] = forest.append(sid, "tool.completed", result).id
    said = {"content": [_t("two files: a.txt and b.txt")], "provider": "anthropic"}
    ids["a2"] = forest.append(sid, "assistant.message", said).id
    asked = {"content": [_t("OLD BRANCH: what is in a.txt?")]}
    ids["u2"] = forest.append(sid, "user.message", asked).id
    answer = {"content": [_t("OLD ANSWER: it says hello")], "provider": "anthropic"}
    ids["old"] = forest.append(sid, "assistant.message", answer).id
    newer = {"content": [_t("NEW BRANCH: delete b.txt")]}
    ids["u3"] = forest.append(sid, "user.message", newer, parent=ids["a2"]).id
    done = {"content": [_t("NEW ANSWER: deleted")], "provider": "anthropic"}
    ids["new"] = forest.append(sid, "assistant.message", done).id
    return sid, ids


def _words(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for part in content or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return "\n".join(parts)


# What a harness adds of its own to the conversation it sends.
CLAUDE_OWN = ("<system-reminder>",)
CODEX_OWN = re.compile(r"^<(environment_context|permissions instructions|skills_instructions|"
                       r"user_instructions|collaboration_mode|apps_instructions)")  # fmt: skip


def claude_history(body: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            content = [_t(content)]
        for block in content:
            kind = block.get("type")
            if kind == "text":
                words = block["text"].strip()
                if words and not words.startswith(CLAUDE_OWN):
                    out.append((message["role"], words))
            elif kind == "tool_use":
                args = json.dumps(block["input"], sort_keys=True)
                out.append((message["role"], f"call {block['name']} {args}"))
            elif kind == "tool_result":
                out.append((message["role"], f"result {_words(block.get('content'))}"))
    return out


def codex_history(body: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for item in body["input"]:
        kind = item.get("type")
        if kind == "message" and item.get("role") in ("user", "assistant"):
            words = _words(item.get("content")).strip()
            if words and not CODEX_OWN.match(words):
                out.append((item["role"], words))
        elif kind == "function_call":
            args = json.dumps(json.loads(item["arguments"]), sort_keys=True)
            out.append(("assistant", f"call {item['name']} {args}"))
        elif kind == "function_call_output":
            out.append(("user", f"result {_words(item.get('output'))}"))
    return out


TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def anthropic_problems(body: dict[str, Any]) -> list[str]:
    """What Anthropic's Messages API would refuse in `body`: a tool_use not answered in the
    next message, a tool_result without its tool_use, an empty text block, a bad id."""
    problems = []
    messages = body["messages"]
    for i, message in enumerate(messages):
        content = message["content"] if isinstance(message["content"], list) else []
        for block in content:
            if block.get("type") == "text" and not block["text"].strip():
                problems.append(f"message {i}: empty text block")
            if block.get("type") == "tool_use":
                if not TOOL_ID.match(block["id"]):
                    problems.append(f"message {i}: tool_use id {block['id']!r}")
                after = messages[i + 1]["content"] if i + 1 < len(messages) else []
                answered = [b for b in after if isinstance(b, dict)
                            and b.get("type") == "tool_result"
                            and b.get("tool_use_id") == block["id"]]  # fmt: skip
                if not answered:
                    problems.append(f"message {i}: tool_use {block['id']} not answered")
            if block.get("type") == "tool_result":
                before = messages[i - 1]["content"] if i > 0 else []
                asked = [b for b in before if isinstance(b, dict) and b.get("type") == "tool_use"
                         and b.get("id") == block.get("tool_use_id")]  # fmt: skip
                if not asked:
                    problems.append(f"message {i}: tool_result {block.get('tool_use_id')} orphan")
    return problems


def openai_problems(body: dict[str, Any]) -> list[str]:
    """What OpenAI's Responses API would refuse in `body`: a function_call without its
    output, an output without its call."""
    calls = [i["call_id"] for i in body["input"] if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in body["input"] if i.get("type") == "function_call_output"]
    problems = [f"call {c} has no output" for c in calls if c not in outputs]
    problems += [f"output {c} has no call" for c in outputs if c not in calls]
    return problems


def gemini_history(body: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for content in body["contents"]:
        role = "assistant" if content["role"] == "model" else "user"
        for part in content["parts"]:
            if isinstance(part.get("text"), str) and not part.get("thought"):
                words = part["text"].strip()
                if words and not words.startswith("<session_context>"):
                    out.append((role, words))
            elif "functionCall" in part:
                call = part["functionCall"]
                out.append(
                    (role, f"call {call['name']} {json.dumps(call['args'], sort_keys=True)}")
                )
            elif "functionResponse" in part:
                output = part["functionResponse"]["response"].get("output", "")
                out.append((role, f"result {output}"))
    return out


def google_problems(body: dict[str, Any]) -> list[str]:
    """What Gemini's API would refuse in `body`: a functionCall turn not followed by a turn
    answering each of its calls, or an answer without its call."""
    problems = []
    contents = body["contents"]
    for i, content in enumerate(contents):
        calls = [p["functionCall"]["id"] for p in content["parts"] if "functionCall" in p]
        if calls:
            after = contents[i + 1]["parts"] if i + 1 < len(contents) else []
            answered = {p["functionResponse"]["id"] for p in after if "functionResponse" in p}
            problems += [f"turn {i}: call {c} not answered" for c in calls if c not in answered]
        answers = [p["functionResponse"]["id"] for p in content["parts"] if "functionResponse" in p]
        if answers:
            before = contents[i - 1]["parts"] if i > 0 else []
            asked = {p["functionCall"]["id"] for p in before if "functionCall" in p}
            problems += [f"turn {i}: answer {a} orphan" for a in answers if a not in asked]
    return problems
