"""What a find hit shows on PostgreSQL: its snippet and where its chat opens.

`PostgresSearch.shown` reads every listed hit's rows in one statement (SHOWN)
and stems the words its snippets look at in one more; `snippet` and `landing`
answer one hit from the same code. Snippets are made in Python from the stored
text (snippets.py): ts_headline parses the whole text, whatever its size, for
every snippet.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ... import snippets
from ...deadline import checkpoint
from ...scripts import excerpt
from ..base import Landing, Term

Stemmer = Callable[[Sequence[str]], list[tuple[str, ...]]]

ENTRY_SNIPPET = """
SELECT e.text, e.tool, e.spaceless FROM session_entries e JOIN sessions s ON s.id = e.session_id
WHERE s.num = %s AND e.sequence = %s
"""
DIGEST_SNIPPET = """
SELECT c.title, c.first_message, c.first_reply, c.summary, c.spaceless
FROM chat_digests c JOIN sessions s ON s.id = c.session_id WHERE s.num = %s
"""
# The head and its sequence; the rows between a hit and the head, for `on_path`.
HEAD_ROW = """
SELECT h.active_entry_id, e.sequence FROM session_heads h
JOIN session_entries e ON e.session_id = h.session_id AND e.id = h.active_entry_id
WHERE h.session_id = %s
"""
PATH_RANGE = """
SELECT sequence, id, parent_entry_id FROM session_entries
WHERE session_id = %s AND sequence BETWEEN %s AND %s
"""
# A find hit's entry by its key: the session's id (for the walk above) and the entry's.
LANDING = """
SELECT s.id, e.id FROM sessions s
JOIN session_entries e ON e.session_id = s.id AND e.sequence = %s WHERE s.num = %s
"""
# The four statements above for every hit at once, one row per hit in order: the
# entry's fields, its session, the head, the rows from the entry up to the head
# (as arrays), and the digest's fields where the snippet falls back to them (no
# entry, or one without text).
SHOWN = """
SELECT e.text, e.tool, e.spaceless, s.id, e.id, h.active_entry_id, he.sequence,
       r.sequences, r.ids, r.parents,
       c.title, c.first_message, c.first_reply, c.summary, c.spaceless
FROM unnest(%(chats)s::bigint[], %(sequences)s::bigint[]) WITH ORDINALITY AS p(chat, seq, i)
LEFT JOIN sessions s ON s.num = p.chat
LEFT JOIN session_entries e ON e.session_id = s.id AND e.sequence = p.seq
LEFT JOIN session_heads h ON h.session_id = e.session_id
LEFT JOIN session_entries he ON he.session_id = h.session_id AND he.id = h.active_entry_id
LEFT JOIN chat_digests c ON c.session_id = s.id
    AND (e.session_id IS NULL OR (coalesce(e.text, '') = '' AND coalesce(e.tool, '') = ''))
CROSS JOIN LATERAL (
    SELECT array_agg(x.sequence ORDER BY x.sequence) AS sequences,
           array_agg(x.id ORDER BY x.sequence) AS ids,
           array_agg(x.parent_entry_id ORDER BY x.sequence) AS parents
    FROM session_entries x
    WHERE x.session_id = e.session_id AND x.sequence BETWEEN p.seq AND he.sequence
) r
ORDER BY p.i
"""

EntryFields = tuple[str | None, str | None, bool]  # text, tool, spaceless
DigestFields = tuple[str, str, str, str, bool]  # title, first message, first reply, summary


def wanted_of(terms: Sequence[Term]) -> list[snippets.Wanted]:
    """What a snippet marks: each term's stems (a phrase when several)."""
    return [snippets.Wanted(t.tokens, t.text, t.prefix) for t in terms if t.tokens]


def needle(text: str) -> str:
    """Typed text as a substring to look for (folded; a NUL, which no stored text
    holds and PostgreSQL refuses in a parameter, becomes a space)."""
    return text.replace("\x00", " ").lower()


def _said(entry: EntryFields | None) -> bool:
    """Whether the snippet comes from the entry (it has text), not the digest."""
    return entry is not None and bool(entry[0] or entry[1])


def snippet(
    entry: EntryFields | None,
    digest: DigestFields | None,
    terms: Sequence[Term],
    stem: Stemmer,
) -> str:
    """A hit's snippet from its entry's fields (None: no entry, or not stored) or,
    when those hold no text, its digest's (None: no digest)."""
    needles = [needle(t.text) for t in terms]
    wanted = wanted_of(terms)
    width = snippets.FIND_TOKENS
    if entry is not None and _said(entry):
        text, tool, grams = entry
        if text and grams and any(n in text.lower() for n in needles):
            return excerpt(text, needles)
        # What was said first; the tool field when only it holds the words.
        fields = [text or "", tool or ""]
        made = snippets.snippet(fields, wanted, stem, width)
        return made if made is not None else snippets.head(text or tool or "", width)
    if digest is None:
        return ""
    *fields, grams = digest
    made = snippets.snippet(fields, wanted, stem, width)
    if made is not None:
        return made
    for field in fields if grams else ():
        if any(n in field.lower() for n in needles):
            return excerpt(field, needles)
    return ""


def on_path(head: str | None, rows: Iterable[tuple[int, str, str | None]], sequence: int) -> bool:
    """Whether the entry at `sequence` is an ancestor of the head (or the head),
    given the rows (sequence, id, parent) from it up to the head: their parent
    links followed here (a recursive walk costs an index probe a step)."""
    parent_of: dict[str, tuple[int, str | None]] = {r[1]: (r[0], r[2]) for r in rows}
    at: str | None = head
    while at is not None and at in parent_of:
        seq, parent = parent_of[at]
        if seq <= sequence:
            return seq == sequence
        at = parent
    return False


class Memo:
    """A stemmer answering from the stems it was primed with; words it was not
    given go to the backend's stemmer (one statement for each call)."""

    def __init__(self, stem: Stemmer) -> None:
        self._stem = stem
        self._known: dict[str, tuple[str, ...]] = {}

    def prime(self, words: Sequence[str]) -> None:
        new = [w for w in dict.fromkeys(words) if w not in self._known]
        if new:
            self._known.update(zip(new, self._stem(new), strict=True))

    def __call__(self, words: Sequence[str]) -> list[tuple[str, ...]]:
        self.prime(words)
        return [self._known[w] for w in words]


def shown(
    rows: Sequence[Sequence[Any]],
    hits: Sequence[tuple[int, int | None]],
    terms: Sequence[Term],
    stem: Stemmer,
) -> list[tuple[str, Landing | None]]:
    """The snippets and landings of `hits` (chat, sequence or None) from SHOWN's
    rows, the words every snippet looks at stemmed in one call of `stem`."""
    memo = Memo(stem)
    entries: list[EntryFields | None] = []
    digests: list[DigestFields | None] = []
    for row in rows:
        entry: EntryFields | None = (row[0], row[1], row[2]) if row[4] is not None else None
        digest: DigestFields | None = None
        if row[10] is not None:
            digest = (row[10], row[11], row[12], row[13], row[14])
        entries.append(entry)
        digests.append(digest)
    if terms:
        wanted = wanted_of(terms)
        words: list[str] = []
        for entry, digest in zip(entries, digests, strict=True):
            if entry is not None and _said(entry):
                words += snippets.asked([entry[0] or "", entry[1] or ""], wanted)
            elif digest is not None:
                words += snippets.asked(list(digest[:4]), wanted)
        memo.prime(words)
    out: list[tuple[str, Landing | None]] = []
    for (_chat, sequence), row, entry, digest in zip(hits, rows, entries, digests, strict=True):
        checkpoint()  # a search whose client went away stops between snippets
        made = snippet(entry, digest, terms, memo) if terms else ""
        landing = None
        if sequence is not None and row[4] is not None:
            head, head_sequence = row[5], row[6]
            active = False
            if head is not None and head_sequence is not None and head_sequence >= sequence:
                rows_up = zip(row[7] or (), row[8] or (), row[9] or (), strict=True)
                active = on_path(head, rows_up, sequence)
            landing = Landing(row[4], sequence, active)
        out.append((made, landing))
    return out
