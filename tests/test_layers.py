"""The surfaces (cli/, server/, integrations/) reach stores only through the facade: no module of
theirs imports a backend or the backend chooser `sessionforest.store` (the contracts'
values in `sessionforest.store.base` are shared by every layer). docs/architecture.md:
"Nothing above the facade names a backend"."""

from __future__ import annotations

import ast
from pathlib import Path

import sessionforest

PACKAGE = Path(sessionforest.__file__).parent
SURFACES = ("cli", "server", "integrations")


def _imports(text: str, where: Path) -> set[str]:
    """Absolute names imported by `text` as if it were the module at `where`."""
    package = ["sessionforest", *where.relative_to(PACKAGE).parent.parts]
    names: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def _forbidden(name: str) -> bool:
    return name.startswith("sessionforest.store") and not name.startswith(
        "sessionforest.store.base"
    )


def test_no_surface_module_imports_a_backend() -> None:
    modules = [p for s in SURFACES for p in sorted((PACKAGE / s).rglob("*.py"))]
    assert len(modules) >= 15  # the surfaces are really here
    for path in modules:
        bad = sorted(n for n in _imports(path.read_text(), path) if _forbidden(n))
        assert not bad, f"{path.relative_to(PACKAGE)} imports {bad}"


def test_the_check_sees_a_relative_backend_import() -> None:
    where = PACKAGE / "cli" / "probe.py"  # only its place in the package is used
    names = _imports(
        "from ..store import default_path\nfrom ..store.base import Unset\nfrom . import common\n",
        where,
    )
    assert {n for n in names if _forbidden(n)} == {
        "sessionforest.store",
        "sessionforest.store.default_path",
    }
    assert "sessionforest.cli.common" in names
