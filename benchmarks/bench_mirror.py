"""The live mirror: how soon a written line is found, what a new turn costs, what idling costs.

- Line written -> found: a user line with a word seen nowhere else is appended
  to a Claude Code transcript, and a search (`search_chats`, in this process)
  is repeated every few ms until it lists the chat; p50/p99 over many lines.
  Through a running `forest watch` process, and through the hook (the
  `forest hook claude-code` process Claude Code starts when a turn ends, run
  here the way Claude Code runs it: JSON on stdin, once per line).
- One new turn at the end of a large transcript: `import_followed` of the last
  two lines appended to a 100 MB file, against the same at the end of a 1 MB
  file (the floor): proportional to the new bytes means the same figure.
- Idle: a `forest watch` process following 5,000 transcript files, once it
  has caught up, for IDLE_SECONDS: CPU time used and how often its threads
  woke (context switches), against the same process with nothing to watch.
- First catch-up of a large existing tree: `forest watch` from its start until
  every file's position is stored, against `forest import claude-code` of the
  same tree (the floor), each into a fresh store.
- The semantic leg behind imports: `forest import claude-code` of a tree with
  the `[semantic]` extra's leg on against the same with FOREST_SEMANTIC=off
  (the floor), then `forest status --json` of the "on" store: how many entries
  still wait for vectors when the import returns.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

import harness
from harness import Row, Section
from sessionforest import Forest
from sessionforest.errors import ForestError

NAME = "mirror"
TARGET_P99 = 1.0  # seconds from a line written to a search that finds it
FOREST = [sys.executable, "-m", "sessionforest.cli.main"]
IDLE_SECONDS = 30
POLL = 0.005  # seconds between searches while waiting for a line


def _sizes(quick: bool) -> dict[str, int]:
    if quick:
        return {"lines": 15, "hook_lines": 6, "big_mb": 10, "idle_files": 500, "tree_files": 60,
                "semantic_files": 20}  # fmt: skip
    return {"lines": 60, "hook_lines": 25, "big_mb": 100, "idle_files": 5000, "tree_files": 600,
            "semantic_files": 100}  # fmt: skip


# --- transcripts -------------------------------------------------------------------------


def record(session: str, n: int, text: str) -> bytes:
    """Claude Code's record `n` of `session` (user lines even, assistant odd), the child
    of record n - 1."""
    user = n % 2 == 0
    message: dict[str, Any] = (
        {"role": "user", "content": text}
        if user
        else {"id": f"msg_{session}_{n}", "type": "message", "role": "assistant",
              "model": "claude-x", "content": [{"type": "text", "text": text}]}
    )  # fmt: skip
    body = {
        "type": "user" if user else "assistant",
        "uuid": f"{session}-{n}",
        "parentUuid": f"{session}-{n - 1}" if n else None,
        "sessionId": session,
        "timestamp": f"2026-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
        "cwd": "/tmp/project",
        "message": message,
    }
    return orjson.dumps(body) + b"\n"


def _filler(n: int, size: int) -> str:
    words = [f"w{(n * 31 + k) % 4999}" for k in range(size // 6 + 1)]
    return " ".join(words)[:size]


def write_transcript(path: Path, session: str, records: int, size: int = 300) -> int:
    """A transcript of `records` records of about `size` bytes of text; returns the next n."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        for n in range(records):
            out.write(record(session, n, _filler(n, size)))
    return records


def write_bytes(path: Path, session: str, megabytes: int, size: int = 2000) -> int:
    """A transcript of about `megabytes` MB; returns the next record number."""
    path.parent.mkdir(parents=True, exist_ok=True)
    n, written = 0, 0
    with path.open("wb") as out:
        while written < megabytes * 1_000_000:
            line = record(session, n, _filler(n, size))
            out.write(line)
            written += len(line)
            n += 1
    return n


# --- processes -----------------------------------------------------------------------------


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    env["XDG_STATE_HOME"] = str(home / ".state")
    env.pop("FOREST_DB", None)
    return env


def _watch(db: Path, home: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*FOREST, "--db", str(db), "watch", *args],
        env=_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _followed(db: Path) -> dict[str, int]:
    try:
        with Forest.open(db, readonly=True) as forest:
            return {r.path: r.offset for r in forest.followed_sources()}
    except ForestError:
        return {}  # not there yet, or being migrated as the watcher starts


def _wait(done: Callable[[], bool], deadline: float = 1800.0) -> None:
    end = time.monotonic() + deadline
    while not done():
        if time.monotonic() > end:
            raise RuntimeError("the mirror did not get there in time")
        time.sleep(0.05)


def _caught_up(db: Path, files: list[Path]) -> Callable[[], bool]:
    sizes = {str(p.resolve()): p.stat().st_size for p in files}

    def done() -> bool:
        kept = _followed(db)
        return all(kept.get(path) == size for path, size in sizes.items())

    return done


def _cpu(pid: int) -> tuple[float, int]:
    """(CPU seconds, context switches of all threads) of process `pid` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    seconds = (int(fields[11]) + int(fields[12])) / ticks
    switches = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        for line in (task / "status").read_text().splitlines():
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                switches += int(line.split()[1])
    return seconds, switches


# --- line written -> found -------------------------------------------------------------


def _found_after(forest: Forest, word: str, written: float, deadline: float = 30.0) -> float:
    while True:
        if forest.search_chats(word, limit=1).hits:
            return time.monotonic() - written
        if time.monotonic() - written > deadline:
            raise RuntimeError(f"{word} was never found")
        time.sleep(POLL)


def _latency_watcher(work: Path, lines: int) -> list[float]:
    home = work / "home-watch"
    transcript = home / ".claude" / "projects" / "p" / "live.jsonl"
    n = write_transcript(transcript, "live", 200)
    db = work / "mirror-watch.db"
    harness.remove_db(db)
    proc = _watch(db, home)
    found = []
    try:
        _wait(_caught_up(db, [transcript]))
        with Forest.open(db) as forest:
            for k in range(lines):
                word = f"zqlive{k}x"
                line = record("live", n, f"{word} {_filler(n, 200)}")
                with transcript.open("ab") as out:
                    written = time.monotonic()
                    out.write(line)
                found.append(_found_after(forest, word, written))
                n += 1
                time.sleep(0.1 + (k % 5) * 0.05)  # an agent's lines come spaced
    finally:
        _stop(proc)
        harness.remove_db(db)
    return found


def _latency_hook(work: Path, lines: int) -> list[float]:
    home = work / "home-hook"
    transcript = home / ".claude" / "projects" / "p" / "hooked.jsonl"
    n = write_transcript(transcript, "hooked", 200)
    db = work / "mirror-hook.db"
    harness.remove_db(db)
    env = _env(home)

    def hook() -> None:
        body = {"session_id": "hooked", "transcript_path": str(transcript),
                "hook_event_name": "Stop", "cwd": str(transcript.parent)}  # fmt: skip
        subprocess.run(
            [*FOREST, "--db", str(db), "hook", "claude-code"],
            input=orjson.dumps(body), env=env, capture_output=True, check=True, timeout=120,
        )  # fmt: skip

    found = []
    try:
        hook()  # the first turn of the session: the store made, the history imported
        with Forest.open(db) as forest:
            for k in range(lines):
                word = f"zqhook{k}x"
                with transcript.open("ab") as out:
                    written = time.monotonic()
                    out.write(record("hooked", n, f"{word} {_filler(n, 200)}"))
                hook()  # Claude Code runs it as the turn ends
                found.append(_found_after(forest, word, written))
                n += 1
    finally:
        harness.remove_db(db)
    return found


# --- a new turn at the end of a large transcript ------------------------------------------


def _turn_cost(work: Path, megabytes: int, turns: int = 7) -> tuple[list[float], int, int]:
    """Seconds of `import_followed` for each of `turns` new turns (two records) appended to
    a transcript of `megabytes` MB, after its first import; (times, file bytes, turn bytes)."""
    transcript = work / f"big-{megabytes}" / "projects" / "p" / f"big{megabytes}.jsonl"
    n = write_bytes(transcript, f"big{megabytes}", megabytes)
    db = work / f"mirror-big-{megabytes}.db"
    harness.remove_db(db)
    times, turn_bytes = [], 0
    try:
        with Forest.open(db) as forest:
            forest.import_followed("claude-code", transcript)
            for _ in range(turns):
                lines = record(f"big{megabytes}", n, _filler(n, 400)) + record(
                    f"big{megabytes}", n + 1, _filler(n + 1, 400)
                )
                turn_bytes = len(lines)
                with transcript.open("ab") as out:
                    out.write(lines)
                start = time.perf_counter()
                done = forest.import_followed("claude-code", transcript)
                times.append(time.perf_counter() - start)
                assert done.report.entries == 2, done.report.summary()
                n += 2
        size = transcript.stat().st_size
    finally:
        harness.remove_db(db)
        transcript.unlink()
    return times, size, turn_bytes


# --- idle and first catch-up ---------------------------------------------------------------


def _tree(root: Path, files: int, records: int) -> list[Path]:
    made = []
    for k in range(files):
        path = root / ".claude" / "projects" / f"project-{k % 100:03d}" / f"s{k:05d}.jsonl"
        write_transcript(path, f"t{k}", records)
        made.append(path)
    return made


def _idle(work: Path, files: int) -> tuple[tuple[float, int], tuple[float, int]]:
    """((CPU s, wakeups) of a watcher of `files` files, (same) of one with none), each over
    IDLE_SECONDS once it has caught up."""
    results = []
    for count in (files, 0):
        home = work / f"home-idle-{count}"
        made = _tree(home, count, 2)
        (home / ".claude" / "projects").mkdir(parents=True, exist_ok=True)
        db = work / f"mirror-idle-{count}.db"
        harness.remove_db(db)
        proc = _watch(db, home)
        try:
            _wait(_caught_up(db, made))
            time.sleep(2)  # the second catch-up after the watch is set up
            before = _cpu(proc.pid)
            time.sleep(IDLE_SECONDS)
            after = _cpu(proc.pid)
            results.append((after[0] - before[0], after[1] - before[1]))
        finally:
            _stop(proc)
            harness.remove_db(db)
    return results[0], results[1]


def _first_catch_up(work: Path, files: int) -> tuple[float, float, int]:
    """(watch seconds, import seconds, entries) for a fresh store of the same tree."""
    home = work / "home-tree"
    made = _tree(home, files, 160)
    root = home / ".claude" / "projects"
    times: dict[str, list[float]] = {"watch": [], "import": []}

    def watch_side() -> None:
        db = work / "mirror-tree-watch.db"
        harness.remove_db(db)
        start = time.monotonic()
        proc = _watch(db, home)
        try:
            _wait(_caught_up(db, made))
            times["watch"].append(time.monotonic() - start)
        finally:
            _stop(proc)
            harness.remove_db(db)

    def import_side() -> None:
        db = work / "mirror-tree-import.db"
        harness.remove_db(db)
        start = time.monotonic()
        subprocess.run(
            [*FOREST, "--db", str(db), "import", "claude-code", str(root)],
            env=_env(home), capture_output=True, check=True, timeout=1800,
        )  # fmt: skip
        times["import"].append(time.monotonic() - start)
        harness.remove_db(db)

    harness.interleaved(3, {"watch": watch_side, "import": import_side})
    return harness.median(times["watch"]), harness.median(times["import"]), files * 160


# --- the semantic leg behind imports ---------------------------------------------------------


def _semantic_import(work: Path, files: int) -> tuple[float, float, int, int | None]:
    """(seconds with the leg on, seconds with it off, entries, entries waiting for vectors
    when the "on" import returned) for `forest import claude-code` of a fresh tree."""
    home = work / "home-semantic"
    _tree(home, files, 160)
    root = home / ".claude" / "projects"
    times: dict[str, list[float]] = {"on": [], "off": []}
    waiting: list[int | None] = []

    def side(leg: str) -> Callable[[], None]:
        def go() -> None:
            db = work / f"mirror-semantic-{leg}.db"
            harness.remove_db(db)
            env = _env(home)
            env.pop("FOREST_SEMANTIC", None)
            if leg == "off":
                env["FOREST_SEMANTIC"] = "off"
            start = time.monotonic()
            subprocess.run(
                [*FOREST, "--db", str(db), "import", "claude-code", str(root)],
                env=env, capture_output=True, check=True, timeout=1800,
            )  # fmt: skip
            times[leg].append(time.monotonic() - start)
            if leg == "on":
                status = subprocess.run(
                    [*FOREST, "--db", str(db), "status", "--json"],
                    env=env, capture_output=True, check=True, timeout=300,
                )  # fmt: skip
                waiting.append(orjson.loads(status.stdout)["backlog"]["vectors_pending"])
            harness.remove_db(db)

        return go

    harness.interleaved(3, {"on": side("on"), "off": side("off")})
    return harness.median(times["on"]), harness.median(times["off"]), files * 160, waiting[-1]


# --- the section ---------------------------------------------------------------------------


def _s(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def run(quick: bool) -> Section:
    sizes = _sizes(quick)
    work = harness.WORK / "mirror"
    work.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []

    watched = _latency_watcher(work, sizes["lines"])
    hooked = _latency_hook(work, sizes["hook_lines"])
    for label, found in (("`forest watch`", watched), ("the Claude Code hook", hooked)):
        p50, p99 = harness.percentile(found, 50), harness.percentile(found, 99)
        rows.append(
            Row(
                f"line written -> a search finds it, through {label}: p50 / p99 "
                f"({len(found)} lines)",
                f"{_s(p50)} / {_s(p99)}",
                "",
                "",
                f"p99 <= {TARGET_P99:g} s",
                harness.verdict(p99 <= TARGET_P99),
            )
        )

    small, small_size, turn = _turn_cost(work, 1)
    big, big_size, _ = _turn_cost(work, sizes["big_mb"])
    small_t, big_t = harness.median(small), harness.median(big)
    rows.append(
        Row(
            f"one new turn ({turn:,} bytes) imported at the end of a {big_size / 1e6:,.0f} MB "
            f"transcript vs a {small_size / 1e6:,.1f} MB one",
            _s(big_t),
            _s(small_t),
            harness.ratio(big_t / small_t),
            "<= 1.5x (the new bytes, not the file)",
            harness.verdict(big_t / small_t <= 1.5),
        )
    )

    (cpu, wakes), (cpu0, wakes0) = _idle(work, sizes["idle_files"])
    share = cpu / IDLE_SECONDS
    rows.append(
        Row(
            f"idle `forest watch` of {sizes['idle_files']:,} files: CPU over {IDLE_SECONDS} s "
            "(share of one core) vs one watching nothing",
            f"{cpu:.2f} s ({share:.2%})",
            f"{cpu0:.2f} s ({cpu0 / IDLE_SECONDS:.2%})",
            "",
            "<= 1% of a core",
            harness.verdict(share <= 0.01),
        )
    )
    rows.append(
        Row(
            "idle: thread wake-ups per second (context switches), with the files vs without",
            f"{wakes / IDLE_SECONDS:,.0f}/s",
            f"{wakes0 / IDLE_SECONDS:,.0f}/s",
            "",
            "info (no file is read or stat'ed while idle)",
        )
    )

    watch_s, import_s, entries = _first_catch_up(work, sizes["tree_files"])
    rows.append(
        Row(
            f"first catch-up of a tree of {sizes['tree_files']:,} transcripts "
            f"({entries:,} entries): `forest watch` vs `forest import claude-code`",
            f"{watch_s:,.1f} s ({entries / watch_s:,.0f} entries/s)",
            f"{import_s:,.1f} s ({entries / import_s:,.0f} entries/s)",
            harness.ratio(watch_s / import_s),
            "<= 1.25x (import speed)",
            harness.verdict(watch_s / import_s <= 1.25),
        )
    )
    on_s, off_s, sem_entries, waiting = _semantic_import(work, sizes["semantic_files"])
    rows.append(
        Row(
            f"`forest import claude-code` of {sem_entries:,} entries with the [semantic] leg on "
            "vs off (FOREST_SEMANTIC=off)",
            f"{on_s:,.1f} s ({sem_entries / on_s:,.0f} entries/s)",
            f"{off_s:,.1f} s ({sem_entries / off_s:,.0f} entries/s)",
            harness.ratio(on_s / off_s),
            "<= 1.25x (vectors behind the import)",
            harness.verdict(on_s / off_s <= 1.25),
        )
    )
    rows.append(
        Row(
            "entries waiting for vectors when that import returned (`forest status --json`)",
            "leg off" if waiting is None else f"{waiting:,} of {sem_entries:,}",
            "",
            "",
            "info (`forest watch`/`forest serve` embed them behind)",
        )
    )
    notes = [
        "Latency: each line is searched for every 5 ms from the moment it is written; the "
        "watcher is a real `forest watch` process (OS notifications through watchfiles, "
        "step 50 ms), the hook a real `forest hook claude-code` process per line (most of "
        "its time is the Python process starting and importing sessionforest).",
        "Idle: CPU is utime + stime of the watcher process from /proc; wake-ups are its "
        "threads' context switches. watchfiles' Rust side sleeps in steps of 50 ms between "
        "looks at the change set the kernel's notifications fill: that is the floor row's "
        "figure too, the same with 5,000 files as with none (no file is stat'ed or read "
        "while nothing changes).",
        "A new turn: the file's first import is not timed; each of the turns after it is "
        "`Forest.import_followed` of two appended records (a user line and a reply).",
        "Semantic leg: both sides are `forest import` processes (model load included on the "
        "leg's side); the import embeds nothing, its maintenance thread waits for the writes "
        "to pause and the import's close does not wait for it, so every entry is still "
        "waiting when it returns: `forest status` says how many, and `forest watch` or "
        "`forest serve` compute them behind. Both sides run on one loaded machine: the "
        "ratio is within its noise either way.",
    ]
    return Section(
        name=NAME,
        title="12. The live mirror (forest watch, the Claude Code hook)",
        summary=(
            "How soon a line written to a transcript is found by a search, through a "
            "running `forest watch` and through the Claude Code hook; what one new turn "
            "costs at the end of a large transcript; what an idle watcher of 5,000 files "
            "costs; and the first catch-up of a large tree against `forest import`."
        ),
        rows=rows,
        notes=notes,
    )
