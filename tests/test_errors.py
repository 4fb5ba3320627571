"""The error families: every error is under exactly one, and one table maps them to codes."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from sessionforest import errors
from sessionforest.errors import FAMILIES, ForestError, family

SRC = Path(errors.__file__).resolve().parent


def _concrete() -> list[type[ForestError]]:
    found = [
        obj
        for _, obj in inspect.getmembers(errors, inspect.isclass)
        if issubclass(obj, ForestError) and obj.__module__ == errors.__name__
    ]
    bases = {errors.ForestError, errors.SessionError, errors.StoreError, *FAMILIES}
    return [cls for cls in found if cls not in bases]


def test_every_error_is_under_exactly_one_family() -> None:
    for cls in _concrete():
        under = [f for f in FAMILIES if issubclass(cls, f)]
        assert len(under) == 1, (cls.__name__, [f.__name__ for f in under])


def test_each_family_has_its_own_exit_code_and_rpc_code() -> None:
    exits = [f.exit_code for f in FAMILIES.values()]
    rpcs = [f.rpc_code for f in FAMILIES.values()]
    assert len(set(rpcs)) == len(rpcs)
    assert all(-32099 <= code <= -32000 for code in rpcs)  # JSON-RPC's server-error range
    # Exit 1 is shared on purpose (invalid input is "an error"); the others are distinct.
    assert len({e for e in exits if e != 1}) == len([e for e in exits if e != 1])
    assert 2 not in exits  # click's usage error


def test_family_of_an_error_follows_its_class() -> None:
    assert family(errors.UnknownSession("x")).name == "not-found"
    assert family(errors.HeadMoved("s", "a", "b")).name == "conflict"
    assert family(errors.StoreFull("p", "r", None)).name == "unavailable"
    assert family(errors.SessionQuarantined("s", "r")).name == "damaged"
    assert family(ValueError()).name == "error"


def _raised_names(path: Path) -> set[str]:
    names: set[str] = set()
    tree = ast.parse(path.read_text())
    # A module's own __getattr__ (PEP 562 lazy exports) must raise AttributeError:
    # that is the import protocol, not an error a caller of the store handles.
    tree.body = [
        top
        for top in tree.body
        if not (isinstance(top, ast.FunctionDef) and top.name == "__getattr__")
    ]
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            func = node.exc.func
            # Lower-case callables (driver_error, unknown_session, ...) are factories
            # whose return type mypy checks; classes are checked here.
            if isinstance(func, ast.Name) and func.id[:1].isupper():
                names.add(func.id)
    return names


def test_store_and_rules_raise_only_errors_of_a_family() -> None:
    # Callers catch a family: whatever a backend or a rule raises by name must be one.
    allowed = {cls.__name__ for cls in _concrete()}
    for folder in ("store", "rules"):
        for path in sorted((SRC / folder).rglob("*.py")):
            for name in _raised_names(path):
                if name in ("AssertionError", "RuntimeError", "NotImplementedError"):
                    continue  # internal invariants, not errors a caller handles
                assert name in allowed, f"{path.relative_to(SRC)} raises {name}"
