"""`forest resume` with the real, pinned CLIs (tests/harness_cli.py) against the stand-in.

A branch that is not the newest, whose path holds a tool call, is handed to each
target; the printed command runs non-interactively with one new prompt; the history
the CLI sends is exactly the path (nothing of the sibling branch), and the CLI's
transcript, imported back (as `forest watch` does, twice), hangs its turns under the
handed-off entry with nothing of the shared prefix stored twice. A chat imported from
another harness (pi: hundreds of tool calls, some never answered, Anthropic thinking)
resumes in Claude Code and in Codex with nothing their APIs would refuse.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from resume_helpers import (
    OLD_PATH,
    PROMPT,
    REPLY,
    anthropic_problems,
    branched_chat,
    claude_history,
    codex_history,
    gemini_history,
    google_problems,
    openai_problems,
)
from sessionforest import Forest
from sessionforest.io.common import Ids
from sessionforest.resume import resume
from standin import Reply

DATA = Path(__file__).parents[2].parent / "shared" / "data"
PI = DATA / "pi" / "large-session.jsonl"
# target -> (the CLI of tests/harness_cli.py, the importer reading what it writes)
TARGETS = {
    "claude-code": ("claude", "claude-code"),
    "codex": ("codex", "codex"),
    "gemini": ("gemini", "gemini"),
}
HISTORY = {"claude": claude_history, "codex": codex_history, "gemini": gemini_history}
PROBLEMS = {"claude": anthropic_problems, "codex": openai_problems, "gemini": google_problems}


def _history(name: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    return HISTORY[name](body)


def _texts(forest: Forest, sid: str, words: str) -> list[str]:
    """Ids of the chat's entries whose text blocks say `words`."""
    found = []
    for entry in forest.entries(sid):
        content = entry.payload.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("text") == words for b in content
        ):
            found.append(entry.id)
    return found


def _under(forest: Forest, sid: str, entry: str, handed: str) -> None:
    """`entry` continues `handed`: its parent, or below the context messages the harness
    puts in first (Codex's developer and environment messages)."""
    path = forest.path_to(sid, entry)
    between = [e.kind for e in path[[e.id for e in path].index(handed) + 1 : -1]]
    assert set(between) <= {"system.message"}, between


def _continue(cli: Any, done: dict[str, Any], prompt: str) -> None:
    """Run the printed command non-interactively with one new prompt, in its cwd."""
    assert done["cwd"] == str(cli.cwd)
    cli.run(prompt, resume=done["id"])


@pytest.mark.slow
@pytest.mark.parametrize("target", list(TARGETS))
def test_an_older_branch_with_a_tool_call_goes_on_in_the_cli(
    real_cli: Any, tmp_path: Path, target: str
) -> None:
    name, fmt = TARGETS[target]
    cli = real_cli(name)
    with Forest.open(tmp_path / "forest.db") as forest:
        sid, ids = branched_chat(forest)
        before = len(forest.entries(sid))
        done = resume(forest, sid, to=target, at=ids["old"], cwd=str(cli.cwd), env=cli.env)
        assert done["entry_id"] == ids["old"] and done["installed"] is not None
        assert done["argv"][-1] == done["id"] and Path(done["path"]).is_file()
        assert done["folded"] == []

        cli.script(Reply(text=REPLY))
        _continue(cli, done, PROMPT)
        sent = cli.model_requests()[-1]
        assert _history(name, sent) == [*OLD_PATH, ("user", PROMPT)]
        assert PROBLEMS[name](sent) == []

        # Imported back as the live mirror does: the new turns hang under the entry.
        report = forest.import_followed(fmt, done["path"])
        assert report.chat == sid and [c.session_id for c in report.report.chats] == [sid]
        assert len(forest.sessions()) == 1
        (prompt,) = _texts(forest, sid, PROMPT)
        _under(forest, sid, prompt, ids["old"])
        (reply,) = _texts(forest, sid, REPLY)
        path = [e.id for e in forest.path_to(sid, reply)]
        prefix = [ids[k] for k in ("u1", "a1", "r1", "a2", "u2", "old")]
        assert path[: len(prefix)] == prefix and path.index(prompt) > len(prefix) - 1
        assert forest.head(sid) == path[-1]
        for words in ("list the files", "OLD ANSWER: it says hello"):
            assert len(_texts(forest, sid, words)) == 1  # the prefix is not stored twice
        added = len(forest.entries(sid)) - before

        # The harness goes on in the same transcript; the mirror imports from where it
        # stopped (past the prefix) and the turn hangs under the last reply.
        cli.script(Reply(text="second reply"))
        _continue(cli, done, "a second new prompt")
        assert _history(name, cli.model_requests()[-1])[-3:] == [
            ("user", PROMPT), ("assistant", REPLY), ("user", "a second new prompt"),
        ]  # fmt: skip
        forest.import_followed(fmt, done["path"])
        (second,) = _texts(forest, sid, "a second new prompt")
        assert reply in [e.id for e in forest.path_to(sid, second)]
        assert len(_texts(forest, sid, PROMPT)) == 1
        # Importing the whole file again changes nothing.
        again = forest.import_chats(fmt, done["path"])
        assert again.entries == 0 and len(forest.entries(sid)) > before + added
        assert [h.path for h in forest.handoffs(sid)] == [done["path"]]


@pytest.mark.slow
@pytest.mark.parametrize("target", ["claude-code", "codex"])
def test_a_pi_chat_goes_on_in_claude_code_and_codex(
    real_cli: Any, tmp_path: Path, target: str
) -> None:
    name, fmt = TARGETS[target]
    cli = real_cli(name)
    with Forest.open(tmp_path / "forest.db") as forest:
        (chat,) = forest.import_chats("pi", PI).chats
        sid = chat.session_id
        done = resume(forest, sid, to=target, cwd=str(cli.cwd), env=cli.env)
        # Calls never answered on the path are text now; Codex resends no Anthropic thinking.
        assert "folded into text: 18 tool calls without a result on the path" in done["folded"]
        if target == "codex":
            assert "left out: 1 thinking block from anthropic" in done["folded"]

        cli.script(Reply(text=REPLY))
        _continue(cli, done, PROMPT)
        sent = cli.model_requests()[-1]
        assert PROBLEMS[name](sent) == []
        history = _history(name, sent)
        first = forest.path_to(sid, forest.head(sid) or "")
        words = next(b["text"] for e in first if e.kind == "user.message"
                     for b in e.payload["content"] if b["type"] == "text")  # fmt: skip
        assert history[0] == ("user", words.strip()) and history[-1] == ("user", PROMPT)
        calls = [h for h in history if h[1].startswith("call ")]
        assert len(calls) == 391 - 18  # every answered call, each with its result
        assert len([h for h in history if h[1].startswith("result ")]) == len(calls)

        forest.import_followed(fmt, done["path"])
        (prompt,) = _texts(forest, sid, PROMPT)
        _under(forest, sid, prompt, done["entry_id"])
        assert len(forest.sessions(include_hidden=False)) == 1


def _rollout(path: Path, thread: str, said: list[tuple[str, str]], **meta: Any) -> None:
    lines = [{"timestamp": "2026-03-01T10:00:00.000Z", "type": "session_meta",
              "payload": {"id": thread, "cwd": "/tmp", "cli_version": "0.171.0",
                          "source": "cli"} | meta}]  # fmt: skip
    for second, (role, words) in enumerate(said, 1):
        part = "output_text" if role == "assistant" else "input_text"
        item = {"type": "message", "role": role, "content": [{"type": part, "text": words}]}
        lines.append({"timestamp": f"2026-03-01T10:00:{second:02d}.000Z",
                      "type": "response_item", "payload": item})  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.mark.slow
def test_a_hidden_worker_chat_goes_on_as_a_session_of_its_own(
    real_cli: Any, tmp_path: Path
) -> None:
    """A sub-agent's chat (hidden, a worker of its parent) handed to Codex: the CLI gets the
    worker's own task and work, not the orchestrator's turns; the output says what was
    done; imported back, the new turns join the worker chat, still a hidden worker."""
    sessions = tmp_path / "rollouts"
    _rollout(sessions / "rollout-2026-03-01T10-00-00-p.jsonl", "p",
             [("user", "delegate the audit"), ("assistant", "spawned a worker")])  # fmt: skip
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": "p", "depth": 1}}}
    _rollout(sessions / "rollout-2026-03-01T10-00-05-w.jsonl", "w",
             [("user", "audit the config"), ("assistant", "WORKER: the config is fine")],
             source=spawn)  # fmt: skip
    cli = real_cli("codex")
    with Forest.open(tmp_path / "forest.db") as forest:
        assert forest.import_chats("codex", sessions).ok
        worker, parent = Ids("codex", "w").session, Ids("codex", "p").session
        head = forest.head(worker)
        done = resume(forest, worker, to="codex", cwd=str(cli.cwd), env=cli.env)
        assert done["session_id"] == worker and done["entry_id"] == head
        (note,) = done["notes"]
        assert "hidden worker chat" in note and parent in note
        cli.script(Reply(text=REPLY))
        _continue(cli, done, PROMPT)
        assert _history("codex", cli.model_requests()[-1]) == [
            ("user", "audit the config"), ("assistant", "WORKER: the config is fine"),
            ("user", PROMPT),
        ]  # fmt: skip
        report = forest.import_followed("codex", done["path"])
        assert report.chat == worker
        (prompt,) = _texts(forest, worker, PROMPT)
        _under(forest, worker, prompt, head)
        assert len(_texts(forest, worker, REPLY)) == 1
        assert len(_texts(forest, worker, "audit the config")) == 1  # not stored twice
        assert forest.session(worker).visibility == "hidden"
        agent = forest.agent_for_session(worker)
        assert agent is not None and agent.role == "worker"
        assert _texts(forest, parent, PROMPT) == []  # the parent chat is left as it was
        listed = {s.id for s in forest.sessions(include_hidden=False)}
        assert listed == {parent}  # listed by default: the parent only
