"""The funnel stays backend-neutral: nothing under search/ runs SQL or names a backend.

A second backend (PostgreSQL) implements store.base.SearchIndex and reuses the
funnel unchanged, which holds only while no funnel module reaches below it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import sessionforest.search

FUNNEL = Path(sessionforest.search.__file__).parent
FORBIDDEN = ("sqlite3", "sessionforest.store.sqlite", "apsw", "psycopg")


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            # Resolve relative imports against the package (search/ is one level deep).
            base = {0: "", 1: "sessionforest.search", 2: "sessionforest"}[node.level]
            module = ".".join(p for p in (base, node.module or "") if p)
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def test_no_funnel_module_imports_a_backend() -> None:
    modules = sorted(FUNNEL.glob("*.py"))
    assert len(modules) >= 8  # the funnel is really here
    for path in modules:
        bad = [n for n in _imports(path) if n.startswith(FORBIDDEN)]
        assert not bad, f"{path.name} imports {bad}"


def test_no_funnel_module_writes_fts5_syntax() -> None:
    for path in FUNNEL.glob("*.py"):
        text = path.read_text()
        for marker in (" MATCH ", "bm25(", "fts5", "rowid"):
            assert marker not in text, f"{path.name} holds {marker!r}"


def test_the_check_sees_a_backend_import(tmp_path: Path) -> None:
    # The walk above would notice a funnel module reaching a backend.
    module = tmp_path / "leak.py"
    module.write_text("from ..store.sqlite.search import fts\nimport sqlite3\n")
    found = _imports(module)
    assert any(n.startswith(FORBIDDEN) for n in found)
    assert "sqlite3" in found
