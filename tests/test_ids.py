"""Ids stay unique whatever else the process does with `random`."""

from __future__ import annotations

import os
import random

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
