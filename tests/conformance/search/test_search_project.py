"""Chats are findable by their project: the last components of the directory
they were recorded in join the digest as words, evidence like title words."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sessionforest import Forest

NOW = datetime(2026, 9, 30, 15, 0, tzinfo=UTC)
REAL = Path(__file__).resolve().parents[4] / "shared" / "data" / "claude-code" / "real_projects"


def test_real_imported_chats_are_found_by_their_project_words(forest: Forest) -> None:
    forest.import_chats("claude-code", REAL)
    wanted = {
        s.id
        for s in forest.sessions()
        if s.origin_cwd == "/Users/dain/workspace/coderabbit-review-helper"
        and s.visibility == "top-level"
    }
    assert wanted  # the data holds a top-level chat of that project
    result = forest.search_chats("coderabbit review", now=NOW)
    assert result.hits[0].session_id in wanted
    assert set(result.hits[0].matched_terms) == {"coderabbit", "review"}
    # Words of the project's name alone find it too, and only its chats (its
    # subagents' chats, hidden but imported, are its chats as well).
    ours = {
        s.id
        for s in forest.sessions(include_hidden=True)
        if s.origin_cwd == "/Users/dain/workspace/coderabbit-review-helper"
    }
    only = forest.search_chats("coderabbit", now=NOW, limit=len(ours))
    assert wanted <= {h.session_id for h in only.hits} <= ours


def test_a_project_word_counts_like_a_title_word(
    forest: Forest, make_chat: Any, tmp_path: Path
) -> None:
    # No entry holds "kestrel"; one chat's project does, another's title; a
    # third's directory holds it only far above its last two components.
    dirs = [tmp_path / "src" / "kestrel-app", tmp_path / "src" / "other"]
    dirs.append(tmp_path / "kestrel" / "deep" / "inside" / "here")
    for d in dirs:
        d.mkdir(parents=True)
    by_project = make_chat("Refactor", ["tidy the parser"], cwd=dirs[0])
    by_title = make_chat("Kestrel notes", ["tidy the parser"], cwd=dirs[1])
    make_chat("Unrelated", ["tidy the parser"], cwd=dirs[2])
    result = forest.search_chats("kestrel", now=NOW)
    assert {h.session_id for h in result.hits} == {by_project, by_title}
    assert result.hits[0].evidence == result.hits[1].evidence > 0
    assert result.hits[0].digest_match and result.hits[1].digest_match
