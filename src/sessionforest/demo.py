"""A small, realistic sample session for `forest demo` and for trying the API.

An agent diagnoses a `database is locked` failure (with a hidden tool call and
its result), checkpoints the diagnosis, takes one fix, is rewound to the
checkpoint and takes another: two tips, one checkpoint, the head on the second.
"""

from __future__ import annotations

from typing import Any

from .forest import Forest

TITLE = "Fix 'database is locked' in the nightly import"
CHECKPOINT = "diagnosed"


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def _tool_turn(
    forest: Forest, sid: str, say: str, call_id: str, name: str, args: dict[str, Any], output: str
) -> None:
    """An assistant message that calls a tool, then the call and its result."""
    call = {"type": "tool_call", "id": call_id, "name": name, "input": args}
    forest.append(
        sid,
        "assistant.message",
        {"content": [{"type": "text", "text": say}, call], "model": "demo-model"},
    )
    # tool.started is hidden by its kind: inspectable, never sent back to a model.
    forest.append(sid, "tool.started", {"call_id": call_id, "name": name, "input": args})
    forest.append(sid, "tool.completed", {"call_id": call_id, "name": name, "output": output})


def build_demo(forest: Forest) -> str:
    """Write the demo session into `forest`; returns its id."""
    sid = forest.create_session(TITLE, harness="demo", cwd="~/src/ledger")
    forest.append(
        sid,
        "system.message",
        _text("You are a coding agent working in the ledger repository. Keep changes small."),
    )
    forest.append(
        sid,
        "user.message",
        _text(
            "The nightly import fails with `sqlite3.OperationalError: database is locked` "
            "while the web app is running. Can you find out why?"
        ),
    )
    _tool_turn(
        forest,
        sid,
        "Let me see where the importer opens the database.",
        "call_1",
        "grep",
        {"pattern": "sqlite3.connect", "path": "ledger/"},
        "ledger/db.py:14:    conn = sqlite3.connect(path)\n"
        "ledger/importer.py:31:    conn = sqlite3.connect(path, timeout=0)",
    )
    forest.append(
        sid,
        "assistant.message",
        _text(
            "Found it: importer.py opens its own connection with timeout=0, so it fails at "
            "once whenever the web app holds a write transaction. Two fixes: route the "
            "importer through the app's connection, or switch to WAL with a busy timeout."
        ),
    )
    diagnosed = forest.checkpoint(
        sid, CHECKPOINT, "importer connects with timeout=0 while the app holds a write lock"
    )

    # First branch: the shared connection.
    forest.append(sid, "user.message", _text("Go with the shared connection."))
    forest.append(
        sid,
        "assistant.message",
        _text(
            "Done: importer.py now takes the app's connection from ledger.db.connect(). "
            "But the import runs as a cron job in a separate process, so it cannot "
            "share the connection after all."
        ),
    )

    # Rewind to the diagnosis and try the other fix: a new branch, nothing lost.
    forest.move_head(sid, diagnosed.id)
    forest.append(
        sid, "user.message", _text("Let's try WAL mode and a five second busy timeout instead.")
    )
    _tool_turn(
        forest,
        sid,
        "Switching db.py to WAL with busy_timeout=5000, then running the import test.",
        "call_2",
        "bash",
        {"command": "pytest tests/test_import.py -q"},
        "....\n4 passed in 1.92s",
    )
    forest.append(
        sid,
        "assistant.message",
        _text(
            "Fixed: db.py sets `PRAGMA journal_mode=WAL` and `busy_timeout=5000`, and "
            "importer.py uses db.connect(). The import now waits for the app's writer "
            "instead of failing; tests pass."
        ),
    )
    return sid
