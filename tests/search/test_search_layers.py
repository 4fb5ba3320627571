"""The funnel stays backend-neutral: nothing under search/ names a backend or writes its syntax.

A second backend (PostgreSQL) implements store.base.SearchIndex and reuses the
funnel unchanged, which holds only while no funnel module reaches below it:
that no funnel module imports a driver or a backend is the "funnel" import
contract (pyproject.toml, tests/test_layers.py); here, that none writes FTS5's
query syntax either.
"""

from __future__ import annotations

from pathlib import Path

import sessionforest.search

FUNNEL = Path(sessionforest.search.__file__).parent


def test_no_funnel_module_writes_fts5_syntax() -> None:
    modules = sorted(FUNNEL.glob("*.py"))
    assert len(modules) >= 8  # the funnel is really here
    for path in modules:
        text = path.read_text()
        for marker in (" MATCH ", "bm25(", "fts5", "rowid"):
            assert marker not in text, f"{path.name} holds {marker!r}"
