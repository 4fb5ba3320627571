"""Fixtures for the search tests: a store of the backend under test, a pinned clock, chat builders.

The clock is pinned to a Wednesday afternoon in UTC so every time phrase has
one right answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conformance.backends import Harness
from sessionforest import Forest
from sessionforest.ids import iso

NOW = datetime(2026, 9, 30, 15, 0, tzinfo=UTC)  # a Wednesday


def text(body: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": body}]}


def days_ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


@pytest.fixture
def forest(harness: Harness) -> Forest:
    return harness.fresh(clock=lambda: NOW)


def chat(
    forest: Forest,
    title: str,
    messages: Sequence[str],
    *,
    harness: str = "codex",
    age_days: float = 1.0,
    session_id: str | None = None,
    visibility: str = "top-level",
    cwd: Path | None = None,
) -> str:
    """A chat whose messages alternate user/assistant, all `age_days` old."""
    start = days_ago(age_days)
    sid = forest.create_session(
        title,
        harness,
        session_id=session_id,
        visibility=visibility,
        created_at=iso(start),
        cwd=cwd,
    )
    for i, body in enumerate(messages):
        kind = "user.message" if i % 2 == 0 else "assistant.message"
        at = iso(start + timedelta(seconds=i))
        forest.append(sid, kind, text(body), created_at=at, stamp=None)
    return sid


class Chats:
    """Builds chats in the test's store (a fixture, so tests need no imports)."""

    def __init__(self, forest: Forest) -> None:
        self.forest = forest

    def __call__(self, title: str, messages: Sequence[str], **options: Any) -> str:
        return chat(self.forest, title, messages, **options)


@pytest.fixture
def make_chat(forest: Forest) -> Chats:
    return Chats(forest)
