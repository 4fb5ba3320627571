"""The import contracts of pyproject.toml ([tool.importlinter], checked by import-linter):
the layers of docs/architecture.md top to bottom, the surfaces reaching a store only
through the facade, the search funnel backend-neutral, and no import cycle anywhere.

A broken contract fails here with import-linter's own report (which import, by which
chain); `.venv/bin/lint-imports` prints the same.
"""

from __future__ import annotations

import configparser
import copy
import io
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import sessionforest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(sessionforest.__file__).parent
LINT = Path(sys.executable).parent / "lint-imports"
CONFIG: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"][
    "importlinter"
]


def _lint(config: dict[str, Any], tmp_path: Path) -> tuple[dict[str, bool], str]:
    """Run import-linter on `config`: each contract's id -> kept, and its report."""
    path = tmp_path / "importlinter.ini"
    path.write_text(_ini(config))
    done = subprocess.run(
        [str(LINT), "--config", str(path), "--no-cache"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    report = done.stdout + done.stderr
    kept = {}
    for contract in config["contracts"]:
        found = re.search(rf"^{re.escape(contract['name'])} (KEPT|BROKEN)$", report, re.M)
        assert found is not None, report
        kept[contract["id"]] = found[1] == "KEPT"
    assert (done.returncode == 0) == all(kept.values()), report
    return kept, report


def _ini(config: dict[str, Any]) -> str:
    """`config` (pyproject's table) in import-linter's INI form, which configparser writes."""
    parser = configparser.ConfigParser(interpolation=None)
    parser["importlinter"] = {k: _value(v) for k, v in config.items() if k != "contracts"}
    for contract in config["contracts"]:
        fields = {k: _value(v) for k, v in contract.items() if k != "id"}
        parser[f"importlinter:contract:{contract['id']}"] = fields
    out = io.StringIO()
    parser.write(out)
    return out.getvalue()


def _value(item: Any) -> str:
    if isinstance(item, list):
        return "".join(f"\n{i}" for i in item)
    return str(item).lower() if isinstance(item, bool) else str(item)


def _contract(config: dict[str, Any], contract_id: str) -> dict[str, Any]:
    (found,) = [c for c in config["contracts"] if c["id"] == contract_id]
    return found


def test_every_import_contract_is_kept(tmp_path: Path) -> None:
    kept, report = _lint(CONFIG, tmp_path)
    assert kept == {"layers": True, "surfaces": True, "funnel": True, "acyclic": True}, report


def test_every_module_of_the_package_is_in_a_layer() -> None:
    # A new top-level module (or storage package) must be placed in the diagram.
    layers = _contract(CONFIG, "layers")["layers"]
    placed = {m.strip() for layer in layers for m in layer.replace("|", ":").split(":")}
    tops = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    tops |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    store = PACKAGE / "store"
    tops.discard("store")
    tops |= {f"store.{p.stem}" for p in store.glob("*.py") if p.stem != "__init__"}
    tops |= {f"store.{p.name}" for p in store.iterdir() if (p / "__init__.py").exists()}
    missing = sorted(t for t in tops if f"sessionforest.{t}" not in placed)
    assert not missing, f"not in any layer of [tool.importlinter] layers: {missing}"


def test_the_contracts_see_an_import_against_them(tmp_path: Path) -> None:
    # The same contracts with the facade and the model swapped, the funnel forbidden
    # the model and the surfaces forbidden the facade, are broken: the checks read
    # the real import graph.
    bent = copy.deepcopy(CONFIG)
    layers = _contract(bent, "layers")["layers"]
    facade, model = layers.index("sessionforest.forest"), layers.index("sessionforest.model")
    layers[facade], layers[model] = layers[model], layers[facade]
    _contract(bent, "funnel")["forbidden_modules"].append("sessionforest.model")
    _contract(bent, "surfaces")["forbidden_modules"].append("sessionforest.forest")
    kept, report = _lint(bent, tmp_path)
    assert kept == {"layers": False, "surfaces": False, "funnel": False, "acyclic": True}, report
    assert "sessionforest.search" in report and "sessionforest.model" in report


def test_the_architecture_document_draws_the_layers_in_order() -> None:
    """docs/architecture.md's graph is the `layers` contract: every module of every layer,
    a layer's modules on one line, the layers top to bottom in the contract's order."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    graph = text.split("```", 2)[1]
    lines = graph.splitlines()
    at = -1
    for layer in _contract(CONFIG, "layers")["layers"]:
        names = [n.strip().removeprefix("sessionforest.") for n in re.split(r"[|:]", layer)]
        drawn = []
        for name in names:
            path = PACKAGE.joinpath(*name.split("."))
            drawn.append(name.replace(".", "/") + ("/" if path.is_dir() else ".py"))
        (row,) = [i for i, line in enumerate(lines) if drawn[0] in line.split()]
        assert row > at, f"{layer} is drawn above the layer before it"
        assert all(token in lines[row].split() for token in drawn), (layer, lines[row])
        at = row
