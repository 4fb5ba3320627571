"""Chats are findable by their project: the last components of the directory
they were recorded in join the digest as words, evidence like title words."""

from __future__ import annotations

import re
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


def test_a_hidden_chat_forest_made_is_never_found_an_imported_one_is(forest: Forest) -> None:
    # The rule of store/sql/visibility.py, on every backend: a harness's hidden
    # (subagent) chat is searched, one created hidden in place never is.
    forest.import_chats("claude-code", REAL)
    imported = [s for s in forest.sessions(include_hidden=True) if s.visibility == "hidden"]
    assert imported and all(s.source is not None for s in imported)
    made = forest.create_session("zanzibarquux internal", visibility="hidden")
    forest.append(made, "user.message", {"content": [{"type": "text", "text": "zanzibarquux"}]})
    shown = forest.create_session("zanzibarquux shown")
    forest.append(shown, "user.message", {"content": [{"type": "text", "text": "zanzibarquux"}]})
    found = {h.session_id for h in forest.search_chats("zanzibarquux", now=NOW).hits}
    assert found == {shown}
    # An imported hidden chat is found by a word only it and few others hold.
    texts = {
        s.id: " ".join(
            block.get("text", "")
            for e in forest.entries(s.id)
            if e.kind == "user.message"
            for block in e.payload.get("content", [])
            if isinstance(block, dict)
        )
        for s in imported
    }
    counts: dict[str, int] = {}
    for text in texts.values():
        for word in set(re.findall(r"[a-z]{6,}", text.lower())):
            counts[word] = counts.get(word, 0) + 1
    sid, word = min(
        ((sid, w) for sid, t in texts.items() for w in set(re.findall(r"[a-z]{6,}", t.lower()))),
        key=lambda pair: (counts[pair[1]], pair[1]),
    )
    hits = forest.search_chats(word, now=NOW, limit=50).hits
    assert sid in {h.session_id for h in hits}, word
