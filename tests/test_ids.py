"""Minted ids stay unique when something else seeds `random`, and across a fork."""

from __future__ import annotations

import os
import random

from sessionforest.ids import new_id


def test_seeding_the_random_module_does_not_replay_ids() -> None:
    # hypothesis seeds the global generator per example; two examples in one
    # millisecond once minted the same entry id and failed on UNIQUE.
    random.seed(7)
    first = new_id(1_000)
    random.seed(7)
    assert new_id(1_000) != first


def test_a_forked_child_mints_other_ids_than_its_parent() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report one id and leave without running pytest's teardown
        os.write(write, new_id(1_000).encode())
        os._exit(0)
    os.close(write)
    child = os.read(read, 64).decode()
    os.close(read)
    os.waitpid(pid, 0)
    assert len(child) == 26
    assert child != new_id(1_000)
