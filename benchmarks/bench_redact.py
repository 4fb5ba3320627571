"""Redaction of model-bound text, measured on detect-secrets' own labelled test data.

`../shared/data/detect-secrets` (Apache-2.0) carries `baseline.file`, a
detect-secrets 0.14.2 baseline: 29 findings on 13 files, each a line number
and the SHA-1 of the secret. A label's secret text is recovered independently
of the detector: the substring of that line whose SHA-1 is the labelled hash.
Every text file of the set is redacted whole (`redact.redact`, as deep search
redacts an entry body) and scored: labelled secrets still present anywhere in
the output (target 0), and the share of lines without a labelled secret that
the redaction changed (false positives by the label's standard; detect-secrets
1.x has more plugins than 0.14.2, so some are real secrets the old baseline
did not list). Throughput is lines a second (median of several passes).
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import harness
import search_data
from harness import Row, Section
from sessionforest.redact import redact

NAME = "redact"
DATA = search_data.DATA / "detect-secrets"


def _with_hash(line: str, wanted: str) -> str | None:
    for i in range(len(line)):
        for j in range(len(line), i, -1):
            if hashlib.sha1(line[i:j].encode()).hexdigest() == wanted:
                return line[i:j]
    return None


def labelled() -> tuple[dict[str, dict[int, set[str]]], list[str]]:
    """(file -> line number -> the labelled secret texts on it, labels with no such text).

    A label's text is the substring of its line with the labelled hash; 0.14.2
    numbered some YAML lines differently, so the nearest line of the file that
    holds such a substring is taken instead. A value it decoded first (YAML
    `!!binary`) is not in the text at all: listed apart.
    """
    base = json.loads((DATA / "baseline.file").read_text(encoding="utf-8"))
    out: dict[str, dict[int, set[str]]] = {}
    missing: list[str] = []
    for name, findings in base["results"].items():
        lines = (DATA / name).read_text(encoding="utf-8").splitlines()
        for finding in findings:
            number = int(finding["line_number"])
            wanted = finding["hashed_secret"]
            order = sorted(range(1, len(lines) + 1), key=lambda n: abs(n - number))
            for n in order:
                value = _with_hash(lines[n - 1], wanted)
                if value is not None:
                    out.setdefault(name, {}).setdefault(n, set()).add(value)
                    break
            else:
                missing.append(f"{name}:{number} ({finding['type']})")
    return out, missing


def files() -> list[Path]:
    return sorted(
        p
        for p in DATA.rglob("*")
        if p.is_file() and p.name != "baseline.file" and p.suffix not in {".pyc"}
    )


def run(quick: bool) -> Section:
    labels, missing = labelled()
    paths = files()
    texts = {str(p.relative_to(DATA)): p.read_text(encoding="utf-8") for p in paths}
    total_secrets = sum(len(v) for per in labels.values() for v in per.values())
    kept: list[str] = []
    clean_lines = changed = 0
    changed_examples: list[str] = []
    for name, text in texts.items():
        out = redact(text).text
        for values in labels.get(name, {}).values():
            kept += [f"{name}: {v[:12]}…" for v in values if v in out]
        before, after = text.splitlines(), out.splitlines()
        secret_lines = set(labels.get(name, {}))
        # A private-key block collapses to one line: compare line by line up to it.
        for number, line in enumerate(before, 1):
            if number in secret_lines:
                continue
            clean_lines += 1
            if number > len(after) or after[number - 1] != line:
                changed += 1
                if len(changed_examples) < 6:
                    changed_examples.append(f"{name}:{number}")
    passes = 2 if quick else 5
    lines = sum(len(t.splitlines()) for t in texts.values())
    times = []
    for _ in range(passes):
        t = time.perf_counter()
        for text in texts.values():
            redact(text)
        times.append(time.perf_counter() - t)
    per_s = lines / harness.median(times)
    rows = [
        Row(
            "labelled secrets left after redaction",
            f"{len(kept)} of {total_secrets}",
            "",
            "",
            "0",
            harness.verdict(not kept),
        ),
        Row(
            "secret-free lines changed",
            f"{changed} of {clean_lines} ({changed / clean_lines:.1%})",
            "",
            "",
            "info",
        ),
        Row("redaction throughput", harness.rate(per_s, "lines"), "", "", "info"),
    ]
    notes = [
        f"{len(texts)} files, {lines} lines; {total_secrets} distinct labelled secrets "
        f"on {sum(len(v) for v in labels.values())} lines of {len(labels)} files.",
    ]
    if missing:
        notes.append(
            "labels whose secret is not in the text (a decoded value): " + ", ".join(missing)
        )
    if kept:
        notes.append("left: " + "; ".join(kept))
    if changed_examples:
        notes.append("changed secret-free lines, e.g.: " + ", ".join(changed_examples))
    summary = (
        "Every model-bound text goes through `redact.redact` (detect-secrets' plugins and "
        "entropy checks on the whole body) before a window or snippet is cut. Measured on "
        "detect-secrets' labelled test data (`../shared/data/detect-secrets`, its "
        "baseline's 29 findings)."
    )
    return Section(NAME, "Redaction of model-bound text", summary, rows, notes)
