"""Lazy exports for a package's `__init__` (PEP 562), so importing the package loads
only what a caller then uses: `forest sessions` never loads the search funnel.

    __getattr__, __dir__ = lazy.exports(__name__, _LAZY, __all__)

`_LAZY` maps each exported name to the submodule (relative to the package) that
defines it; the first lookup imports it and keeps the value in the package's globals,
so the next lookup is a plain one.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def exports(
    package: str, lazy: Mapping[str, str], names: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, exporting `lazy`'s names."""

    def __getattr__(name: str) -> Any:
        module = lazy.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        setattr(sys.modules[package], name, value)  # the next lookup is a plain one
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__
