"""The one wrapper detector: harness text in user turns, told from the user's words."""

from __future__ import annotations

import pytest

from sessionforest import wrappers

# As Claude Code, Codex and Gemini CLI write them (../shared/data and the CLIs).
COMMAND = (
    "<command-name>/model</command-name>\n            <command-message>model</command-message>\n"
    "            <command-args></command-args>"
)
SELECTION = (
    "<ide_selection>The user selected the lines 508 to 508 from /w/extract.py:\nBeautifulSoup\n\n"
    "This may or may not be related to the current task.</ide_selection>"
)
ENVIRONMENT = "<environment_context>\n  <cwd>/x</cwd>\n  <shell>zsh</shell>\n</environment_context>"
SESSION = "<session_context>\nThis is the Gemini CLI. Today's date is ...\n</session_context>"


@pytest.mark.parametrize(
    ("text", "name"),
    [
        (COMMAND, "command-name"),
        ("<local-command-stdout>Kept model as opusplan</local-command-stdout>",
         "local-command-stdout"),
        ("<bash-input>uv run pytest</bash-input>", "bash-input"),
        (SELECTION, "ide_selection"),
        ("<system-reminder>The TodoWrite tool hasn't been used</system-reminder>",
         "system-reminder"),
        (ENVIRONMENT, "environment_context"),
        ("# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>be brief</INSTRUCTIONS>",
         "agents-instructions"),
        (SESSION, "session_context"),
        ("<local-command-stdout>cut off before its close tag", "local-command-stdout"),
    ],
)  # fmt: skip
def test_wrapper_only_texts_are_named_and_hold_no_words_of_the_user(text: str, name: str) -> None:
    found = wrappers.split(text)
    assert found.wrapper_only and found.own == ""
    assert wrappers.label(text) == name
    assert wrappers.own_words(text) == ""
    assert wrappers.title_of(text) == ""
    assert found.wrapped.strip()


def test_the_users_words_around_wrappers_are_kept_and_the_wrapping_set_apart() -> None:
    text = (
        "<ide_opened_file>The user opened the file /a/README.md in the IDE.</ide_opened_file>"
        "fix the readme please [Image #1]\n<system-reminder>be nice</system-reminder>"
    )
    found = wrappers.split(text)
    assert found.own == "fix the readme please [Image #1]"
    assert found.labels == ("ide_opened_file", "system-reminder")
    assert "README.md" in found.wrapped and "be nice" in found.wrapped
    assert wrappers.label(text) is None  # words of the user's: not a wrapper message
    assert wrappers.title_of(text) == "fix the readme please"


def test_tags_the_harness_does_not_own_are_the_users_text() -> None:
    text = "why does <div> break the <command> parser?"
    assert wrappers.split(text).own == text
    assert wrappers.label(text) is None
    assert wrappers.title_of(text) == text


def test_titles_are_the_first_real_line_cut_at_a_word() -> None:
    long = "Can you please read the tokenizer files and tell me why the tokens are split wrong"
    title = wrappers.title_of(["", COMMAND, "\n\n" + long + "\nsecond line"])
    assert title == "Can you please read the tokenizer files and tell me why the tokens are split…"
    assert len(title) <= wrappers.TITLE_CHARS
    assert wrappers.title_of("[Image #1] [Image #2] ") == ""
    assert wrappers.title_of("[Image #1] What is in this screenshot?") == (
        "What is in this screenshot?"
    )
    assert wrappers.cut_at_word("x" * 100, 10) == "xxxxxxxxx…"  # one long word: cut inside it


@pytest.mark.parametrize(
    ("texts", "title"),
    [
        ("/mode", ""),  # pi: the user switched a mode, then asked
        (["/model opus", "why does the build fail?"], "why does the build fail?"),
        ("/review:pr 12", ""),
        ("/usr/bin/python fails to start", "/usr/bin/python fails to start"),  # a path
        ("/ is the root", "/ is the root"),
        ("[Image #1]\n/clear", ""),
    ],
)
def test_a_slash_command_is_not_a_request(texts: str | list[str], title: str) -> None:
    assert wrappers.title_of(texts) == title
