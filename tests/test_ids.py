"""Ids stay unique whatever else the process does with `random`, and say when they were minted."""

from __future__ import annotations

import os
import random

from sessionforest import ids
from sessionforest.ids import new_id


def test_seeding_the_global_random_does_not_repeat_ids() -> None:
    # hypothesis reseeds the global generator before every example; an
    # application may call random.seed(0). Neither may make two ids equal.
    random.seed(1)
    first = new_id(now_ms=5)
    random.seed(1)
    assert new_id(now_ms=5) != first


def test_a_forked_child_mints_other_ids_than_its_parent() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.write(write, new_id(now_ms=5).encode())
        os._exit(0)
    os.close(write)
    child = os.read(read, 64).decode()
    os.waitpid(pid, 0)
    assert len(child) == 26
    assert child != new_id(now_ms=5)


def _decode(text: str) -> int:
    value = 0
    for char in text:
        value = value * 32 + ids.ALPHABET.index(char)
    return value


def test_an_id_is_its_milliseconds_then_80_random_bits() -> None:
    for ms in (0, 1, 1023, 1024, 1_764_570_000_000, (1 << 48) - 1):
        minted = {ids.new_id(ms) for _ in range(50)}
        assert len(minted) == 50
        for text in minted:
            assert len(text) == 26 and set(text) <= set(ids.ALPHABET)
            assert _decode(text) >> 80 == ms  # the cached prefix names this millisecond
    # Time-ordered across milliseconds, as B-tree inserts want.
    assert ids.new_id(1_000) < ids.new_id(1_001) < ids.new_id(2_000)


def test_now_text_is_the_iso_form_of_the_current_millisecond() -> None:
    for _ in range(200):
        before = ids.iso(ids.utc_now())
        text = ids.now_text()
        after = ids.iso(ids.utc_now())
        assert before <= text <= after
        assert ids.parse_iso(text).microsecond % 1000 == 0
