"""The `requests` stand-in detect-secrets is imported with in a process that asked for it
(`forest find --deep`): it becomes the real module in place on first use, so code that
does use requests sees no difference; a process that did not ask imports it as usual."""

from __future__ import annotations

import subprocess
import sys


def _prints_ok(script: str) -> None:
    """Run `script` in a fresh interpreter; it prints ok when every assertion held."""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.stdout == "ok\n", done.stderr


# In a fresh interpreter: redact (detect-secrets imported behind the stand-in), then use
# requests the way its own users would.
SCRIPT = """\
import sys, types
from sessionforest.redact import defer_unused_imports, redact
defer_unused_imports()
assert redact("password = hunter2345678").secrets == 1
stand_in = sys.modules["requests"]
assert "urllib3" not in sys.modules and "requests.models" not in sys.modules
import requests
import detect_secrets.plugins.base as base
assert requests is stand_in and base.requests is stand_in
assert requests.Response.__module__ == "requests.models"  # first use: the real import
assert type(requests) is types.ModuleType and "urllib3" in sys.modules
from requests.exceptions import RequestException
assert base.requests.exceptions.RequestException is RequestException
assert "Session" in dir(requests)
import detect_secrets.plugins.ibm_cloud_iam as iam
assert iam.verify_cloud_iam_api_key.__annotations__["return"] == "requests.Response"
print("ok")
"""


def test_the_stand_in_becomes_requests_on_first_use() -> None:
    _prints_ok(SCRIPT)


# A submodule imported first runs its package first, as an eager import does.
SUBMODULE = """\
import sys
from sessionforest.redact import defer_unused_imports, redact
defer_unused_imports()
redact("x = 1")
assert type(sys.modules["multiprocessing"]).__name__ == "_Deferred"
import multiprocessing.pool
import multiprocessing
assert type(multiprocessing).__name__ == "module" and multiprocessing.cpu_count() >= 1
assert multiprocessing.pool.Pool is multiprocessing.pool.Pool
print("ok")
"""


def test_a_submodule_import_runs_the_package_first() -> None:
    _prints_ok(SUBMODULE)


# A process that did not ask (a server, a library user's): detect-secrets as it imports.
EAGER = """\
import sys, types
from sessionforest.redact import redact
assert redact("password = hunter2345678").secrets == 1
assert type(sys.modules["requests"]) is types.ModuleType and "requests.models" in sys.modules
assert type(sys.modules["multiprocessing"]) is types.ModuleType
print("ok")
"""


def test_without_asking_detect_secrets_imports_as_usual() -> None:
    _prints_ok(EAGER)
