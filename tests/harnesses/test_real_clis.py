"""The pinned harness CLIs run here against the stand-in: a plain exchange, a shell command
the CLI really executes, and a resumed session, each leaving its transcript in the temp HOME.

These check the test tools themselves (tests/harness_cli.py); each importer's tests
import what the CLIs wrote and check every turn.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness_cli import NAMES, VERSIONS
from standin import Reply


@pytest.mark.parametrize("name", NAMES)
def test_each_cli_is_the_pinned_version(real_cli: Any, name: str) -> None:
    assert VERSIONS[name] in real_cli(name).version()


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_each_cli_talks_runs_a_shell_command_and_resumes(real_cli: Any, name: str) -> None:
    cli = real_cli(name)
    cli.script(Reply(text="hello from the stand-in"))
    assert "hello from the stand-in" in cli.run("say hi").stdout
    written = cli.transcripts()
    assert written, f"{name} wrote no transcript under {cli.home}"

    marker = cli.cwd / "ran.txt"
    # (no $(...): Gemini CLI refuses command substitution)
    cli.script(
        Reply(text="running it", tools=[cli.shell(f"expr 40 + 2 > {marker}")]),
        Reply(text="the command ran"),
    )
    assert "the command ran" in cli.run("run the command").stdout
    assert marker.read_text().strip() == "42"  # the CLI itself ran it
    # The tool's output went back to the model in the request after the call.
    last = str(cli.model_requests()[-1])
    assert "call_standin_" in last or "run_shell_command" in last

    cli.script(Reply(text="resumed with history"))
    assert "resumed with history" in cli.run("and once more", resume=True).stdout
    resumed = str(cli.model_requests()[-1])
    assert "run the command" in resumed  # the resumed request carries the earlier turns
    assert cli.pending == 0
