""" "Continue in…" (issue 27) in real Chromium against a real `forest serve`: on an entry of a
branch that is not the head, the panel writes a Codex transcript through sessions/resume and
shows the one command that continues it, which the copy button puts on the clipboard."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from resume_helpers import branched_chat
from server.conftest import Running, start
from sessionforest import Forest

from .conftest import axe, shot


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Running, str, dict[str, str]]]:
    db = tmp_path / "store.db"
    with Forest.open(db) as forest:
        sid, ids = branched_chat(forest)
    harnesses = {"CODEX_HOME": str(tmp_path / "codex-home"),
                 "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-home")}  # fmt: skip
    running = start(db, env=harnesses)
    yield running, sid, ids
    assert running.stop() == 0


def test_continue_in_writes_the_transcript_and_copies_the_command(
    served: tuple[Running, str, dict[str, str]], page_for: Callable[..., Page], tmp_path: Path
) -> None:
    running, sid, ids = served
    page = page_for(running.url + f"/#/chat/{sid}/at/{ids['old']}")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    answer = page.locator(f'.msg[data-entry="{ids["old"]}"]')
    expect(answer).to_contain_text("OLD ANSWER")
    answer.get_by_role("button", name=re.compile("Continue in… from entry")).click()
    panel = page.get_by_role("region", name=re.compile("Continue from entry"))
    panel.get_by_role("combobox", name="Agent").select_option("codex")
    panel.get_by_role("button", name="Write the transcript").click()
    command = panel.get_by_label("Command", exact=True)
    expect(command).to_contain_text(re.compile(r"codex resume [0-9a-f-]{36}"))
    written = list((tmp_path / "codex-home" / "sessions").rglob("rollout-*.jsonl"))
    assert len(written) == 1 and "OLD ANSWER" in written[0].read_text()
    assert "NEW ANSWER" not in written[0].read_text()  # the other branch stays out
    panel.get_by_role("button", name="Copy the command").click()
    expect(panel.get_by_role("button", name="Copied the command")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == command.inner_text()
    shot(page, "continue-in-light")
    assert axe(page) == []
    assert page.errors == []  # type: ignore[attr-defined]
