"""The backend parameter: every test using `harness` or `forest` runs once per registered backend.

Backends and their capabilities are registered in tests/conformance/backends.
A test marked `@pytest.mark.needs("processes")` is collected only for the
backends that have that capability; the run's summary lists what was left
out and why, so no backend skips anything silently.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.backends import Backend, Capabilities, Harness, parameters
from conformance.backends import postgres as postgres_backend
from sessionforest import Forest

LEFT_OUT = pytest.StashKey[list[str]]()


def pytest_configure(config: pytest.Config) -> None:
    flags = ", ".join(sorted(Capabilities.names()))
    config.addinivalue_line(
        "markers", f"needs(*capabilities): collect only for backends that have them ({flags})"
    )
    config.stash[LEFT_OUT] = []
    if not hasattr(config, "workerinput"):
        # Name the run's PostgreSQL databases before any xdist worker starts (they
        # inherit the name), so the end of the run can drop what a dead worker left.
        postgres_backend.run_prefix()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Each process drops its own database at exit; here the run drops any left over
    (a worker killed before its exit), however the run ended."""
    if not hasattr(config, "workerinput"):
        postgres_backend.drop_run_databases()


# FOREST_SEMANTIC as the run was started with (None: unset), for the `semantic` tests.
_SEMANTIC_AS_STARTED = os.environ.get("FOREST_SEMANTIC")


@pytest.fixture(scope="session", autouse=True)
def _lexical_fixtures() -> Iterator[None]:
    """The leg off for fixtures of every scope too: a module's store (the Bridge eval's,
    the fuzz store) is made before any test's own fixtures run, and made with the leg it
    embedded every entry it wrote and searched with vectors, which those tests do not
    test. The CLI processes a fixture starts inherit it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FOREST_SEMANTIC", "off")
        yield


@pytest.fixture(autouse=True)
def _lexical_search(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite tests the search funnel as it runs without the [semantic] extra
    (exact hit lists); tests marked `semantic` (tests/search/test_semantic.py)
    run with the leg, which scripts/test installs."""
    if request.node.get_closest_marker("semantic") is None:
        monkeypatch.setenv("FOREST_SEMANTIC", "off")
    elif _SEMANTIC_AS_STARTED is None:
        monkeypatch.delenv("FOREST_SEMANTIC", raising=False)
    else:
        monkeypatch.setenv("FOREST_SEMANTIC", _SEMANTIC_AS_STARTED)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    needs = [name for mark in metafunc.definition.iter_markers("needs") for name in mark.args]
    if "backend" not in metafunc.fixturenames:
        if needs:  # the mark would do nothing: say so rather than run it everywhere
            raise pytest.UsageError(
                f"{metafunc.definition.nodeid} is marked needs() but uses no harness or forest"
            )
        return
    params, left_out = parameters(needs)
    for reason in left_out:
        metafunc.config.stash[LEFT_OUT].append(f"{metafunc.definition.nodeid}: {reason}")
    metafunc.parametrize("backend", params, indirect=True)


# .ci/run sets this: there, PostgreSQL tests skipped because no server answered fail instead.
REQUIRE_POSTGRES = os.environ.get("FOREST_REQUIRE_POSTGRES") == "1"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if REQUIRE_POSTGRES and report.skipped and "postgres" in str(report.longrepr):
        report.outcome = "failed"
        report.longrepr = (
            f"FOREST_REQUIRE_POSTGRES=1 but this PostgreSQL test was skipped: {report.longrepr}"
        )


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    left_out = config.stash.get(LEFT_OUT, [])
    if left_out:
        terminalreporter.section("not collected for a backend (missing capability)")
        for line in left_out:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def backend(request: pytest.FixtureRequest) -> Backend:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def harness(backend: Backend, tmp_path: Path) -> Iterator[Harness]:
    opened = backend.open_harness(tmp_path)
    yield opened
    opened.close()


@pytest.fixture
def forest(harness: Harness) -> Forest:
    """A fresh store of the backend under test (closed by the harness)."""
    return harness.fresh()


@pytest.fixture
def provider_standin() -> Iterator[Any]:
    """A local server speaking the provider APIs, with the SDKs' variables pointing at it."""
    from standin import ProviderStandIn

    server = ProviderStandIn().start()
    with server.env():
        yield server
    server.stop()


@pytest.fixture
def real_cli(tmp_path: Path, provider_standin: Any) -> Callable[..., Any]:
    """`real_cli("codex")`: a pinned harness CLI in a fresh HOME under tmp_path, its model
    the stand-in (tests/harness_cli.py says how to script its turns)."""
    from harness_cli import RealCLI

    def make(name: str, home: Path | None = None) -> Any:
        home = home or tmp_path / f"home-{name}"
        return RealCLI(name, provider_standin, home, home / "work")

    return make
