"""Finding a coding-agent chat by what its user remembers: an error line, a command,
a file or function name, a library, a vague description of the task.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_coding_search.py [--json OUT]

The labelled set is `benchmarks/data/coding_queries.json`: queries written from
reading the real transcripts in ../shared/data (Claude Code, pi, Codex, Aider;
third-party test data, never part of the package), each with its gold chat(s)
named by source file and the importer's source id, and a note of where in the
transcript it stands. The transcripts are imported with the real importers
(`Forest.import_chats`) into a fresh SQLite store; every query is asked of
`search_chats` (limit 10) and scored at chat level: recall@1, recall@5, how
often the gate is confident and how often it is confident about a wrong chat,
overall and per kind.

Baseline, built in the same run over the same chats: a whole-chat Okapi BM25
(k1 1.2, b 0.75, written here: `rank_bm25` is not installed) with one document
per chat holding its title and every string of every stored entry payload
(conversation, tool calls and results alike), lower-cased `\\w+` words, the
query's words OR-ed. It sees more than the index does (every payload string,
unbounded), so it is an upper-bound-ish lexical reference, not a straw man.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness
import search_data
from harness import Row, Section
from sessionforest import Forest

NAME = "coding-search"
QUERIES = Path(__file__).resolve().parent / "data" / "coding_queries.json"
LIMIT = 10
R5_TARGET = 0.9
KINDS = ("error", "command", "file", "function", "library", "vague")

# (format, path under ../shared/data) of every transcript the set is written on.
SOURCES = (
    ("claude-code", "claude-code/real_projects"),
    ("claude-code", "claude-code/ai-sessions"),
    ("pi", "pi"),
    ("codex", "codex/ai-sessions/codex-pomodor-timer.jsonl"),
    ("aider", "aider/chat-history.md"),
)


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    query: str
    kind: str
    gold: tuple[tuple[str, str], ...]  # (source file under DATA, source id)
    note: str


def load_queries(path: Path = QUERIES) -> list[Query]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return [
        Query(
            q["id"],
            q["query"],
            q["kind"],
            tuple((g["source"], g["source_id"]) for g in q["gold"]),
            q["note"],
        )
        for q in raw["queries"]
    ]


def import_all(forest: Forest, data: Path = search_data.DATA) -> int:
    entries = 0
    for fmt, rel in SOURCES:
        entries += forest.import_chats(fmt, data / rel).entries
    return entries


def gold_sessions(
    forest: Forest, queries: Sequence[Query], data: Path
) -> dict[str, frozenset[str]]:
    """Each query's gold session ids. A Claude Code, pi or Codex chat is its source
    file and source id; an Aider run is its file and the run's start time (the
    importer's id is `<file>#<start>#<n>`)."""
    by_key: dict[tuple[str, str], set[str]] = defaultdict(set)
    for info in forest.sessions(include_hidden=True):
        source = info.source
        if source is None or source.path is None or source.id is None:
            continue
        try:
            rel = str(Path(source.path).resolve().relative_to(data.resolve()))
        except ValueError:
            continue
        by_key[(rel, source.id)].add(info.id)
        parts = source.id.split("#")
        if len(parts) == 3:  # aider: file#start#n
            by_key[(rel, parts[1])].add(info.id)
    out = {}
    for q in queries:
        found: set[str] = set()
        for key in q.gold:
            if key not in by_key:
                raise SystemExit(f"{q.id}: gold {key} is not an imported chat")
            found |= by_key[key]
        out[q.id] = frozenset(found)
    return out


# --- the baseline -----------------------------------------------------------------------

_WORD = re.compile(r"\w+")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


class WholeChatBM25:
    """Okapi BM25 over one document per chat (title and every payload string)."""

    K1, B = 1.2, 0.75

    def __init__(self, docs: dict[str, list[str]]) -> None:
        self.tf = {sid: Counter(ws) for sid, ws in docs.items()}
        self.length = {sid: len(ws) for sid, ws in docs.items()}
        self.avg = sum(self.length.values()) / max(len(docs), 1)
        df: Counter[str] = Counter()
        for tf in self.tf.values():
            df.update(tf.keys())
        n = len(docs)
        self.idf = {w: math.log(1 + (n - d + 0.5) / (d + 0.5)) for w, d in df.items()}

    def search(self, query: str, limit: int = LIMIT) -> list[str]:
        terms = list(dict.fromkeys(words(query)))
        scores: dict[str, float] = {}
        for sid, tf in self.tf.items():
            s = 0.0
            norm = self.K1 * (1 - self.B + self.B * self.length[sid] / self.avg)
            for t in terms:
                f = tf.get(t)
                if f:
                    s += self.idf[t] * f * (self.K1 + 1) / (f + norm)
            if s > 0:
                scores[sid] = s
        return sorted(scores, key=lambda sid: (-scores[sid], sid))[:limit]


def baseline_docs(forest: Forest) -> dict[str, list[str]]:
    docs = {}
    for info in forest.sessions(include_hidden=True):
        ws = words(info.title or "")
        for entry in forest.entries(info.id):
            for s in _strings(entry.payload):
                ws += words(s)
        docs[info.id] = ws
    return docs


# --- scoring ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    query: Query
    gold: frozenset[str]
    ranked: tuple[str, ...]
    confident: bool
    reason: str
    baseline: tuple[str, ...]

    def at(self, k: int, ranked: Sequence[str] | None = None) -> bool:
        return any(s in self.gold for s in (self.ranked if ranked is None else ranked)[:k])

    @property
    def confident_wrong(self) -> bool:
        return self.confident and not self.at(1)


def measure(path: Path) -> tuple[list[Outcome], dict[str, Any]]:
    path.parent.mkdir(parents=True, exist_ok=True)
    harness.remove_db(path)
    queries = load_queries()
    with harness.index_only():
        forest = Forest.open(path)
    try:
        t0 = time.perf_counter()
        entries = import_all(forest)
        imported = time.perf_counter() - t0
        chats = len(forest.sessions(include_hidden=True))
        gold = gold_sessions(forest, queries, search_data.DATA)
        bm25 = WholeChatBM25(baseline_docs(forest))
        out = []
        t0 = time.perf_counter()
        for q in queries:
            result = forest.search_chats(q.query, limit=LIMIT)
            out.append(
                Outcome(
                    q,
                    gold[q.id],
                    tuple(h.session_id for h in result.hits),
                    result.confident,
                    str(result.reason),
                    tuple(bm25.search(q.query)),
                )
            )
        searched = time.perf_counter() - t0
    finally:
        forest.close()
        harness.remove_db(path)
    facts = {"chats": chats, "entries": entries, "import_s": imported, "search_s": searched}
    return out, facts


def figures(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    n = len(outcomes)
    return {
        "n": n,
        "r1": sum(o.at(1) for o in outcomes),
        "r5": sum(o.at(5) for o in outcomes),
        "bm25_r1": sum(o.at(1, o.baseline) for o in outcomes),
        "bm25_r5": sum(o.at(5, o.baseline) for o in outcomes),
        "confident": sum(o.confident for o in outcomes),
        "wrong": sum(o.confident_wrong for o in outcomes),
    }


def _frac(k: int, n: int) -> str:
    return f"{k}/{n} ({k / n:.2f})" if n else "0/0"


def per_kind(outcomes: Sequence[Outcome]) -> dict[str, dict[str, Any]]:
    return {
        kind: figures([o for o in outcomes if kind == "all" or o.query.kind == kind])
        for kind in (*KINDS, "all")
    }


def before_figures(src: str) -> dict[str, dict[str, Any]]:
    """The same benchmark run on another source tree (`BENCH_BEFORE_SRC`), in a
    subprocess: its per-kind figures."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "kinds.json"
        env = {**os.environ, "PYTHONPATH": src}
        subprocess.run(
            [sys.executable, __file__, "--kinds", str(out), "--work", str(Path(tmp) / "b.db")],
            env=env,
            check=False,
            stdout=subprocess.DEVNULL,
        )
        loaded: dict[str, dict[str, Any]] = json.loads(out.read_text(encoding="utf-8"))
        return loaded


def table(
    outcomes: Sequence[Outcome], before: dict[str, dict[str, Any]] | None = None
) -> list[str]:
    head = "| kind | queries |"
    rule = "|---|---|"
    if before is not None:
        head += " before: find recall@1 | recall@5 | confident (wrong) |"
        rule += "---|---|---|"
    head += (
        " find recall@1 | find recall@5 | find confident (wrong) | whole-chat BM25 recall@1 |"
        " BM25 recall@5 |"
    )
    rule += "---|---|---|---|---|"
    lines = [head, rule]
    after = per_kind(outcomes)
    for kind, f in after.items():
        n = f["n"]
        label = "**all**" if kind == "all" else kind
        cells = [label, str(n)]
        if before is not None:
            b = before[kind]
            cells += [_frac(b["r1"], n), _frac(b["r5"], n), f"{b['confident']} ({b['wrong']})"]
        cells += [
            _frac(f["r1"], n),
            _frac(f["r5"], n),
            f"{f['confident']} ({f['wrong']})",
            _frac(f["bm25_r1"], n),
            _frac(f["bm25_r5"], n),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def misses(outcomes: Sequence[Outcome]) -> list[str]:
    lines = [
        "| query | kind | find rank of gold | BM25 rank of gold | gate |",
        "|---|---|---|---|---|",
    ]
    for o in outcomes:
        if o.at(5) and not o.confident_wrong:
            continue

        def rank(ranked: Sequence[str], o: Outcome = o) -> str:
            for i, s in enumerate(ranked, 1):
                if s in o.gold:
                    return str(i)
            return f"> {LIMIT}" if ranked else "no hits"

        gate = "confident, WRONG" if o.confident_wrong else o.reason
        q = o.query.query.replace("|", "\\|")
        lines.append(f"| `{q}` | {o.query.kind} | {rank(o.ranked)} | {rank(o.baseline)} | {gate} |")
    return lines


def run(quick: bool) -> Section:
    outcomes, facts = measure(harness.WORK / "coding-search.db")
    before_src = os.environ.get("BENCH_BEFORE_SRC")
    before = before_figures(before_src) if before_src else None
    f = figures(outcomes)
    n = f["n"]
    rows = [
        Row(
            "find recall@5",
            _frac(f["r5"], n),
            "",
            "",
            f">= {R5_TARGET} and >= BM25 ({f['bm25_r5'] / n:.2f})",
            harness.verdict(f["r5"] / n >= R5_TARGET and f["r5"] >= f["bm25_r5"]),
        ),
        Row("find recall@1", _frac(f["r1"], n), "", "", "info"),
        Row(
            "find confident but wrong",
            f"{f['wrong']} of {f['confident']} confident",
            "",
            "",
            "0",
            harness.verdict(not f["wrong"]),
        ),
    ]
    summary = "\n".join(
        [
            f"{n} labelled queries over {facts['chats']} imported chats "
            f"({facts['entries']} entries): per kind, next to a whole-chat BM25 of the "
            "same chats built in the same run.",
            "",
            *table(outcomes, before),
            "",
            "Queries whose gold chat is not in find's top 5, or that the gate answered wrongly:",
            "",
            *misses(outcomes),
        ]
    )
    notes = [
        "Reproduce: `PYTHONPATH=src .venv/bin/python benchmarks/bench_coding_search.py` "
        "(or `benchmarks/run.py --only coding-search`).",
        f"Import {facts['import_s']:.1f} s, {n} searches {facts['search_s']:.1f} s.",
        "Before: `BENCH_BEFORE_SRC=<tree>/src` runs the same benchmark on that source "
        "tree in a subprocess (e.g. `git worktree add --detach ../before <commit>`).",
    ]
    return Section(NAME, "Coding-agent search (labelled real transcripts)", summary, rows, notes)


def regressions() -> list[str]:
    """The older quality checks this work must not move (bench_search.py's quality
    half, without its latency stores): Bridge exact/time/vague recall@1 and the
    gate there, LoCoMo recall@1 next to its whole-chat BM25."""
    import bench_search

    corpus = search_data.load_bridge()
    path = harness.WORK / "coding-search-bridge.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    harness.remove_db(path)
    with harness.index_only():
        forest = Forest.open(path, clock=lambda: corpus.now)
    try:
        search_data.store_bridge(forest, corpus)
        outcomes = bench_search.bridge_quality(forest, corpus)
    finally:
        forest.close()
        harness.remove_db(path)
    lo = bench_search.locomo_quality(None)
    at1, at5, mrr = lo.t1[0].figures()
    b1, b5, _ = lo.bm25[0].figures()
    return [
        "Bridge recall@1 exact / vague / time: "
        + bench_search._per_class(outcomes, lambda o: o.at(1)),
        "Bridge recall@4 (bench_search's found) exact / vague / time: "
        + bench_search._per_class(outcomes, lambda o: o.at(4)),
        f"Bridge confident {sum(o.confident for o in outcomes)}/{len(outcomes)}, "
        f"wrong {sum(o.confident_wrong for o in outcomes)}",
        f"LoCoMo ({lo.questions} questions) recall@1 {at1:.3f}, recall@5 {at5:.3f}, "
        f"MRR {mrr:.3f}; whole-chat BM25 recall@1 {b1:.3f}, recall@5 {b5:.3f}; "
        f"confident {lo.confident}, wrong {lo.confident_wrong}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write each query's outcome here")
    parser.add_argument("--kinds", type=Path, help="write the per-kind figures here as JSON")
    parser.add_argument("--work", type=Path, default=harness.WORK / "coding-search.db")
    parser.add_argument(
        "--regressions",
        action="store_true",
        help="only the Bridge and LoCoMo quality checks of bench_search.py",
    )
    args = parser.parse_args(argv)
    if args.regressions:
        print("\n".join(regressions()))
        return 0
    outcomes, facts = measure(args.work)
    if args.kinds:
        args.kinds.write_text(json.dumps(per_kind(outcomes)), encoding="utf-8")
    print(json.dumps(facts))
    print("\n".join(table(outcomes)))
    print()
    print("\n".join(misses(outcomes)))
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {
                        "id": o.query.id,
                        "query": o.query.query,
                        "kind": o.query.kind,
                        "at1": o.at(1),
                        "at5": o.at(5),
                        "confident": o.confident,
                        "reason": o.reason,
                        "bm25_at5": o.at(5, o.baseline),
                    }
                    for o in outcomes
                ],
                indent=1,
            )
        )
    f = figures(outcomes)
    return 0 if f["r5"] / f["n"] >= R5_TARGET and f["r5"] >= f["bm25_r5"] and not f["wrong"] else 1


if __name__ == "__main__":
    sys.exit(main())
