"""The `SearchIndex` contract: the primitives the search funnel ranks with."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple, Protocol, TypeAlias, TypeVar

import msgspec

# --- SearchIndex ---
#
# The primitives the search funnel (search/) runs over. A backend hands out one
# SearchIndex per search, bound to one read snapshot (the place to catch up an
# index kept behind a watermark, before it reads); the funnel parses, chooses
# terms, fuses the lists these return, relaxes AND to OR and judges the result,
# so ranking policy is the same on every backend. Keys are the backend's: the
# funnel only hashes and compares them (and orders chats by key to break ties
# between equally recent chats: a chat indexed later has a larger key).

ChatKey: TypeAlias = int
EntryKey: TypeAlias = int


class Spaceless(msgspec.Struct, frozen=True):
    """A term's form in text of scripts written without spaces (sessionforest.scripts),
    where the backend finds it as a substring: how many rows may hold it."""

    entry_df: int  # entries that may hold it (an upper bound)
    digest_df: int  # chat digests that may hold it


class Term(msgspec.Struct, frozen=True):
    """One thing to search for: a typed word, a quoted phrase, or a word's prefix.

    `text` is what was typed; `tokens` are the backend's stems of it (from
    `SearchIndex.tokens`), and the frequencies its counts of them. A backend
    builds its own query syntax from these; no syntax is ever carried here.
    """

    text: str
    tokens: tuple[str, ...]
    entry_df: int
    digest_df: int
    phrase: bool = False
    prefix: bool = False  # the last token may be the start of a longer word
    spaceless: Spaceless | None = None  # None: cannot occur in spaceless-script text

    @property
    def df(self) -> int:
        if self.spaceless is None:
            return self.entry_df + self.digest_df
        return self.entry_df + self.digest_df + self.spaceless.entry_df + self.spaceless.digest_df

    @property
    def entries(self) -> int:
        """Entries that may match, as words or substrings (for the read budgets)."""
        return self.entry_df + (self.spaceless.entry_df if self.spaceless is not None else 0)

    @property
    def label(self) -> str:
        if self.phrase:
            return f'"{self.text}"'
        return self.text + "*" if self.prefix else self.text


class ChatRow(NamedTuple):
    """An unquarantined chat as search lists it; times are ISO text. `worker`: a
    harness's subagent or sidechain chat (hidden, imported), not a top-level one.

    A NamedTuple, not a frozen dataclass: a search lists up to ~2,000 of them,
    and `ChatRow._make(row)` costs 0.2 us where the dataclass costs 0.9 us.
    """

    key: ChatKey
    session_id: str
    title: str
    harness: str
    status: str
    created_at: str
    first_at: str | None  # the span of its entries (None: no entries yet)
    last_at: str | None
    worker: bool = False


class Landing(NamedTuple):
    """Where a find hit opens: the entry its snippet comes from, and whether that
    entry is on the chat's active branch (the path from the head to the root)."""

    entry_id: str
    sequence: int
    active: bool


class ChatEvidence(NamedTuple):
    """What the chat-level evidence reads of its terms at once (`SearchIndex.chat_evidence`);
    chats in any order (the funnel orders them by key)."""

    chats: int  # `chat_count()`
    entries: list[dict[ChatKey, int]]  # per term, `entry_counts(term, limit)`
    # Per term, `digest_matches([term], conjunctive=False, ranked=False, limit=limit)`
    # when the term has a digest_df, else [].
    digests: list[list[ChatKey]]
    sizes: dict[ChatKey, int]  # `chat_sizes` of every chat in `entries` and `digests`


class EntryRow(msgspec.Struct, frozen=True):
    """One entry of a recall hit, with its snippet (matches marked with scripts.MARK)."""

    sequence: int
    entry_id: str
    kind: str  # as stored (legacy names included)
    created_at: str
    snippet: str


class SessionIndex(Protocol):
    """Recall's primitives, scoped to one session (entries named by sequence)."""

    def matches(self, text: str, *, prefix: bool, limit: int) -> list[int]:
        """Sequences of entries holding `text` (a word or phrase; with `prefix`,
        its last word may be the start of a longer one), newest first."""
        ...

    def size(self) -> int:
        """The session's highest sequence (1 when it has none): its entry count for idf."""
        ...

    def hits(
        self, sequences: Sequence[int], matched: Sequence[Term], needles: Sequence[str]
    ) -> list[EntryRow]:
        """The entries, in the order given, each with a snippet marking `matched`
        (or `needles`, where they were found as substrings); unindexed ones left out."""
        ...

    def active(self, oldest: int) -> set[int]:
        """Sequences on the active path from the head, down to `oldest`."""
        ...


class SearchIndex(Protocol):
    """One search's view of a backend's full-text index (one read snapshot)."""

    def tokens(self, texts: Sequence[str]) -> list[tuple[str, ...]]:
        """The index tokenizer's stems of each text, in order (empty: nothing searchable)."""
        ...

    def frequency(self, stem: str) -> tuple[int, int]:
        """(entries, chat digests) holding the stem."""
        ...

    def prefix_frequency(self, stem: str) -> tuple[int, int]:
        """(entries, digests) holding a stem that starts with `stem` (an upper bound)."""
        ...

    def spaceless(self, text: str) -> Spaceless | None:
        """`text`'s substring form in spaceless-script text, or None where it cannot occur."""
        ...

    def chat_count(self) -> int:
        """How many chats the index holds (for idf)."""
        ...

    def chat_sizes(self, keys: Iterable[ChatKey]) -> dict[ChatKey, int]:
        """Per chat among `keys`, its length in entries (for BM25's length
        normalisation; the sequence of its last indexed entry will do)."""
        ...

    def entry_matches(
        self, terms: Sequence[Term], *, conjunctive: bool, ranked: bool, limit: int
    ) -> list[tuple[ChatKey, EntryKey]]:
        """Up to `limit` entries holding every term (`conjunctive`) or any, as (chat,
        entry) keys: best first when `ranked` (the backend's own relevance: only the
        order counts; equally relevant entries newest first, by key), else newest
        first. Substring matches in spaceless-script text follow the word matches."""
        ...

    def digest_matches(
        self, terms: Sequence[Term], *, conjunctive: bool, ranked: bool, limit: int
    ) -> list[ChatKey]:
        """Up to `limit` chats whose digest (title, opening exchange, latest summary)
        holds every term or any, best first when `ranked` (a title weighs most;
        equally relevant digests newest chat first, by key)."""
        ...

    def entry_counts(self, term: Term, limit: int) -> dict[ChatKey, int]:
        """Per chat, how many of its entries hold `term` in what was said, their
        conversational field (reading at most `limit` matches per index): the
        chat-level evidence list. Tool text (tooltext.py) is not counted: a chat
        whose tool output holds the words is found by the entry list only."""
        ...

    def entry_sequences(
        self, term: Term, chats: Iterable[ChatKey], limit: int
    ) -> dict[ChatKey, list[int]]:
        """Per chat among `chats`, the sequences of its entries holding `term`,
        ascending (at most `limit` entries in all, read unranked), in the
        conversational field as `entry_counts`: where in a chat its matches
        sit, for finding the passage that holds most words."""
        ...

    def chat_evidence(self, terms: Sequence[Term], limit: int) -> ChatEvidence:
        """The chat-level evidence lists of every term (their entry counts and digest
        matches), the chat count and the matched chats' sizes, asked together:
        what a server backend answers in one round trip (`chat_evidence_alone`)."""
        ...

    def entry_sequences_each(
        self, terms: Sequence[Term], chats: Iterable[ChatKey], limit: int
    ) -> list[dict[ChatKey, list[int]]]:
        """`entry_sequences(term, chats, limit)` of each term, in order (the passage
        search's reads, one round trip on a server)."""
        ...

    def contains(self, chat: ChatKey, term: Term) -> bool:
        """Whether any entry of the chat, or its digest, holds `term`."""
        ...

    def contains_each(self, pairs: Sequence[tuple[ChatKey, Term]]) -> list[bool]:
        """`contains` of each (chat, term) pair, in order: the funnel asks for a
        search's probes together, which a server backend answers in one round trip."""
        ...

    def chats(self, keys: Iterable[ChatKey]) -> list[ChatRow]:
        """The findable chats among `keys`: top-level ones and a harness's imported
        subagent chats (`ChatRow.worker`); quarantined ones and the hidden chats
        forest made itself left out."""
        ...

    def all_chats(self) -> list[ChatRow]:
        """Every listable chat."""
        ...

    def harnesses(self) -> list[str]:
        """The harness names the store's chats use."""
        ...

    def snippet(self, chat: ChatKey, entry: EntryKey | None, terms: Sequence[Term]) -> str:
        """A short excerpt marking `terms`: of `entry` when given, else of the digest."""
        ...

    def landing(self, entry: EntryKey) -> Landing | None:
        """The id, sequence and active-branch membership of `entry` (None: not stored)."""
        ...

    def shown(
        self, hits: Sequence[tuple[ChatKey, EntryKey | None]], terms: Sequence[Term]
    ) -> list[tuple[str, Landing | None]]:
        """Per hit (a chat, and the entry its snippet comes from), in order: its
        `snippet` ("" when there are no terms) and the `landing` of its entry (None
        without one), for every listed hit at once (one round trip on a server)."""
        ...

    def session(self, session_id: str) -> SessionIndex | None:
        """Recall's primitives for one session (None: the index does not hold it)."""
        ...


T = TypeVar("T")


def then_missing(first: list[T], more: Iterable[T]) -> list[T]:
    """`first`, then the rows of `more` that it lacks (a wider query topping up a
    narrower one's candidates, as both backends' adapters do)."""
    seen = set(first)
    out = list(first)
    for row in more:
        if row not in seen:
            seen.add(row)
            out.append(row)
    return out


def contains_each_alone(index: SearchIndex, pairs: Sequence[tuple[ChatKey, Term]]) -> list[bool]:
    """`contains_each` answered pair by pair through `contains` (in process a probe
    costs no round trip; a server backend's one-at-a-time stand-in in tests)."""
    return [index.contains(chat, term) for chat, term in pairs]


def chat_evidence_alone(
    index: SearchIndex,
    terms: Sequence[Term],
    limit: int,
    between: Callable[[], None] = lambda: None,
) -> ChatEvidence:
    """`chat_evidence` answered term by term through `chat_count`, `entry_counts`,
    `digest_matches` and `chat_sizes`, `between()` run before each term (SQLite:
    the deadline's checkpoint)."""
    chats = index.chat_count()
    entries: list[dict[ChatKey, int]] = []
    digests: list[list[ChatKey]] = []
    for term in terms:
        between()
        entries.append(index.entry_counts(term, limit))
        found: list[ChatKey] = []
        if term.digest_df:
            found = index.digest_matches([term], conjunctive=False, ranked=False, limit=limit)
        digests.append(found)
    matched = {num for counts in entries for num in counts}
    matched.update(num for found in digests for num in found)
    return ChatEvidence(chats, entries, digests, index.chat_sizes(matched) if matched else {})


def entry_sequences_alone(
    index: SearchIndex, terms: Sequence[Term], chats: Iterable[ChatKey], limit: int
) -> list[dict[ChatKey, list[int]]]:
    """`entry_sequences_each` answered term by term through `entry_sequences`."""
    wanted = list(chats)
    return [index.entry_sequences(term, wanted, limit) for term in terms]


def shown_alone(
    index: SearchIndex,
    hits: Sequence[tuple[ChatKey, EntryKey | None]],
    terms: Sequence[Term],
    between: Callable[[], None] = lambda: None,
) -> list[tuple[str, Landing | None]]:
    """`shown` answered hit by hit through `snippet` and `landing`, `between()` run
    before each (SQLite: the deadline's checkpoint)."""
    out: list[tuple[str, Landing | None]] = []
    for chat, entry in hits:
        between()
        snippet = index.snippet(chat, entry, terms) if terms else ""
        out.append((snippet, index.landing(entry) if entry is not None else None))
    return out
