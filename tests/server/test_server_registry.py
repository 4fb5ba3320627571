"""The method layer's shape: the registry machinery knows no handler, every method is
declared by its area's group (or openrpc for rpc.discover), groups are named in one
place and a name declared twice is refused."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sessionforest.server import openrpc
from sessionforest.server.api import METHODS
from sessionforest.server.handlers import entries, feed, io, search, sessions, talk
from sessionforest.server.registry import Group, NoParams, Registry


def test_the_registry_module_loads_no_handler() -> None:
    code = (
        "import sys, sessionforest.server.registry\n"
        "print(sorted(m for m in sys.modules if m.startswith('sessionforest.server.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.strip()
    assert "handlers" not in loaded and "openrpc" not in loaded and "api" not in loaded
    assert "sessionforest.server.registry" in loaded


def test_every_method_comes_from_its_areas_group() -> None:
    groups = [sessions, entries, search, io, feed, openrpc, talk]
    declared = [name for module in groups for name in module.group.methods]
    assert list(METHODS) == declared  # the document's order is the groups' order
    for module in groups:
        for m in module.group.methods.values():
            assert m.handler.__module__ == module.__name__, m.name
    assert METHODS["rpc.discover"].handler.__module__ == "sessionforest.server.openrpc"
    assert {m.split("/")[0] for m in talk.group.methods} == {"chat"}


def test_a_name_declared_twice_is_refused() -> None:
    one, two = Group("one"), Group("two")

    @one.method("x/y", NoParams, None, "loop")
    def first(call: object, p: NoParams) -> None:
        """First."""

    with pytest.raises(ValueError, match="x/y is declared twice"):
        one.method("x/y", NoParams, None, "loop")(first)

    @two.method("x/y", NoParams, None, "loop")
    def second(call: object, p: NoParams) -> None:
        """Second."""

    with pytest.raises(ValueError, match="x/y is declared by two groups"):
        Registry(one, two)
    assert list(Registry(one)) == ["x/y"] and Registry(one)["x/y"].summary == "First."
