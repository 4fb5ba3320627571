"""A CLI call loads only what its command uses (issue 23: a call should start as git's).

Each case runs the real console entry point in a fresh interpreter on a tiny
store and records `sys.modules` as the process exits, so what is asserted is
the set of modules the command loaded, never a time. A positive control in
each case (a module the command must load) shows the record is real.
"""

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

# Runs `forest ARGS...` and writes the loaded module names to the file in argv[1].
RECORD = """\
import atexit, sys
out = sys.argv[1]
sys.argv = ["forest", *sys.argv[2:]]
atexit.register(lambda: open(out, "w").write("\\n".join(sorted(sys.modules))))
from sessionforest.cli.main import main
main()
"""

# Loaded by no listing or reading command: the server, the search stack's model
# and provider side, git, the importers and exporters, the live mirror.
NEVER = (
    "sessionforest.server",
    "sessionforest.deep",
    "sessionforest.redact",
    "sessionforest.io",
    "sessionforest.mirror",
    "sessionforest.adapters",
    "sessionforest.integrations",
    "sessionforest.search.semantic",
    "numpy",
    "onnxruntime",
    "tokenizers",
    "anthropic",
    "openai",
    "httpx",
    "logging",
    # What importers consume and produce, and the provider settings of `find --deep`.
    "sessionforest.model.imports",
    "sessionforest.providers",
)
# Nor by a command on a store that needs no migration: the released migrations' files
# are read only to migrate, and importlib.resources (tempfile, zipfile) not even then.
MIGRATING = ("importlib.resources", "tempfile", "zipfile")
# Nor by a command that appends nothing: the payload contracts of every kind.
APPENDING = ("sessionforest.kinds",)
# Nor by `forest sessions` and `forest log`: the search funnel and its contracts, the
# full-text catch-up (derived.py imports it where it runs; an append below BOUND never
# does), the bulk and vector contracts, git and the documents that compare worktrees
# (`log` of a chat bound to no repository has nothing to compare).
NOT_FOR_LISTING = (
    "sessionforest.search.find",
    "sessionforest.search.query",
    "sessionforest.search.gate",
    "sessionforest.store.base.search",
    "sessionforest.store.base.bulk",
    "sessionforest.store.base.vectors",
    "sessionforest.store.sqlite.search",
    "sessionforest.tooltext",
    "sessionforest.gitstamp",
    "sessionforest.worktree",
    "sessionforest.compare",
    "sessionforest.documents",
    "subprocess",
)


def loaded(modules: set[str], forbidden: tuple[str, ...]) -> list[str]:
    """The forbidden names (a package counts with its submodules) that are in `modules`."""
    return sorted(m for m in modules for f in forbidden if m == f or m.startswith(f + "."))


def run(tmp_path: Path, db: Path, *args: str) -> tuple[set[str], str]:
    record = tmp_path / "modules.txt"
    env = {
        **os.environ,
        "FOREST_DB": str(db),
        "FOREST_SEMANTIC": "off",
        "HOME": str(tmp_path / "home"),
    }
    done = subprocess.run(
        [sys.executable, "-c", RECORD, str(record), *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return set(record.read_text().split("\n")), done.stdout


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "forest.db"
    with Forest.open(db) as forest:
        sid = forest.create_session(title="pomodoro timer")
        text = {"content": [{"type": "text", "text": "a pomodoro timer in rust"}]}
        forest.append(sid, "user.message", text, stamp=None)
    return db, sid


def test_importing_the_cli_loads_no_store(tmp_path: Path) -> None:
    script = "import sys, sessionforest.cli.main\nprint('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    modules = set(done.stdout.split())
    assert "click" in modules
    assert loaded(modules, ("sessionforest.forest", "sessionforest.store", "msgspec")) == []
    assert loaded(modules, NEVER + NOT_FOR_LISTING) == []


def test_sessions_loads_only_the_store(tmp_path: Path, store: tuple[Path, str]) -> None:
    db, sid = store
    modules, out = run(tmp_path, db, "sessions")
    assert sid in out
    assert "sessionforest.store.sqlite.store" in modules
    assert loaded(modules, NEVER + NOT_FOR_LISTING + MIGRATING + APPENDING) == []
    assert "sessionforest.render" not in modules  # a listing escapes cells (text.py), draws none


def test_log_loads_no_search_and_no_server(tmp_path: Path, store: tuple[Path, str]) -> None:
    db, sid = store
    modules, out = run(tmp_path, db, "log", sid)
    assert "a pomodoro timer in rust" in out
    assert loaded(modules, NEVER + NOT_FOR_LISTING + MIGRATING + APPENDING) == []


def test_log_of_a_stamped_chat_loads_git(tmp_path: Path) -> None:
    # The positive control of the test above: a chat bound to a repository, its entry
    # stamped, is compared with the worktree (`log` marks what diverged).
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    db = tmp_path / "forest.db"
    with Forest.open(db) as forest:
        sid = forest.create_session(title="bound", cwd=repo)
        text = {"content": [{"type": "text", "text": "a stamped line"}]}
        assert forest.append(sid, "user.message", text).stamp is not None
    modules, out = run(tmp_path, db, "log", sid)
    assert "a stamped line" in out
    assert {"sessionforest.gitstamp", "sessionforest.documents"} <= modules


def test_find_loads_the_funnel_but_no_model(tmp_path: Path, store: tuple[Path, str]) -> None:
    db, sid = store
    modules, out = run(tmp_path, db, "find", "--json", "pomodoro")
    assert sid in json.dumps(json.loads(out))
    assert "sessionforest.search.find" in modules
    assert loaded(modules, NEVER + MIGRATING + APPENDING) == []
    assert (
        loaded(modules, ("sessionforest.render", "sessionforest.wire", "sessionforest.tooltext"))
        == []
    )


# The other importers: a Claude Code hook (one process per turn) loads none of them.
OTHER_IMPORTERS = tuple(
    f"sessionforest.io.{name}"
    for name in ("aider", "chatgpt", "cline", "codex", "copilot", "gemini", "native",
                 "opencode", "pi", "yoagent")
)  # fmt: skip
POMODORO = (
    Path(__file__).parents[2].parent
    / "shared/data/claude-code/ai-sessions/claude-code-pomodoro-timer.jsonl"
)


def test_the_claude_code_hook_loads_one_importer(tmp_path: Path) -> None:
    transcript = tmp_path / "projects" / "p" / "s1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(POMODORO.read_bytes())
    body = {"session_id": "s1", "transcript_path": str(transcript), "hook_event_name": "Stop"}
    record = tmp_path / "modules.txt"
    db = tmp_path / "forest.db"
    env = {**os.environ, "FOREST_SEMANTIC": "off", "FOREST_HOOK_LOG": str(tmp_path / "log")}
    done = subprocess.run(
        [sys.executable, "-c", RECORD, str(record), "--db", str(db), "hook", "claude-code"],
        env=env,
        input=json.dumps(body).encode(),
        capture_output=True,
        check=True,
    )
    assert done.stdout == b""
    with Forest.open(db) as forest:
        assert forest.count_sessions() >= 1
    modules = set(record.read_text().split("\n"))
    assert "sessionforest.io.claude_code" in modules
    assert "sessionforest.kinds" in modules  # what an import writes is checked
    assert loaded(modules, OTHER_IMPORTERS) == []
    # What an import needs (the importer, the mirror, the adapters) aside, as `sessions`.
    needed = ("sessionforest.io", "sessionforest.mirror", "sessionforest.adapters",
              "sessionforest.model.imports")  # fmt: skip
    assert loaded(modules, tuple(m for m in NEVER if m not in needed)) == []
    assert loaded(modules, ("sessionforest.search.find", "sessionforest.search.query")) == []


def test_find_offers_every_provider() -> None:
    # `--provider`'s choices are written out in cli/search.py (no provider module on a
    # plain find): they must stay the providers the module knows.
    from sessionforest.cli.search import PROVIDER_CHOICES
    from sessionforest.providers import PROVIDERS

    assert PROVIDER_CHOICES == PROVIDERS


def test_find_deep_redacts_without_requests(
    tmp_path: Path, store: tuple[Path, str], provider_standin: Any
) -> None:
    # detect-secrets imports `requests` (~100-200 ms) only to verify secrets against
    # their services; redaction never asks, so a deep find runs its detectors without it.
    db, _ = store
    provider_standin.responder = lambda body: Reply(text='{"answer": null}')
    asked = len(provider_standin.requests)
    modules, out = run(tmp_path, db, "find", "--deep", "--provider", "anthropic",
                       "--model", "standin-model", "--json", "the timer thing")  # fmt: skip
    assert len(provider_standin.requests) > asked, out  # the model was asked
    assert {"sessionforest.redact", "detect_secrets.plugins.ibm_cloud_iam"} <= modules
    # `requests` itself is in sys.modules as the stand-in that would load it on first use.
    assert sorted(m for m in modules if m.startswith(("requests.", "urllib3"))) == []
    assert "multiprocessing.context" not in modules
