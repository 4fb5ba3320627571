"""`PostgresSearch`: the SearchIndex primitives over tsvector columns and GIN indexes.

One instance serves one search inside one read snapshot. Chat keys are
sessions.num, entry keys (num << 32) + sequence, as on SQLite. Typed text
reaches a tsquery only through `query` (stems quoted as lexemes, never
syntax). Document frequencies come from the search_terms and digest_terms
tables the index triggers keep (store/postgres/schema.py); text of scripts
written without spaces is found as a substring (pg_trgm) where it may occur.
What the funnel asks item by item elsewhere is one statement here: a round trip
to the server costs more than a probe (`tokens` with the stems' frequencies,
`contains_each`, `shown`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

import psycopg

from ... import snippets
from ...scripts import excerpt, spaceless
from ..base import ChatEvidence, ChatKey, ChatRow, EntryKey, EntryRow, Landing, Spaceless, Term
from ..base.search import then_missing
from ..sql.visibility import FINDABLE, LISTED
from . import shown as show
from .schema import TEXT_CONFIG, WORDS_OF
from .shown import needle as _needle
from .shown import wanted_of

SESSION_SHIFT: Final = 32
SEQUENCE_MASK: Final = (1 << SESSION_SHIFT) - 1
MIN_GRAM_CHARS: Final = 3
# The newest matches of words: through the GIN index each match costs a read of
# its row (about MATCH_COST entry tests' time, measured on the scaled Bridge
# store at 1M entries); chat by chat from the newest (`_newest`), each entry
# read is tested, and `limit` matches take about limit * entries / matches of
# them. The walk is taken when it is the cheaper by that estimate (matches:
# the rarest word's count after an AND, the words' sum after an OR), up to
# SCAN_ENTRIES entries tested, at most SCAN_BATCH entries' chats at a time.
MATCH_COST: Final = 7
SCAN_PROBE: Final = 5_000
SCAN_BATCH: Final = 20_000
SCAN_ENTRIES: Final = 60_000
SCAN_CHATS: Final = 500
ENTRIES_ESTIMATE = (
    "SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = to_regclass('session_entries')"
)
# Substring matches counted at most for a frequency (an upper bound is enough).
SUBSTRING_COUNT: Final = 10_000

TOKENS = f"""
SELECT t.n, coalesce((SELECT array_agg(lexeme ORDER BY pos) FROM
    (SELECT v.lexeme, unnest(v.positions) AS pos
     FROM unnest(to_tsvector('{TEXT_CONFIG}', {WORDS_OF.format(text="t.text")})) v) x), '{{}}')
FROM unnest(%s::text[]) WITH ORDINALITY AS t(text, n) ORDER BY t.n
"""
# The query's stems and the document frequencies (entries, digests) of each: the
# funnel looks up every stem it is given, so one statement answers both.
TOKENS_DF = f"""
SELECT t.n, coalesce(x.lexemes, '{{}}'), x.entries, x.digests
FROM unnest(%s::text[]) WITH ORDINALITY AS t(text, n)
CROSS JOIN LATERAL (
    SELECT array_agg(l.lexeme ORDER BY l.pos) AS lexemes,
           array_agg(coalesce(st.docs, 0) ORDER BY l.pos) AS entries,
           array_agg(coalesce(dt.docs, 0) ORDER BY l.pos) AS digests
    FROM (SELECT v.lexeme, unnest(v.positions) AS pos
          FROM unnest(to_tsvector('{TEXT_CONFIG}', {WORDS_OF.format(text="t.text")})) v) l
    LEFT JOIN search_terms st ON st.term = l.lexeme COLLATE "C"
    LEFT JOIN digest_terms dt ON dt.term = l.lexeme COLLATE "C"
) x
ORDER BY t.n
"""
FREQUENCY = """
SELECT (SELECT docs FROM search_terms WHERE term = %(t)s),
       (SELECT docs FROM digest_terms WHERE term = %(t)s)
"""
PREFIX_FREQUENCY = """
SELECT (SELECT coalesce(sum(docs), 0) FROM search_terms WHERE term >= %(lo)s AND term < %(hi)s),
       (SELECT coalesce(sum(docs), 0) FROM digest_terms WHERE term >= %(lo)s AND term < %(hi)s)
"""
_TOP = "\U0010ffff"

# ts_rank normalisation 1 (divide by 1 + log(length)), like bm25 a long text
# weighs a match less. Digest weights follow SQLite's bm25(4.0, 1.0, 0.5, 1.0):
# title A 1.0, first message B 0.25, summary C 0.25, first reply D 0.125.
DIGEST_WEIGHTS: Final = "'{0.125, 0.25, 0.25, 1.0}'"
# An entry's words are what was said (unweighted: D) and what a tool said (C,
# 0010_search_tool_text.sql); as SQLite's bm25(1.0, 0.25), the tool field
# weighs a quarter. Equal ranks go newest first (chat, then entry), as on SQLite.
ENTRY_WEIGHTS: Final = "'{1.0, 0.25, 0.25, 1.0}'"
ENTRY_RANKED = f"""
SELECT s.num, e.sequence FROM session_entries e JOIN sessions s ON s.id = e.session_id
WHERE e.words @@ %(q)s::tsquery
ORDER BY ts_rank({ENTRY_WEIGHTS}, e.words, %(q)s::tsquery, 1) DESC, s.num DESC, e.sequence DESC
LIMIT %(n)s
"""
ENTRY_NEWEST = """
SELECT s.num, e.sequence FROM session_entries e JOIN sessions s ON s.id = e.session_id
WHERE e.words @@ %(q)s::tsquery ORDER BY s.num DESC, e.sequence DESC LIMIT %(n)s
"""
# The newest matches of words many entries hold, chat by chat from the newest
# (`_newest`): the GIN index would hand over every match (tens of thousands at
# 1M entries), each read from the table and joined before the sort keeps the
# first few hundred. Instead the newest chats are read a batch at a time through
# the (session_id, sequence) index, each entry tested; `(… @@ …) IS TRUE` keeps
# the planner off the GIN index, whose estimate for an AND of common words is a
# row or two. Older chats, when the batches found too few, go to the index.
NEWEST_CHATS = """
SELECT s.num, s.id, c.last_sequence FROM sessions s JOIN chat_digests c ON c.session_id = s.id
WHERE s.num < %(below)s ORDER BY s.num DESC LIMIT %(n)s
"""
NEWEST_IN_CHATS = """
SELECT e.session_id, e.sequence FROM session_entries e
WHERE e.session_id = ANY(%(ids)s) AND (e.words @@ %(q)s::tsquery) IS TRUE
"""
ENTRY_NEWEST_BELOW = """
SELECT s.num, e.sequence FROM session_entries e JOIN sessions s ON s.id = e.session_id
WHERE e.words @@ %(q)s::tsquery AND s.num < %(below)s
ORDER BY s.num DESC, e.sequence DESC LIMIT %(n)s
"""
# Per chat, how many of (at most %(n)s) matching entries it holds: no order, and
# the chat number joined after counting.
ENTRY_COUNTS = """
SELECT s.num, m.n FROM (
    SELECT session_id, count(*) AS n FROM (
        SELECT session_id FROM session_entries WHERE words @@ %(q)s::tsquery LIMIT %(n)s
    ) e GROUP BY session_id
) m JOIN sessions s ON s.id = m.session_id
"""
# The entries of the chats asked about holding the term (a passage search).
ENTRY_SEQUENCES = """
SELECT s.num, e.sequence FROM session_entries e JOIN sessions s ON s.id = e.session_id
WHERE s.num = ANY(%(chats)s) AND e.words @@ %(q)s::tsquery LIMIT %(n)s
"""
GRAM_ENTRY_SEQUENCES = """
SELECT s.num, e.sequence FROM session_entries e JOIN sessions s ON s.id = e.session_id
WHERE s.num = ANY(%(chats)s) AND e.spaceless AND lower(e.text) LIKE %(like)s
AND strpos(lower(e.text), %(needle)s) > 0 LIMIT %(n)s
"""
# The chat-level evidence (`chat_evidence`) in one statement: each term's entry
# counts (ENTRY_COUNTS) and digest matches (DIGEST_ANY) by session id, an arm
# each; their chats' numbers and sizes (CHAT_SIZES; %(alone)s: the chats of the
# lists read apart) from one join of sessions, where the statements alone joined
# it once per list (each chat's digest looked up by itself, the OFFSET 0 fence:
# joined, the planner read all 10,000 digests at 1M entries, a quarter more
# server time for the statement); and the chat count (CHAT_COUNT). Rows: (kind,
# term, chat, value, digested, size): 0 an entry count, 1 a digest match, 2 a
# chat of %(alone)s, 3 the count; a chat's size on each of its rows (no row of
# its own: a row costs the client about a microsecond).
EVIDENCE_MARK: Final = "/* chat_evidence */"
EVIDENCE_COUNTS = """SELECT {k} AS i, x.session_id, count(*) AS n FROM (
    SELECT session_id FROM session_entries WHERE words @@ %(e{k})s::tsquery LIMIT %(n)s
) x GROUP BY x.session_id"""
EVIDENCE_DIGESTS = """SELECT {k} AS i, x.session_id FROM (
    SELECT session_id FROM chat_digests WHERE words @@ %(d{k})s::tsquery LIMIT %(n)s
) x"""
_NO_COUNTS = "SELECT NULL::int AS i, NULL::text AS session_id, NULL::bigint AS n WHERE false"
_NO_DIGESTS = "SELECT NULL::int AS i, NULL::text AS session_id WHERE false"
EVIDENCE = (
    EVIDENCE_MARK
    + """
WITH e AS MATERIALIZED ({counts}), d AS MATERIALIZED ({digests}),
k AS MATERIALIZED (
    SELECT s.id, s.num, c.session_id IS NOT NULL AS digested, c.last_sequence
    FROM sessions s LEFT JOIN LATERAL (
        SELECT c.session_id, c.last_sequence FROM chat_digests c
        WHERE c.session_id = s.id OFFSET 0
    ) c ON true
    WHERE s.id IN (SELECT session_id FROM e UNION SELECT session_id FROM d)
       OR s.num = ANY(%(alone)s::bigint[])
)
SELECT 0, e.i, k.num, e.n, k.digested, k.last_sequence::bigint
    FROM e JOIN k ON k.id = e.session_id
UNION ALL SELECT 1, d.i, k.num, NULL, k.digested, k.last_sequence
    FROM d JOIN k ON k.id = d.session_id
UNION ALL SELECT 2, NULL, k.num, NULL, k.digested, k.last_sequence FROM k
    WHERE k.num = ANY(%(alone)s::bigint[])
UNION ALL SELECT 3, NULL, NULL, count(*), NULL, NULL FROM chat_digests
"""
)
# The passages' reads (`entry_sequences_each`): each term's ENTRY_SEQUENCES and
# GRAM_ENTRY_SEQUENCES as asked alone, an arm each. Rows: (term, chat, sequence).
SEQUENCES_MARK: Final = "/* entry_sequences_each */"
DIGEST_RANKED = f"""
SELECT s.num FROM chat_digests c JOIN sessions s ON s.id = c.session_id
WHERE c.words @@ %(q)s::tsquery
ORDER BY ts_rank({DIGEST_WEIGHTS}, c.words, %(q)s::tsquery, 1) DESC, s.num DESC LIMIT %(n)s
"""
DIGEST_ANY = """
SELECT s.num FROM chat_digests c JOIN sessions s ON s.id = c.session_id
WHERE c.words @@ %(q)s::tsquery LIMIT %(n)s
"""
# Substring matches in spaceless-script text: every needle (AND) or any (OR).
_EVERY = "NOT EXISTS (SELECT 1 FROM unnest(%(needles)s::text[]) n WHERE strpos(lower({t}), n) = 0)"
_ANY = "EXISTS (SELECT 1 FROM unnest(%(needles)s::text[]) n WHERE strpos(lower({t}), n) > 0)"
DIGEST_TEXT = "(c.title || ' ' || c.first_message || ' ' || c.first_reply || ' ' || c.summary)"
_GRAM_ENTRIES = """
SELECT s.num, e.sequence FROM session_entries e JOIN sessions s ON s.id = e.session_id
WHERE e.spaceless AND lower(e.text) LIKE ANY(%(likes)s) AND {test}
ORDER BY s.num DESC, e.sequence DESC LIMIT %(n)s
"""
GRAM_ENTRIES_EVERY = _GRAM_ENTRIES.format(test=_EVERY.format(t="e.text"))
GRAM_ENTRIES_ANY = _GRAM_ENTRIES.format(test=_ANY.format(t="e.text"))
_GRAM_DIGESTS = f"""
SELECT s.num FROM chat_digests c JOIN sessions s ON s.id = c.session_id
WHERE c.spaceless AND lower{DIGEST_TEXT} LIKE ANY(%(likes)s) AND {{test}}
ORDER BY s.num DESC LIMIT %(n)s
"""
GRAM_DIGESTS_EVERY = _GRAM_DIGESTS.format(test=_EVERY.format(t=DIGEST_TEXT))
GRAM_DIGESTS_ANY = _GRAM_DIGESTS.format(test=_ANY.format(t=DIGEST_TEXT))
GRAMS_PRESENT = (
    "SELECT EXISTS (SELECT 1 FROM session_entries WHERE spaceless) "
    "OR EXISTS (SELECT 1 FROM chat_digests WHERE spaceless)"
)
GRAM_ENTRY_DF = f"""
SELECT count(*) FROM (SELECT 1 FROM session_entries
    WHERE spaceless AND lower(text) LIKE %s LIMIT {SUBSTRING_COUNT}) x
"""
GRAM_DIGEST_DF = f"""
SELECT count(*) FROM (SELECT 1 FROM chat_digests c
    WHERE c.spaceless AND lower{DIGEST_TEXT} LIKE %s LIMIT {SUBSTRING_COUNT}) x
"""

_CHAT_COLUMNS = """s.num, s.id, s.title, s.harness, s.status, s.created_at, c.first_at, c.last_at,
       s.visibility <> 'top-level'
FROM sessions s JOIN chat_digests c ON c.session_id = s.id WHERE s.quarantine IS NULL"""
# Which chats a match may be in, and which are listed: store/sql/visibility.py.
CHATS_BY_NUM = f"SELECT {_CHAT_COLUMNS} AND {FINDABLE} AND s.num = ANY(%s)"
ALL_CHATS = f"SELECT {_CHAT_COLUMNS} AND {LISTED}"
CHAT_COUNT = "SELECT count(*) FROM chat_digests"
# A chat's length for BM25's normalisation: its last sequence, kept in its digest.
CHAT_SIZES = """
SELECT s.num, c.last_sequence FROM sessions s JOIN chat_digests c ON c.session_id = s.id
WHERE s.num = ANY(%s)
"""
# The distinct harnesses, one index probe each (a loose index scan).
HARNESSES = """
WITH RECURSIVE h(harness) AS (
    (SELECT harness FROM sessions WHERE harness > '' ORDER BY harness LIMIT 1)
    UNION ALL
    SELECT (SELECT s.harness FROM sessions s WHERE s.harness > h.harness
            ORDER BY s.harness LIMIT 1)
    FROM h WHERE h.harness IS NOT NULL
)
SELECT harness FROM h WHERE harness IS NOT NULL
"""
HARNESSES_AND_FACTS = f"SELECT array({HARNESSES}), ({GRAMS_PRESENT}), ({ENTRIES_ESTIMATE})"
SESSION_OF = "SELECT id FROM sessions WHERE num = %s"
# Whether a chat holds a term. The planner, trusting the GIN index, intersects
# the term's whole posting list with the chat's rows: 10-16 ms for a common
# term at 1M entries, against 0.2 ms reading a 100-entry chat's rows. A chat of
# up to PROBE_SCAN_ENTRIES entries is read row by row (the OFFSET 0 fence keeps
# the test out of the index scan); only a longer one goes through the GIN index.
PROBE_SCAN_ENTRIES: Final = 2000
ENTRY_PROBE = f"""
SELECT 1 FROM sessions s JOIN chat_digests c ON c.session_id = s.id
WHERE s.num = %(chat)s AND CASE WHEN c.last_sequence <= {PROBE_SCAN_ENTRIES}
    THEN EXISTS (SELECT 1 FROM (SELECT words FROM session_entries e
                                WHERE e.session_id = s.id OFFSET 0) x
                 WHERE x.words @@ %(q)s::tsquery)
    ELSE EXISTS (SELECT 1 FROM session_entries e
                 WHERE e.session_id = s.id AND e.words @@ %(q)s::tsquery) END
"""
DIGEST_PROBE = """
SELECT 1 FROM chat_digests c JOIN sessions s ON s.id = c.session_id
WHERE s.num = %s AND c.words @@ %s::tsquery
"""
GRAM_ENTRY_PROBE = """
SELECT 1 FROM session_entries e JOIN sessions s ON s.id = e.session_id
WHERE s.num = %s AND e.spaceless AND strpos(lower(e.text), %s) > 0 LIMIT 1
"""
GRAM_DIGEST_PROBE = f"""
SELECT 1 FROM chat_digests c JOIN sessions s ON s.id = c.session_id
WHERE s.num = %s AND c.spaceless AND strpos(lower{DIGEST_TEXT}, %s) > 0
"""
# The four probes above for many (chat, term) pairs in one statement: the numbers
# (from 1) of the pairs that hold. A term's words as a tsquery (NULL: it has none),
# its substring (NULL: it cannot occur in spaceless-script text). Each pair's chat
# is looked up by itself (the OFFSET 0 fence): joined to the pairs, the planner
# hashed every digest to probe 16 chats (17 ms at 10,000 chats).
CONTAINS_EACH = f"""
SELECT p.i FROM unnest(%(chats)s::bigint[], %(queries)s::tsquery[], %(needles)s::text[])
    WITH ORDINALITY AS p(chat, q, needle, i)
CROSS JOIN LATERAL (
    SELECT s.id, c.session_id IS NOT NULL AS digested, c.words, c.last_sequence,
           p.needle IS NOT NULL AND c.spaceless AND strpos(lower{DIGEST_TEXT}, p.needle) > 0
               AS digest_holds
    FROM sessions s LEFT JOIN chat_digests c ON c.session_id = s.id
    WHERE s.num = p.chat OFFSET 0
) k
WHERE (p.q IS NOT NULL AND k.digested AND (k.words @@ p.q OR
        CASE WHEN k.last_sequence <= {PROBE_SCAN_ENTRIES}
        THEN EXISTS (SELECT 1 FROM (SELECT words FROM session_entries e
                                    WHERE e.session_id = k.id OFFSET 0) x
                     WHERE x.words @@ p.q)
        ELSE EXISTS (SELECT 1 FROM session_entries e
                     WHERE e.session_id = k.id AND e.words @@ p.q) END))
   OR (p.needle IS NOT NULL AND (k.digest_holds OR
        EXISTS (SELECT 1 FROM session_entries e WHERE e.session_id = k.id AND e.spaceless
                AND strpos(lower(e.text), p.needle) > 0)))
"""

# --- recall, scoped to one session ---
TERM_IN_SESSION = """
SELECT sequence FROM session_entries WHERE session_id = %s AND words @@ %s::tsquery
ORDER BY sequence DESC LIMIT %s
"""
GRAM_IN_SESSION = """
SELECT sequence FROM session_entries
WHERE session_id = %s AND spaceless AND strpos(lower(text), %s) > 0
ORDER BY sequence DESC LIMIT %s
"""
SESSION_HAS_GRAMS = "SELECT 1 FROM session_entries WHERE session_id = %s AND spaceless LIMIT 1"
SESSION_SIZE = "SELECT MAX(sequence) FROM session_entries WHERE session_id = %s"
HIT_ROW = """
SELECT id, kind, created_at, sequence, coalesce(text, ''), coalesce(tool, ''), spaceless,
       words @@ %(q)s::tsquery
FROM session_entries WHERE session_id = %(sid)s AND sequence = %(seq)s
  AND (text IS NOT NULL OR tool IS NOT NULL)
"""
ACTIVE_SEQUENCES = """
WITH RECURSIVE path(id, parent, sequence) AS (
    SELECT id, parent_entry_id, sequence FROM session_entries
    WHERE session_id = %(sid)s
      AND id = (SELECT active_entry_id FROM session_heads WHERE session_id = %(sid)s)
    UNION ALL
    SELECT e.id, e.parent_entry_id, e.sequence
    FROM session_entries e JOIN path ON e.session_id = %(sid)s AND e.id = path.parent
    WHERE path.sequence > %(oldest)s AND e.sequence < path.sequence
)
SELECT sequence FROM path
"""


def _lexeme(stem: str) -> str:
    """A stem as one tsquery lexeme: quoted, so it is never syntax."""
    return "'" + stem.replace("\\", "\\\\").replace("'", "''") + "'"


def query(tokens: Sequence[str], prefix: bool = False, said: bool = False) -> str | None:
    """A phrase of stems as tsquery text (the last one a prefix when `prefix`);
    `said`: matching the conversational field only (weight D), not the tool field."""
    if not tokens:
        return None
    label = "D" if said else ""
    parts = [_lexeme(t) + (":" + label if label else "") for t in tokens]
    if prefix:
        parts[-1] = _lexeme(tokens[-1]) + ":*" + label
    return " <-> ".join(parts)


def _combine(pieces: Iterable[str | None], conjunctive: bool) -> str | None:
    found = [f"({p})" for p in pieces if p is not None]
    if not found:
        return None
    return (" & " if conjunctive else " | ").join(found)


def _term_query(term: Term) -> str | None:
    return query(term.tokens, term.prefix)


def _said_query(term: Term) -> str | None:
    """The term in what was said only: the whole-chat evidence counts no tool text."""
    return query(term.tokens, term.prefix, said=True)


def _like(needle: str) -> str:
    return "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


class PostgresSearch:
    """The SearchIndex of one PostgreSQL store, bound to one read transaction."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn
        self._present: bool | None = None
        self._entries: int | None = None  # the planner's estimate of the entries
        self._substring: dict[str, Spaceless | None] = {}
        self._df: dict[str, tuple[int, int]] = {}  # the stems `tokens` looked up
        # The lists of entry and digest matches read, by their arguments.
        self._lists: dict[tuple[object, ...], list[Any]] = {}
        self._rows: dict[ChatKey, ChatRow | None] = {}  # `chats` read, by key

    def _one(self, sql: str, *args: Any) -> int:
        row = self._conn.execute(sql, args).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    # --- choosing terms ---

    def tokens(self, texts: Sequence[str]) -> list[tuple[str, ...]]:
        """The stems of each text; their frequencies are read in the same statement
        (TOKENS_DF) and kept for `frequency`, which the funnel asks next."""
        if not texts:
            return []
        clean = [t.replace("\x00", " ") for t in texts]
        out = []
        for _n, stems, entries, digests in self._conn.execute(TOKENS_DF, (clean,)):
            self._df.update(zip(stems, zip(entries or (), digests or (), strict=True), strict=True))
            out.append(tuple(stems))
        return out

    def stems(self, texts: Sequence[str]) -> list[tuple[str, ...]]:
        """The stems of each text, no frequencies (a snippet's words, recall's)."""
        if not texts:
            return []
        clean = [t.replace("\x00", " ") for t in texts]
        return [tuple(row[1]) for row in self._conn.execute(TOKENS, (clean,))]

    def frequency(self, stem: str) -> tuple[int, int]:
        known = self._df.get(stem)
        if known is not None:
            return known
        row = self._conn.execute(FREQUENCY, {"t": stem}).fetchone()
        found = (int(row[0] or 0), int(row[1] or 0)) if row else (0, 0)
        self._df[stem] = found
        return found

    def prefix_frequency(self, stem: str) -> tuple[int, int]:
        args = {"lo": stem, "hi": stem + _TOP}
        row = self._conn.execute(PREFIX_FREQUENCY, args).fetchone()
        return (int(row[0] or 0), int(row[1] or 0)) if row else (0, 0)

    def _grams_present(self) -> bool:
        if self._present is None:
            self._present = bool(self._one(GRAMS_PRESENT))
        return self._present

    def spaceless(self, text: str) -> Spaceless | None:
        if text not in self._substring:
            self._substring[text] = self._spaceless(text)
        return self._substring[text]

    def _spaceless(self, text: str) -> Spaceless | None:
        if not self._grams_present():
            return None
        folded = _needle(text)
        if len(folded) < MIN_GRAM_CHARS and not spaceless(folded):
            return None  # a one- or two-letter Latin word is found as a word only
        like = _like(folded)
        entry_df, digest_df = self._one(GRAM_ENTRY_DF, like), self._one(GRAM_DIGEST_DF, like)
        return Spaceless(entry_df, digest_df) if entry_df + digest_df else None

    def _needles(self, terms: Sequence[Term]) -> list[str]:
        return [_needle(t.text) for t in terms if t.spaceless is not None]

    # --- the lists T1 fuses ---

    def chat_count(self) -> int:
        return self._one(CHAT_COUNT)

    def chat_sizes(self, keys: Iterable[ChatKey]) -> dict[ChatKey, int]:
        wanted = sorted(set(keys))
        rows = self._conn.execute(CHAT_SIZES, (wanted,))
        return {num: int(last or 0) for num, last in rows}

    def entry_matches(
        self, terms: Sequence[Term], *, conjunctive: bool, ranked: bool, limit: int
    ) -> list[tuple[ChatKey, EntryKey]]:
        # One search asks some lists twice (a time window's retry without it).
        key = ("entries", tuple(terms), conjunctive, ranked, limit)
        if key not in self._lists:
            self._lists[key] = self._entry_matches(terms, conjunctive, ranked, limit)
        return list(self._lists[key])

    def _entry_matches(
        self, terms: Sequence[Term], conjunctive: bool, ranked: bool, limit: int
    ) -> list[tuple[ChatKey, EntryKey]]:
        rows: list[tuple[int, int]] = []
        expr = _combine((_term_query(t) for t in terms), conjunctive)
        if expr is not None and (not conjunctive or all(t.tokens for t in terms)):
            dfs = [t.entry_df for t in terms]
            if ranked:
                rows = self._conn.execute(ENTRY_RANKED, {"q": expr, "n": limit}).fetchall()
            elif self._walk_pays(min(dfs) if conjunctive else sum(dfs), limit):
                rows = self._newest(expr, limit)
            else:
                rows = self._conn.execute(ENTRY_NEWEST, {"q": expr, "n": limit}).fetchall()
        needles = self._needles(terms)
        if needles and (not conjunctive or len(needles) == len(terms)):
            sql = GRAM_ENTRIES_EVERY if conjunctive else GRAM_ENTRIES_ANY
            args = {"needles": needles, "likes": [_like(n) for n in needles], "n": limit}
            rows = then_missing(rows, self._conn.execute(sql, args).fetchall())
        return [(num, (num << SESSION_SHIFT) + seq) for num, seq in rows[:limit]]

    def _walk_pays(self, matches: int, limit: int) -> bool:
        """Whether reading the newest chats' entries beats the GIN index for
        `limit` of `matches` matching entries (the estimate above)."""
        if self._entries is None:
            self._entries = self._one(ENTRIES_ESTIMATE)
        entries = self._entries
        if matches <= limit or not entries:
            return False
        tests = limit * entries / matches
        return tests <= SCAN_ENTRIES and tests < MATCH_COST * matches

    def _newest(self, expr: str, limit: int) -> list[tuple[int, int]]:
        """ENTRY_NEWEST's rows (the newest `limit` matches of `expr`, newest chat and
        entry first), read chat by chat from the newest while that pays: a first
        batch of SCAN_PROBE entries' chats measures how many match, the next is
        sized from it, and when the rest would take more than SCAN_ENTRIES tests
        the older chats go to the index."""
        conn = self._conn
        rows: list[tuple[int, int]] = []
        below = 1 << 62  # chats numbered below this are not read yet
        tested = 0
        want = SCAN_PROBE
        while len(rows) < limit:
            chats = conn.execute(NEWEST_CHATS, {"below": below, "n": SCAN_CHATS}).fetchall()
            batch: dict[str, int] = {}
            size = 0
            for num, sid, last in chats:
                batch[sid] = num
                size += int(last or 0)
                if size >= want:
                    break
            if not batch:
                return rows  # every chat was read
            found = conn.execute(NEWEST_IN_CHATS, {"ids": list(batch), "q": expr}).fetchall()
            rows.extend(sorted(((batch[sid], seq) for sid, seq in found), reverse=True))
            below = min(batch.values())
            tested += size
            # Tests the rest would take at the rate this walk has found matches.
            rest = (limit - len(rows)) * tested / max(len(rows), 1)
            if rest > SCAN_ENTRIES - tested:
                break
            want = min(SCAN_BATCH, int(rest * 1.2) + 1)
        if len(rows) < limit:  # few matches in the newest chats: the rest by the index
            args = {"q": expr, "below": below, "n": limit - len(rows)}
            rows.extend(conn.execute(ENTRY_NEWEST_BELOW, args).fetchall())
        return rows[:limit]

    def digest_matches(
        self, terms: Sequence[Term], *, conjunctive: bool, ranked: bool, limit: int
    ) -> list[ChatKey]:
        # One search asks some lists twice (the gate's `_about` what T1 read).
        key = ("digests", tuple(terms), conjunctive, ranked, limit)
        if key not in self._lists:
            self._lists[key] = self._digest_matches(terms, conjunctive, ranked, limit)
        return list(self._lists[key])

    def _digest_matches(
        self, terms: Sequence[Term], conjunctive: bool, ranked: bool, limit: int
    ) -> list[ChatKey]:
        nums: list[int] = []
        expr = _combine((_term_query(t) for t in terms), conjunctive)
        if expr is not None and (not conjunctive or all(t.tokens for t in terms)):
            sql = DIGEST_RANKED if ranked else DIGEST_ANY
            nums = [r[0] for r in self._conn.execute(sql, {"q": expr, "n": limit}).fetchall()]
        needles = self._needles(terms)
        if needles and (not conjunctive or len(needles) == len(terms)):
            sql = GRAM_DIGESTS_EVERY if conjunctive else GRAM_DIGESTS_ANY
            args = {"needles": needles, "likes": [_like(n) for n in needles], "n": limit}
            nums = then_missing(nums, (r[0] for r in self._conn.execute(sql, args).fetchall()))
        return nums[:limit]

    def entry_counts(self, term: Term, limit: int) -> dict[ChatKey, int]:
        expr = _said_query(term)
        substrings = term.spaceless is not None and term.spaceless.entry_df > 0
        if not substrings:  # words only: counted in the database
            if expr is None or not term.entry_df:
                return {}
            return dict(self._conn.execute(ENTRY_COUNTS, {"q": expr, "n": limit}).fetchall())
        # Words and substrings: an entry may hold both, so rows are told apart first.
        found: set[tuple[int, int]] = set()
        if expr is not None and term.entry_df:
            found.update(
                tuple(r) for r in self._conn.execute(ENTRY_NEWEST, {"q": expr, "n": limit})
            )
        needle = _needle(term.text)
        args = {"needles": [needle], "likes": [_like(needle)], "n": limit}
        found.update(tuple(r) for r in self._conn.execute(GRAM_ENTRIES_ANY, args))
        counts: dict[ChatKey, int] = {}
        for num, _seq in found:
            counts[num] = counts.get(num, 0) + 1
        return counts

    def entry_sequences(
        self, term: Term, chats: Iterable[ChatKey], limit: int
    ) -> dict[ChatKey, list[int]]:
        wanted = sorted(set(chats))
        if not wanted:
            return {}
        found: set[tuple[int, int]] = set()
        expr = _said_query(term)
        if expr is not None and term.entry_df:
            args = {"chats": wanted, "q": expr, "n": limit}
            found.update(tuple(r) for r in self._conn.execute(ENTRY_SEQUENCES, args))
        if term.spaceless is not None and term.spaceless.entry_df:
            needle = _needle(term.text)
            args = {"chats": wanted, "like": _like(needle), "needle": needle, "n": limit}
            found.update(tuple(r) for r in self._conn.execute(GRAM_ENTRY_SEQUENCES, args))
        out: dict[ChatKey, list[int]] = {}
        for num, seq in sorted(found):
            out.setdefault(num, []).append(seq)
        return out

    def chat_evidence(self, terms: Sequence[Term], limit: int) -> ChatEvidence:
        """Every term's `entry_counts` and `digest_matches`, the chat count and the
        chats' sizes in one statement (EVIDENCE); the lists of a term that may
        occur as a substring (its rows told apart in Python) are read alone."""
        entries: list[dict[ChatKey, int]] = [{} for _ in terms]
        digests: list[list[ChatKey]] = [[] for _ in terms]
        counts: list[str] = []
        found: list[str] = []
        args: dict[str, Any] = {"n": limit}
        alone: set[ChatKey] = set()
        for k, term in enumerate(terms):
            said = _said_query(term)
            if term.spaceless is not None and term.spaceless.entry_df:
                entries[k] = self.entry_counts(term, limit)
                alone.update(entries[k])
            elif said is not None and term.entry_df:
                args[f"e{k}"] = said
                counts.append(EVIDENCE_COUNTS.replace("{k}", str(k)))
            expr = _term_query(term)
            if not term.digest_df:
                continue
            if term.spaceless is not None:  # its substring matches follow the words'
                digests[k] = self.digest_matches(
                    [term], conjunctive=False, ranked=False, limit=limit
                )
                alone.update(digests[k])
            elif expr is not None:
                args[f"d{k}"] = expr
                found.append(EVIDENCE_DIGESTS.replace("{k}", str(k)))
        args["alone"] = sorted(alone)
        sql = EVIDENCE.format(
            counts=" UNION ALL ".join(counts) or _NO_COUNTS,
            digests=" UNION ALL ".join(found) or _NO_DIGESTS,
        )
        chats = 0
        sizes: dict[ChatKey, int] = {}
        for kind, k, num, value, digested, last in self._conn.execute(sql, args).fetchall():
            if kind == 0:
                entries[k][num] = value
            elif kind == 1:
                digests[k].append(num)
            elif kind == 3:
                chats = int(value)
                continue
            if digested:
                sizes[num] = int(last or 0)
        for k, term in enumerate(terms):
            if term.spaceless is None and term.digest_df:
                key = ("digests", (term,), False, False, limit)
                self._lists.setdefault(key, list(digests[k]))
        return ChatEvidence(chats, entries, digests, sizes)

    def entry_sequences_each(
        self, terms: Sequence[Term], chats: Iterable[ChatKey], limit: int
    ) -> list[dict[ChatKey, list[int]]]:
        """Every term's `entry_sequences` in one statement (SEQUENCES_MARK)."""
        wanted = sorted(set(chats))
        if not wanted or not terms:
            return [{} for _ in terms]
        arms: list[str] = []
        args: dict[str, Any] = {"chats": wanted, "n": limit}
        for k, term in enumerate(terms):
            expr = _said_query(term)
            if expr is not None and term.entry_df:
                args[f"q{k}"] = expr
                arm = ENTRY_SEQUENCES.replace("%(q)s", f"%(q{k})s")
                arms.append(f"SELECT {k}, x.* FROM ({arm}) x")
            if term.spaceless is not None and term.spaceless.entry_df:
                needle = _needle(term.text)
                args[f"like{k}"], args[f"needle{k}"] = _like(needle), needle
                arm = GRAM_ENTRY_SEQUENCES.replace("%(like)s", f"%(like{k})s")
                arm = arm.replace("%(needle)s", f"%(needle{k})s")
                arms.append(f"SELECT {k}, x.* FROM ({arm}) x")
        found: list[set[tuple[int, int]]] = [set() for _ in terms]
        if arms:
            sql = SEQUENCES_MARK + "\n" + " UNION ALL ".join(arms)
            for k, num, seq in self._conn.execute(sql, args).fetchall():
                found[k].add((num, seq))
        out: list[dict[ChatKey, list[int]]] = []
        for rows in found:
            per: dict[ChatKey, list[int]] = {}
            for num, seq in sorted(rows):
                per.setdefault(num, []).append(seq)
            out.append(per)
        return out

    def contains(self, chat: ChatKey, term: Term) -> bool:
        conn = self._conn
        expr = _term_query(term)
        if expr is not None and (
            conn.execute(ENTRY_PROBE, {"chat": chat, "q": expr}).fetchone()
            or conn.execute(DIGEST_PROBE, (chat, expr)).fetchone()
        ):
            return True
        if term.spaceless is None:
            return False
        needle = _needle(term.text)
        return bool(
            conn.execute(GRAM_ENTRY_PROBE, (chat, needle)).fetchone()
            or conn.execute(GRAM_DIGEST_PROBE, (chat, needle)).fetchone()
        )

    def contains_each(self, pairs: Sequence[tuple[ChatKey, Term]]) -> list[bool]:
        """`contains` of every pair in one statement (CONTAINS_EACH)."""
        if not pairs:
            return []
        args = {
            "chats": [chat for chat, _ in pairs],
            "queries": [_term_query(term) for _, term in pairs],
            "needles": [_needle(t.text) if t.spaceless is not None else None for _, t in pairs],
        }
        held = {row[0] for row in self._conn.execute(CONTAINS_EACH, args)}
        return [i in held for i in range(1, len(pairs) + 1)]

    # --- chats and what is shown of them ---

    def chats(self, keys: Iterable[ChatKey]) -> list[ChatRow]:
        """The findable chats among `keys`, by key; each chat's row read once a
        search (the AND and the OR, and a time window's retry without the window,
        ask for many of the same chats), None kept for a key with no such chat."""
        wanted = sorted(set(keys))
        rows = self._rows
        missing = [key for key in wanted if key not in rows]
        if missing:
            found = {
                r.key: r
                for r in map(ChatRow._make, self._conn.execute(CHATS_BY_NUM, (missing,)).fetchall())
            }
            for key in missing:
                rows[key] = found.get(key)
        return [row for row in (rows[key] for key in wanted) if row is not None]

    def all_chats(self) -> list[ChatRow]:
        return list(map(ChatRow._make, self._conn.execute(ALL_CHATS).fetchall()))

    def harnesses(self) -> list[str]:
        """The harness names, and in the same statement what a search asks next
        (whether spaceless-script text is stored, the entries' estimate)."""
        row = self._conn.execute(HARNESSES_AND_FACTS).fetchone()
        if row is None:
            return []
        names, present, entries = row
        self._present = bool(present)
        if self._entries is None:
            self._entries = int(entries or 0)
        return list(names)

    def snippet(self, chat: ChatKey, entry: EntryKey | None, terms: Sequence[Term]) -> str:
        conn = self._conn
        row = None
        if entry is not None:
            row = conn.execute(show.ENTRY_SNIPPET, (chat, entry & SEQUENCE_MASK)).fetchone()
        digest = None
        if row is None or not (row[0] or row[1]):
            digest = conn.execute(show.DIGEST_SNIPPET, (chat,)).fetchone()
        return show.snippet(row, digest, terms, self.stems)

    def landing(self, entry: EntryKey) -> Landing | None:
        sequence = entry & SEQUENCE_MASK
        row = self._conn.execute(show.LANDING, (sequence, entry >> SESSION_SHIFT)).fetchone()
        if row is None:
            return None
        return Landing(row[1], sequence, self._on_path(row[0], sequence))

    def _on_path(self, session_id: str, sequence: int) -> bool:
        """Whether the entry at `sequence` is on the active branch: the rows from it up
        to the head read as one range of the sequence index (shown.on_path)."""
        head = self._conn.execute(show.HEAD_ROW, (session_id,)).fetchone()
        if head is None or head[0] is None or head[1] < sequence:
            return False
        rows = self._conn.execute(show.PATH_RANGE, (session_id, sequence, head[1])).fetchall()
        return show.on_path(head[0], rows, sequence)

    def shown(
        self, hits: Sequence[tuple[ChatKey, EntryKey | None]], terms: Sequence[Term]
    ) -> list[tuple[str, Landing | None]]:
        """`snippet` and `landing` of every hit, their rows read in one statement
        (shown.SHOWN) and their snippets' words stemmed in one more."""
        if not hits:
            return []
        keys = [
            (chat, entry & SEQUENCE_MASK if entry is not None else None) for chat, entry in hits
        ]
        args = {"chats": [k[0] for k in keys], "sequences": [k[1] for k in keys]}
        rows = self._conn.execute(show.SHOWN, args).fetchall()
        return show.shown(rows, keys, terms, self.stems)

    # --- recall ---

    def session(self, session_id: str) -> PostgresSessionIndex | None:
        row = self._conn.execute("SELECT 1 FROM chat_digests WHERE session_id = %s", (session_id,))
        if row.fetchone() is None:
            return None
        return PostgresSessionIndex(self._conn, session_id, self)


class PostgresSessionIndex:
    """Recall's SessionIndex for one session of one PostgreSQL store."""

    def __init__(
        self, conn: psycopg.Connection[Any], session_id: str, index: PostgresSearch
    ) -> None:
        self._conn = conn
        self._sid = session_id
        self._index = index
        self._has_grams = conn.execute(SESSION_HAS_GRAMS, (session_id,)).fetchone() is not None

    def matches(self, text: str, *, prefix: bool, limit: int) -> list[int]:
        [tokens] = self._index.stems([text])
        expr = query(tokens, prefix)
        rows: list[int] = []
        if expr is not None:
            rows = [r[0] for r in self._conn.execute(TERM_IN_SESSION, (self._sid, expr, limit))]
        if not prefix and self._has_grams and (len(text) >= MIN_GRAM_CHARS or spaceless(text)):
            more = self._conn.execute(GRAM_IN_SESSION, (self._sid, _needle(text), limit))
            rows = sorted(then_missing(rows, (r[0] for r in more)), reverse=True)[:limit]
        return rows

    def size(self) -> int:
        row = self._conn.execute(SESSION_SIZE, (self._sid,)).fetchone()
        return int(row[0] or 1) if row else 1

    def hits(
        self, sequences: Sequence[int], matched: Sequence[Term], needles: Sequence[str]
    ) -> list[EntryRow]:
        expr = _combine((_term_query(t) for t in matched), False) or ""
        wanted = wanted_of(matched)
        width = snippets.RECALL_TOKENS
        out = []
        for sequence in sequences:
            row = self._conn.execute(
                HIT_ROW, {"q": expr, "sid": self._sid, "seq": sequence}
            ).fetchone()
            if row is None:
                continue
            entry_id, kind, created_at, seq, text, tool, grams, words = row
            made = None
            if not grams or words:
                # What was said first; the tool field when only it holds the words.
                made = snippets.snippet([text, tool], wanted, self._index.stems, width)
            if made is None and grams:
                made = excerpt(text, needles)
            shown = made or snippets.head(text or tool, width)
            out.append(EntryRow(seq, entry_id, kind, created_at, shown))
        return out

    def active(self, oldest: int) -> set[int]:
        args = {"sid": self._sid, "oldest": oldest}
        return {r[0] for r in self._conn.execute(ACTIVE_SEQUENCES, args)}
