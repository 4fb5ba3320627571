"""Benchmark modules the tests use, loaded from benchmarks/ by path (benchmarks/ is not
a package; its modules are scripts that import each other by name)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def load(name: str) -> ModuleType:
    """benchmarks/<name>.py as a module (loaded once per run)."""
    key = f"sessionforest_bench_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module
