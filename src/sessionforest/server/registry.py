"""The method machinery: what a JSON-RPC method is, groups of them, and the registry.

A method is its params (a msgspec Struct: dispatch validates with it and the
OpenRPC document publishes its JSON Schema), its result type (a wire
TypedDict), its mode and its handler. A handler gets a `Call` and the params
and returns a wire document built by the facade; `mode` says where it runs:
"read" (reader pool), "write" (the one writer thread, which reports its
changes), "append" (the handler only builds an AppendRequest, which joins the
writer's next group commit) or "loop" (on the event loop: nothing that
touches the store).

Each area of the API (server/handlers/) declares its methods in one `Group`;
`api.py` builds the `Registry` from the groups, in the order the OpenRPC
document lists them. Nothing here knows any handler.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

from ..forest import UNSET as FOREST_UNSET
from ..store.base import Unset
from .limits import MAX_QUERY

if TYPE_CHECKING:
    from .context import Call

Mode = Literal["read", "write", "append", "loop"]

# Param types several areas share (their limits are published in the document).
Id = Annotated[str, Meta(min_length=1, max_length=128, description="an exact id")]
Query = Annotated[str, Meta(max_length=MAX_QUERY)]
ExpectHead = Annotated[
    str | UnsetType | None,
    Meta(description="fail with HeadMoved unless the head is this entry (null: no entries)"),
]


def expected(value: str | UnsetType | None) -> str | Unset | None:
    """msgspec's "absent" as the facade's (absent: no check; null: an empty session)."""
    return FOREST_UNSET if value is UNSET else value


class Params(Struct, forbid_unknown_fields=True):
    """Base of every method's params; unknown names are refused (-32602)."""


class NoParams(Params):
    pass


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    params: type[Params]
    result: Any  # a wire TypedDict, or list[...] of one
    mode: Mode
    handler: Callable[[Call, Any], Any]
    summary: str
    description: str
    # It appends to its params' `session_id`: the stamp is taken ahead, off the writer.
    appends: bool = False


@dataclass(frozen=True, slots=True)
class Subscribed:
    """A loop handler's answer plus what to run once that answer has been sent
    (a subscription goes live only after its answer left)."""

    answer: Any
    release: Callable[[], None]


class Group:
    """The methods of one area, in the order they are declared."""

    def __init__(self, area: str) -> None:
        self.area = area
        self.methods: dict[str, Method] = {}

    def method(
        self, name: str, params: type[Params], result: Any, mode: Mode, *, appends: bool = False
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Declare the decorated function as method `name`; its docstring's first
        line is the summary, the rest the description. `appends`: a write that
        appends to its params' `session_id` (its worktree stamp is taken ahead on
        another thread, so the writer never waits on git)."""

        def declare(fn: Callable[..., Any]) -> Callable[..., Any]:
            summary, _, description = (fn.__doc__ or "").strip().partition("\n")
            text = " ".join(line.strip() for line in description.splitlines() if line.strip())
            if name in self.methods:
                raise ValueError(f"{self.area}: {name} is declared twice")
            self.methods[name] = Method(
                name, params, result, mode, fn, summary.strip(), text, appends or mode == "append"
            )
            return fn

        return declare


class Registry(Mapping[str, Method]):
    """Every method a dispatcher serves, by name, in the groups' order.

    Immutable once built; hashed by identity (the OpenRPC document is cached
    per registry)."""

    def __init__(self, *groups: Group) -> None:
        methods: dict[str, Method] = {}
        for group in groups:
            for name, m in group.methods.items():
                if name in methods:
                    raise ValueError(f"{name} is declared by two groups (one is {group.area})")
                methods[name] = m
        self._methods = methods

    def __getitem__(self, name: str) -> Method:
        return self._methods[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._methods)

    def __len__(self) -> int:
        return len(self._methods)

    __hash__ = object.__hash__

    def __eq__(self, other: object) -> bool:
        return self is other
