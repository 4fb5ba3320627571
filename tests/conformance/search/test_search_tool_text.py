"""What the tools said is searchable (tooltext.py), below what was said, on every backend.

The real Claude Code chat below hit `uv tool install` failing inside
hatchling's `build_wheel`: those words stand only in a Bash result. Find and
recall both see them; a chat that talks about the same words ranks above one
whose tool output merely holds them; harness wrappers are tool text, not the
user's words; code names match whole and by their parts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionforest import Forest

from .conftest import NOW, chat, text

DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "claude-code" / "real_projects"
BUILD_FAILED = (
    DATA
    / "-Users-dain-workspace-coderabbit-review-helper"
    / "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"
)


@pytest.fixture
def imported(forest: Forest) -> str:
    report = forest.import_chats("claude-code", BUILD_FAILED)
    [made] = report.chats
    return made.session_id


@pytest.mark.parametrize("query", ["build_wheel", "hatchling.build", "Failed to build"])
def test_words_of_a_bash_result_find_the_chat_and_the_entry(
    forest: Forest, imported: str, query: str
) -> None:
    found = forest.search_chats(query, now=NOW)
    assert [h.session_id for h in found.hits] == [imported]
    hits = forest.search_session_entries(imported, query)
    assert hits, f"recall found no entry for {query!r}"
    assert hits[0].kind == "tool.completed"
    marked = hits[0].snippet.replace("**", "")
    assert query.split()[-1].lower() in marked.lower()


def test_a_chat_that_talks_about_it_ranks_above_tool_output_that_holds_it(forest: Forest) -> None:
    # The tool-output chat is newer and holds the words more often.
    quiet = chat(forest, "Release chores", ["bump the version", "done"], age_days=1)
    for n in range(3):
        forest.append(
            quiet,
            "tool.completed",
            {"call_id": f"c{n}", "output": "warning: flaky fixture teardown in conftest"},
        )
    talked = chat(
        forest,
        "Test suite",
        ["why is the fixture teardown flaky?", "The fixture teardown races the server thread."],
        age_days=5,
    )
    found = forest.search_chats("flaky fixture teardown", now=NOW)
    assert [h.session_id for h in found.hits][:2] == [talked, quiet]


def test_harness_wrappers_are_tool_text_not_the_users_words(forest: Forest) -> None:
    sid = chat(forest, "Model switch", ["we should try the parser rewrite", "ok"])
    forest.append(
        sid,
        "user.message",
        text(
            "<command-name>/model</command-name>\n"
            "<local-command-stdout>Set model to sonnet quixotic</local-command-stdout>"
        ),
    )
    hits = forest.search_session_entries(sid, "quixotic")
    assert [h.kind for h in hits] == ["user.message"]
    assert "quixotic" in hits[0].snippet
    # The user's own words of a wrapped message stay the first field.
    forest.append(sid, "user.message", text("<ide_selection>zebra</ide_selection> rename this"))
    assert [h.kind for h in forest.search_session_entries(sid, "rename")] == ["user.message"]
    assert [h.kind for h in forest.search_session_entries(sid, "zebra")] == ["user.message"]


@pytest.mark.parametrize(
    "query",
    [
        "src/sessionforest/forest.py",
        "forest.py",
        "sessionforest",
        "WheelBuilder",
        "Builder",
        "--no-cache",
        "no-cache",
        "build_wheel",
        "wheel",
    ],
)
def test_identifiers_and_paths_match_whole_and_by_their_parts(forest: Forest, query: str) -> None:
    sid = chat(forest, "Packaging", ["package it", "on it"])
    forest.append(
        sid,
        "assistant.message",
        {
            "content": [
                {
                    "type": "tool_call",
                    "id": "c1",
                    "name": "Bash",
                    "input": {"command": "uv build --no-cache src/sessionforest/forest.py"},
                }
            ]
        },
    )
    forest.append(
        sid, "tool.completed", {"call_id": "c1", "output": "WheelBuilder.build_wheel failed"}
    )
    other = chat(forest, "Garden", ["the tomatoes wilt", "water them"])
    found = forest.search_chats(query, now=NOW)
    assert [h.session_id for h in found.hits] == [sid]
    assert other not in [h.session_id for h in found.hits]
    assert forest.search_session_entries(sid, query)


def test_a_long_output_keeps_its_head_and_tail(forest: Forest) -> None:
    sid = chat(forest, "Logs", ["run the tests", "running"])
    middle = "\n".join(f"collected item {n}" for n in range(20_000)).replace(
        "item 10000\n", "zygomorphic\n"
    )
    output = "platform linux pytest\n" + middle + "\nE   AssertionError: ledger mismatch"
    forest.append(sid, "tool.completed", {"call_id": "c1", "output": output})
    assert forest.search_session_entries(sid, "platform linux")
    assert forest.search_session_entries(sid, "ledger mismatch")
    assert forest.search_session_entries(sid, "zygomorphic") == []  # the middle is left out


LOG_SAMPLE = DATA / "-Users-dain-workspace-claude-code-log-sample"
COVERAGE_RUN = "07f2e15c-a38b-454b-9148-60edc06de401"


def test_the_chat_whose_one_entry_holds_the_whole_command_comes_first(forest: Forest) -> None:
    # The project's other chats talk about "uv run pytest" more; only this one ran
    # the command with these options (a Bash call). Too few chats hold every word
    # in one entry for AND alone, so the OR list decides, and that entry still wins.
    report = forest.import_chats("claude-code", LOG_SAMPLE)
    [gold] = [c.session_id for c in report.chats if c.source.id == COVERAGE_RUN]
    found = forest.search_chats(
        "uv run pytest --cov=claude_code_log --cov-report=term-missing", now=NOW
    )
    assert found.mode == "or"
    assert len(found.hits) > 3
    assert found.hits[0].session_id == gold


AIDER = DATA.parents[1] / "aider" / "chat-history.md"


def test_what_aider_printed_finds_the_run_and_lands_on_it(forest: Forest, tmp_path: Path) -> None:
    # Aider keeps its runs' output (here litellm's error) as notifications.
    lines = AIDER.read_text(encoding="utf-8").splitlines(keepends=True)[8301:8359]
    history = tmp_path / ".aider.chat.history.md"
    history.write_text("".join(lines), encoding="utf-8")
    *_, failed = forest.import_chats("aider", history).chats
    found = forest.search_chats("LLM Provider NOT provided", now=NOW)
    assert found.hits[0].session_id == failed.session_id
    assert "Provider** **NOT" in found.hits[0].snippet or "NOT" in found.hits[0].snippet
    [entry] = [e for e in forest.entries(failed.session_id) if e.sequence == found.hits[0].sequence]
    assert entry.kind == "provider.notification"
    hits = forest.search_session_entries(failed.session_id, "BadRequestError")
    assert [h.kind for h in hits] == ["provider.notification"]
