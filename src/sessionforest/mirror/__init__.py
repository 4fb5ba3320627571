"""The live mirror: the forest follows agent transcripts as they are written.

`sources.py` says where each harness keeps its transcripts and which files of
a location a format reads; `watcher.py` follows those locations through the
operating system's file notifications (watchfiles) and imports each change
through `Forest.import_followed` (forest_follow.py), which keeps each file's
position in the store; `hooks.py` installs the Claude Code hooks and runs one
(`forest hook claude-code`), the zero-daemon way to the same imports. The
CLI (`forest watch`, `forest hooks`, `forest hook`) and the server (`forest
serve --watch`) are thin over these.
"""
