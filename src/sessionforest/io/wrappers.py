"""Text a harness puts in a user turn that the user never typed: which one, if any.

Harness CLIs send their own context as user-role messages: Gemini CLI's
`<session_context>` preamble, Codex's `<environment_context>`,
`<user_instructions>` and AGENTS.md blocks, Claude Code's `<system-reminder>`
and command caveats. The importers store such a message as a
`system.message` that says which wrapper it was and the role the harness
sent it with (`{"wrapper": NAME, "role": "user"}`), so it is never a
title, a digest, a "You" snippet or a user-text match, and a projection
still gives the model what it saw.

One place for the rule so every importer (and search, which owns the
general helper once it lands) agrees on it.
"""

from __future__ import annotations

import re

# A leading tag that names the wrapper; only these are recognised (an unknown
# tag at the start of a prompt is the user's own text).
_TAGS = (
    "session_context",
    "environment_context",
    "user_instructions",
    "user_shell_command",
    "turn_aborted",
    "subagent_notification",
    "system-reminder",
    "permissions instructions",
    "skills_instructions",
    "collaboration_mode",
    "apps_instructions",
    "plugins_instructions",
)
_TAG = re.compile(r"\s*<([A-Za-z_\- ]+)>")
_AGENTS = re.compile(r"\s*# AGENTS\.md instructions for ")


def wrapper_of(text: str) -> str | None:
    """The wrapper `text` is (its tag name, or "agents_md"), else None."""
    found = _TAG.match(text, 0, 200)
    if found is not None and found.group(1) in _TAGS:
        return found.group(1)
    if _AGENTS.match(text, 0, 200):
        return "agents_md"
    return None
