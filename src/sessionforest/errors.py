"""Every error sessionforest raises on purpose, in one hierarchy.

    ForestError                      root: catch this to catch everything below
    ├── SessionError                 the in-memory Session tree (yoagent parity)
    │   ├── UnknownEntry             entry_id (and session_id, suggestions in a store)
    │   ├── UnknownCheckpoint        label (and session_id in a store)
    │   ├── EmptySession             an operation needed a head and there is none
    │   ├── DuplicateId              id: a JSONL file repeats an entry id
    │   ├── UnknownParent            id, parent: a parent not seen on an earlier line
    │   ├── JsonlParseError          line, reason: a line that is not a session entry
    │   └── HistoryDiverged          index: append_new history does not extend the path
    ├── StoreError                   the durable forest
    │   ├── UnknownSession           session_id, suggestions: the closest ids ("did you mean")
    │   ├── AmbiguousId              what, ref, count, candidates: a prefix names several ids
    │   ├── SessionExists            session_id: an import would overwrite a session
    │   ├── SessionBound             session_id, cwd: already bound to another directory
    │   ├── ForeignEntry             entry_id belongs to another session
    │   ├── HeadMoved                expect_head did not match: another writer moved it
    │   ├── InvalidPayload           kind, field, reason
    │   ├── UnknownKind              kind is not a kind the forest knows
    │   ├── LegacyKind               kind is readable but no longer appendable
    │   ├── DeltaRefused             kind ends in .delta: assemble before persisting
    │   ├── UnsupportedSchemaVersion entry_id, version: fail closed on unknown versions
    │   ├── SessionDamaged           session_id, reason: a traversal met a broken tree
    │   │   └── SessionQuarantined   `check` found damage and fenced the session off
    │   ├── InvalidArgument          argument, reason: a bad option value
    │   ├── StoreBusy                path: other writers held the store past the timeout
    │   ├── StoreUnreadable          path: not a database, or a path that cannot hold one
    │   │   ├── StoreMissing         path: no store there (reads never create one)
    │   │   ├── NotAStore            path, reason: a database, but not a forest store
    │   │   └── StoreOutdated        path, pending: needs migrations, opened read-only
    │   ├── StoreIOError             path, reason, code: SQLite failed on the store's file
    │   │   ├── StoreFull            the disk (or the size limit) is full
    │   │   └── StoreReadOnly        the file, directory or filesystem refuses writes
    │   ├── ImportRejected           path, line, reason (entry_id when known)
    │   │   └── EntryConflict        source_id: a record said something else before
    │   ├── MigrationError           migration name, reason
    │   ├── NotOnActiveBranch        entry_id, session_id: evidence off the active branch
    │   ├── NotEvidence              entry_id, kind: only worker.result entries are evidence
    │   └── UnknownTreeNode          tree, node_id: no such workspace or agent record
    ├── ProjectionError              session_id, entry_id, reason: context would be invalid
    ├── AdapterError                 provider, index, reason: a stream event we cannot take
    ├── ProviderError                provider, model, reason, status: a model request failed
    ├── NoModelConfigured            the server was started without a provider and model
    ├── TooLarge                     what, size, limit, at_least: an answer past the server's limit
    ├── SearchStopped                reason: its deadline passed or its client went away
    └── BackendUnavailable           an optional dependency is missing: says what to install

Every concrete error is also under exactly one family, which is what callers
catch and what surfaces map to codes (`FAMILIES`, the one table: CLI exit
status and JSON-RPC error code):

    NotFound       exit 3  rpc -32001  UnknownSession, UnknownEntry, UnknownCheckpoint,
                                       AmbiguousId, UnknownTreeNode
    Conflict       exit 4  rpc -32002  HeadMoved, SessionExists, SessionBound,
                                       NotOnActiveBranch, HistoryDiverged, EmptySession
    InvalidInput   exit 1  rpc -32003  InvalidPayload, InvalidArgument, UnknownKind,
                                       LegacyKind, DeltaRefused, ForeignEntry, NotEvidence,
                                       ImportRejected (EntryConflict), DuplicateId,
                                       UnknownParent, JsonlParseError, AdapterError,
                                       TooLarge
    Unavailable    exit 5  rpc -32004  StoreBusy, StoreUnreadable (StoreMissing, NotAStore,
                                       StoreOutdated), StoreIOError (StoreFull,
                                       StoreReadOnly), BackendUnavailable, ProviderError,
                                       NoModelConfigured
    Damaged        exit 6  rpc -32005  SessionDamaged (SessionQuarantined),
                                       UnsupportedSchemaVersion, MigrationError,
                                       ProjectionError

Every error carries the ids and line numbers a user needs as attributes, and
its message names them; `to_json()` gives both to scripts. The CLI turns these
into one line and a non-zero exit (and with `--json`, an `error` object).
Backends wrap their driver's exceptions: none escapes a store method.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# A candidate id as errors list it: {"id": ..., "title": ...} for a session,
# {"id": ..., "sequence": ..., "kind": ...} for an entry.
Candidate = Mapping[str, Any]


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, Sequence | set | frozenset):
        return [_jsonable(v) for v in value]
    return str(value)


def _named(candidate: Candidate) -> str:
    """`id ("title")` for a session, `id (3 user.message)` for an entry."""
    if "sequence" in candidate:
        return f"{candidate['id']} ({candidate['sequence']} {candidate.get('kind', '')})"
    title = str(candidate.get("title") or "")
    if not title:
        return f"{candidate['id']} (untitled)" if "title" in candidate else str(candidate["id"])
    title = title if len(title) <= 40 else title[:39] + "…"
    return f'{candidate["id"]} ("{title}")'


def _did_you_mean(suggestions: Sequence[Candidate]) -> str:
    if not suggestions:
        return ""
    named = [_named(c) for c in suggestions]
    listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " or " + named[-1]
    return f"; did you mean {listed}?"


class ForestError(Exception):
    """Root of every error sessionforest raises on purpose."""

    def fields(self) -> dict[str, Any]:
        """The ids, paths and line numbers this error carries, as JSON values.

        Read from the public attributes each error sets in its constructor, so
        a new error shows its fields without a table anywhere to update.
        """
        return {name: _jsonable(value) for name, value in vars(self).items() if name[0] != "_"}

    def to_json(self) -> dict[str, Any]:
        """`{"type": class name, "message": str(self), ...fields()}` for scripts and servers."""
        return {"type": type(self).__name__, "message": str(self), **self.fields()}


# --- families: what a caller (a CLI exit code, a JSON-RPC error code) acts on ----
#
# Every concrete error is under exactly one family (a test checks): callers
# catch a family, surfaces map a family to a code through FAMILIES, here only.


class NotFound(ForestError):
    """Something named does not exist (a session, entry, checkpoint, tree record)."""


class Conflict(ForestError):
    """The request is well formed but the state refuses it now (the head moved, the
    session exists or is bound elsewhere, the branch is not the active one)."""


class InvalidInput(ForestError):
    """The request or the file given is malformed (a payload, an argument, a line)."""


class Unavailable(ForestError):
    """The store or a dependency cannot serve it (busy, missing, read-only, full,
    not a store, needs migrating, an optional package not installed)."""


class Damaged(ForestError):
    """Stored history is damaged or unreadable here (quarantined, a newer schema
    version, a failed migration, a path that cannot become context)."""


@dataclass(frozen=True, slots=True)
class Family:
    name: str
    exit_code: int  # the `forest` command's exit status
    rpc_code: int  # the JSON-RPC 2.0 error code (-32000..-32099: implementation-defined)


# Exit 1 stays "an error", 2 is click's usage error; 3 and 4 keep their meaning
# from before the families (not found, the head moved).
FAMILIES: dict[type[ForestError], Family] = {
    NotFound: Family("not-found", 3, -32001),
    Conflict: Family("conflict", 4, -32002),
    InvalidInput: Family("invalid-input", 1, -32003),
    Unavailable: Family("unavailable", 5, -32004),
    Damaged: Family("damaged", 6, -32005),
}
OTHER = Family("error", 1, -32000)


def family(error: BaseException) -> Family:
    """The family of `error` (OTHER for anything not raised on purpose)."""
    for cls in type(error).__mro__:
        found = FAMILIES.get(cls)
        if found is not None:
            return found
    return OTHER


# --- the in-memory Session tree -------------------------------------------------


class SessionError(ForestError):
    """An error from a session tree operation (in memory or in a store)."""


class UnknownEntry(SessionError, NotFound):
    def __init__(
        self, entry_id: str, session_id: str | None = None, suggestions: Sequence[Candidate] = ()
    ) -> None:
        self.entry_id = entry_id
        self.session_id = session_id
        self.suggestions = tuple(suggestions)
        where = f" in session {session_id}" if session_id else ""
        super().__init__(
            f"unknown session entry: {entry_id}{where}{_did_you_mean(self.suggestions)}"
        )


class UnknownCheckpoint(SessionError, NotFound):
    def __init__(self, label: str, session_id: str | None = None) -> None:
        self.label = label
        self.session_id = session_id
        where = f" in session {session_id}" if session_id else ""
        super().__init__(f"unknown checkpoint label: {label}{where}")


class EmptySession(SessionError, Conflict):
    def __init__(self, session_id: str | None = None) -> None:
        self.session_id = session_id
        super().__init__(f"session {session_id} is empty" if session_id else "session is empty")


class DuplicateId(SessionError, InvalidInput):
    def __init__(self, id: str, line: int | None = None) -> None:
        self.id = id
        self.line = line
        at = f" (line {line})" if line is not None else ""
        super().__init__(f"duplicate session entry id: {id}{at}")


class UnknownParent(SessionError, InvalidInput):
    def __init__(self, id: str, parent: str, line: int | None = None) -> None:
        self.id = id
        self.parent = parent
        self.line = line
        at = f" (line {line})" if line is not None else ""
        super().__init__(f"entry {id} references unknown parent {parent}{at}")


class JsonlParseError(SessionError, InvalidInput):
    def __init__(self, line: int, reason: str) -> None:
        self.line = line
        self.reason = reason
        super().__init__(f"failed to parse session line {line}: {reason}")


class HistoryDiverged(SessionError, Conflict):
    def __init__(self, index: int) -> None:
        self.index = index
        super().__init__(
            f"history diverged from the session path at index {index}: the agent's "
            "messages no longer extend this branch (did compaction rewrite them?)"
        )


# --- the durable forest ---------------------------------------------------------


class StoreError(ForestError):
    """An error from the durable forest store."""


class UnknownSession(StoreError, NotFound):
    def __init__(self, session_id: str, suggestions: Sequence[Candidate] = ()) -> None:
        self.session_id = session_id
        self.suggestions = tuple(suggestions)
        super().__init__(f"unknown session: {session_id}{_did_you_mean(self.suggestions)}")


class AmbiguousId(StoreError, NotFound):
    """`ref` is a prefix of `count` ids (of sessions, or of entries of `session_id`)."""

    def __init__(
        self,
        what: str,
        ref: str,
        count: int,
        candidates: Sequence[Candidate],
        session_id: str | None = None,
    ) -> None:
        self.what = what  # "session" or "entry"
        self.ref = ref
        self.count = count
        self.candidates = tuple(candidates)
        self.session_id = session_id
        where = f" in session {session_id}" if session_id else ""
        many = "sessions" if what == "session" else "entries"
        listed = ", ".join(_named(c) for c in self.candidates)
        more = ", ..." if count > len(self.candidates) else ""
        super().__init__(
            f"{what} id prefix {ref!r} is ambiguous{where}: {count} {many} start with it "
            f"({listed}{more}); give more characters"
        )


class SessionExists(StoreError, Conflict):
    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"session {session_id} already exists in this store")


class SessionBound(StoreError, Conflict):
    def __init__(self, session_id: str, cwd: str, requested: str) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.requested = requested
        super().__init__(
            f"session {session_id} is already bound to {cwd}; a bound directory never "
            f"changes (its stamps compare against it), so it cannot be bound to {requested}"
        )


class ForeignEntry(StoreError, InvalidInput):
    def __init__(self, entry_id: str, session_id: str, owner_session_id: str) -> None:
        self.entry_id = entry_id
        self.session_id = session_id
        self.owner_session_id = owner_session_id
        super().__init__(
            f"entry {entry_id} belongs to session {owner_session_id}, not to session {session_id}"
        )


class HeadMoved(StoreError, Conflict):
    def __init__(self, session_id: str, expected: str | None, actual: str | None) -> None:
        self.session_id = session_id
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"head of session {session_id} moved: expected {expected}, found {actual}; "
            "nothing was appended"
        )


class InvalidPayload(StoreError, InvalidInput):
    def __init__(self, kind: str, field: str, reason: str) -> None:
        self.kind = kind
        self.field = field
        self.reason = reason
        super().__init__(f"invalid {kind} payload: field '{field}' {reason}")


class UnknownKind(StoreError, InvalidInput):
    def __init__(self, kind: str) -> None:
        self.kind = kind
        super().__init__(f"unknown entry kind: {kind!r}")


class LegacyKind(StoreError, InvalidInput):
    def __init__(self, kind: str, replacement: str | None) -> None:
        self.kind = kind
        self.replacement = replacement
        instead = f"; append {replacement} instead" if replacement else ""
        super().__init__(f"entry kind {kind!r} is legacy: readable but not appendable{instead}")


class DeltaRefused(StoreError, InvalidInput):
    def __init__(self, kind: str) -> None:
        self.kind = kind
        super().__init__(
            f"refusing to persist {kind!r}: stream deltas must be assembled into a "
            "durable entry by the adapter first"
        )


class UnsupportedSchemaVersion(StoreError, Damaged):
    def __init__(
        self,
        entry_id: str,
        version: int,
        session_id: str | None = None,
        refusing: str = "return partial history",
    ) -> None:
        self.entry_id = entry_id
        self.version = version
        self.session_id = session_id
        where = f" in session {session_id}" if session_id else ""
        super().__init__(
            f"entry {entry_id}{where} has semantic schema version {version}, which this "
            f"sessionforest cannot read (supported: 1, 2); refusing to {refusing}"
        )


class SessionDamaged(StoreError, Damaged):
    def __init__(self, session_id: str, reason: str) -> None:
        self.session_id = session_id
        self.reason = reason
        super().__init__(self._message())

    def _message(self) -> str:
        return f"session {self.session_id} is damaged: {self.reason}; run `forest check`"


class SessionQuarantined(SessionDamaged):
    def _message(self) -> str:
        return (
            f"session {self.session_id} is quarantined by `forest check`: {self.reason}; "
            "reads and appends are refused until it is repaired"
        )


class InvalidArgument(StoreError, InvalidInput):
    def __init__(self, argument: str, reason: str) -> None:
        self.argument = argument
        self.reason = reason
        super().__init__(f"invalid {argument}: {reason}")


class StoreBusy(StoreError, Unavailable):
    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"store {path} is busy: {reason}; nothing was written")


class StoreUnreadable(StoreError, Unavailable):
    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot open store {path}: {reason}")


class StoreMissing(StoreUnreadable):
    def __init__(self, path: str) -> None:
        super().__init__(
            path,
            "no such file; nothing was created (reading never creates a store, "
            "creating a session or importing does)",
        )


class NotAStore(StoreUnreadable):
    def __init__(self, path: str, reason: str) -> None:
        super().__init__(path, f"not a sessionforest store: {reason}; the file was left untouched")
        self.reason = reason


class StoreOutdated(StoreUnreadable):
    def __init__(self, path: str, pending: list[str]) -> None:
        self.pending = pending
        super().__init__(
            path,
            f"written by an older sessionforest: {len(pending)} "
            f"{'migration' if len(pending) == 1 else 'migrations'} to apply "
            f"({', '.join(pending)}), and a read-only open never migrates; "
            f"run `forest --db {path} migrate` (or any write) to upgrade it",
        )


class StoreIOError(StoreError, Unavailable):
    """SQLite could not do what was asked of the store's file; `code` is SQLite's name."""

    def __init__(self, path: str, reason: str, code: str | None = None) -> None:
        self.path = path
        self.reason = reason
        self.code = code
        super().__init__(self._message())

    def _message(self) -> str:
        code = f" ({self.code})" if self.code else ""
        return f"store {self.path}: {self.reason}{code}"


class StoreFull(StoreIOError):
    def _message(self) -> str:
        return (
            f"store {self.path} is full ({self.reason}): the write was rolled back and "
            "the store is as it was before it; free space and try again"
        )


class StoreReadOnly(StoreIOError):
    def _message(self) -> str:
        return f"store {self.path} cannot be written ({self.reason}); nothing was written"


class ImportRejected(StoreError, InvalidInput):
    def __init__(
        self, path: str, line: int | None, reason: str, entry_id: str | None = None
    ) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        self.entry_id = entry_id
        at = f":{line}" if line is not None else ""
        entry = f" (entry {entry_id})" if entry_id else ""
        super().__init__(f"{path}{at}{entry}: {reason}; nothing of this chat was imported")


class EntryConflict(ImportRejected):
    """A record says something else than the same record did before: on an earlier line
    of the file, or in an earlier import. The message names the record by its source id
    (`source_id`, such as "uuid 5f3e..."); `entry_id` is the forest id it maps to."""

    def __init__(
        self,
        path: str,
        line: int | None,
        reason: str,
        entry_id: str | None = None,
        source_id: str | None = None,
    ) -> None:
        super().__init__(path, line, reason, None)
        self.entry_id = entry_id
        self.source_id = source_id


class MigrationError(StoreError, Damaged):
    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason
        super().__init__(f"migration {name} failed: {reason}; the database was left as it was")


class NotOnActiveBranch(StoreError, Conflict):
    def __init__(self, entry_id: str, session_id: str) -> None:
        self.entry_id = entry_id
        self.session_id = session_id
        super().__init__(
            f"entry {entry_id} is not on the active branch of session {session_id}; "
            "evidence must come from the branch the session currently stands on"
        )


class NotEvidence(StoreError, InvalidInput):
    def __init__(self, entry_id: str, kind: str) -> None:
        self.entry_id = entry_id
        self.kind = kind
        super().__init__(
            f"entry {entry_id} is a {kind}, not a worker.result: only worker results are evidence"
        )


class UnknownTreeNode(StoreError, NotFound):
    def __init__(self, tree: str, node_id: str) -> None:
        self.tree = tree
        self.node_id = node_id
        super().__init__(f"unknown {tree} record: {node_id}")


class ProjectionError(Damaged):
    def __init__(self, session_id: str, entry_id: str | None, reason: str) -> None:
        self.session_id = session_id
        self.entry_id = entry_id
        self.reason = reason
        at = f" at entry {entry_id}" if entry_id else ""
        super().__init__(f"cannot project session {session_id}{at}: {reason}")


class AdapterError(InvalidInput):
    def __init__(self, provider: str, index: int | None, reason: str) -> None:
        self.provider = provider
        self.index = index
        self.reason = reason
        at = f" (event {index})" if index is not None else ""
        super().__init__(f"{provider} stream{at}: {reason}")


class TooLarge(InvalidInput):
    """An answer (or a batch's answers) the server will not build past its limit."""

    def __init__(
        self, what: str, size: int, limit: int, advice: str, *, at_least: bool = False
    ) -> None:
        self.what = what
        self.size = size  # at_least: what was counted before refusing (the rest unread)
        self.limit = limit
        self.at_least = at_least
        measure = f"at least {size}" if at_least else str(size)
        super().__init__(f"{what} is {measure} bytes, over the limit of {limit} bytes; {advice}")


class BackendUnavailable(Unavailable):
    def __init__(self, install: str) -> None:
        self.install = install
        super().__init__(f"this feature needs an optional dependency: {install}")


class SearchStopped(Unavailable):
    """A search gave up before answering: its deadline passed or its client went away
    (sessionforest.deadline). Searches only read: nothing was changed."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"the search stopped: {reason}")


class NoModelConfigured(Unavailable):
    def __init__(self) -> None:
        super().__init__(
            "no model is configured on this server: start `forest serve` with --provider "
            "and --model (or FOREST_PROVIDER and FOREST_MODEL), the API key in the SDK's "
            "variable (ANTHROPIC_API_KEY or OPENAI_API_KEY)"
        )


# Why a model request failed, in a word callers act on (deep search falls back,
# the composer says so): quota and rate_limit are told apart because a user
# can wait out one and must pay for the other.
PROVIDER_REASONS = ("quota", "rate_limit", "timeout", "auth", "bad_request", "error")


class ProviderError(Unavailable):
    def __init__(
        self, provider: str, model: str, reason: str, detail: str, *, status: int | None = None
    ) -> None:
        if reason not in PROVIDER_REASONS:
            raise ValueError(f"unknown provider failure reason {reason!r}")
        self.provider = provider
        self.model = model
        self.reason = reason
        self.status = status
        self.detail = detail
        what = {
            "quota": "the account's quota is used up",
            "rate_limit": "rate limited",
            "timeout": "timed out",
            "auth": "authentication failed (check the API key variable)",
            "bad_request": "refused the request",
            "error": "failed",
        }[reason]
        code = f" (HTTP {status})" if status is not None else ""
        super().__init__(f"{provider} model {model}: {what}{code}: {detail}")
