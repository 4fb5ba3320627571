"""What every command module shares: the lazily opened store, `--json` output, entry refs.

Kept apart from `main.py` so command modules can import it without importing
the group that imports them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
import orjson

if TYPE_CHECKING:
    # The facade loads the store backends: imported when a command opens the store,
    # so `--help`, `demo` and the group itself start without them.
    from ..forest import Forest

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class State:
    """The global options; the store opens on first use so `demo` and `--help` never touch it.

    A command asks for the store the way it uses it: `reader` (read-only:
    never creates, migrates or writes), `forest` (writes to an existing
    store) or `creator` (writes, creating the store if needed).
    """

    db: Path | str | None  # a file, or a URL (sqlite:///..., postgresql://...)
    _forest: Forest | None = field(default=None, repr=False)

    @property
    def reader(self) -> Forest:
        return self._open(readonly=True, create=False)

    @property
    def forest(self) -> Forest:
        return self._open(readonly=False, create=False)

    @property
    def creator(self) -> Forest:
        return self._open(readonly=False, create=True)

    def _open(self, *, readonly: bool, create: bool) -> Forest:
        if self._forest is None:
            from ..forest import Forest

            self._forest = Forest.open(self.db, readonly=readonly, create=create)
        return self._forest

    def close(self) -> None:
        if self._forest is not None:
            self._forest.close()
            self._forest = None


pass_state = click.make_pass_decorator(State)


def store_location(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> Path | str | None:
    """A `--db` value: a URL as given (postgresql://...), else a file path."""
    if value is None or "://" in value:
        return value
    if not value:
        raise click.BadParameter("empty", ctx=ctx, param=param)
    return Path(value)


# ctx.meta key on the root context: whether this command line asked for --json,
# so the error boundary in main.py answers a failure in JSON too.
JSON_KEY = "sessionforest.json"


def _note_json(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    ctx.find_root().meta[JSON_KEY] = value
    return value


def json_option(fn: F) -> F:
    """The `--json` flag, passed to the command as `as_json`.

    Eager, so the parsed value is known before any other option can fail.
    """
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        is_eager=True,
        callback=_note_json,
        help="Print one JSON document instead of text.",
    )(fn)


def emit_json(value: Any) -> None:
    """Write `value` as one compact JSON document (plus newline) to stdout."""
    click.echo(orjson.dumps(value).decode())


def resolve_entry(forest: Forest, session_id: str, ref: str) -> str:
    """An entry id from `ref`: an id, a unique id prefix, or a sequence number as
    printed by `log` and `tree` (see `Forest.resolve_entry` for which wins)."""
    return forest.resolve_entry(session_id, ref)
