"""The elements of a huge top-level JSON array, one at a time, in bounded memory.

A ChatGPT `conversations.json` is one array of every conversation, often a
single line of hundreds of megabytes. `elements` scans it for structure only
(brackets, braces, strings and escapes) and yields each element's raw bytes,
so the caller parses one conversation at a time with orjson.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from .report import Progress

CHUNK = 1 << 20
_SPECIAL = re.compile(rb'[\[\]{}"\\]')
_BLANK = b" \t\r\n"


@dataclass(frozen=True, slots=True)
class Element:
    """One array element: its raw bytes, or why it could not be taken (`error`)."""

    index: int  # 1-based position in the array
    line: int  # line of the file where it starts
    raw: bytes = b""
    error: str | None = None


class NotAnArray(ValueError):
    """The document does not start with `[`."""


def elements(handle: IO[bytes], limit: int, progress: Progress | None = None) -> Iterator[Element]:
    """Yield every element of the array `handle` holds; an element over `limit` bytes,
    or anything but objects and arrays between the commas, comes back as an error."""
    scan = _Scan(limit)
    while chunk := handle.read(CHUNK):
        if progress is not None:
            progress.advance(len(chunk))
        yield from scan.feed(chunk)
    yield from scan.end()


class _Scan:
    """The scanner's state between chunks."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.depth = 0  # 0: outside the array, 1: between elements, 2+: inside one
        self.in_string = False
        self.skip_at = -1  # absolute offset of a byte escaped by a backslash
        self.offset = 0  # absolute offset of the current chunk's first byte
        self.line = 1
        self.index = 0
        self.item = bytearray()
        self.item_line = 0
        self.oversized = False
        self.gap = bytearray()  # bytes between elements: only blanks and commas belong here
        self.done = False

    def _gap_error(self, line: int) -> Iterator[Element]:
        if self.gap.strip(_BLANK + b","):
            self.index += 1
            yield Element(self.index, line, error="an element that is not an object")
        self.gap.clear()

    def feed(self, chunk: bytes) -> Iterator[Element]:
        if self.done:
            if chunk.strip(_BLANK):
                yield Element(self.index + 1, self.line, error="data after the end of the array")
            return
        start = 0  # where the part of the chunk not yet stored starts
        for match in _SPECIAL.finditer(chunk):
            at = match.start()
            if self.offset + at == self.skip_at:
                continue
            char = chunk[at]
            if self.in_string:
                if char == 0x5C:  # a backslash escapes the next byte
                    self.skip_at = self.offset + at + 1
                elif char == 0x22:
                    self.in_string = False
                continue
            if char == 0x22:
                self.in_string = True
            elif char == 0x5C:
                continue  # outside a string: invalid, and orjson will say so
            elif self.depth == 0:
                if char != 0x5B or chunk[:at].strip(_BLANK):
                    raise NotAnArray("expected a JSON array of conversations")
                self.depth, start = 1, at + 1
            elif char in (0x5B, 0x7B):  # [ {
                if self.depth == 1:
                    here = self.line + chunk.count(b"\n", 0, at)
                    self.gap += chunk[start:at]
                    yield from self._gap_error(here)
                    self.index += 1
                    self.item_line = here
                    self.item, self.oversized, start = bytearray(), False, at
                self.depth += 1
            elif self.depth == 1:
                if char == 0x5D:  # the array ends
                    self.gap += chunk[start:at]
                    yield from self._gap_error(self.line + chunk.count(b"\n", 0, at))
                    self.depth, self.done = 0, True
                    if chunk[at + 1 :].strip(_BLANK):
                        yield Element(
                            self.index + 1, self.line, error="data after the end of the array"
                        )
                    break
                # a stray } between elements stays in the gap and is reported with it
            else:
                self.depth -= 1
                if self.depth == 1:
                    if not self.oversized:
                        self.item += chunk[start : at + 1]
                    yield _finish(self.index, self.item_line, self.item, self.oversized, self.limit)
                    self.item, start = bytearray(), at + 1
        if not self.done:
            rest = chunk[start:]
            if self.depth >= 2 and not self.oversized:
                self.item += rest
                if len(self.item) > self.limit:
                    self.oversized, self.item = True, bytearray()
            elif self.depth == 1:
                self.gap += rest
                if len(self.gap) > self.limit:
                    yield from self._gap_error(self.line)
            elif self.depth == 0 and rest.strip(_BLANK):
                raise NotAnArray("expected a JSON array of conversations")
        self.line += chunk.count(b"\n")
        self.offset += len(chunk)

    def end(self) -> Iterator[Element]:
        if self.done:
            return
        if self.depth == 0:
            raise NotAnArray("expected a JSON array of conversations")
        inside = self.depth >= 2  # the element's index was already counted
        yield Element(self.index + (not inside), self.line, error="the file ends inside the array")


def _finish(index: int, line: int, item: bytearray, oversized: bool, limit: int) -> Element:
    if oversized or len(item) > limit:
        return Element(index, line, error=f"longer than {limit / 2**20:g} MiB; not loaded")
    return Element(index, line, bytes(item))
