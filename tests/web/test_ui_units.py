"""The web components' own unit tests (web/src/**/*.test.ts[x], vitest under jsdom).

A module of its own, apart from the bundle's staleness tests: it is one of the
longest tests of the suite, and `--dist loadscope` keeps a module on one worker.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

WEB = Path(__file__).resolve().parents[2] / "web"


def test_the_component_unit_tests_pass() -> None:
    done = subprocess.run(["npx", "vitest", "run"], cwd=WEB, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passed" in done.stdout
