"""Labelled search corpora, loaded the way their own evaluations load them.

Shared by `bench_search.py`, `bench_index_append.py` and the eval tests in
tests/conformance/search/ (which import this file by path, so it imports
nothing from the benchmark harness). The data stays in ../shared/data:
third-party test data, never part of the package (LoCoMo is CC BY-NC 4.0:
tests and benchmarks only).

Bridge chat search (`bridge-chat-search/corpus.json`, MIT). Loaded as the
original's own eval does (`src-tauri/bridge-core/src/chat_search/eval.rs`,
`load`, in cestercian/bridge-harness at 9b6577f9): each chat is one session
(its id, title and harness) started `daysAgo` days and two hours before the
corpus `now`; it gets `entriesPerChat` entries, one a minute, alternating
user.message (even sequence, starting with the first) and assistant.message.
Key 0 is the first message, key i >= 1 lands on sequence 30*(i-1) + 7 (7, 37,
67: "the way a topic recurs"), and every other entry is a filler line chosen by
the eval's 64-bit LCG (state 762, one draw per filler entry, the state carried
across chats in corpus order). The only difference is the payload shape: the
original stores `{"text": ...}`, this store's v2 messages hold the same text
as one text block; the indexed text is identical.

LoCoMo (`locomo/locomo10.json`): every session of every conversation is its
own chat (`<sample_id> session N`), dated from `session_N_date_time`, one
turn a minute. Turns alternate by speaker: speaker_a's turns are user
messages, speaker_b's are assistant messages, each written `Name: text` (the
transcript as read, so a question naming a person can match; every chat of a
conversation carries both names) with an image turn's BLIP caption appended as
`[image: caption]`, as LoCoMo's RAG baselines do. A question's gold chats are
the sessions its evidence turns belong to (dia_id `D3:5` -> session 3).
"""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from sessionforest import Forest
from sessionforest.ids import iso

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("SESSIONFOREST_SHARED_DATA", REPO.parent / "shared" / "data"))
BRIDGE_PATH = DATA / "bridge-chat-search" / "corpus.json"
LOCOMO_PATH = DATA / "locomo" / "locomo10.json"

USER, ASSISTANT = "user.message", "assistant.message"


def message(text: str) -> dict[str, Any]:
    """A v2 user/assistant payload holding `text` as its one text block."""
    return {"content": [{"type": "text", "text": text}]}


# --- Bridge -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BridgeChat:
    id: str
    title: str
    harness: str
    days_ago: int
    keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BridgeQuery:
    query: str
    expect: str
    klass: str  # exact | vague | time


@dataclass(frozen=True, slots=True)
class BridgeCorpus:
    now: datetime
    entries_per_chat: int
    filler: tuple[str, ...]
    chats: tuple[BridgeChat, ...]
    queries: tuple[BridgeQuery, ...]

    def start(self, chat: BridgeChat, extra_days: int = 0) -> datetime:
        """When the eval starts a chat: `daysAgo` days and two hours before `now`."""
        return self.now - timedelta(days=chat.days_ago + extra_days, hours=2)


def load_bridge(path: Path = BRIDGE_PATH) -> BridgeCorpus:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return BridgeCorpus(
        now=datetime.fromisoformat(raw["now"].replace("Z", "+00:00")).astimezone(UTC),
        entries_per_chat=int(raw["entriesPerChat"]),
        filler=tuple(raw["filler"]),
        chats=tuple(
            BridgeChat(c["id"], c["title"], c["harness"], int(c["daysAgo"]), tuple(c["keys"]))
            for c in raw["chats"]
        ),
        queries=tuple(BridgeQuery(q["query"], q["expect"], q["class"]) for q in raw["queries"]),
    )


class EvalFiller:
    """The eval's filler picker: a 64-bit LCG seeded 762, `(state >> 33) % len(filler)`."""

    _MASK = (1 << 64) - 1

    def __init__(self, filler: tuple[str, ...], seed: int = 762) -> None:
        self.filler = filler
        self.state = seed

    def __call__(self) -> str:
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) & self._MASK
        return self.filler[(self.state >> 33) % len(self.filler)]


def key_at(keys: tuple[str, ...], sequence: int) -> str | None:
    """The key the eval puts at 0-based `sequence`, if any (0 -> key 0; 7, 37, 67 -> 1, 2, 3)."""
    if sequence == 0:
        return keys[0] if keys else None
    if sequence % 30 == 7:
        i = sequence // 30 + 1
        return keys[i] if i < len(keys) else None
    return None


def bridge_entries(
    corpus: BridgeCorpus, chat: BridgeChat, pick: EvalFiller
) -> list[tuple[str, str, str]]:
    """(kind, text, created_at) of a chat's entries, in order, exactly as the eval writes them.

    `pick` is shared across chats: call this for the chats in corpus order.
    """
    started = corpus.start(chat)
    out = []
    for sequence in range(corpus.entries_per_chat):
        text = key_at(chat.keys, sequence)
        if text is None:
            text = pick()  # drawn only for filler entries, as in the eval
        kind = USER if sequence % 2 == 0 else ASSISTANT
        out.append((kind, text, iso(started + timedelta(minutes=sequence))))
    return out


def store_bridge(forest: Forest, corpus: BridgeCorpus) -> int:
    """Write the corpus through the public API (session id = chat id); returns entries written."""
    pick = EvalFiller(corpus.filler)
    written = 0
    for chat in corpus.chats:
        sid = forest.create_session(
            chat.title, chat.harness, session_id=chat.id, created_at=iso(corpus.start(chat))
        )
        for kind, text, at in bridge_entries(corpus, chat, pick):
            forest.append(sid, kind, message(text), created_at=at, stamp=None)
            written += 1
    return written


# --- Bridge scaled up (latency) ------------------------------------------------------

_COMMON_TEXT = """
the a to and of in is it that for on with this we be as at not are but can so if or by from
just now then there what when will should would could need also still test tests code bug fix
error file run build change check looks like one more think make use sure maybe issue value
function output input again first last
"""
_COMMON = tuple(_COMMON_TEXT.split())
_ONSETS = ("b", "c", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z",
           "br", "ch", "cr", "dr", "fl", "gr", "pl", "pr", "sh", "st", "tr", "th")  # fmt: skip
_NUCLEI = ("a", "e", "i", "o", "u", "ai", "ea", "io", "ou")
_CODAS = ("", "n", "r", "s", "t", "l", "x", "nd", "st", "rk")

INSERT_SESSION = (
    "INSERT INTO sessions(id, title, harness, cwd, created_at, status, visibility) "
    "VALUES (?, ?, ?, NULL, ?, 'active', 'top-level')"
)
INSERT_ENTRY = (
    "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
    "semantic_schema_version, kind, payload, context_visibility, created_at, stamp) "
    "VALUES (?, ?, ?, ?, 2, ?, ?, 'context', ?, NULL)"
)
# An upsert: a session row already made its head row (migration session_listing).
INSERT_HEAD = (
    "INSERT INTO session_heads(session_id, active_entry_id, updated_at) VALUES (?, ?, ?) "
    "ON CONFLICT(session_id) DO UPDATE SET active_entry_id = excluded.active_entry_id, "
    "updated_at = excluded.updated_at"
)


class Lexicon:
    """A Zipf-distributed vocabulary: ~100 common English and code words, then
    `size` pronounceable made-up words, so a big index has a realistic long tail."""

    def __init__(self, rng: random.Random, size: int = 20_000) -> None:
        made: dict[str, None] = {}
        while len(made) < size:
            syllables = rng.choice((2, 2, 3))
            made[
                "".join(
                    rng.choice(_ONSETS) + rng.choice(_NUCLEI) + rng.choice(_CODAS)
                    for _ in range(syllables)
                )
            ] = None
        self.words = list(dict.fromkeys(_COMMON)) + list(made)
        weights = [1.0 / (rank + 2) ** 1.05 for rank in range(len(self.words))]
        total = 0.0
        self.cum = []
        for w in weights:
            total += w
            self.cum.append(total)

    def sentence(self, rng: random.Random, low: int, high: int) -> str:
        return " ".join(rng.choices(self.words, cum_weights=self.cum, k=rng.randint(low, high)))


@dataclass(frozen=True, slots=True)
class ScaledBridge:
    copies: int
    chats: int
    entries: int
    sample_sessions: tuple[str, ...]  # 64 chats spread over the store (recall targets)


def _scaled_sessions(
    corpus: BridgeCorpus, copies: int, rng: random.Random, lexicon: Lexicon
) -> list[tuple[str, str, str, datetime, int, BridgeChat]]:
    """(id, title, harness, start, copy, chat) of every chat, oldest first, so
    session numbers grow with time as in a store written over months."""
    out = []
    for copy in range(copies):
        for chat in corpus.chats:
            if copy == 0:
                sid, title = chat.id, chat.title
            else:
                sid, title = f"{chat.id}.{copy}", f"{chat.title} {rng.choice(lexicon.words)} {copy}"
            out.append((sid, title, chat.harness, corpus.start(chat, 9 * copy), copy, chat))
    out.sort(key=lambda row: (row[3], row[4], row[0]))
    return out


def _index_objects() -> list[tuple[str, str]]:
    """(TABLE|TRIGGER, name) of everything the two search migrations create (their
    released statements), in creation order."""
    from sessionforest.store.sqlite.migrations import released

    pattern = re.compile(r"CREATE\s+(?:VIRTUAL\s+)?(TABLE|TRIGGER)\s+(\w+)")
    found = []
    for sql in (*released("session_search_index"), *released("session_gram_index")):
        if not sql.startswith("CREATE"):
            continue  # the backfill
        m = pattern.search(sql)
        if m is None:
            raise RuntimeError(f"cannot name the index object created by {sql[:60]!r}")
        found.append((m[1], m[2]))
    return found


TOOL = "tool.completed"


def tool_output(rng: random.Random, lexicon: Lexicon) -> str:
    """A made-up tool result of 0.5-3 KB: log lines in the corpus vocabulary, a
    traceback line naming a path and a snake_case function, an error line."""
    lines = [lexicon.sentence(rng, 4, 14) for _ in range(rng.randint(6, 40))]
    a, b, c = (lexicon.sentence(rng, 1, 1) for _ in range(3))
    lines.append(f'  File "src/{a}/{b}.py", line {rng.randint(1, 900)}, in {b}_{c}')
    lines.append(f"{a.capitalize()}Error: {lexicon.sentence(rng, 3, 9)}")
    return "\n".join(lines)


def build_scaled_bridge(
    path: Path, corpus: BridgeCorpus, copies: int, seed: int = 17, tools: bool = False
) -> ScaledBridge:
    """A fresh store at `path` holding `copies` copies of the corpus (100 entries each).

    Copy 0 is the corpus exactly as the eval loads it (same ids, titles, keys
    and filler), so the 40 labelled queries keep their expected chats. Copy
    n >= 1 repeats every chat as a new chat (`<id>.<n>`, the title plus a
    made-up word and n) 9*n days earlier, with the same keys (topics recur)
    and filler that is half the eval's lines and half Zipf sentences of 6-30
    words from a 20,000-word lexicon, so common words stay common and the
    vocabulary has a long tail.

    The schema comes from `Forest.open`. The rows go in with raw executemany
    in one transaction, with the index built the way the `session_search_index`
    migration indexes a store that already holds entries: its objects are
    dropped, the rows written, then the search migrations' released statements
    (tables, backfill, triggers) run in the same transaction. Indexing 1M rows
    through the per-row triggers instead costs ~3x longer; the index is the same.

    With `tools`, a quarter of the entries of copies n >= 1 (the filler of every
    fourth one) are tool results instead (`tool_output`, 0.5-3 KB each); their
    tool field, like any store's from before 0026_search_tool_text, is left to
    the first catch-up (`search_tool_pending`), which the caller may time.
    """
    from sessionforest.store.sqlite.migrations import released

    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    Forest.open(path).close()
    rng = random.Random(seed)
    lexicon = Lexicon(rng)
    pick = EvalFiller(corpus.filler)
    # Copy 0's filler must come from the eval's generator in corpus order.
    eval_entries = {chat.id: bridge_entries(corpus, chat, pick) for chat in corpus.chats}
    sessions = _scaled_sessions(corpus, copies, rng, lexicon)
    heads: list[tuple[str, str, str]] = []
    count = 0

    def rows() -> Iterator[tuple[Any, ...]]:
        nonlocal count
        for sid, _title, _harness, started, copy, chat in sessions:
            if copy == 0:
                entries = eval_entries[chat.id]
            else:
                entries = []
                for sequence in range(corpus.entries_per_chat):
                    text = key_at(chat.keys, sequence)
                    if text is None:
                        half = rng.random() < 0.5
                        text = rng.choice(corpus.filler) if half else lexicon.sentence(rng, 6, 30)
                    kind = USER if sequence % 2 == 0 else ASSISTANT
                    if tools and sequence % 4 == 3 and key_at(chat.keys, sequence) is None:
                        kind, text = TOOL, tool_output(rng, lexicon)
                    entries.append((kind, text, iso(started + timedelta(minutes=sequence))))
            parent = None
            ms = int(started.timestamp() * 1000)
            for sequence, (kind, text, at) in enumerate(entries, 1):
                count += 1
                # Time-ordered 26-character ids, like the library's.
                eid = f"{ms + sequence * 60_000:012x}{count:014x}"
                body = (
                    {"call_id": f"c{sequence}", "output": text} if kind == TOOL else message(text)
                )
                yield (eid, sid, parent, sequence, kind, orjson.dumps(body).decode(), at)
                parent = eid
            heads.append((sid, parent or "", entries[-1][2]))

    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA cache_size = -1048576")  # build-time only, not persisted
        conn.execute("BEGIN IMMEDIATE")
        for kind, name in reversed(_index_objects()):
            conn.execute(f"DROP {kind} {name}")
        conn.executemany(INSERT_SESSION, [(s[0], s[1], s[2], iso(s[3])) for s in sessions])
        conn.executemany(INSERT_ENTRY, rows())
        conn.executemany(INSERT_HEAD, heads)
        # Tables, backfill and triggers, as released.
        for sql in (*released("session_search_index"), *released("session_gram_index")):
            conn.execute(sql)
        for sql in released("search_large_payloads_outside_sql"):  # as Forest.open makes
            conn.execute(sql)
        # ...and as search_index_deferred moves them: onto the feed view (which,
        # with search_pending, is still there). The backfill indexed every row,
        # so nothing is pending.
        for sql in released("search_index_deferred"):
            if sql.startswith("DROP TRIGGER") or "ON search_feed" in sql:
                conn.execute(sql)
        conn.execute("DELETE FROM search_pending")
        # ...and as search_tool_text rebuilds the word index with its tool field
        # (search_tool_pending, made by Forest.open, is made again by it).
        conn.execute("DROP TABLE search_tool_pending")
        for sql in released("search_tool_text"):
            conn.execute(sql)
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    step = max(1, len(sessions) // 64)
    return ScaledBridge(
        copies=copies,
        chats=len(sessions),
        entries=count,
        sample_sessions=tuple(s[0] for s in sessions[::step])[:64],
    )


# --- LoCoMo -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LocomoChat:
    sample_id: str
    number: int
    date: datetime
    turns: tuple[tuple[str, str], ...]  # (kind, text)

    @property
    def session_id(self) -> str:
        return locomo_session_id(self.sample_id, self.number)

    @property
    def title(self) -> str:
        return f"{self.sample_id} session {self.number}"


@dataclass(frozen=True, slots=True)
class LocomoQuestion:
    sample_id: str
    question: str
    category: int
    gold: frozenset[str]  # session ids of the chats holding the evidence


@dataclass(frozen=True, slots=True)
class Locomo:
    chats: tuple[LocomoChat, ...]
    questions: tuple[LocomoQuestion, ...]
    skipped_questions: int  # no evidence that names a stored session
    now: datetime  # a day after the last session


_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})")
_MONTH_NAMES = """january february march april may june july august september october
november december"""
_MONTHS = {m: i for i, m in enumerate(_MONTH_NAMES.split(), 1)}
_EVIDENCE = re.compile(r"D:?(\d+):\d+")


def parse_locomo_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> 2023-05-08T13:56Z (LoCoMo dates carry no zone: UTC)."""
    m = _DATE.search(text)
    if m is None:
        raise ValueError(f"not a LoCoMo date: {text!r}")
    hour, minute, half, day, month, year = m.groups()
    h = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    return datetime(int(year), _MONTHS[month.lower()], int(day), h, int(minute), tzinfo=UTC)


def locomo_session_id(sample_id: str, number: int) -> str:
    return f"{sample_id}-s{number}"


def _turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn.get('text', '')}".strip()
    caption = turn.get("blip_caption")
    return f"{text} [image: {caption}]" if caption else text


def load_locomo(path: Path = LOCOMO_PATH) -> Locomo:
    raw = json.loads(path.read_text(encoding="utf-8"))
    chats: list[LocomoChat] = []
    questions: list[LocomoQuestion] = []
    skipped = 0
    for sample in raw:
        sample_id = sample["sample_id"]
        conversation = sample["conversation"]
        speaker_a = conversation["speaker_a"]
        numbers = sorted(
            int(key.split("_")[1])
            for key, value in conversation.items()
            if re.fullmatch(r"session_\d+", key) and isinstance(value, list) and value
        )
        for n in numbers:
            turns = tuple(
                (USER if turn["speaker"] == speaker_a else ASSISTANT, _turn_text(turn))
                for turn in conversation[f"session_{n}"]
            )
            date = parse_locomo_date(conversation[f"session_{n}_date_time"])
            chats.append(LocomoChat(sample_id, n, date, turns))
        stored = set(numbers)
        for qa in sample["qa"]:
            sessions = {int(m) for ev in qa.get("evidence", []) for m in _EVIDENCE.findall(str(ev))}
            gold = frozenset(locomo_session_id(sample_id, n) for n in sessions if n in stored)
            if not gold:
                skipped += 1
                continue
            questions.append(LocomoQuestion(sample_id, qa["question"], int(qa["category"]), gold))
    last = max(chat.date for chat in chats)
    return Locomo(tuple(chats), tuple(questions), skipped, last + timedelta(days=1))


def store_locomo(forest: Forest, corpus: Locomo) -> int:
    """Every session as a chat through the public API, one turn a minute; returns entries."""
    written = 0
    for chat in corpus.chats:
        sid = forest.create_session(
            chat.title, "locomo", session_id=chat.session_id, created_at=iso(chat.date)
        )
        items = [
            (kind, message(text), iso(chat.date + timedelta(minutes=i)))
            for i, (kind, text) in enumerate(chat.turns)
        ]
        for kind, payload, at in items:
            forest.append(sid, kind, payload, created_at=at, stamp=None)
        written += len(items)
    return written


# --- near-duplicate follow-ups (the gate's hard case) -----------------------------------
#
# Real histories hold follow-ups: a newer chat that takes a topic up again and repeats
# its words, often more of them, beside the original. Each variant below adds one
# follow-up per original chat, newer than it, holding the original's words and more
# occurrences of them; the labels do not change (a query's gold stays the chat it was
# written about), so a gate confident about the follow-up is confidently wrong.


def followup_id(session_id: str) -> str:
    return f"{session_id}.followup"


# How much longer ago than its follow-up an original started, in the Bridge variants:
# a follow-up may come any time later (the older chat idle 2x to 16x as long).
FOLLOWUP_AGES = (2, 4, 16)


def bridge_with_followups(corpus: BridgeCorpus, ago: int) -> BridgeCorpus:
    """The Bridge corpus plus a follow-up of every labelled target: same title and
    harness, keys = the target's keys and its first key once more (the topic
    restated, every word kept, some twice), started `1/ago` as long ago as the
    target. The follow-ups come after the original chats, so the filler the eval
    draws for those is unchanged."""
    targets = {q.expect for q in corpus.queries}
    extra = tuple(
        BridgeChat(
            followup_id(chat.id),
            chat.title,
            chat.harness,
            chat.days_ago // ago,
            (*chat.keys, chat.keys[0]),
        )
        for chat in corpus.chats
        if chat.id in targets
    )
    return BridgeCorpus(
        corpus.now, corpus.entries_per_chat, corpus.filler, corpus.chats + extra, corpus.queries
    )


def locomo_with_followups(corpus: Locomo) -> Locomo:
    """LoCoMo plus a follow-up of every session that holds a question's evidence: a new
    chat of the same conversation holding the session's turns and then their first
    half again, dated (in turn) half-way to the next session or half a day after the
    conversation's last one (a follow-up soon after, or long after)."""
    gold = {s for q in corpus.questions for s in q.gold}
    by_sample: dict[str, list[LocomoChat]] = {}
    for chat in corpus.chats:
        by_sample.setdefault(chat.sample_id, []).append(chat)
    extra: list[LocomoChat] = []
    for chats in by_sample.values():
        ordered = sorted(chats, key=lambda c: c.date)
        last = ordered[-1].date + timedelta(hours=12)
        for i, chat in enumerate(ordered):
            if chat.session_id not in gold:
                continue
            later = ordered[i + 1].date if i + 1 < len(ordered) else chat.date + timedelta(days=1)
            at = chat.date + (later - chat.date) / 2 if len(extra) % 2 == 0 else last
            extra.append(
                LocomoChat(
                    chat.sample_id,
                    chat.number + 1000,  # its own session id and title
                    at,
                    chat.turns + chat.turns[: max(len(chat.turns) // 2, 1)],
                )
            )
    return Locomo(
        corpus.chats + tuple(extra), corpus.questions, corpus.skipped_questions, corpus.now
    )
