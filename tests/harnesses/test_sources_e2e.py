"""A fresh HOME filled by the real harness CLIs: `forest sources` lists every one of them,
`forest import` (no format) brings all of them in with their tool calls, results and resumed
turns, and running it again adds nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sessionforest import Forest
from standin import Reply

CLIS = ("claude", "codex", "gemini", "opencode", "copilot")
HARNESS = {
    "claude": "claude-code",
    "codex": "codex",
    "gemini": "gemini-cli",
    "opencode": "opencode",
    "copilot": "copilot-cli",
}


def _forest(home: Path, *args: str) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "CODEX", "COPILOT"))}
    env |= {"HOME": str(home), "FOREST_DB": str(home / "forest.db"), "FOREST_SEMANTIC": "off"}
    done = subprocess.run(
        [str(Path(sys.executable).parent / "forest"), *args, "--json"],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.slow
def test_sources_and_import_everything_from_a_home_the_real_clis_filled(
    real_cli: Any, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    for name in CLIS:
        cli = real_cli(name, home)
        cli.script(
            Reply(text=f"{name} runs it", tools=[cli.shell(f"expr 40 + 2 > {name}.txt")]),
            Reply(text=f"{name} wrote 42"),
        )
        cli.run(f"compute it with {name}")
        cli.script(Reply(text=f"{name} resumed"))
        cli.run(f"again with {name}", resume=True)
        assert (cli.cwd / f"{name}.txt").read_text().strip() == "42"

    found = _forest(home, "sources")
    by_harness = {}
    for location in found:
        by_harness.setdefault(location["harness"], []).append(location)
    assert set(HARNESS.values()) <= set(by_harness)
    for harness in HARNESS.values():
        assert sum(loc["chats"] for loc in by_harness[harness]) >= 1
        assert all(
            loc["new"] == loc["files"] for loc in by_harness[harness]
        )  # nothing imported yet

    reports = _forest(home, "import")
    assert all(not r["failed"] for r in reports), [r["failed"] for r in reports]
    assert sum(r["entries"] for r in reports) > 0
    with Forest.open(home / "forest.db", readonly=True) as forest:
        top = [s for s in forest.sessions(include_hidden=False)]
        for name, harness in HARNESS.items():
            chats = [s for s in top if s.harness == harness]
            assert chats, f"no {harness} chat imported"
            texts = []
            for chat in chats:
                for e in forest.active_path(chat.id):
                    for block in (
                        e.payload.get("content", [])
                        if isinstance(e.payload.get("content"), list)
                        else []
                    ):
                        texts.append(block.get("text") or block.get("name") or "")
                    if e.kind == "tool.completed":
                        texts.append("<result>")
            said = " ".join(texts)
            assert f"compute it with {name}" in said and f"{name} wrote 42" in said, said
            assert f"again with {name}" in said and f"{name} resumed" in said  # resumed: one chat
            assert "<result>" in said  # the shell call and its result are on the path
    again = _forest(home, "import")
    assert sum(r["entries"] for r in again) == 0  # idempotent
    listed = _forest(home, "sources")
    stale = [loc for loc in listed if loc["harness"] in HARNESS.values() and loc["new"]]
    if stale:
        pytest.fail(
            f"new after a second import: {stale}; no chat is of: {_unimported(home, stale)}"
        )


def _unimported(home: Path, locations: list[dict[str, Any]]) -> list[str]:
    """The files of `locations` no chat names as its source, each with its opening bytes:
    the failure says which file a harness wrote that gave no chat."""
    with Forest.open(home / "forest.db", readonly=True) as forest:
        known = {s.source_path for s in forest.sessions(include_hidden=True)}
    return [
        f"{path}: {path.read_bytes()[:300]!r}"
        for loc in locations
        for path in sorted(Path(loc["path"]).rglob("*"))
        if path.is_file() and str(path) not in known
    ]
