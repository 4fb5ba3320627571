"""`forest resume SESSION --to claude-code|codex|gemini`: hand a branch back to a harness.

Writes the path to `--at` (default: the head) as a new transcript of the
target and prints the one command that continues it (sessionforest/resume/).
"""

from __future__ import annotations

import click

from ..resume import TARGETS
from ..resume import resume as hand_off
from ..text import escape, plural
from .common import State, emit_json, json_option, pass_state


@click.command()
@click.argument("session")
@click.option(
    "--to", "target", type=click.Choice(TARGETS), required=True, help="The harness to continue in."
)
@click.option(
    "--at",
    "at",
    default=None,
    help="Entry to continue from (id, id prefix or sequence number; default: the head).",
)
@click.option(
    "--cwd",
    "cwd",
    type=click.Path(file_okay=False),
    default=None,
    help="Directory the harness runs in; it must exist (default: the chat's own when it "
    "is on this machine, else here, and the output says so).",
)
@click.option(
    "--any-version",
    is_flag=True,
    help="Write even when the installed CLI is of an untested major version.",
)
@json_option
@pass_state
def resume(
    state: State,
    session: str,
    target: str,
    at: str | None,
    cwd: str | None,
    any_version: bool,
    as_json: bool,
) -> None:
    """Continue a chat, from any entry of any branch, in Claude Code, Codex or Gemini CLI.

    Writes the path from the root to the entry as a NEW session of the target
    (a harness's own files are never touched) and prints the command that
    continues it; what the target cannot carry (another model's thinking,
    images it cannot resend, provider-specific blocks) is folded into text or
    left out, and listed. Importing the new transcript later (or `forest watch`)
    hangs its new turns under that entry."""
    done = hand_off(state.forest, session, to=target, at=at, cwd=cwd, any_version=any_version)
    if as_json:
        emit_json(done)
        return
    said = plural(done["turns"], "message")
    click.echo(f"Wrote {escape(done['path'])} ({said}, {target} {escape(done['version'])})")
    for line in done["folded"]:
        click.echo(f"  {escape(line)}")
    for line in done["notes"]:
        click.echo(f"Note: {escape(line)}")
    click.echo("Continue with:")
    click.echo(f"  {escape(done['command'])}")
