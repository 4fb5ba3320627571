"""Importing detect-secrets without loading `requests` (issue 23: ~100-200 ms a call).

detect-secrets imports `requests` at the top of its plugin and filter modules but
uses it only to verify a secret against its service, which redaction never asks
for (multiprocessing likewise, to scan files in parallel). `defer()` puts a
stand-in for each into `sys.modules` that becomes the real module, in place, on
the first use of any name it does not already hold (the metadata the import
system sets: `__spec__`, `__name__`, `__file__`, ...), on `dir()`, or on the
import of a submodule. Two plugin modules name `requests.Response` in a return annotation, which
Python evaluates when the function is defined; `defer()` has them compiled with
postponed annotations (PEP 563), so the annotation stays a string and nothing else
in those modules changes.
"""

from __future__ import annotations
import __future__

import importlib.util
import sys
import threading
import types
from collections.abc import Sequence
from importlib.machinery import ModuleSpec, PathFinder, SourceFileLoader
from typing import Final

# What detect-secrets imports at module top and uses only in functions redaction never
# calls: `requests` to verify a secret with its service, multiprocessing (~10-20 ms) to
# scan files in parallel.
DEFERRED: Final = ("requests", "multiprocessing")
# The detect-secrets modules whose module-level code reads an attribute of `requests`
# (a return annotation each); tests/cli/test_cli_imports.py fails if another appears.
ANNOTATED: Final = frozenset({
    "detect_secrets.plugins.ibm_cloud_iam",
    "detect_secrets.plugins.ibm_cos_hmac",
})  # fmt: skip
_LOAD = threading.RLock()


class _Deferred(types.ModuleType):
    """`requests` before its first use; the real module (same object) after."""

    def __getattr__(self, name: str) -> object:
        # Called only for names the module does not hold yet: the first real use.
        _load(self)
        return getattr(self, name)

    def __dir__(self) -> list[str]:
        _load(self)
        return dir(self)


def _is_deferred(module: types.ModuleType) -> bool:
    return type(module) is _Deferred


def _load(module: types.ModuleType) -> None:
    with _LOAD:
        if not _is_deferred(module):
            return  # another thread loaded it
        spec = module.__spec__
        assert spec is not None and spec.loader is not None
        module.__class__ = types.ModuleType
        if spec.submodule_search_locations is not None:
            module.__path__ = spec.submodule_search_locations
        try:
            spec.loader.exec_module(module)
        except BaseException:
            # As a failed eager import: no half-run module left behind for the next import.
            if sys.modules.get(spec.name) is module:
                del sys.modules[spec.name]
            raise


class _PostponedLoader(SourceFileLoader):
    """Compiles its module with `from __future__ import annotations` in force."""

    def get_code(self, fullname: str) -> types.CodeType:
        # Never the cached bytecode (compiled without the flag), and none written back.
        source = self.get_data(self.path)
        flags = __future__.annotations.compiler_flag
        code: types.CodeType = compile(source, self.path, "exec", flags=flags, dont_inherit=True)
        return code


class _PostponedFinder:
    # A meta path finder by protocol: importlib.abc would import importlib.resources.
    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> ModuleSpec | None:
        if fullname not in ANNOTATED:
            return None
        spec = PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, SourceFileLoader) or spec.origin is None:
            return None  # not a source file: imported as usual
        spec.loader = _PostponedLoader(fullname, spec.origin)
        return spec


_FINDER: Final = _PostponedFinder()


def defer() -> None:
    """Stand in for each of DEFERRED (unless it is imported already or not installed)
    and have the annotated plugin modules compiled with postponed annotations. Call
    before importing detect_secrets; calling again does nothing."""
    for name in DEFERRED:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            # Without `__path__` a submodule import reads it through __getattr__, so the
            # package runs first, as an eager import would have it.
            if spec.submodule_search_locations is not None:
                del module.__path__
            module.__class__ = _Deferred
            sys.modules[name] = module
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
