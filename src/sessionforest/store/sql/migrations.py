"""Schema migrations of both SQL backends: the released `.sql` files and the one runner.

A backend's migrations are the files `NNNN_name.sql` of one directory in its
package (`store/sqlite/sql/`, `store/postgres/sql/`), shipped in the wheel and
read with importlib.resources. They run in number order, each in its own
transaction, and are recorded by name in `forest_migrations`; the number is
only their order, the name is what a store records. A released file's text is
fixed: it is what every store of that release ran, so it names literal values,
never a live constant of the code, and a change to the schema is a new file
with the next number. SQLite keeps each CREATE statement's text in
`sqlite_master`, so the files keep the statements byte for byte as released.

What differs per backend (how a transaction starts and what it locks, how the
applied set is read and recorded, how a driver error becomes a MigrationError)
is a `Steps` the backend hands `run`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from .dialect import C

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

# A released migration's file name: its number (order) and its name (what is recorded).
FILE_NAME = re.compile(r"^(\d{4})_([a-z][a-z0-9_]*)\.sql$")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Migration(Generic[C]):
    """One released migration: its recorded name and the SQL it runs.

    `code` is for the one kind of migration SQL cannot say, a data conversion
    that parses what it moves (SQLite's pre-forest `agent_events_to_forest`);
    every other migration is its `sql`.
    """

    name: str
    sql: str = ""
    code: Callable[[C], None] | None = None


def files(package: str, directory: str = "sql") -> list[tuple[int, str, Traversable]]:
    """`package`'s migration files in `directory` as (number, name, file), by number.

    Only the directory is listed: `names` (all an open of an up-to-date store
    needs) reads no file, `load` (what migrating needs) reads them all.
    """
    found: dict[int, tuple[int, str, Traversable]] = {}
    for item in _directory(package, directory).iterdir():
        match = FILE_NAME.match(item.name)
        if match is None:
            if item.name.endswith(".sql"):
                raise RuntimeError(f"{package}/{directory}/{item.name}: not NNNN_name.sql")
            continue
        number = int(match[1])
        if number in found:
            raise RuntimeError(f"{package}/{directory}: two migrations numbered {number:04d}")
        found[number] = (number, match[2], item)
    return [found[n] for n in sorted(found)]


def names(
    package: str, directory: str = "sql", code: Mapping[int, str] | None = None
) -> tuple[str, ...]:
    """The names of the migrations `load` would return, in order, without reading a file.

    `code` names the numbers that have no file.
    """
    found = dict(code or {})
    for number, name, _item in files(package, directory):
        _add(found, number, name, f"{package}/{directory}")
    return _ordered(found, f"{package}/{directory}")


def load(
    package: str, directory: str = "sql", code: Mapping[int, Migration[C]] | None = None
) -> tuple[Migration[C], ...]:
    """The migrations in `package`'s `directory`, in number order, their SQL read.

    `code` fills the numbers that have no file. The numbers must run 1..N with
    no gap and no repeat: a missing or doubled file would change what a store
    of some release has run.
    """
    found: dict[int, Migration[C]] = dict(code or {})
    for number, name, item in files(package, directory):
        migration: Migration[C] = Migration(name, item.read_text(encoding="utf-8"))
        _add(found, number, migration, f"{package}/{directory}")
    _ordered({n: m.name for n, m in found.items()}, f"{package}/{directory}")
    return tuple(found[n] for n in sorted(found))


def _add(found: dict[int, T], number: int, item: T, where: str) -> None:
    if number in found:
        raise RuntimeError(f"{where}: two migrations numbered {number:04d}")
    found[number] = item


def _ordered(found: Mapping[int, str], where: str) -> tuple[str, ...]:
    """The names by number, once checked: numbers 1..N with no gap, no name twice."""
    numbers = sorted(found)
    if numbers != list(range(1, len(numbers) + 1)):
        missing = sorted(set(range(1, max(numbers, default=0) + 1)) - set(numbers))
        raise RuntimeError(f"{where}: no migration numbered {missing[0]:04d}")
    ordered = tuple(found[n] for n in numbers)
    if len(set(ordered)) != len(ordered):
        raise RuntimeError(f"{where}: a migration name is used twice")
    return ordered


def _directory(package: str, directory: str) -> Traversable:
    """The files' directory: a plain path when the package is a directory on disk (as
    an installed wheel is), else importlib.resources' view of it (a zip). Importing
    importlib.resources (tempfile, shutil, zipfile and the compressors with it) cost
    every CLI call ~9 ms before a store was even opened."""
    for root in getattr(importlib.import_module(package), "__path__", ()):
        path = Path(root, directory)
        if path.is_dir():
            return path
    from importlib import resources

    return resources.files(package).joinpath(directory)


class Steps(Protocol[C]):
    """What one backend does around each migration."""

    def transaction(self, conn: C, migration: Migration[C]) -> AbstractContextManager[None]:
        """One migration's transaction: begin (and lock), commit, or roll back and
        raise the driver's error as MigrationError."""
        ...

    def applied(self, conn: C) -> Collection[str]:
        """The names this store has recorded."""
        ...

    def prepare(self, conn: C, done: Collection[str]) -> None:
        """What must exist before a migration runs (the record table, ...)."""
        ...

    def execute(self, conn: C, sql: str) -> None:
        """Run a migration's SQL."""
        ...

    def record(self, conn: C, position: int, migration: Migration[C]) -> None:
        """Record that the migration at `position` (1-based) has run."""
        ...


def pending(migrations: Sequence[Migration[C]], done: Collection[str]) -> list[str]:
    """Names of the migrations not in `done`, in order."""
    return [m.name for m in migrations if m.name not in done]


def run(conn: C, migrations: Sequence[Migration[C]], steps: Steps[C]) -> list[str]:
    """Apply every pending migration, each in its own transaction; the names applied.

    The applied set is read again inside each transaction, so openers racing
    to migrate one store apply each migration once.
    """
    todo = set(pending(migrations, steps.applied(conn)))
    ran: list[str] = []
    for position, migration in enumerate(migrations, 1):
        if migration.name not in todo:
            continue
        with steps.transaction(conn, migration):
            done = steps.applied(conn)
            if migration.name in done:
                continue
            steps.prepare(conn, done)
            if migration.code is not None:
                migration.code(conn)
            else:
                steps.execute(conn, migration.sql)
            steps.record(conn, position, migration)
        ran.append(migration.name)
    return ran
