"""The public surface: a curated __all__ and one error hierarchy."""

from __future__ import annotations

import inspect
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hatchling.builders.wheel import WheelBuilder

import sessionforest
from sessionforest import errors
from sessionforest.store.sqlite import default_path


def test_all_is_curated_sorted_and_importable() -> None:
    assert sessionforest.__all__ == sorted(sessionforest.__all__)
    for name in sessionforest.__all__:
        assert getattr(sessionforest, name) is not None


def test_every_error_derives_from_forest_error_and_is_exported() -> None:
    classes = [
        obj
        for _, obj in inspect.getmembers(errors, inspect.isclass)
        if issubclass(obj, Exception) and obj.__module__ == errors.__name__
    ]
    assert len(classes) > 20
    for cls in classes:
        assert issubclass(cls, sessionforest.ForestError), cls
        assert cls.__name__ in sessionforest.__all__, cls
        # The hierarchy drawn in the module docstring names every class.
        assert cls.__name__ in (errors.__doc__ or ""), cls


def test_session_errors_sit_under_session_error() -> None:
    for name in (
        "UnknownEntry",
        "UnknownCheckpoint",
        "EmptySession",
        "DuplicateId",
        "UnknownParent",
        "JsonlParseError",
        "HistoryDiverged",
    ):
        assert issubclass(getattr(sessionforest, name), sessionforest.SessionError)


def test_forest_db_overrides_the_default_location(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FOREST_DB", str(tmp_path / "custom.db"))
    assert default_path() == tmp_path / "custom.db"
    with sessionforest.Forest.open() as forest:
        assert forest.path == tmp_path / "custom.db"
    assert (tmp_path / "custom.db").exists()
    monkeypatch.delenv("FOREST_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "sessionforest" / "forest.db"


def test_the_wheel_ships_every_released_migration_and_a_store_opens_from_it(
    tmp_path: Path,
) -> None:
    # The migrations are package data read with importlib.resources: a store made
    # by the installed wheel alone (not this checkout) must get the whole schema.
    root = Path(__file__).resolve().parent.parent
    (wheel,) = WheelBuilder(str(root)).build(directory=str(tmp_path), versions=["standard"])
    names = set(zipfile.ZipFile(wheel).namelist())
    source = root / "src"
    for backend in ("sqlite", "postgres"):
        released = sorted((source / "sessionforest" / "store" / backend / "sql").glob("*.sql"))
        assert released
        for path in released:
            assert str(path.relative_to(source)) in names
    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)
    script = (
        "import sqlite3, sys, sessionforest\n"
        "from sessionforest import Forest\n"
        "from sessionforest.store.sqlite import migrations\n"
        "assert sessionforest.__file__.startswith(sys.argv[2]), sessionforest.__file__\n"
        "Forest.open(sys.argv[1]).close()\n"
        "print(migrations.dump_schema(sqlite3.connect(sys.argv[1])), end='')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "fresh.db"), str(unpacked)],
        env={"PYTHONPATH": str(unpacked), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    committed = (source / "sessionforest" / "store" / "sqlite" / "schema.sql").read_text()
    assert done.stdout == committed.split("\n\n", 1)[1]


def test_importing_the_contracts_loads_no_backend() -> None:
    # `sessionforest` and `store.base` export lazily and `sessionforest.store` is an empty
    # package: the contracts cost only themselves and the model.
    script = (
        "import sys\n"
        "from sessionforest.store.base import Backend, BulkStore, SearchIndex, Store\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('sessionforest'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    loaded = done.stdout.split()
    assert "sessionforest.store.base.store" in loaded
    assert not [m for m in loaded if m.startswith(("sessionforest.store.sqlite",
                "sessionforest.store.postgres", "sessionforest.store.sql", "sessionforest.forest",
                "sessionforest.search"))]  # fmt: skip
