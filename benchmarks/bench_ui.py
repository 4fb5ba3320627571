"""The web UI in headless Chromium against a real `forest serve`, each figure next to a
baseline measured in the same run and page:

- first render of the sidebar with 1,000 chats vs. the page fetching the same
  `sessions/list` page itself (what the UI adds over getting its data);
- T1 as you type on a 100k-entry store: keystroke to highlighted results on screen vs.
  the page calling `sessions/search_chats` itself (the UI adds its 120 ms debounce);
- the forest view of a 10,000-entry chat with ~300 side branches: click to the head's
  node drawn vs. fetching `sessions/log` + `sessions/forest_snapshot` themselves, and the
  frame time while panning (scrollTop/scrollLeft moved every frame) vs. idle frames;
- the shipped bundle's size, gzip.

Medians of RUNS runs. Needs Debian's chromium (/usr/bin/chromium), as the e2e tests do.
"""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import datagen
import harness
from harness import Row, Section

NAME = "ui"
FOREST = str(Path(sys.executable).parent / "forest")
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STATIC = harness.REPO / "src" / "sessionforest" / "server" / "static"
PAN_TARGET = 2.0  # median frame while panning the 10k forest <= 2x an idle frame
QUERY = "migration renamed column"


def _serve(db: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [FOREST, "--db", str(db), "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    found = re.search(r"http://\S+", proc.stdout.readline())
    assert found
    return proc, found.group(0)


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait(30)
    if proc.stdout:
        proc.stdout.close()


FETCH = """async ([method, params]) => {
  const t = performance.now();
  const r = await fetch('/rpc', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({jsonrpc: '2.0', id: 1, method, params})});
  await r.json();
  return performance.now() - t;
}"""

SEARCHED = """() => new Promise((resolve) => {
  const check = () => document.querySelector("ul[aria-label='Search results'] mark")
    ? resolve(performance.now() - window.__t) : requestAnimationFrame(check);
  check();
})"""

FRAMES = """async ([pan, count]) => {
  const el = document.querySelector('.forest-scroll');
  const times = [];
  let last = await new Promise(requestAnimationFrame);
  for (let i = 0; i < count; i++) {
    if (pan) { el.scrollTop += 240; el.scrollLeft = (i % 2) * 120; }
    const now = await new Promise(requestAnimationFrame);
    times.push(now - last);
    last = now;
  }
  return times;
}"""


def _measure(quick: bool, runs: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    chats_db = harness.WORK / "ui-chats.db"
    datagen.build_store(chats_db, 3_000, {f"c{i}": datagen.Shape(3) for i in range(1_000)},
                        concurrent=8, seed=3)  # fmt: skip
    total = 30_000 if quick else 100_000
    big_db = harness.WORK / "ui-big.db"
    refs = datagen.build_store(big_db, total, {"forest": datagen.Shape(9_100, 30, 3)},
                               concurrent=16, seed=5)  # fmt: skip
    forest_sid = refs["forest"].sid
    out: dict[str, Any] = {"total": total, "forest_entries": refs["forest"].shape.total}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            proc, url = _serve(chats_db)
            try:
                first, fetch = [], []
                for _ in range(runs):
                    page = browser.new_page(viewport={"width": 1400, "height": 860})
                    page.goto(url + "/")
                    page.wait_for_function("document.querySelectorAll('nav .chat').length >= 1000")
                    first.append(page.evaluate("performance.now()"))
                    fetch.append(page.evaluate(FETCH, ["sessions/list", {
                        "include_hidden": False, "order": "updated", "limit": 1000}]))  # fmt: skip
                    page.close()
                out["first"], out["first_fetch"] = first, fetch
            finally:
                _stop(proc)
            proc, url = _serve(big_db)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 860})
                page.goto(url + "/")
                page.wait_for_selector("nav .chat")
                box = page.get_by_role("searchbox", name="Find a chat")
                t1, t1_fetch = [], []
                for _ in range(runs):
                    box.fill("")
                    page.wait_for_selector("ul[aria-label='All chats']")
                    page.evaluate("window.__t = performance.now()")
                    box.fill(QUERY)  # one input event, as a keystroke (or a paste) makes
                    t1.append(page.evaluate(SEARCHED))
                    search = ["sessions/search_chats", {"query": QUERY, "limit": 20}]
                    t1_fetch.append(page.evaluate(FETCH, search))
                out["t1"], out["t1_fetch"] = t1, t1_fetch
                page.close()
                opened, data, pan, idle, dom = [], [], [], [], []
                for _ in range(runs):
                    page = browser.new_page(viewport={"width": 1400, "height": 860})
                    page.goto(url + "/")
                    page.wait_for_selector("nav .chat")
                    button = page.locator(".chat-title", has_text=re.compile(r"^session 0$"))
                    start = page.evaluate("performance.now()")
                    button.first.click()
                    page.wait_for_selector("[role=treeitem][aria-current=true]", timeout=60_000)
                    opened.append(page.evaluate("performance.now()") - start)
                    dom.append(page.locator("[role=treeitem]").count())
                    log = page.evaluate(FETCH, ["sessions/log", {"session_id": forest_sid}])
                    snap = page.evaluate(FETCH, ["sessions/forest_snapshot",
                                                 {"session_id": forest_sid}])  # fmt: skip
                    data.append(log + snap)
                    page.evaluate("document.querySelector('.forest-scroll').scrollTop = 0")
                    idle += page.evaluate(FRAMES, [False, 60])
                    pan += page.evaluate(FRAMES, [True, 120])
                    page.close()
                out.update(opened=opened, data=data, pan=pan, idle=idle, dom=dom)
            finally:
                _stop(proc)
        finally:
            browser.close()
    harness.remove_db(chats_db)
    harness.remove_db(big_db)
    return out


def run(quick: bool) -> Section:
    runs = 3 if quick else 7
    m = _measure(quick, runs)
    med = harness.median

    def msf(values: list[float]) -> str:
        return f"{med(values):.0f} ms" if med(values) >= 10 else f"{med(values):.1f} ms"

    js = sorted(STATIC.glob("assets/*.js"))
    css = sorted(STATIC.glob("assets/*.css"))
    raw = sum(p.stat().st_size for p in js + css)
    zipped = sum(len(gzip.compress(p.read_bytes(), 9)) for p in js + css)
    pan_ratio = med(m["pan"]) / med(m["idle"])
    return Section(
        NAME,
        "Web UI (headless Chromium, forest serve)",
        "Sidebar first render, T1 as you type, the 10,000-entry forest view and the bundle, "
        "each beside the same page fetching its data itself (or idle frames).",
        rows=[
            Row(
                "sidebar with 1,000 chats: navigation start to all drawn / its sessions/list",
                msf(m["first"]),
                msf(m["first_fetch"]),
                harness.ratio(med(m["first"]) / med(m["first_fetch"])),
            ),
            Row(
                f"T1 keystroke to highlighted results ({m['total']:,} entries) / the call alone",
                msf(m["t1"]),
                msf(m["t1_fetch"]),
                harness.ratio(med(m["t1"]) / med(m["t1_fetch"])),
            ),
            Row(
                f"open the {m['forest_entries']:,}-entry chat: click to head node drawn / "
                "log + snapshot fetched",
                msf(m["opened"]),
                msf(m["data"]),
                harness.ratio(med(m["opened"]) / med(m["data"])),
            ),
            Row(
                "frame while panning that forest (p50) / idle frame",
                f"{med(m['pan']):.1f} ms (p95 {harness.percentile(m['pan'], 95):.1f})",
                f"{med(m['idle']):.1f} ms",
                harness.ratio(pan_ratio),
                f"<= {PAN_TARGET:.1f}x",
                harness.verdict(pan_ratio <= PAN_TARGET),
            ),
            Row(
                "treeitems in the DOM for that forest (virtualised)",
                f"{med(m['dom']):.0f}",
                f"{m['forest_entries']:,}",
            ),
            Row(
                "bundle (JS + CSS), gzip / raw", f"{zipped / 1024:.0f} KiB", f"{raw / 1024:.0f} KiB"
            ),
        ],
        notes=[
            f"Medians of {runs} runs, one Chromium; the T1 figure includes the UI's 120 ms "
            "debounce (it waits for typing to pause before asking).",
        ],
    )
