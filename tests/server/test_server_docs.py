"""The method list agrees everywhere: the registry, rpc.discover, docs/api.md, `forest serve
--help`; and the core package works with the server extra's modules blocked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from sessionforest.cli.main import cli
from sessionforest.server.api import METHODS as REGISTRY
from sessionforest.server.limits import Limits
from sessionforest.server.openrpc import document

REPO = Path(__file__).resolve().parents[2]


def test_every_method_is_documented_and_published() -> None:
    api = (REPO / "docs" / "api.md").read_text()
    published = {m["name"] for m in document(REGISTRY)["methods"]}
    assert published == set(REGISTRY)
    help_text = " ".join(CliRunner().invoke(cli, ["serve", "--help"]).output.split())
    for name in REGISTRY:
        assert f"`{name}`" in api or f"`sessions/{name.split('/')[-1]}`" in api, name
        short = name.split("/")[-1]
        assert short in help_text, name
    for code in (-32700, -32600, -32601, -32602, -32603, -32001, -32002, -32003, -32004, -32005):
        assert str(code) in api


BLOCKER = """
import sys
BLOCKED = {"starlette", "uvicorn", "websockets", "httpx", "anyio", "httptools", "uvloop"}
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"blocked: {name}")
sys.meta_path.insert(0, Block())
"""


def test_core_and_cli_without_the_server_extra(tmp_path: Path) -> None:
    code = BLOCKER + (
        "import sessionforest\n"
        "from sessionforest.cli.main import cli\n"
        "from click.testing import CliRunner\n"
        f"db = {str(tmp_path / 'x.db')!r}\n"
        "r = CliRunner().invoke(cli, ['--db', db, 'new', '--title', 't'])\n"
        "assert r.exit_code == 0, r.output\n"
        "r = CliRunner().invoke(cli, ['--db', db, 'serve'])\n"
        "print(r.exit_code)\n"
        "print(r.output)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    status, output = done.stdout.split("\n", 1)
    assert status == "5"  # Unavailable: an optional dependency is missing
    assert "pip install 'sessionforest[server]'" in output


def _limits_table() -> dict[str, str]:
    """docs/api.md's "Every limit" table: the limit's name cell -> its value cell."""
    api = (REPO / "docs" / "api.md").read_text()
    section = api.split("### Every limit", 1)[1].split("\n#", 1)[0]
    rows = [line.split("|")[1:3] for line in section.splitlines() if line.startswith("| `")]
    return {name.strip(): value.strip() for name, value in rows}


def _shown(name: str, value: float) -> str:
    if name == "MAX_INT":
        assert value == 2**63 - 1
        return "2^63 − 1"
    if isinstance(value, float):
        return f"{value:g} s"
    if name.endswith(("_body", "_bytes", "_response")):
        return f"{value // 2**20} MiB" if value >= 2**20 else f"{value // 2**10} KiB"
    return f"{value:,}"


def test_every_server_limit_is_listed_in_the_docs() -> None:
    # Before: the answer caps, the subscription cap, the history's bytes, the stop's
    # grace, the stamp's bound and the integer bound were enforced but not documented.
    from dataclasses import fields

    from sessionforest import ids, snippets
    from sessionforest.server import limits, security, threads

    defaults = Limits()
    expected = {f"`{f.name}`": _shown(f.name, getattr(defaults, f.name)) for f in fields(Limits)}
    for module, names in (
        (limits, ("MAX_QUERY", "MAX_PAGE", "MAX_HITS", "MAX_ITEMS", "MAX_PREVIEWS",
                  "MAX_NOTIFIED_IDS", "MAX_INT", "LOG_DEFAULT")),
        (security, ("MIN_TOKEN",)), (ids, ("MAX_TITLE",)), (threads, ("READERS", "STAMPERS")),
    ):  # fmt: skip
        for name in names:
            expected[f"`{name}`"] = _shown(name, getattr(module, name))
    failures = security.Failures
    expected["`Failures.FREE` / `WINDOW`"] = f"{failures.FREE} / {failures.WINDOW:g} s"
    expected["`Failures.DELAY` / `WAITING`"] = f"{failures.DELAY:g} s / {failures.WAITING}"
    expected["`WINDOW_CHARS` / `MAX_WINDOWS`"] = (
        f"{snippets.WINDOW_CHARS:,} / {snippets.MAX_WINDOWS}"
    )
    assert _limits_table() == expected
