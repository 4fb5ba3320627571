"""Control characters in stored text are printed as visible escapes, never acted on or dropped.

A title or message holding NUL, an ANSI colour sequence, CR, LF, TAB, the Unicode
line/paragraph separators or a right-to-left override must not break a line of
`sessions`, `log`, `tree`, `tips`, `status`, `recall`, `find` or an error; `--json`
keeps the text exact.
"""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from sessionforest import Forest as Store
from sessionforest.ids import title_text
from sessionforest.render import escape, preview

if TYPE_CHECKING:
    from conftest import ForestCli

# The NUL comes last: SQLite's full-text index stops reading a text at a NUL.
NASTY = "ansi\x1b[31mred\x1b[0m cr\r lf\n tab\t ls\u2028 ps\u2029 rlo\u202eevil nul\x00end"
SHOWN = "ansi\\x1b[31mred\\x1b[0m cr\\r lf\\n tab\\t ls\\u2028 ps\\u2029 rlo\\u202eevil nul\\x00end"
# Anything that could end, rewrite or reorder a line on a terminal.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def clean(output: str, lines: int) -> list[str]:
    """`output` has exactly `lines` lines and nothing raw in any of them."""
    assert not RAW.search(output), repr(output)
    split = output.splitlines()  # splits on \u2028, \x1c, \x85 ... too
    assert len(split) == lines, split
    return split


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def _raw_title(db: Path, sid: str, title: str) -> None:
    """Store `title` as written before titles were cleaned (ids.title_text): old stores
    hold such titles, and every surface must still show them on one line."""
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, sid))


@pytest.fixture
def nasty(forest: ForestCli) -> str:
    with Store.open(forest.db) as store:
        sid = store.create_session(NASTY, harness="h\x1bh", cwd="/nowhere/a\nb")
        assert store.session(sid).title == title_text(NASTY)  # what creating stores now
        store.append(sid, "user.message", _text("find the " + NASTY), stamp=None)
        store.checkpoint(sid, NASTY)
        store.append(sid, "assistant.message", _text(NASTY + " tail"), stamp=None)
    _raw_title(forest.db, sid, NASTY)
    return sid


def test_escape_shows_every_control_and_nothing_else() -> None:
    assert escape(NASTY) == SHOWN
    assert escape("plain – ünïcødé 数据库 \\n stays") == "plain – ünïcødé 数据库 \\n stays"
    assert escape("\x7f\x85\x9b\u061c\u200f\u2066\udcff") == (
        "\\x7f\\x85\\x9b\\u061c\\u200f\\u2066\\udcff"
    )


def test_preview_never_cuts_an_escape_in_half() -> None:
    assert preview("ab\x1bcd", 4) == "ab…"  # "ab\x1b" would not fit whole
    assert preview("ab\x1bcd", 7) == "ab\\x1b…"
    assert preview("ab\x1bcd", 8) == "ab\\x1bcd"
    assert preview("  a   b  ") == "a b"


def test_sessions_rows_stay_rows(forest: ForestCli, nasty: str) -> None:
    _header, row = clean(forest.ok("sessions"), 2)
    assert row.startswith(nasty)
    assert row.endswith(SHOWN)
    assert "h\\x1bh" in row
    assert forest.json("sessions")[0]["title"] == NASTY  # JSON keeps it exact


def test_log_tree_and_tips(forest: ForestCli, nasty: str) -> None:
    log = clean(forest.ok("log", nasty), 3)
    assert "user.message       find the ansi\\x1b[31mred\\x1b[0m cr\\r lf\\n tab" in log[0]
    assert log[0].endswith(" ps\\u2029 rlo…")  # cut at 72, never inside `\\u202e`
    assert log[1].endswith(f"[{SHOWN}]")
    tree = clean(forest.ok("tree", nasty), 3)
    assert f"[{SHOWN}]" in tree[1]
    assert "ansi\\x1b[31mred" in tree[2]
    [tip] = clean(forest.ok("tips", nasty), 1)
    assert "ansi\\x1b[31mred" in tip
    assert forest.json("log", nasty)[2]["payload"] == _text(NASTY + " tail")


def test_status_escapes_the_directory(forest: ForestCli, nasty: str) -> None:
    lines = clean(forest.ok("status", nasty), 3)
    assert lines[0].endswith("directory /nowhere/a\\nb")
    assert "/nowhere/a\\nb does not exist" in lines[2]


def test_recall_and_find_cards(forest: ForestCli, nasty: str) -> None:
    hits = forest.json("recall", nasty, "ansi")["hits"]
    assert len(hits) >= 2
    recall = clean(forest.ok("recall", nasty, "ansi"), 1 + 2 * len(hits))
    assert any("**ansi**\\x1b[31mred" in line for line in recall)
    find = forest.ok("find", "ansi")
    card = clean(find, len(find.splitlines()))
    assert any(SHOWN in line for line in card)  # the title, escaped


def test_error_lines_stay_one_line(forest: ForestCli, nasty: str) -> None:
    with Store.open(forest.db) as store:
        # Another id sharing all but the last character (never the same id).
        twin = nasty[:-1] + ("z" if nasty[-1] != "z" else "y")
        store.create_session("twin of nasty", session_id=twin)
    _raw_title(forest.db, twin, "twin\nof nasty")
    line = forest.fail(3, "log", nasty[:-1])  # ambiguous: both titles are quoted
    assert "twin\\nof nasty" in line
    assert SHOWN[:40] in line


def test_a_nul_byte_in_log_is_shown_not_swallowed(forest: ForestCli, session: str) -> None:
    with Store.open(forest.db) as store:
        store.append(session, "user.message", _text("zero\x00byte"))
        store.append(session, "tool.started", {"call_id": "c", "name": "ls\x00", "input": {}})
    lines = clean(forest.ok("log", session), 2)
    assert lines[0].endswith("user.message  zero\\x00byte")
    assert lines[1].endswith("tool.started  ls\\x00")
