"""The GASP `transcripts/` tier: one run's whole conversation, gzipped native JSONL.

`export_transcript` writes `DIR/transcripts/<run-id>.jsonl.gz` and returns its
sha256, which a GASP run event records to reference the transcript. The bytes
are reproducible (gzip without name or time), so the same tree gives the same
hash. The format is documented in docs/gasp-transcripts.md.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import tempfile
from pathlib import Path

from ..errors import InvalidArgument
from ..model import Transcript
from ..store.base import BulkStore
from . import native

# A run id becomes a file name: one path component, nothing a shell or a
# path join could read as a directory.
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def export_transcript(
    bulk: BulkStore, session_id: str, directory: Path, run_id: str | None = None
) -> Transcript:
    run = run_id or session_id
    if not RUN_ID.fullmatch(run) or run.endswith(".") or ".." in run:
        raise InvalidArgument("run id", f"{run!r} must be letters, digits, '.', '_' or '-'")
    bulk.stored_session(session_id)  # an unknown session fails before any file is made
    folder = directory / "transcripts"
    # The temporary file must sit beside the target (os.replace is atomic only
    # within a filesystem), so folders are made first and taken back on failure.
    made = [p for p in (folder, *folder.parents) if not p.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    relative = f"transcripts/{run}.jsonl.gz"
    target = folder / f"{run}.jsonl.gz"
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{run}.", suffix=".tmp")
    except BaseException:
        _remove_empty(made)
        raise
    try:
        with os.fdopen(fd, "wb") as raw:
            # No file name and a zero mtime in the header: reproducible bytes.
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
                text = io.TextIOWrapper(packed, encoding="utf-8", newline="")
                entries = native.export_session(bulk, session_id, text)
                text.flush()
                text.detach()
            raw.flush()
            os.fsync(raw.fileno())
        digest = hashlib.sha256()
        with open(tmp, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        _remove_empty(made)
        raise
    size = target.stat().st_size
    return Transcript(run, str(target), relative, digest.hexdigest(), entries, size)


def _remove_empty(folders: list[Path]) -> None:
    """Remove the folders this export made (deepest first), unless something else is in them."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return  # not empty (someone else wrote there) or not ours to remove
