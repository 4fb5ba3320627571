"""Naming sessions and entries by unique id prefix (like git), with "did you mean" on a miss.

`resolve_session` / `resolve_entry` are part of the store contract so the CLI
and the server resolve the same way; a full id costs no query at all.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from conformance.backends import Harness
from sessionforest import AmbiguousId, Forest, UnknownEntry, UnknownSession

# Shaped like minted ids (26 Crockford base32 characters), chosen to share prefixes.
A = "01k7aaaaaaaaaaaaaaaaaaaaaa"
B = "01k7abbbbbbbbbbbbbbbbbbbbb"
C = "01k9cccccccccccccccccccccc"


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


@pytest.fixture
def named(forest: Forest) -> Forest:
    forest.create_session("alpha", session_id=A)
    forest.create_session("beta", session_id=B)
    forest.create_session("gamma", session_id=C)
    return forest


@pytest.mark.parametrize(
    ("ref", "expected"),
    [(A, A), ("01k7aa", A), ("01k7ab", B), ("01k9", C), ("01k9cccccccccccccccccccccc", C)],
)
def test_a_unique_prefix_names_its_session(named: Forest, ref: str, expected: str) -> None:
    assert named.resolve_session(ref) == expected


@pytest.mark.needs("statement_trace")
def test_a_full_id_costs_no_query(named: Forest, harness: Harness) -> None:
    with harness.statements(named) as seen:
        assert named.resolve_session(A) == A
        sid = named.create_session()
        entry = named.append(sid, "user.message", _text("hi"))
        seen.clear()
        assert named.resolve_session(sid) == sid
        assert named.resolve_entry(sid, entry.id) == entry.id
    assert seen == []


def test_an_exact_id_wins_over_the_longer_ids_it_starts(forest: Forest) -> None:
    forest.create_session("short", session_id="s1")
    forest.create_session("long", session_id="s10")
    assert forest.resolve_session("s1") == "s1"
    assert forest.resolve_session("s10") == "s10"


def test_an_ambiguous_prefix_lists_candidates_with_titles(named: Forest) -> None:
    with pytest.raises(AmbiguousId) as caught:
        named.resolve_session("01k7")
    err = caught.value
    assert (err.what, err.ref, err.count) == ("session", "01k7", 2)
    assert err.candidates == ({"id": A, "title": "alpha"}, {"id": B, "title": "beta"})
    assert f'{A} ("alpha")' in str(err)
    assert f'{B} ("beta")' in str(err)
    assert err.to_json()["candidates"] == [{"id": A, "title": "alpha"}, {"id": B, "title": "beta"}]


def test_an_ambiguous_prefix_counts_all_but_lists_a_few(forest: Forest) -> None:
    ids = [f"01k7{i:022d}" for i in range(9)]
    for sid in ids:
        forest.create_session(sid[-3:], session_id=sid)
    with pytest.raises(AmbiguousId) as caught:
        forest.resolve_session("01k7")
    assert caught.value.count == 9
    assert [c["id"] for c in caught.value.candidates] == ids[:5]
    assert "9 sessions start with it" in str(caught.value)


@pytest.mark.parametrize(
    ("ref", "suggested"),
    [
        ("01k7aaaaaaaaaaaaaaaaaaaaab", [A]),  # a full-length id with its last character mistyped
        ("01k7aaxa", [A]),  # one character mistyped
        ("01k7aaaaaaaaaaaaaaaaaaaaaaa", [A]),  # one character too many
        ("01kaaaa", [A]),  # one character left out
        ("01k7babb", [B]),  # two neighbours swapped
        ("01K7AB", [B]),  # capitals
    ],
)
def test_a_miss_suggests_the_ids_one_typo_away(
    named: Forest, ref: str, suggested: list[str]
) -> None:
    with pytest.raises(UnknownSession) as caught:
        named.session(named.resolve_session(ref))
    err = caught.value
    assert err.session_id == ref
    assert [s["id"] for s in err.suggestions] == suggested
    assert "did you mean" in str(err)


def test_a_miss_with_nothing_close_suggests_nothing(named: Forest) -> None:
    with pytest.raises(UnknownSession) as caught:
        named.resolve_session("zzzzzz")
    assert caught.value.suggestions == ()
    assert str(caught.value) == "unknown session: zzzzzz"


def test_every_read_and_write_of_an_unknown_full_id_suggests(named: Forest) -> None:
    typo = A[:-1] + "b"
    for call in (
        lambda: named.session(typo),
        lambda: named.head(typo),
        lambda: named.active_path(typo),
        lambda: named.append(typo, "user.message", _text("x")),
        lambda: named.append_many(typo, [("user.message", _text("x"), None)]),
        lambda: named.set_status(typo, "ended"),
    ):
        with pytest.raises(UnknownSession) as caught:
            call()
        assert [s["id"] for s in caught.value.suggestions] == [A]


@pytest.fixture
def chain(forest: Forest) -> tuple[str, list[str]]:
    sid = forest.create_session("chain")
    ids = [forest.append(sid, "user.message", _text(str(i))).id for i in range(3)]
    return sid, ids


def test_entries_resolve_by_sequence_number_and_by_prefix(
    forest: Forest, chain: tuple[str, list[str]]
) -> None:
    sid, ids = chain
    assert [forest.resolve_entry(sid, str(n)) for n in (1, 2, 3)] == ids
    for entry_id in ids:
        shortest = next(
            entry_id[:n]
            for n in range(1, 27)
            if sum(other.startswith(entry_id[:n]) for other in ids) == 1
            and not entry_id[:n].isdigit()
        )
        assert forest.resolve_entry(sid, shortest) == entry_id


def test_an_entry_prefix_only_matches_entries_of_that_session(
    forest: Forest, chain: tuple[str, list[str]]
) -> None:
    _sid, ids = chain
    other = forest.create_session("other")
    with pytest.raises(UnknownEntry) as caught:
        forest.resolve_entry(other, ids[0][:-1])
    assert caught.value.session_id == other


def imported(harness: Harness, forest: Forest, tmp_path: Path, sid: str, ids: list[str]) -> None:
    """A session `sid` whose chain of entries has exactly `ids` (as an import may carry)."""
    scratch = harness.fresh()
    minted = scratch.create_session("imported")
    made = [scratch.append(minted, "user.message", _text(i)).id for i in ids]
    out = io.StringIO()
    scratch.export_jsonl(minted, out)
    scratch.close()
    text = out.getvalue().replace(minted, sid)
    for old, new in zip(made, ids, strict=True):
        text = text.replace(old, new)
    path = tmp_path / "chain.jsonl"
    path.write_text(text)
    forest.import_jsonl(path)


def test_an_ambiguous_entry_prefix_lists_sequence_and_kind(
    forest: Forest, harness: Harness, tmp_path: Path
) -> None:
    imported(harness, forest, tmp_path, "chat", ["3f0a", "3f0b", "3f1c"])
    assert forest.resolve_entry("chat", "3f1") == "3f1c"
    with pytest.raises(AmbiguousId) as caught:
        forest.resolve_entry("chat", "3f0")
    err = caught.value
    assert (err.what, err.session_id, err.count) == ("entry", "chat", 2)
    assert err.candidates == (
        {"id": "3f0a", "sequence": 1, "kind": "user.message"},
        {"id": "3f0b", "sequence": 2, "kind": "user.message"},
    )
    assert "3f0a (1 user.message)" in str(err)
    assert "in session chat" in str(err)


def test_digits_are_an_id_first_then_a_sequence_number_then_a_prefix(
    forest: Forest, harness: Harness, tmp_path: Path
) -> None:
    # Sequences 1..4; the entry at sequence 3 has the id "1".
    imported(harness, forest, tmp_path, "chat", ["a", "b", "1", "77"])
    assert forest.resolve_entry("chat", "1") == "1"  # an id of digits stays addressable
    assert forest.resolve_entry("chat", "2") == "b"  # else the sequence number
    assert forest.resolve_entry("chat", "7") == "77"  # else a prefix
    assert forest.resolve_entry("chat", "004") == "77"  # leading zeros: still sequence 4
    with pytest.raises(UnknownEntry) as caught:
        forest.resolve_entry("chat", "9")
    assert (caught.value.entry_id, caught.value.session_id) == ("9", "chat")


def test_an_entry_miss_in_a_missing_session_reports_the_session(named: Forest) -> None:
    with pytest.raises(UnknownSession):
        named.resolve_entry("no-such-session", "abc")


def test_bad_refs_are_misses_not_crashes(named: Forest) -> None:
    for ref in ("", "\udcff", "\U0010ffff", "9" * 30):
        with pytest.raises(UnknownSession):
            named.resolve_session(ref)


def test_an_entry_miss_suggests_entries_one_typo_away(
    forest: Forest, harness: Harness, chain: tuple[str, list[str]], tmp_path: Path
) -> None:
    imported(harness, forest, tmp_path, "chat", ["3f0a", "3f0b", "3f1c"])
    with pytest.raises(UnknownEntry) as caught:
        forest.resolve_entry("chat", "3f1d")
    assert caught.value.suggestions == ({"id": "3f1c", "sequence": 3, "kind": "user.message"},)
    assert str(caught.value).endswith("did you mean 3f1c (3 user.message)?")
    # A full id goes unresolved to the write, which suggests just the same.
    sid, ids = chain
    typo = ids[1][:-1] + ("0" if ids[1][-1] != "0" else "1")
    for call in (
        lambda: forest.move_head(sid, typo),
        lambda: forest.entry(sid, typo),
        lambda: forest.append(sid, "user.message", _text("x"), parent=typo),
    ):
        with pytest.raises(UnknownEntry) as caught:
            call()
        assert ids[1] in [s["id"] for s in caught.value.suggestions]


def test_untitled_candidates_say_so(forest: Forest) -> None:
    forest.create_session(session_id="u1")
    forest.create_session(session_id="u2")
    with pytest.raises(AmbiguousId) as caught:
        forest.resolve_session("u")
    assert "(u1 (untitled), u2 (untitled))" in str(caught.value)
