"""Redaction of model-bound text: detect-secrets' plugins and entropy checks on whole bodies.

Everything deep search sends to a model (card snippets, peeked windows,
outlines) is cut from text that went through `redact` first, whole body at a
time, so a secret a window edge would split is still found. Detection is
detect-secrets' (its default plugin set: the keyword, private-key, cloud and
service token detectors and the base64/hex high-entropy checks, eager search
on), never a list of our own patterns; the one thing added here is
structural: a private key's armour marks the whole block, so its base64 body
goes with its BEGIN line. detect-secrets is an optional dependency (the
`deep` extra); `available()` says whether it is installed.

detect-secrets keeps its settings in process-global state, so scans are
serialised by a lock.
"""

from __future__ import annotations

import base64
import re
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Final

REDACTED: Final = "[redacted]"
# detect-secrets keeps its settings in a process-wide object; scans hold this lock.
_LOCK = threading.Lock()
# Its default settings are configured once for the process and kept: entering
# `default_settings()` per call rebuilds every plugin and filter (their caches are
# cleared on the way in and out), which cost a deep search more than its scans.
_configured = False
_KEY_BEGIN = re.compile(r"BEGIN[A-Z ]*PRIVATE KEY")
_KEY_END = re.compile(r"END[A-Z ]*PRIVATE KEY")
_BINARY = re.compile(r"([\w.-]+)\s*:\s*(!!binary\s+([A-Za-z0-9+/=]+))")


@dataclass(frozen=True, slots=True)
class Redaction:
    text: str
    secrets: int  # how many secrets (or private-key blocks) were replaced


def available() -> bool:
    """Whether detect-secrets is installed (the `deep` extra)."""
    return find_spec("detect_secrets") is not None


def _scan(line: str) -> set[str]:
    """The secret values detect-secrets finds on one line.

    `scan_line` (its ad-hoc string scan) searches unquoted strings too and
    leaves the entropy limit to the caller, so each entropy finding is kept
    only above its own plugin's limit (the plugin's Shannon entropy). Chat
    text often holds pasted configuration, so the keyword detector also reads
    the line as a config file would be read (`key: value`, `key = value`
    without quotes), with its own regexes for that file type.
    """
    from detect_secrets.core.scan import scan_line
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
    from detect_secrets.plugins.keyword import KeywordDetector
    from detect_secrets.settings import get_plugins

    plugins = get_plugins()
    entropy = {p.secret_type: p for p in plugins if isinstance(p, HighEntropyStringsPlugin)}
    values = set()
    for secret in scan_line(line):
        value = secret.secret_value
        if not value:
            continue
        plugin = entropy.get(secret.type)
        if plugin is not None and plugin.calculate_shannon_entropy(value) <= plugin.entropy_limit:
            continue
        values.add(value)
    for plugin in plugins:
        if isinstance(plugin, KeywordDetector):
            found = plugin.analyze_line(filename="pasted.yaml", line=line, line_number=0)
            values.update(s.secret_value for s in found if s.secret_value)
    return values


def _binary(line: str) -> set[str]:
    """YAML `!!binary` values whose decoded text holds a secret (detect-secrets'
    YAML transformer decodes them before scanning; this does the same per line)."""
    values = set()
    for match in _BINARY.finditer(line):
        try:
            decoded = base64.b64decode(match.group(3), validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            continue
        if _scan(f'{match.group(1)}: "{decoded}"'):
            values.add(match.group(2))  # the tagged scalar, tag and all
    return values


def _found(line: str) -> list[str]:
    """The secret values on one line, longest first."""
    values = _scan(line)
    if "!!binary" in line:
        values |= _binary(line)
    return sorted(values, key=len, reverse=True)


_defer = False


def defer_unused_imports() -> None:
    """For a short-lived process that redacts once (`forest find --deep`): detect-secrets
    is imported with stand-ins for the `requests` and `multiprocessing` it never uses
    here (lazyrequests.py, ~100 ms of a call). Other processes (the server, a library
    user's) import it as usual: the stand-ins are process-wide."""
    global _defer
    _defer = True


def _configure() -> None:
    """Configure detect-secrets' default settings (every plugin, the default filters)
    once: what `detect_secrets.settings.default_settings()` sets on entering."""
    global _configured
    if not _configured:
        # detect-secrets imports `requests` only to verify secrets, which we never ask.
        first = _defer and "detect_secrets" not in sys.modules
        if first:
            from . import lazyrequests

            lazyrequests.defer()
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.settings import (
            cache_bust,
            configure_settings_from_baseline,
            get_filters,
            get_plugins,
        )

        plugins: list[type] = list(get_mapping_from_secret_type_to_class().values())
        # Its caches fill only from settings, plugins and scans; in a process where
        # detect-secrets was first imported here none has run yet, so there is nothing
        # to bust (and the bust reads `__module__` of every filter module's global,
        # `requests` among them, which would load it).
        if not (
            first and get_plugins.cache_info().currsize == get_filters.cache_info().currsize == 0
        ):
            cache_bust()
        configure_settings_from_baseline({"plugins_used": [{"name": p.__name__} for p in plugins]})
        _configured = True


def redact(text: str) -> Redaction:
    """`text` with every secret detect-secrets finds replaced by `[redacted]`.

    Lines are scanned one by one over the whole body (detect-secrets is a
    line scanner); a private key's block, from its BEGIN line to its END
    line (or the end of the text), is replaced whole.
    """
    if not text:
        return Redaction(text, 0)
    lines = text.splitlines(keepends=True)
    return redact_lines(lines, 0, len(lines))


def _in_key(lines: Sequence[str]) -> bool:
    """Whether the line after `lines` is inside a private key's block."""
    in_key = False
    for line in lines:
        if in_key:
            in_key = _KEY_END.search(line) is None
            continue
        begin = _KEY_BEGIN.search(line)
        if begin is not None:
            in_key = _KEY_END.search(line[begin.end() :]) is None
    return in_key


def redact_lines(lines: Sequence[str], start: int, stop: int) -> Redaction:
    """`lines[start:stop]` (with their line endings) redacted exactly as `redact`
    of the whole text would redact them: a line's secrets are its own, and whether
    the part begins inside a private key's block is read from the lines before it
    (by the block's markers alone, no scan)."""
    out: list[str] = []
    count = 0
    in_key = _in_key(lines[:start]) if start else False
    with _LOCK:
        _configure()
        for line in lines[start:stop]:
            if in_key:
                if _KEY_END.search(line):
                    in_key = False
                continue
            body = line.rstrip("\r\n")
            ending = line[len(body) :]
            begin = _KEY_BEGIN.search(body)
            if begin is not None:
                count += 1
                in_key = _KEY_END.search(body[begin.end() :]) is None
                out.append(REDACTED + ending)
                continue
            values = _found(body) if body.strip() else []
            for value in values:
                if value in body:
                    body = body.replace(value, REDACTED)
                    count += 1
            out.append(body + ending)
    return Redaction("".join(out), count)
