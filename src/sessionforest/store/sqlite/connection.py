"""Opening a store file, and turning SQLite's failures into errors that name it.

A read-write open creates (only the default store's directory, never a
typed path's), refuses a database that is not a store, migrates and switches
to WAL. A read-only open creates, migrates and writes nothing, and leaves no
-wal/-shm behind that were not there: a WAL store with neither file is read
`immutable` (nothing else has it open, so the main file holds everything)
while a lock keeps other processes from checkpointing into it on close. (A
writer's automatic checkpoint, after 1000 pages, is not held off: a reader
meant to stay open while others write a lot should open read-write.)
"""

from __future__ import annotations

import functools
import os
import sqlite3
import struct
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ...errors import (
    NotAStore,
    StoreBusy,
    StoreError,
    StoreFull,
    StoreIOError,
    StoreMissing,
    StoreOutdated,
    StoreReadOnly,
    StoreUnreadable,
)
from . import migrations
from .migrations import rollback as rollback  # re-exported for the write paths

T = TypeVar("T")

DURABILITY = {
    # WAL + NORMAL: a committed append survives any process crash (SIGKILL
    # included); a power cut may lose the last few commits, never consistency.
    "normal": "NORMAL",
    # WAL + FULL: also survives power loss for every acknowledged commit, at
    # the price of one fsync per append.
    "full": "FULL",
}

# SQLite's primary result codes (sqlite3.h), for the low byte of extended codes.
SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY = 5, 6, 8
SQLITE_CORRUPT, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOTADB = 11, 13, 14, 26

# Where SQLite's unix VFS takes its file locks (os_unix.c): a reader holds a
# read lock on the SHARED range; closing the last WAL connection, which
# checkpoints into the main file, needs a write lock there first.
PENDING_BYTE = 0x40000000
SHARED_FIRST = PENDING_BYTE + 2
SHARED_SIZE = 510

READ_ONLY_ASKED = "it was opened read-only"
READ_ONLY_FILE = "the file or its directory cannot be written (read-only file or filesystem)"

# Bytes 18 and 19 of the file header are 2 in WAL mode (fileformat2.html).
WAL_HEADER = b"\x02\x02"


def default_path() -> Path:
    """`FOREST_DB` if set, else `forest.db` in the user data directory."""
    return _default_target()[0]


def _default_target() -> tuple[Path, bool]:
    """The default store and whether it is the built-in one (whose directory we create)."""
    env = os.environ.get("FOREST_DB")
    if env:
        return Path(env).expanduser(), False
    import platformdirs

    data = platformdirs.user_data_dir("sessionforest", appauthor=False)
    return Path(data) / "forest.db", True


def driver_error(
    path: Path | str, exc: sqlite3.Error, *, readonly: str | None = None
) -> StoreError:
    """The StoreError for a sqlite3 error met on the store at `path`.

    `readonly` says why the store was opened read-only (None: it was not).
    """
    where, reason = str(path), str(exc)
    code: int = getattr(exc, "sqlite_errorcode", -1)
    name: str | None = getattr(exc, "sqlite_errorname", None)
    primary = code & 0xFF if code >= 0 else -1
    if primary == SQLITE_FULL:
        return StoreFull(where, reason, name)
    if primary == SQLITE_READONLY:
        if readonly is not None:
            reason = readonly
        return StoreReadOnly(where, reason, name)
    if primary in (SQLITE_BUSY, SQLITE_LOCKED):
        return StoreBusy(where, reason)
    if primary in (SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_CANTOPEN):
        return StoreUnreadable(where, reason)
    return StoreIOError(where, reason, name)


@contextmanager
def transaction(conn: sqlite3.Connection, path: Path, readonly: str | None) -> Iterator[None]:
    """One BEGIN IMMEDIATE ... COMMIT; rolls back and converts any driver error."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        raise driver_error(path, exc, readonly=readonly) from exc
    try:
        yield
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        rollback(conn)
        raise driver_error(path, exc, readonly=readonly) from exc
    except BaseException:
        rollback(conn)
        raise


# struct flock with a 64-bit off_t (Python is built with large-file support): l_type,
# l_whence, l_start, l_len, l_pid in native alignment; "0q" pads the end as C does.
_FLOCK = "hhqqi0q"


def _hold_shared(path: Path) -> int | None:
    """A read lock on SQLite's SHARED range, held by an open file description.

    While held, no other connection can take the exclusive lock it needs to
    checkpoint on close or change the journal mode, so the main file does not
    change under an immutable reader. Linux's OFD locks (not POSIX ones)
    because closing this descriptor must not drop SQLite's own locks held in
    this process. None where OFD locks do not exist or the lock is refused.
    """
    import fcntl

    operation = getattr(fcntl, "F_OFD_SETLK", None)
    if operation is None:
        return None
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    request = struct.pack(_FLOCK, fcntl.F_RDLCK, os.SEEK_SET, SHARED_FIRST, SHARED_SIZE, 0)
    try:
        fcntl.fcntl(fd, operation, request)
    except OSError:
        os.close(fd)
        return None
    return fd


@dataclass
class Opened:
    conn: sqlite3.Connection
    readonly: str | None  # why it is read-only; None: it is not
    lock: int | None  # a descriptor to close with the connection
    migrated: list[str]
    # Opens one more connection to the same file, the same way (readers of a pool).
    connect: Callable[[], sqlite3.Connection]
    # A store opened read-only on request whose file is writable and read live (not
    # immutable): opens a writer connection, for the one write such an opener makes,
    # indexing appends other writers left pending (search/catchup.py).
    index_writer: Callable[[], sqlite3.Connection] | None = None

    def close(self) -> None:
        self.conn.close()
        if self.lock is not None:
            os.close(self.lock)
            self.lock = None


def _readonly_uri(target: Path, immutable: bool) -> str:
    # immutable: no -wal/-shm are created (nor needed: see _hold_shared).
    query = "?mode=ro&immutable=1" if immutable else "?mode=ro"
    return target.absolute().as_uri() + query


def _connect(target: str | Path, uri: bool, busy_timeout_ms: int) -> sqlite3.Connection:
    # isolation_level=None: we issue BEGIN/COMMIT ourselves so every write is
    # exactly one explicit IMMEDIATE transaction; check_same_thread=False: a
    # pooled connection moves between threads (one at a time, see database.py).
    conn = sqlite3.connect(target, uri=uri, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    return conn


def _connect_readonly(target: Path, busy_timeout_ms: int) -> tuple[str, int | None]:
    """The URI to read `target` through, and the lock to hold while any reader is open."""
    with target.open("rb") as handle:
        header = handle.read(100)
    lock = None
    if header[18:20] == WAL_HEADER and not _sidecars(target):
        lock = _hold_shared(target)
        if lock is not None and _sidecars(target):  # a writer came in before the lock
            os.close(lock)
            lock = None
    return _readonly_uri(target, lock is not None), lock


def _sidecars(target: Path) -> bool:
    return any(target.with_name(target.name + s).exists() for s in ("-wal", "-shm"))


def _writable(target: Path) -> bool:
    # Root may write a 0444 file; access() says so, and says EROFS for read-only mounts.
    return os.access(target, os.W_OK) and os.access(target.parent, os.W_OK)


def open_store(
    path: str | os.PathLike[str] | None,
    *,
    readonly: bool,
    create: bool,
    durability: str,
    busy_timeout_ms: int,
) -> tuple[Path, Opened]:
    """Open the store file; see the module docstring for what each mode may do."""
    if path is None:
        target, builtin = _default_target()
    else:
        target, builtin = Path(path), False
    where = str(target)
    try:
        exists = target.exists()
        if exists and target.is_dir():
            raise StoreUnreadable(where, "is a directory")
        if not exists and (readonly or not create):
            raise StoreMissing(where)
        if not exists and not target.parent.is_dir():
            if target.parent.exists():
                raise StoreUnreadable(where, f"{target.parent} is not a directory")
            if not builtin:
                # A typo in --db must not leave directories behind.
                raise StoreUnreadable(
                    where,
                    f"directory {target.parent} does not exist "
                    "(only the default store's directory is created)",
                )
            target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # e.g. a parent we may not search
        raise StoreUnreadable(where, str(exc)) from exc
    # A file we may not write is opened read-only: reads work, writes say why not.
    as_reader = readonly or (exists and not _writable(target))
    why = None
    if as_reader:
        why = READ_ONLY_ASKED if readonly else READ_ONLY_FILE
    lock = None
    try:
        if as_reader:
            uri, lock = _connect_readonly(target, busy_timeout_ms)
            connect = functools.partial(_connect, uri, True, busy_timeout_ms)
        else:
            connect = functools.partial(_connect, target, False, busy_timeout_ms)
        conn = connect()
    except (OSError, sqlite3.Error) as exc:
        if lock is not None:
            os.close(lock)
        raise StoreUnreadable(where, str(exc)) from exc
    opened = Opened(conn, why, lock, [], connect)
    if readonly and lock is None and exists and _writable(target):
        opened.index_writer = functools.partial(_connect, target, False, busy_timeout_ms)
    try:
        foreign = migrations.not_a_store(conn, empty_ok=not as_reader)
        if foreign is not None:
            raise NotAStore(where, foreign)
        if as_reader:
            pending = migrations.pending(conn)
            if pending and not readonly:
                raise StoreReadOnly(where, f"it needs migrations ({', '.join(pending)})")
            if pending:
                raise StoreOutdated(where, pending)
        else:
            # Migrate before switching to WAL: a refused migration then leaves
            # the file exactly as it was, journal mode included.
            opened.migrated = migrations.migrate(conn)
            _enable_wal(conn, busy_timeout_ms / 1000)
            conn.execute(f"PRAGMA synchronous = {DURABILITY[durability]}")
    except sqlite3.Error as exc:
        opened.close()
        raise driver_error(target, exc, readonly=why) from exc
    except BaseException:
        opened.close()
        raise
    return target, opened


def _enable_wal(conn: sqlite3.Connection, timeout_s: float) -> None:
    """Switch to WAL, waiting out other connections.

    Changing the journal mode needs the database to itself and SQLite reports
    SQLITE_BUSY at once rather than through the busy handler, so retry here.
    """
    deadline = time.monotonic() + timeout_s
    while conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)
