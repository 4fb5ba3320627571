"""Derived state on a real store file (store/sqlite/derived.py): the caches are bounded
in bytes, and an import keeps the full-text index and vectors off the caller."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sessionforest import Forest
from sessionforest.budget import Budgeted, row_bytes
from sessionforest.store.sqlite import derived

from .conftest import NOW, pending, text

MB = 1 << 20


def cache(forest: Forest) -> derived.paths.PathCache:
    return forest._backend.store.derived.paths  # type: ignore[attr-defined, no-any-return]


def test_the_path_cache_counts_bytes_and_keeps_no_path_larger_than_its_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(derived, "PATH_BYTES", 4 * MB)
    with Forest.open(tmp_path / "budget.db", clock=lambda: NOW) as forest:
        big = forest.create_session("a 6 MB paste")
        forest.append(big, "user.message", text("x" * (6 * MB)))
        forest.append(big, "assistant.message", text("that is a lot"))
        small = forest.create_session("small talk")
        for i in range(20):
            forest.append(small, "user.message", text(f"line {i}"))
        paths = cache(forest)
        paths.clear()
        assert len(forest.active_path(big)) == 2
        assert paths.used == 0  # over the whole budget: read, never kept
        assert len(forest.active_path(small)) == 20
        kept = paths.used
        assert 20 * len("line 0") < kept <= 4 * MB  # the payloads' characters, and a row's rest
        # A path grown past the cached one is topped up and counted again.
        forest.append(small, "user.message", text("y" * MB))
        assert len(forest.active_path(small)) == 21
        assert paths.used >= kept + MB


def test_least_recently_used_paths_leave_first_once_the_bytes_run_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(derived, "PATH_BYTES", 3 * MB)
    with Forest.open(tmp_path / "lru.db", clock=lambda: NOW) as forest:
        chats = []
        for name in ("one", "two", "three"):
            sid = forest.create_session(name)
            forest.append(sid, "user.message", text(name * (MB // len(name))))
            chats.append(sid)
        paths = cache(forest)
        paths.clear()
        one, two, three = chats
        forest.active_path(one)
        forest.active_path(two)
        forest.active_path(one)  # used again: two is now the oldest
        forest.active_path(three)  # over 3 MB with all three: two leaves
        heads = {sid: forest.head(sid) for sid in chats}
        assert paths.holds(one, heads[one]) and paths.holds(three, heads[three])
        assert not paths.holds(two, heads[two])
        assert paths.used <= 3 * MB


def test_budgeted_keeps_sizes_exact_through_puts_pops_and_evictions() -> None:
    kept: Budgeted[str, tuple[str, ...]] = Budgeted(1000, row_bytes)
    kept.put("a", ("x" * 300,))  # 500 with the row's overhead
    kept.put("b", ("y" * 200,))  # 400
    assert kept.used == 900 and len(kept) == 2
    kept.put("a", ("x" * 100,))  # replaced: 300, and now the most recent
    assert kept.used == 700
    kept.put("c", ("z" * 200,))  # 400 more: b (the oldest) leaves
    assert kept.get("b") is None and kept.used == 700
    kept.put("huge", ("h" * 2000,))  # larger than the budget: not kept
    assert kept.get("huge") is None and kept.used == 700
    kept.pop("a")
    assert kept.used == 400 and kept.get("c") == ("z" * 200,)


def test_another_connections_commit_is_the_one_point_that_invalidates(tmp_path: Path) -> None:
    path = tmp_path / "states.db"
    with Forest.open(path) as forest, Forest.open(path) as other:
        state = forest._backend.store.derived  # type: ignore[attr-defined]
        sid = forest.create_session("t")
        forest.append(sid, "user.message", text("one"))
        assert state.state_of(sid, None) is not None  # remembered for the next append
        calls: list[None] = []
        real = state.invalidate
        state.invalidate = lambda: (calls.append(None), real())[1]
        forest.append(sid, "user.message", text("two"))
        assert calls == []  # nothing else wrote: the remembered state holds
        other.append(sid, "user.message", text("three"))
        last = forest.append(sid, "user.message", text("four"))
        assert len(calls) == 1 and last.sequence == 4


class Recording:
    """A backend that records which of its operations the facade calls."""

    def __init__(self, backend: Any) -> None:
        self._backend = backend
        self.calls: list[str] = []

    def search(self, deadline: Any = None) -> Any:
        self.calls.append("search")
        return self._backend.search(deadline)

    def catch_up(self) -> bool:
        self.calls.append("catch_up")
        return bool(self._backend.catch_up())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)


@pytest.mark.semantic
def test_a_search_with_the_semantic_leg_catches_up_once_and_opens_one_search(
    tmp_path: Path,
) -> None:
    path = tmp_path / "once.db"
    with Forest.open(path, background_index=False) as forest:
        assert forest.semantic
        sid = forest.create_session("t")
        forest.append(sid, "user.message", text("quince jelly"))
        assert pending(path) != []
        recording = Recording(forest._backend)  # type: ignore[attr-defined]
        forest._backend = recording  # type: ignore[attr-defined]
        assert [h.session_id for h in forest.search_chats("quince").hits] == [sid]
        assert recording.calls == ["catch_up", "search"]
        assert pending(path) == []
        forest._backend = recording._backend  # type: ignore[attr-defined]
