"""`forest diff SESSION A B`: two branches of one chat side by side from their common
ancestor, their turns aligned, and the git diff between the HEADs they were stamped in
(the same document as `sessions/compare`; see compare.py)."""

from __future__ import annotations

from collections.abc import Sequence

import click

from ..documents import preview_text
from ..render import escape
from ..text import plural
from ..wire import LogEntryJson
from .common import State, emit_json, json_option, pass_state, resolve_entry

# Characters of a turn's first line shown per side.
LINE = 60


def _line(entries: Sequence[LogEntryJson]) -> str:
    first = entries[0]
    text = preview_text(first["kind"], first["payload"], LINE)
    span = f"#{first['sequence']}" + (f"-#{entries[-1]['sequence']}" if len(entries) > 1 else "")
    return f"{span} {text}".rstrip()


@click.command()
@click.argument("session")
@click.argument("a")
@click.argument("b")
@click.option("--patch", is_flag=True, help="Print the whole git diff, not only its summary.")
@json_option
@pass_state
def diff(state: State, session: str, a: str, b: str, patch: bool, as_json: bool) -> None:
    """Compare the branches ending at entries A and B (ids, id prefixes or sequence numbers)
    from their common ancestor: each side's turns, aligned, then the files: `git diff`
    between the HEADs the two ends were stamped in, and whether their uncommitted
    changes differ. Nothing is written and the head does not move."""
    forest = state.reader
    sid = forest.resolve_session(session)
    doc = forest.compare(
        sid, resolve_entry(forest, sid, a), resolve_entry(forest, sid, b)
    ).to_json()
    if as_json:
        emit_json(doc)
        return
    by_id = {e["id"]: e for e in [*doc["a_entries"], *doc["b_entries"]]}
    seq = {e["id"]: e["sequence"] for e in by_id.values()}
    ancestor = doc["ancestor"]
    click.echo(
        f"Common ancestor: {escape(ancestor) if ancestor else '(none: separate roots)'}"
        f" ({plural(doc['shared'], 'shared entry', 'shared entries')})"
    )
    after_a = plural(len(doc["a_entries"]), "entry", "entries")
    after_b = plural(len(doc["b_entries"]), "entry", "entries")
    click.echo(
        f"A ends at #{seq.get(doc['a'], '?')}: {after_a} after the fork; "
        f"B ends at #{seq.get(doc['b'], '?')}: {after_b}"
    )
    for row in doc["rows"]:
        left = [by_id[i] for i in row["a"]] if row["a"] else None
        right = [by_id[i] for i in row["b"]] if row["b"] else None
        if row["same"] and left:
            click.echo(f"  = {escape(_line(left))}")
            continue
        if left:
            click.echo(f"  A {escape(_line(left))}")
        if right:
            click.echo(f"  B {escape(_line(right))}")
    git = doc["git"]
    click.echo("")
    if git["state"] != "compared":
        click.echo(f"Files: unknown ({escape(git['reason'])})")
    elif git["a_head"] == git["b_head"]:
        click.echo(f"Files: both ends at commit {escape(str(git['a_head'])[:12])}")
    else:
        click.echo(
            f"Files: git diff {escape(str(git['a_head'])[:12])} {escape(str(git['b_head'])[:12])}"
        )
        click.echo(escape(git["diff"] if patch else git["stat"]).rstrip())
        if patch and git["truncated"]:
            click.echo("(the patch was cut at 256 KiB: run git diff for the rest)")
    if git["dirty_differs"] is not None:
        same = "differ" if git["dirty_differs"] else "are the same"
        click.echo(
            f"Uncommitted changes {same} (A: {plural(git['a_dirty_files'] or 0, 'dirty file')}, "
            f"B: {git['b_dirty_files']})"
        )
