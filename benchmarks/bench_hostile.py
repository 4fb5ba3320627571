"""`forest serve` under the hostile loads of issue 22, before and after its fixes.

    .venv/bin/python benchmarks/bench_hostile.py --before ../base/src [--quick] [--only CASE,...]
    BENCH_BEFORE_SRC=../base/src .venv/bin/python benchmarks/run.py --only hostile

Each case runs a real `forest serve` (or `forest find`, `forest serve --stdio`) as a
subprocess on loopback from a source tree given by PYTHONPATH: this checkout's `src`
("after") and, when given, an older checkout's (`git worktree add ../base 2a5f00a`, the
commit before the fixes: "before"). The client side uses only httpx and websockets, so
both trees meet the same attack. A case that cannot finish is stopped at its cap and
says so (for example "> 60 s").
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
from websockets.sync.client import connect as ws_connect

from harness import REPO, Section

NAME = "hostile"
AFTER = REPO / "src"
TOKEN = "hostile-bench-token-0123456789"  # 30 characters: accepted before and after
URL = re.compile(r"http://\S+")
BOOT = "import sys; from sessionforest.cli.main import main; sys.argv[0] = 'forest'; main()"


@dataclass(frozen=True, slots=True)
class Side:
    label: str  # "before" | "after"
    src: Path

    def env(self) -> dict[str, str]:
        return {**os.environ, "PYTHONPATH": str(self.src), "FOREST_LOG_LEVEL": "error"}

    def forest(self, *args: str, **kw: Any) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-c", BOOT, *args], env=self.env(), capture_output=True, **kw
        )

    def serve_options(self) -> str:
        return self.forest("serve", "--help").stdout.decode()


@dataclass(slots=True)
class Server:
    proc: subprocess.Popen[bytes]
    url: str

    @property
    def ws(self) -> str:
        return self.url.replace("http://", "ws://") + "/ws"

    def peak_rss_mib(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def reset_peak(self) -> None:
        """Start VmHWM again from the current RSS (Linux: clear_refs 5), so a peak read
        later is the measured request's, not the setup's."""
        Path(f"/proc/{self.proc.pid}/clear_refs").write_text("5")

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self, timeout: float = 30) -> float:
        """Seconds a SIGTERM took to end the process (killed at `timeout`: inf)."""
        if self.proc.poll() is not None:
            return 0.0
        started = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return float("inf")
        return time.monotonic() - started


@contextlib.contextmanager
def serving(side: Side, db: Path, *args: str) -> Iterator[Server]:
    proc = subprocess.Popen(
        [sys.executable, "-c", BOOT, "--db", str(db), "serve", "--port", "0", *args],
        env=side.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    found = URL.search(proc.stdout.readline().decode())
    if found is None:
        proc.kill()
        raise RuntimeError(f"{side.label}: forest serve did not start")
    server = Server(proc, found.group(0).rstrip(")").rstrip(";"))
    try:
        yield server
    finally:
        server.stop()
        proc.stdout.close()


def rpc(client: httpx.Client, url: str, method: str, params: Any = None, **kw: Any) -> Any:
    body = {"jsonrpc": "2.0", "method": method, "id": 1}
    if params is not None:
        body["params"] = params
    answer = client.post(url + "/rpc", json=body, **kw).json()
    if "error" in answer:
        raise RuntimeError(f"{method}: {answer['error']}")
    return answer["result"]


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def chat(http: httpx.Client, url: str, texts: list[str], title: str = "t") -> str:
    sid: str = rpc(http, url, "sessions/create", {"title": title})["id"]
    for value in texts:
        rpc(http, url, "sessions/append", [sid, "user.message", text(value)])
    return sid


def seconds(value: float) -> str:
    if value == float("inf"):
        return "never (killed)"
    return f"{value:.2f} s" if value >= 0.1 else f"{value * 1000:.1f} ms"


def mib(n: float) -> str:
    return f"{n / 2**20:,.1f} MiB" if n >= 2**20 else f"{n:,.0f} bytes"


# --- 1. search time and the square of a word's repetitions ---------------------------


def case_find(side: Side, work: Path, quick: bool) -> dict[str, str]:
    repeats = 10_000 if quick else 40_000
    db = work / f"find-{side.label}.db"
    with serving(side, db) as server, httpx.Client(timeout=60) as http:
        sid = chat(http, server.url, ["error " * repeats, "a short note about error"])
    out = {}
    for command in (["find", "error"], ["recall", sid, "error"]):
        started = time.monotonic()
        done = side.forest("--db", str(db), *command, timeout=600)
        took = time.monotonic() - started
        assert done.returncode == 0, done.stderr.decode()[-500:]
        out[f'`forest {command[0]} error`, one message of {repeats:,} × "error"'] = seconds(took)
    return out


# --- 2. connections exhausted before authentication ----------------------------------


def _sessions_list(url: str, token: str | None = None) -> tuple[int, float]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    started = time.monotonic()
    try:
        answer = httpx.post(
            url + "/rpc",
            json={"jsonrpc": "2.0", "method": "sessions/list", "id": 1},
            headers=headers,
            timeout=30,
        )
        return answer.status_code, time.monotonic() - started
    except httpx.HTTPError:
        return 0, time.monotonic() - started


def case_idle_sockets(side: Side, work: Path, quick: bool) -> dict[str, str]:
    count = 300  # past uvicorn's 64 and this server's 256
    with serving(side, work / f"idle-{side.label}.db") as server:
        host, port = server.url.removeprefix("http://").rsplit(":", 1)
        idle = [socket.create_connection((host, int(port))) for _ in range(count)]
        try:
            time.sleep(0.5)
            status, took = _sessions_list(server.url)
        finally:
            for sock in idle:
                sock.close()
    return {f"a client's `sessions/list` while {count} idle TCP connections are open": (
        f"HTTP {status} in {seconds(took)}" if status else f"no answer ({seconds(took)})"
    )}  # fmt: skip


def case_silent_websockets(side: Side, work: Path, quick: bool) -> dict[str, str]:
    count = 40  # past the 32 WebSockets a server admits
    with serving(side, work / f"ws-{side.label}.db", "--token", TOKEN) as server:
        silent = [ws_connect(server.ws, open_timeout=10) for _ in range(count)]
        try:
            time.sleep(0.5)
            started = time.monotonic()
            try:
                auth = {"Authorization": f"Bearer {TOKEN}"}
                with ws_connect(server.ws, open_timeout=10, additional_headers=auth) as ws:
                    ws.send(orjson.dumps({"jsonrpc": "2.0", "method": "sessions/list", "id": 1}))
                    answer = orjson.loads(ws.recv(timeout=15))
                outcome = "answered" if "result" in answer else f"error {answer.get('error')}"
            except Exception as exc:
                outcome = f"refused ({type(exc).__name__}: {str(exc)[:60]})"
            took = time.monotonic() - started
        finally:
            for ws in silent:
                with contextlib.suppress(Exception):
                    ws.close()
    return {f"an authenticated WebSocket's `sessions/list` while {count} never authenticate": (
        f"{outcome} in {seconds(took)}"
    )}  # fmt: skip


# --- 5. response amplification --------------------------------------------------------


def case_amplification(side: Side, work: Path, quick: bool) -> dict[str, str]:
    entries, size = (10, 100_000) if quick else (50, 100_000)  # a 1 MB or 5 MB chat
    with serving(side, work / f"amp-{side.label}.db") as server, httpx.Client(timeout=600) as http:
        sid = chat(http, server.url, ["word " * (size // 5)] * entries)
        base_rss = server.rss_mib()
        server.reset_peak()
        batch = orjson.dumps([
            {"jsonrpc": "2.0", "method": "sessions/log", "params": {"session_id": sid}, "id": i}
            for i in range(100)
        ])  # fmt: skip
        started = time.monotonic()
        received = 0
        with http.stream("POST", server.url + "/rpc", content=batch,
                         headers={"content-type": "application/json"}) as answer:  # fmt: skip
            for chunk in answer.iter_bytes():
                received += len(chunk)
        took = time.monotonic() - started
        peak = server.peak_rss_mib()
    megabytes = entries * size / 1e6
    label = f"one {len(batch) / 1024:.0f} KB batch of 100 `sessions/log`, {megabytes:.0f} MB chat"
    return {
        f"{label}: answer size": mib(received),
        f"{label}: server peak RSS during it": f"{peak:,.0f} MiB (before it: {base_rss:,.0f} MiB)",
        f"{label}: time": seconds(took),
    }


def case_one_big_read(side: Side, work: Path, quick: bool) -> dict[str, str]:
    """One read of a whole big chat: refused past the answer cap, but built first."""
    entries = 100 if quick else 1_000  # of 100 KB: a 10 MB or 100 MB chat
    with serving(side, work / f"big-{side.label}.db") as server, httpx.Client(timeout=600) as http:
        sid = chat(http, server.url, ["word " * 20_000] * entries)
        base_rss = server.rss_mib()
        server.reset_peak()
        started = time.monotonic()
        body = {"jsonrpc": "2.0", "method": "sessions/log", "id": 1,
                "params": {"session_id": sid, "limit": 1_000_000}}  # fmt: skip
        received = 0
        with http.stream("POST", server.url + "/rpc", json=body) as answer:
            head = b""
            for chunk in answer.iter_bytes():
                received += len(chunk)
                head = head or chunk[:300]
        took = time.monotonic() - started
        peak = server.peak_rss_mib()
    outcome = "TooLarge" if b"TooLarge" in head else f"answered (HTTP {answer.status_code})"
    label = f"one `sessions/log` (limit 1,000,000) of a {entries * 100 / 1000:.0f} MB chat"
    return {
        f"{label}: outcome, answer size": f"{outcome}, {mib(received)} in {seconds(took)}",
        f"{label}: server peak RSS during it": f"{peak:,.0f} MiB (before it: {base_rss:,.0f} MiB)",
    }


# --- 6. subscriptions -------------------------------------------------------------------


def case_subscriptions(side: Side, work: Path, quick: bool) -> dict[str, str]:
    sockets, per_socket = (4, 2_000) if quick else (31, 9_900)
    with serving(side, work / f"subs-{side.label}.db") as server, httpx.Client(timeout=120) as http:
        sid = chat(http, server.url, ["hello"])
        stop = threading.Event()
        accepted = [0] * sockets

        def hold(i: int, ready: threading.Barrier) -> None:
            with ws_connect(server.ws, open_timeout=30, max_size=None) as ws:
                for start in range(0, per_socket, 100):
                    ws.send(orjson.dumps([
                        {"jsonrpc": "2.0", "method": "sessions/subscribe",
                         "params": {"session_id": sid}, "id": n}
                        for n in range(start, min(start + 100, per_socket))
                    ]))  # fmt: skip
                    answers = orjson.loads(ws.recv(timeout=60))
                    accepted[i] += sum("result" in a for a in answers)
                ready.wait()
                while not stop.is_set():  # read what is pushed, as a client would
                    with contextlib.suppress(TimeoutError):
                        ws.recv(timeout=0.2)

        ready = threading.Barrier(sockets + 1)
        threads = [
            threading.Thread(target=hold, args=(i, ready), daemon=True) for i in range(sockets)
        ]
        for thread in threads:
            thread.start()
        ready.wait(timeout=600)
        # The event loop's stall: the slowest /healthz while one append fans out.
        gaps: list[float] = []
        probing = threading.Event()

        def probe() -> None:
            with httpx.Client(timeout=60) as probe_http:
                while not probing.is_set():
                    t = time.monotonic()
                    probe_http.get(server.url + "/healthz")
                    gaps.append(time.monotonic() - t)
                    time.sleep(0.01)

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        time.sleep(0.3)
        started = time.monotonic()
        rpc(http, server.url, "sessions/append", [sid, "user.message", text("one more")])
        append = time.monotonic() - started
        time.sleep(3)
        probing.set()
        prober.join()
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    label = f"{sockets} sockets × {per_socket:,} subscribes"
    return {
        f"{label}: subscriptions held": f"{sum(accepted):,}",
        f"{label}: one append's answer / slowest /healthz around it": (
            f"{seconds(append)} / {seconds(max(gaps))}"
        ),
    }


# --- 7. stdio framing -------------------------------------------------------------------


def case_stdio(side: Side, work: Path, quick: bool) -> dict[str, str]:
    db = work / f"stdio-{side.label}.db"
    side.forest("--db", str(db), "new", "--title", "t")
    listing = b'{"jsonrpc":"2.0","method":"sessions/list","id":2}\n'
    out = {}
    for name, data in (
        ("a 33 MiB line, then a request", b'"' + b"x" * (33 * 2**20) + b'"\n' + listing),
        ("a request, then an unterminated 33 MiB last line", listing + b"x" * (33 * 2**20)),
    ):
        proc = side.forest("--db", str(db), "serve", "--stdio", input=data, timeout=120)
        answered = proc.stdout.count(b'"id":2')
        tail = proc.stderr.decode(errors="replace").strip().splitlines()
        why = f"; stderr ends {tail[-1][:50]!r}" if proc.returncode and tail else ""
        out[f"`forest serve --stdio`: {name}"] = (
            f"exit {proc.returncode}, request {'answered' if answered else 'lost'}{why}"
        )
    return out


# --- F. SIGTERM while the readers are busy ------------------------------------------


def case_sigterm(side: Side, work: Path, quick: bool) -> dict[str, str]:
    repeats, cap = (20_000, 30.0) if quick else (80_000, 60.0)
    with serving(side, work / f"term-{side.label}.db") as server:
        with httpx.Client(timeout=60) as http:
            chat(http, server.url, ["error " * repeats])
        body = {"jsonrpc": "2.0", "method": "sessions/search_chats",
                "params": {"query": "error"}, "id": 1}  # fmt: skip

        def find() -> None:
            with contextlib.suppress(httpx.HTTPError):
                httpx.post(server.url + "/rpc", json=body, timeout=cap * 3)

        for _ in range(6):  # every reader thread, and a queue behind them
            threading.Thread(target=find, daemon=True).start()
        time.sleep(5)  # they are running (a loaded machine takes a while to start them)
        took = server.stop(timeout=cap)
    return {f"SIGTERM while 6 finds run on a {repeats:,}-repeat entry (cap {cap:.0f} s)": (
        seconds(took)
    )}  # fmt: skip


# --- H. wrong tokens ------------------------------------------------------------------


def case_wrong_tokens(side: Side, work: Path, quick: bool) -> dict[str, str]:
    window, clients = 5.0, 8
    counts = {"tried": 0, "throttled": 0}
    lock = threading.Lock()
    with serving(side, work / f"tok-{side.label}.db", "--token", TOKEN) as server:
        deadline = time.monotonic() + window

        def guess(n: int) -> None:
            with httpx.Client(timeout=30) as http:
                i = 0
                while time.monotonic() < deadline:
                    i += 1
                    answer = http.post(
                        server.url + "/rpc",
                        json={"jsonrpc": "2.0", "method": "sessions/list", "id": 1},
                        headers={"Authorization": f"Bearer wrong-{n}-{i:020d}"},
                    )
                    with lock:
                        counts["tried" if answer.status_code == 401 else "throttled"] += 1

        threads = [threading.Thread(target=guess, args=(n,)) for n in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return {f"wrong tokens tried per second from one address ({clients} clients, {window:.0f} s)": (
        f"{counts['tried'] / window:,.1f}/s ({counts['throttled']:,} answered 429 untried)"
    )}  # fmt: skip


# --- 8. stamping on the writer ----------------------------------------------------------


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def case_stamp(side: Side, work: Path, quick: bool) -> dict[str, str]:
    outer = work / f"repos-{side.label}"
    root = outer / "huge"
    root.mkdir(parents=True)
    gib = 1 if quick else 4
    _git(root, "init", "-q", "-b", "main")
    _git(root, "-c", "user.email=b@example.invalid", "-c", "user.name=b",
         "commit", "-q", "--allow-empty", "-m", "init")  # fmt: skip
    with (root / "dump.bin").open("wb") as f:
        f.truncate(gib * 2**30)  # sparse: no disk, but every stamp hashes it
    args = ("--bind-root", str(outer)) if "--bind-root" in side.serve_options() else ()
    with serving(side, work / f"stamp-{side.label}.db", *args) as server:
        with httpx.Client(timeout=600) as http:
            other = chat(http, server.url, ["an unrelated chat"])
            huge = rpc(http, server.url, "sessions/create", {"title": "huge", "cwd": str(root)})
        slow: dict[str, Any] = {}

        def stamped_append() -> None:
            started = time.monotonic()
            with httpx.Client(timeout=600) as h:
                params = [huge["id"], "user.message", text("in the huge repo")]
                slow["entry"] = rpc(h, server.url, "sessions/append", params)
            slow["took"] = time.monotonic() - started

        thread = threading.Thread(target=stamped_append)
        thread.start()
        time.sleep(0.3)
        started = time.monotonic()
        with httpx.Client(timeout=600) as http:
            rpc(http, server.url, "sessions/append", [other, "user.message", text("meanwhile")])
        unrelated = time.monotonic() - started
        thread.join()
    stamp = (slow["entry"].get("stamp") or {}) if isinstance(slow.get("entry"), dict) else {}
    return {
        f"append in a repository with a {gib} GiB untracked file (its stamp)": (
            f"{seconds(slow['took'])}" + (" (stamp unknown)" if "unknown" in str(stamp) else "")
        ),
        "an unrelated session's append meanwhile": seconds(unrelated),
    }


# --- H. the change history in bytes ----------------------------------------------------

HISTORY = """
import gc
from pathlib import Path
from sessionforest.server.changes import Change, Hub
from sessionforest.ids import new_id
def rss():
    gc.collect()
    line = [x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmRSS:")]
    return int(line[0].split()[1]) * 1024
before = rss()
hub = Hub(10_000)
for n in range(COUNT):
    ids = tuple(new_id() for _ in range(1_000))
    hub.publish([Change("s", "appended", ids[-1], "active", ids, n * 1000 + 1, n * 1000 + 1000)])
print(rss() - before)
"""


def case_history(side: Side, work: Path, quick: bool) -> dict[str, str]:
    count = 2_000 if quick else 10_000
    done = subprocess.run([sys.executable, "-c", HISTORY.replace("COUNT", str(count))],
                          env=side.env(), capture_output=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()[-800:]
    return {f"change history after {count:,} changes of 1,000 entry ids (RSS it holds)": mib(
        int(done.stdout.split()[-1])
    )}  # fmt: skip


# --- probes: one request each -----------------------------------------------------------


def _code(answer: dict[str, Any]) -> str:
    if "error" in answer:
        return f"error {answer['error']['code']}"
    return "stored"


def case_probes(side: Side, work: Path, quick: bool) -> dict[str, str]:
    out: dict[str, str] = {}
    with serving(side, work / f"probe-{side.label}.db") as server, httpx.Client(timeout=30) as http:
        sid = chat(http, server.url, ["hello"])

        def call(method: str, params: Any) -> dict[str, Any]:
            body = {"jsonrpc": "2.0", "method": method, "params": params, "id": 1}
            return http.post(server.url + "/rpc", json=body).json()  # type: ignore[no-any-return]

        answer = call("sessions/entries", {"session_id": sid, "after_sequence": 2**63})
        out["`sessions/entries` with after_sequence 2^63"] = _code(answer).replace("stored", "ok")
        out['`sessions/create` with created_at "zzzz"'] = _code(
            call("sessions/create", {"title": "t", "created_at": "zzzz"})
        )
        made = call("sessions/create", {"title": "a\x1b[31m\u202e\nb\x00c"})
        out["title with ESC, U+202E, newline, NUL over RPC"] = (
            f"stored as {made['result']['title']!r}" if "result" in made else _code(made)
        )
        headers = http.get(server.url + "/healthz").headers
        framing = "frame-ancestors" in headers.get("content-security-policy", "")
        out["`Content-Security-Policy` / `X-Frame-Options` on a response"] = (
            f"{'frame-ancestors' if framing else 'none'} / {headers.get('x-frame-options', 'none')}"
        )
    proc = subprocess.Popen(
        [sys.executable, "-c", BOOT, "--db", str(work / f"short-{side.label}.db"), "serve",
         "--port", "0", "--token", "abc"],
        env=side.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    started = URL.search(proc.stdout.readline().decode()) is not None
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    out["`forest serve --token abc` (3 characters)"] = "starts" if started else "refused"
    with serving(
        side, work / f"team-{side.label}.db", "--host", "0.0.0.0", "--token", TOKEN
    ) as server:
        port = server.url.rsplit(":", 1)[1]
        answer = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10,
                           headers={"Host": f"{socket.gethostname()}:{port}",
                                    "Authorization": f"Bearer {TOKEN}"})  # fmt: skip
        out["team mode (`--host 0.0.0.0`): a request with `Host: <hostname>:PORT`"] = (
            f"HTTP {answer.status_code}"
        )
    return out


CASES: dict[str, Callable[[Side, Path, bool], dict[str, str]]] = {
    "find": case_find,
    "idle": case_idle_sockets,
    "websockets": case_silent_websockets,
    "amplification": case_amplification,
    "bigread": case_one_big_read,
    "subscriptions": case_subscriptions,
    "stdio": case_stdio,
    "sigterm": case_sigterm,
    "tokens": case_wrong_tokens,
    "stamp": case_stamp,
    "history": case_history,
    "probes": case_probes,
}


def measure(
    before: Path | None, quick: bool, only: list[str] | None = None
) -> list[tuple[str, str, str]]:
    """(case, before, after) rows; "not measured" where no older tree was given."""
    sides = [Side("after", AFTER)] + ([Side("before", before)] if before else [])
    rows: list[tuple[str, str, str]] = []
    for name in only or list(CASES):
        found: dict[str, dict[str, str]] = {}
        for side in sides:
            with tempfile.TemporaryDirectory(prefix=f"hostile-{name}-") as tmp:
                t = time.monotonic()
                print(f"  [{name}] {side.label} ...", flush=True)
                try:
                    found[side.label] = CASES[name](side, Path(tmp), quick)
                except Exception as exc:  # an old tree may fail outright: that is its figure
                    found[side.label] = {"": f"failed: {type(exc).__name__}: {str(exc)[:120]}"}
                took = time.monotonic() - t
                print(f"  [{name}] {side.label}: {found[side.label]} ({took:.0f} s)", flush=True)
        keys = list(dict.fromkeys([*found["after"], *found.get("before", {})]))
        for key in keys:
            rows.append((
                key or name,
                found.get("before", {}).get(key, found.get("before", {}).get("", "not measured")),
                found["after"].get(key, found["after"].get("", "")),
            ))  # fmt: skip
    return rows


def table(rows: list[tuple[str, str, str]], before: str) -> list[str]:
    lines = [f"| case | before ({before}) | after |", "|---|---|---|"]
    lines += [f"| {case} | {b} | {a} |" for case, b, a in rows]
    return lines


def _base_name(src: Path | None) -> str:
    if src is None:
        return "not measured"
    done = subprocess.run(["git", "-C", str(src), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)  # fmt: skip
    return done.stdout.strip() or str(src)


def run(quick: bool) -> Section:
    given = os.environ.get("BENCH_BEFORE_SRC")
    before = Path(given).resolve() if given else None
    resource.setrlimit(
        resource.RLIMIT_NOFILE, (4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
    )
    rows = measure(before, quick)
    return Section(
        NAME,
        "Hostile load on `forest serve` (issue 22), before and after",
        "Each attack of issue 22 against a real `forest serve` subprocess on loopback: "
        "`before` runs the source tree named by `BENCH_BEFORE_SRC` (the commit before the "
        "fixes), `after` this checkout; the client side is the same httpx/websockets code. "
        "One run per side (each figure is an outcome or a single timing, not a median).",
        extra=["", *table(rows, _base_name(before))],
        notes=[
            "before tree: `git worktree add ../base 2a5f00a`, then "
            "`BENCH_BEFORE_SRC=../base/src .venv/bin/python benchmarks/run.py --only hostile`",
            "a case that cannot finish is stopped at its cap: `never (killed)`",
            "wrong tokens: the first 10 a minute from an address are answered at once by "
            "design, so 5 s of guessing after is (10 + 4 × 5) / 5 = 6 tries a second",
            "the machine is shared with other work (see the load averages): timings are "
            "orders of magnitude, the outcomes (status, exit code, counts) are exact",
        ],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="an older checkout's src/ to compare with")
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--only", help=f"comma-separated subset of: {', '.join(CASES)}")
    args = parser.parse_args(argv)
    only = [n.strip() for n in args.only.split(",")] if args.only else None
    resource.setrlimit(
        resource.RLIMIT_NOFILE, (4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
    )
    rows = measure(args.before.resolve() if args.before else None, args.quick, only)
    print("\n".join(table(rows, _base_name(args.before))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
