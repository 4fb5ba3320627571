"""Worktree stamps: the repository HEAD plus a deterministic hash of the full dirty state.

A stamp is taken by the controller on every append to a session bound to a
directory, stored beside the entry (never in its payload) and compared later
with the live worktree to report conversation/file divergence. Git itself
says what is dirty; we hash what it reports *and* the bytes of every modified
or untracked file, so two different edits of one file never share a stamp.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from typing import Any

from . import gitsafe
from .deadline import STAMP_SECONDS as STAMP_SECONDS  # beside the other bounds
from .model.entries import Divergence as Divergence  # its home is the model

STAMP_VERSION = 1

# -z: no quoting (core.quotepath cannot matter); --no-renames and
# --ignore-submodules=none pin what rename/submodule config would change;
# --branch gives HEAD's commit in the same call.
STATUS_ARGS = (
    "status",
    "--porcelain=v2",
    "-z",
    "--branch",
    "--untracked-files=all",
    "--no-renames",
    "--ignore-submodules=none",
)

# The work tree, and the git directories whose config files SafeGit watches.
ROOT_ARGS = ("rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir")


def _records(output: bytes) -> tuple[str | None, list[bytes]]:
    """Split porcelain v2 -z output into HEAD (None when unborn) and file records."""
    head: str | None = None
    records: list[bytes] = []
    for record in output.split(b"\0"):
        if not record:
            continue
        if record.startswith(b"# branch.oid "):
            oid = record[len(b"# branch.oid ") :].decode()
            head = None if oid == "(initial)" else oid
        elif not record.startswith(b"#"):
            # Other headers (branch name, upstream, ahead/behind, stash) are not file state.
            records.append(record)
    return head, records


def _path_of(record: bytes) -> tuple[bytes, bool]:
    """The record's path and whether its worktree content must be hashed."""
    tag = record[:1]
    if tag == b"?":
        return record[2:], True
    if tag == b"1":
        fields = record.split(b" ", 8)
        return fields[8], fields[1][1:2] != b"."
    if tag == b"u":
        return record.split(b" ", 10)[10], True
    # "2" (rename/copy) cannot appear with --no-renames; hash it if it ever does.
    return record.rsplit(b" ", 1)[-1], True


class Stamper:
    """Takes stamps; caches file digests by stat and whole stamps by git's answer.

    Git status runs on every stamp (it is the only trustworthy view of the
    worktree); what the cache saves is re-reading and re-hashing dirty files
    whose (size, mtime, ctime, inode) did not change since the last stamp.
    Git runs through `gitsafe`: nothing the repository configures executes.
    """

    def __init__(self) -> None:
        self._digests: dict[bytes, tuple[tuple[int, ...], bytes]] = {}
        # cwd -> (work tree root, its git directories) or None, and git's refusal.
        self._roots: dict[str, tuple[str, tuple[str, ...]] | None] = {}
        self._refusals: dict[str, str] = {}
        self._git = gitsafe.SafeGit()

    def _locate(self, cwd: str | os.PathLike[str]) -> tuple[str, tuple[str, ...]] | None:
        key = os.fspath(cwd)
        if key not in self._roots:
            try:
                lines = gitsafe.run(key, ROOT_ARGS).decode(errors="surrogateescape").splitlines()
                top, git_dir, common = lines[0], lines[1], os.path.join(key, lines[2])
                self._roots[key] = (top, (git_dir, os.path.normpath(common))) if top else None
            except (gitsafe.GitRefused, IndexError) as exc:
                self._roots[key] = None
                self._refusals[key] = str(exc)
        return self._roots[key]

    def root(self, cwd: str | os.PathLike[str]) -> str | None:
        found = self._locate(cwd)
        return found[0] if found is not None else None

    def refusal(self, cwd: str | os.PathLike[str]) -> str:
        """Why `cwd` has no stamp, in words for a user (after `stamp` returned None)."""
        return gitsafe.refusal(self._refusals.get(os.fspath(cwd), ""), cwd)

    def _content(self, root: str, rel: bytes, deadline: float | None = None) -> bytes:
        full = os.path.join(os.fsencode(root), rel)
        try:
            info = os.lstat(full)
        except FileNotFoundError:
            return b"deleted"
        if stat.S_ISLNK(info.st_mode):
            return b"link:" + os.readlink(full)
        if not stat.S_ISREG(info.st_mode):
            return b"other"
        key = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_mode)
        cached = self._digests.get(full)
        if cached is not None and cached[0] == key:
            return cached[1]
        digest = hashlib.sha256()
        with open(full, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
                if deadline is not None and time.monotonic() > deadline:
                    raise _TooSlow  # the files hashed whole so far stay cached
        # The executable bit is state git tracks; other mode bits are not.
        value = digest.hexdigest().encode() + (b"+x" if info.st_mode & 0o100 else b"")
        self._digests[full] = (key, value)
        return value

    def stamp(
        self, cwd: str | os.PathLike[str], seconds: float | None = None
    ) -> dict[str, Any] | None:
        """The stamp of the worktree containing `cwd`, or None when it is not a repository.

        With `seconds`, a stamp that takes longer (git status on a huge tree, hashing
        gigabytes of untracked files) is recorded as unknown instead: `unknown` says
        why, `dirty` is None, and it never matches or diverges. The file digests made
        meanwhile stay cached, so the next stamp gets further.
        """
        deadline = time.monotonic() + seconds if seconds is not None else None
        found = self._locate(cwd)
        if found is None:
            return None
        root, git_dirs = found
        try:
            head, records = _records(self._git.run(root, STATUS_ARGS, git_dirs, deadline))
        except gitsafe.GitTooSlow:
            return unknown(None, f"git status took longer than {seconds:g} s")
        except gitsafe.GitRefused as exc:
            self._refusals[os.fspath(cwd)] = str(exc)
            return None
        lines = []
        try:
            for record in records:
                rel, hash_content = _path_of(record)
                content = self._content(root, rel, deadline) if hash_content else b""
                lines.append(record + b"\0" + content)
                if deadline is not None and time.monotonic() > deadline:
                    raise _TooSlow
        except _TooSlow:
            why = f"hashing the {len(records)} changed files took longer than {seconds:g} s"
            return unknown(head, why, len(records))
        # Sorted: the order git happens to list files in is not state.
        digest = hashlib.sha256(b"\n".join(sorted(lines))).hexdigest()
        return {"v": STAMP_VERSION, "head": head, "dirty": digest, "dirty_files": len(lines)}


class _TooSlow(Exception):
    """Internal: a stamp ran past its time."""


def unknown(head: str | None, why: str, dirty_files: int | None = None) -> dict[str, Any]:
    """A stamp that could not be taken in time: HEAD when git said it, and why."""
    return {"v": STAMP_VERSION, "head": head, "dirty": None, "dirty_files": dirty_files,
            "unknown": why}  # fmt: skip


def compare(stamp: dict[str, Any] | None, current: dict[str, Any] | None, why: str) -> Divergence:
    """Compare an entry's stamp with the worktree's current stamp."""
    if stamp is None:
        return Divergence("unknown", reason=why or "entry has no stamp (written before stamping)")
    if stamp.get("unknown"):
        return Divergence("unknown", reason=f"the entry's stamp is unknown: {stamp['unknown']}",
                          stamp=stamp)  # fmt: skip
    if current is None:
        return Divergence("unknown", reason=why or "directory is not a git repository", stamp=stamp)
    if current.get("unknown"):
        reason = f"the worktree's state is unknown now: {current['unknown']}"
        return Divergence("unknown", reason=reason, stamp=stamp, current=current)
    head_differs = stamp.get("head") != current.get("head")
    dirty_differs = stamp.get("dirty") != current.get("dirty")
    if head_differs or dirty_differs:
        parts = []
        if head_differs:
            parts.append(f"HEAD was {stamp.get('head')}, now {current.get('head')}")
        if dirty_differs:
            parts.append("uncommitted changes differ")
        return Divergence(
            "diverged",
            head_differs=head_differs,
            dirty_differs=dirty_differs,
            reason="; ".join(parts),
            stamp=stamp,
            current=current,
        )
    return Divergence(
        "match", reason="worktree matches the entry's stamp", stamp=stamp, current=current
    )
