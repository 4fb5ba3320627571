"""The backends the conformance suite runs on: each registers a harness and its capabilities.

A backend is one module in this package calling `register(Backend(...))`:
its name, the `Harness` subclass that opens and inspects its stores, and a
`Capabilities` value stating every flag (no defaults, so a new flag makes
every backend say yes or no). Every module here is imported, so adding a
backend is adding its module. `tests/conftest.py` parameterises every test
using the `harness` or `forest` fixture by these backends; a test marked
`needs("flag")` is not collected for a backend without that flag, and the
run's summary says so.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import pytest

from .harness import Dump, Harness, Refused


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend can do beyond the public API; every field is required."""

    # Tests may start OS processes that open the same store by its location
    # (racing writers, lock-step expect_head, kill -9 of a writer).
    processes: bool
    # The database itself refuses, past the API (`Refused`): an UPDATE or
    # DELETE of an entry row, a DELETE or re-keying of a session row, and a
    # workspace row breaking the tree's parent rules.
    database_guards: bool
    # `Harness.statements` lists the statements a call issues ("a full id
    # costs no query", "the active path is one query").
    statement_trace: bool

    @classmethod
    def names(cls) -> frozenset[str]:
        return frozenset(f.name for f in fields(cls))

    def lacking(self, needed: Iterable[str]) -> list[str]:
        """The flags of `needed` this backend does not have (unknown names raise)."""
        wanted = sorted(set(needed))
        unknown = [name for name in wanted if name not in self.names()]
        if unknown:
            raise ValueError(f"needs() names unknown capabilities: {', '.join(unknown)}")
        return [name for name in wanted if not getattr(self, name)]


@dataclass(frozen=True, slots=True)
class Backend:
    name: str
    harness: type[Harness]
    capabilities: Capabilities
    # Why this backend cannot run here (e.g. no server answers), or None.
    unavailable: Callable[[], str | None] = lambda: None

    def open_harness(self, workdir: Path) -> Harness:
        """A harness whose fresh stores live under `workdir` (one per test or module)."""
        return self.harness(workdir)


BACKENDS: list[Backend] = []


def register(backend: Backend) -> Backend:
    if any(b.name == backend.name for b in BACKENDS):
        raise ValueError(f"backend {backend.name!r} is registered twice")
    BACKENDS.append(backend)
    return backend


def parameters(
    needs: Iterable[str], backends: Iterable[Backend] | None = None
) -> tuple[list[Any], list[str]]:
    """The `backend` parameters of a test needing `needs`, and why each other backend is left out.

    A backend lacking a needed capability gets no parameter at all (the test
    is not collected for it); one that cannot run here is collected and
    skipped with its reason.
    """
    params: list[Any] = []
    left_out: list[str] = []
    for backend in BACKENDS if backends is None else backends:
        lacking = backend.capabilities.lacking(needs)
        if lacking:
            left_out.append(f"{backend.name} lacks {', '.join(lacking)}")
            continue
        why = backend.unavailable()
        marks = [pytest.mark.skip(reason=f"{backend.name}: {why}")] if why else []
        params.append(pytest.param(backend, id=backend.name, marks=marks))
    return params, left_out


def _register_all() -> None:
    """Import every backend module in this package; each registers itself."""
    for module in pkgutil.iter_modules(__path__):
        if module.name != "harness":
            importlib.import_module(f"{__name__}.{module.name}")


_register_all()

__all__ = [
    "BACKENDS",
    "Backend",
    "Capabilities",
    "Dump",
    "Harness",
    "Refused",
    "register",
]
