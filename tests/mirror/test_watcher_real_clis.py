"""The watcher while the real Codex and Gemini CLIs (tests/harness_cli.py) write.

Each CLI runs in its own HOME against the stand-in model while a Watcher
follows that harness's chats directory: the chat appears after the first turn
and grows with a resumed one, and what the watcher stored equals one whole
import of the finished files. Gemini CLI rewrites its history with `$set` on
every resume, and once more when it compresses a chat whose prompt filled most
of the model's window: the compressed chat becomes a compaction in the same
chat, never a second copy of it, and no stored entry changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from follow_helpers import contents
from harness_cli import SIDE_TEXT
from sessionforest import Forest
from sessionforest.io import gemini
from sessionforest.mirror.sources import Location, real
from standin import Reply

from .conftest import wait_for, watching

pytestmark = pytest.mark.slow


def said(forest: Forest) -> dict[str, str]:
    """Every visible chat's id and all its entries' payloads as one text (to look in)."""
    return {
        s.id: " ".join(repr(e.payload) for e in forest.entries(s.id)) for s in forest.sessions()
    }


def chat_saying(forest: Forest, text: str) -> str | None:
    found = [sid for sid, body in said(forest).items() if text in body]
    return found[0] if found else None


def caught_up(forest: Forest, files: list[Path]) -> bool:
    """Every file followed to its end. A Gemini session resumed in a later minute than
    its file was named in also leaves a file of that minute holding only the session
    context (gemini.session_key): no turn, so the watcher keeps its position at 0, as
    for any chat file without a turn yet; it counts once its session's file is read."""
    kept = {r.path: r.offset for r in forest.followed_sources()}
    done = {p for p in files if kept.get(str(real(p))) == p.stat().st_size}
    keys = {gemini.session_key(p) for p in done} - {None}
    return all(
        p in done or (kept.get(str(real(p))) == 0 and gemini.session_key(p) in keys) for p in files
    )


def whole(tmp_path: Path, fmt: str, root: Path) -> dict[str, Any]:
    with Forest.open(tmp_path / f"whole-{fmt}.db") as forest:
        report = forest.import_chats(fmt, root)
        assert report.ok, [str(f) for f in report.failed]
        return contents(forest)


def test_a_real_codex_cli_chat_appears_and_grows_while_watched(
    real_cli: Any, tmp_path: Path
) -> None:
    cli = real_cli("codex")
    root = cli.home / ".codex" / "sessions"
    root.mkdir(parents=True, exist_ok=True)
    with (
        Forest.open(tmp_path / "f.db") as forest,
        watching(forest, Location.of("codex", root)) as running,
    ):
        cli.script(Reply(text="codex answers the first question"))
        cli.run("the first question for codex")
        wait_for(lambda: chat_saying(forest, "codex answers the first question") is not None)
        sid = chat_saying(forest, "the first question for codex")
        assert sid is not None
        first = forest.session(sid).entry_count

        cli.script(Reply(text="codex answers once more"))
        cli.run("a second question for codex", resume=True)
        wait_for(lambda: chat_saying(forest, "codex answers once more") == sid)
        wait_for(lambda: caught_up(forest, cli.transcripts()))
        assert forest.session(sid).entry_count > first
        assert len(forest.sessions()) == 1  # the resumed turn joined the chat
        assert any(c.session_id == sid and not c.created for c in running.changes)
        assert contents(forest) == whole(tmp_path, "codex", root)
        assert forest.check().ok


def test_a_real_gemini_cli_chat_grows_and_a_compressed_one_is_a_compaction_not_a_copy(
    real_cli: Any, tmp_path: Path
) -> None:
    cli = real_cli("gemini")
    root = cli.home / ".gemini" / "tmp"
    root.mkdir(parents=True, exist_ok=True)
    with (
        Forest.open(tmp_path / "f.db") as forest,
        watching(forest, Location.of("gemini", root)),
    ):
        cli.script(Reply(text="gemini answers the first question"))
        cli.run("the first question for gemini")
        wait_for(lambda: chat_saying(forest, "gemini answers the first question") is not None)
        sid = chat_saying(forest, "the first question for gemini")
        assert sid is not None

        cli.script(Reply(text="gemini answers once more"))
        cli.run("a second question for gemini", resume=True)
        wait_for(lambda: chat_saying(forest, "gemini answers once more") == sid)
        wait_for(lambda: caught_up(forest, cli.transcripts()))
        before = {e.id: e for e in forest.entries(sid)}

        # A turn whose first answer says the prompt filled most of the model's window:
        # the CLI compresses the history before its next request (the summary is the
        # stand-in's side answer) and rewrites it with `$set`.
        # The file holding the turns: a resume in a later minute also writes a stray
        # file of that minute holding no turn (gemini.session_key), so pick by content.
        (chat,) = [
            p
            for p in cli.transcripts()
            if p.suffix == ".jsonl" and b"the first question for gemini" in p.read_bytes()
        ]
        size = chat.stat().st_size
        cli.script(
            Reply(text="a long one", tools=[cli.shell("echo hi")], input_tokens=900_000),
            Reply(text="gemini answers after the compression"),
        )
        cli.run("a question after which the chat is compressed", resume=True)
        assert SIDE_TEXT.encode() in chat.read_bytes()[size:], "the CLI did not compress"
        wait_for(lambda: chat_saying(forest, "gemini answers after the compression") == sid)
        wait_for(lambda: caught_up(forest, cli.transcripts()))

        after = {e.id: e for e in forest.entries(sid)}
        assert all(after[i] == before[i] for i in before)  # nothing stored changed
        assert len(forest.sessions()) == 1  # the same chat, not a copy
        assert "compaction" in [e.kind for e in forest.active_path(sid)]
        assert contents(forest) == whole(tmp_path, "gemini", root)
        assert forest.check().ok
