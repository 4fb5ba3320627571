"""The watcher over real files and real OS notifications (watchfiles), in this process.

Transcripts are written the way a harness writes them (a line at a time, a
half-written line, a burst of many files, a directory made later, a file
deleted or replaced) while a Watcher runs on a thread; each test waits (with
a deadline, never a timing assertion) for the store to reach what one whole
import of the finished files gives, and checks nothing else got in.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from follow_helpers import contents
from sessionforest import Forest
from sessionforest.mirror.sources import Location, real

from .conftest import CLAUDE, POMODORO, claude_location, entries, lines_of, wait_for, watching


def offset_of(forest: Forest, path: Path) -> int:
    row = {r.path: r for r in forest.followed_sources()}.get(str(real(path)))
    return -1 if row is None else row.offset


def whole_import(tmp_path: Path, root: Path, name: str = "whole.db") -> dict[str, object]:
    with Forest.open(tmp_path / name) as whole:
        whole.import_chats("claude-code", root)
        return contents(whole)


def test_a_growing_file_is_imported_line_by_line_and_never_half_a_line(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    location = claude_location(root)
    target = root / "p" / "s.jsonl"
    target.parent.mkdir()
    lines = lines_of(POMODORO)
    data = b"".join(lines)
    with Forest.open(tmp_path / "f.db") as forest, watching(forest, location) as running:
        written = 0
        for count in range(8, 48, 8):
            whole = sum(map(len, lines[:count]))  # the first `count` lines
            cut = whole + len(lines[count]) // 2  # and half of the next: it waits
            with target.open("ab") as out:
                out.write(data[written:cut])
            written = cut
            wait_for(lambda whole=whole: offset_of(forest, target) == whole)
        with target.open("ab") as out:
            out.write(data[written:])
        size = target.stat().st_size
        wait_for(lambda: offset_of(forest, target) == size)
        grown = contents(forest)
        assert grown == whole_import(tmp_path, root)
        assert running.added() == sum(len(chat["entries"]) for chat in grown.values())
        assert all(c.event == "imported" for c in running.changes)
        assert forest.check().ok


# Transcripts each of which imports as one top-level chat.
SYNTHETIC = [
    CLAUDE / "synthetic" / f"{name}.jsonl"
    for name in ("dag_simple", "dag_fork", "dag_resume", "dag_within_fork")
]


def test_a_restart_resumes_where_it_stopped_and_catches_up(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    location = claude_location(root)
    first, second = root / "a" / "one.jsonl", root / "b" / "two.jsonl"
    first.parent.mkdir()
    lines = lines_of(POMODORO)
    first.write_bytes(b"".join(lines[:30]))
    with Forest.open(tmp_path / "f.db") as forest, watching(forest, location):
        wait_for(lambda: offset_of(forest, first) == first.stat().st_size)
        before = entries(forest)
    # Written while nobody watched: more of the first file, and a second one.
    with first.open("ab") as out:
        out.write(b"".join(lines[30:]))
    second.parent.mkdir()
    shutil.copy(SYNTHETIC[0], second)
    with Forest.open(tmp_path / "f.db") as forest, watching(forest, location) as running:
        wait_for(lambda: offset_of(forest, second) == second.stat().st_size)
        wait_for(lambda: offset_of(forest, first) == first.stat().st_size)
        after = entries(forest)
        (chat,) = before
        resumed = [c for c in running.changes if c.session_id == chat]
        assert [c.created for c in resumed] == [False]
        assert resumed[0].added == len(after[chat]) - len(before[chat])  # only what was new
        assert contents(forest) == whole_import(tmp_path, root)
    # Deleted while nobody watched: its position is forgotten by the next catch-up, its
    # chat kept.
    second.unlink()
    with Forest.open(tmp_path / "f.db") as forest, watching(forest, location):
        wait_for(lambda: offset_of(forest, second) == -1)
        assert entries(forest) == after


def test_many_files_written_at_once_are_each_imported_once(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    location = claude_location(root)
    with Forest.open(tmp_path / "f.db") as forest, watching(forest, location) as running:
        made = []
        for k in range(60):
            source = SYNTHETIC[k % len(SYNTHETIC)]
            target = root / f"p{k % 7}" / f"s{k:03d}.jsonl"
            target.parent.mkdir(exist_ok=True)
            shutil.copy(source, target)
            made.append(target)
        wait_for(lambda: all(offset_of(forest, p) == p.stat().st_size for p in made))
        grown = contents(forest)
        assert grown == whole_import(tmp_path, root)
        # One "new chat" line per chat a person reads, none twice.
        created = [c.session_id for c in running.changes if c.created]
        assert len(created) == len(set(created))
        assert forest.check().ok


def test_a_directory_made_after_the_start_and_a_location_that_appears_later(
    tmp_path: Path,
) -> None:
    projects = tmp_path / "projects"
    location = claude_location(projects)
    later = Location.of("claude-code", tmp_path / "later")  # not there yet
    with Forest.open(tmp_path / "f.db") as forest, watching(forest, location, later):
        made = projects / "new-project" / "s.jsonl"
        made.parent.mkdir()
        shutil.copy(SYNTHETIC[1], made)
        wait_for(lambda: offset_of(forest, made) == made.stat().st_size)
        appeared = tmp_path / "later" / "x" / "t.jsonl"
        appeared.parent.mkdir(parents=True)
        shutil.copy(SYNTHETIC[2], appeared)
        wait_for(lambda: offset_of(forest, appeared) == appeared.stat().st_size)
        assert len(forest.sessions(include_hidden=False)) == 2


def test_a_deleted_file_is_forgotten_and_a_rotated_one_read_again(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    location = claude_location(root)
    gone, rotated = root / "p" / "gone.jsonl", root / "p" / "log.jsonl"
    gone.parent.mkdir()
    shutil.copy(SYNTHETIC[0], gone)
    shutil.copy(POMODORO, rotated)
    with Forest.open(tmp_path / "f.db") as forest, watching(forest, location) as running:
        wait_for(lambda: offset_of(forest, gone) > 0 and offset_of(forest, rotated) > 0)
        kept = entries(forest)
        gone.unlink()
        wait_for(lambda: offset_of(forest, gone) == -1)  # its position is forgotten
        assert entries(forest) == kept  # and its chat kept
        # Rotated: moved aside (a name the importer does not read) and begun again.
        rotated.rename(rotated.with_suffix(".jsonl.1"))
        rotated.write_bytes(b"".join(lines_of(SYNTHETIC[3])))
        wait_for(lambda: offset_of(forest, rotated) == rotated.stat().st_size)
        now = entries(forest)
        assert all(kept[chat] <= now[chat] for chat in kept)  # nothing stored changed
        # Read again from its start: as a file that no longer fits its position, or, when
        # the move was seen before the new file was there, as a file never seen.
        mine = [c for c in running.changes if c.path == str(real(rotated))]
        assert len(mine) >= 2 and mine[-1].added > 0 and not mine[-1].created
        assert forest.check().ok


def test_a_bad_line_is_skipped_and_the_file_still_followed(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    location = claude_location(root)
    target = root / "p" / "s.jsonl"
    target.parent.mkdir()
    lines = lines_of(POMODORO)
    with Forest.open(tmp_path / "f.db") as forest, watching(forest, location) as running:
        target.write_bytes(b"".join(lines[:10]) + b"{not json\n" + b"".join(lines[10:20]))
        wait_for(lambda: offset_of(forest, target) == target.stat().st_size)
        with target.open("ab") as out:
            out.write(b"".join(lines[20:]))
        wait_for(lambda: offset_of(forest, target) == target.stat().st_size)
        assert not [c for c in running.changes if c.event == "failed"]
        clean = tmp_path / "clean" / "p" / "s.jsonl"
        clean.parent.mkdir(parents=True)
        clean.write_bytes(b"".join(lines))
        with Forest.open(tmp_path / "clean.db") as other:
            other.import_chats("claude-code", clean)
            # The same entries as the file without the bad line (ids of lines without a
            # uuid follow line numbers, which the bad line shifted).
            (mine,), (theirs,) = forest.sessions(), other.sessions()
            said = sorted((e.kind, repr(e.payload)) for e in forest.entries(mine.id))
            assert said == sorted((e.kind, repr(e.payload)) for e in other.entries(theirs.id))
