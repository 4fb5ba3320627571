"""Claude Code import against independent readings of the real samples.

Every sample file is imported on its own and compared entry for entry with
the tree its raw lines describe; then the named cases: the rewind, the
compaction after a rewind, sidechains and subagent files as linked workers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.backends import Harness
from sessionforest import Forest
from sessionforest.io.common import Ids
from sessionforest.projection import COMPACTION_PREAMBLE, project

if TYPE_CHECKING:
    from conftest import Raw

CLAUDE = Path(__file__).resolve().parents[3] / "shared" / "data" / "claude-code"
REWIND = CLAUDE / "real_projects/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"
COMPACT = CLAUDE / "synthetic/dag_compact_after_rewind.jsonl"
WORKTREES = CLAUDE / "real_projects/-experiments-worktrees"
FANOUT = WORKTREES / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"  # parallel tool calls


def _side(rec: dict) -> bool:
    return rec.get("isSidechain") is True


def _user_text(rec: dict) -> str:
    content = rec["message"]["content"]
    return content if isinstance(content, str) else content[0]["text"]


@pytest.mark.parametrize(
    "path", sorted(CLAUDE.rglob("*.jsonl")), ids=lambda p: str(p.relative_to(CLAUDE))
)
def test_each_file_imports_as_the_tree_its_lines_describe(
    forest: Forest, raw: Raw, path: Path
) -> None:
    report = forest.import_chats("claude-code", path)
    chats = raw.chats_from(forest, path)
    if path.stat().st_size == 0:
        assert chats == [] and report.notes == [f"{path}: empty file skipped"]
        return
    records = [rec for _, rec in raw.lines(path)]
    main = [r for r in records if not _side(r)]
    # A file with no main-thread record but sidechain ones is a subagent's file.
    only_sidechains = not any(r.get("uuid") for r in main) and any(map(_side, records))
    is_worker_file = path.name.startswith("agent-") or only_sidechains
    for info in chats:
        if info.visibility == "top-level":
            assert not is_worker_file
            tree = raw.claude_code_tree(path, lambda r: not _side(r))
            assert info.source_id == path.stem
        elif info.source_id.endswith("/sidechain"):
            tree = raw.claude_code_tree(path, _side)
        else:
            assert is_worker_file
            tree = raw.claude_code_tree(path, lambda r: True)
        raw.assert_tree(forest, info, tree)
        assert info.harness == "claude-code"
    expected_chats = 1 if is_worker_file else 1 + any(map(_side, records))
    assert len(chats) == expected_chats
    assert report.skipped == []


def test_the_rewind_is_a_branch_and_the_later_prompt_is_active(forest: Forest, raw: Raw) -> None:
    report = forest.import_chats("claude-code", REWIND)
    lines = raw.lines(REWIND)
    by_uuid = {rec["uuid"]: rec for _, rec in lines if rec.get("uuid")}
    prompts: dict[str, list[dict]] = {}
    for _, rec in lines:
        if rec["type"] == "user" and isinstance(rec["message"]["content"], str):
            prompts.setdefault(rec["parentUuid"], []).append(rec)
    [(parent, (first, later))] = [(p, kids) for p, kids in prompts.items() if len(kids) == 2]
    assert by_uuid[parent]["type"] == "system"  # the rewind point: a stop-hook summary

    [info] = raw.chats_from(forest, REWIND)
    ids = Ids("claude-code", REWIND.stem)
    kids = forest.children(info.id, ids.entry(parent))
    assert [k.id for k in kids] == [ids.entry(first["uuid"]), ids.entry(later["uuid"])]
    assert [k.payload["content"][0]["text"] for k in kids] == [
        _user_text(first),
        _user_text(later),
    ]
    path = [e.id for e in forest.active_path(info.id)]
    assert ids.entry(later["uuid"]) in path and ids.entry(first["uuid"]) not in path
    assert report.branches == 1 == forest.branches(info.id)


def test_a_compaction_reattaches_to_its_logical_parent(forest: Forest, raw: Raw) -> None:
    forest.import_chats("claude-code", COMPACT)
    lines = [rec for _, rec in raw.lines(COMPACT)]
    [boundary] = [r for r in lines if r.get("subtype") == "compact_boundary"]
    [summary] = [r for r in lines if r.get("isCompactSummary")]
    assert boundary["parentUuid"] is None and summary["parentUuid"] == boundary["uuid"]

    [info] = raw.chats_from(forest, COMPACT)
    ids = Ids("claude-code", COMPACT.stem)
    entry = forest.entry(info.id, ids.entry(boundary["uuid"]))
    assert entry.kind == "compaction"
    assert entry.parent_id == ids.entry(boundary["logicalParentUuid"])
    assert entry.payload["summary"] == summary["message"]["content"][0]["text"]
    assert entry.payload["tokens_before"] == boundary["compactMetadata"]["preTokens"]
    kept = forest.entry(info.id, ids.entry(summary["uuid"]))
    assert (kept.parent_id, kept.context_visibility) == (entry.id, "hidden")
    # The head's branch runs through the rewound branch b2 and the compaction.
    path = [e.id for e in forest.active_path(info.id)]
    chain = ["u1", "a1", "b2u", "b2a", "b2u2", "b2a2", "cb", "cs", "p1u", "p1a"]
    assert path == [ids.entry(u) for u in chain]
    context = project(forest, info.id)
    assert context[0]["content"][0]["text"].startswith(COMPACTION_PREAMBLE)
    assert [m["role"] for m in context] == ["user", "user", "assistant"]
    assert forest.branches(info.id) == 1  # the rewind at a1


def test_parallel_tool_calls_are_not_branches(forest: Forest, raw: Raw) -> None:
    path = FANOUT
    forest.import_chats("claude-code", path)
    [info] = raw.chats_from(forest, path)
    tree = raw.claude_code_tree(path, lambda r: not _side(r))
    assert tree.branch_points() >= 6  # tool fan-out makes siblings ...
    assert forest.branches(info.id) == 0  # ... but no turn was re-done
    project(forest, info.id)  # and the active branch pairs every call with its result


def test_subagent_files_become_hidden_workers_under_their_chat(forest: Forest, raw: Raw) -> None:
    report = forest.import_chats("claude-code", WORKTREES)
    main = (
        CLAUDE / "real_projects/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
    )
    [parent] = raw.chats_from(forest, main)
    subagents = sorted((main.parent / main.stem / "subagents").glob("agent-*.jsonl"))
    assert len(subagents) == 6
    orchestrator = forest.agent_for_session(parent.id)
    assert orchestrator is not None and orchestrator.role == "orchestrator"
    workers = {w.session_id: w for w in forest.agent_children(orchestrator.id)}
    for path in subagents:
        [info] = raw.chats_from(forest, path)
        assert info.visibility == "hidden"
        assert info.source_id == f"{main.stem}/{path.stem}"
        assert workers[info.id].policy["imported_from"] == "claude-code"
        meta = json.loads(path.with_suffix(".meta.json").read_text())
        assert info.title == meta["description"]
    assert [s.id for s in forest.sessions(include_hidden=False)] == [parent.id]
    assert sum(c.hidden for c in report.chats) == 6
    # Importing again links nothing twice.
    forest.import_chats("claude-code", WORKTREES)
    assert len(forest.agent_children(orchestrator.id)) == 6


def test_a_subagent_file_without_meta_is_titled_by_its_parent_task_call(
    forest: Forest, raw: Raw, tmp_path: Path
) -> None:
    # Claude Code 2.0 wrote no .meta.json; this real subagent file starts with the
    # agent's own reply (no prompt line), so only the parent's Task call names it.
    project = CLAUDE / "real_projects/-src-deep-manifest"
    agent = project / "agent-c8d9b115.jsonl"
    parent = project / "a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl"
    forest.import_chats("claude-code", project)
    [info] = raw.chats_from(forest, agent)
    assert info.visibility == "hidden"
    assert info.title == "Explore ZIP processing implementation"
    # Without the parent file there is nothing to read it from: untitled, no error.
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / agent.name).write_bytes(agent.read_bytes())
    with Forest.open(tmp_path / "alone.db") as other:
        report = other.import_chats("claude-code", alone)
        assert report.ok
        [chat] = other.sessions(include_hidden=True)
        assert chat.title == ""
    assert parent.is_file()


def test_sidechain_records_in_a_session_file_become_a_linked_worker(
    forest: Forest, raw: Raw
) -> None:
    path = CLAUDE / "synthetic/memory_sidechain.jsonl"
    forest.import_chats("claude-code", path)
    main, worker = sorted(raw.chats_from(forest, path), key=lambda s: s.visibility, reverse=True)
    assert (main.visibility, worker.visibility) == ("top-level", "hidden")
    assert (main.entry_count, worker.entry_count) == (3, 3)
    link = forest.agent_for_session(worker.id)
    assert link is not None and forest.agent(link.parent_id).session_id == main.id


def test_summary_lines_title_the_chat_and_metadata_is_kept_hidden(forest: Forest, raw: Raw) -> None:
    path = CLAUDE / "real_projects/-Users-dain-workspace-claude-code-log-sample"
    forest.import_chats("claude-code", path)
    for file in sorted(path.glob("*.jsonl")):
        records = [rec for _, rec in raw.lines(file)] if file.stat().st_size else []
        summaries = [r for r in records if r["type"] == "summary"]
        leaves = {r.get("uuid") for r in records}
        in_file = [s for s in summaries if s["leafUuid"] in leaves]
        for info in raw.chats_from(forest, file):
            if summaries and info.visibility == "top-level":
                assert info.title == (in_file or summaries)[-1]["summary"]
            kinds = {e.kind: e.context_visibility for e in forest.entries(info.id)}
            if any(not r.get("uuid") for r in records):
                assert kinds["provider.notification"] == "hidden"


def test_cwd_and_git_branch_are_kept(forest: Forest, harness: Harness, raw: Raw) -> None:
    forest.import_chats("claude-code", REWIND)
    [info] = raw.chats_from(forest, REWIND)
    records = [rec for _, rec in raw.lines(REWIND)]
    # Where the chat ran is kept as data; the session is not bound to it.
    assert info.origin_cwd == next(r["cwd"] for r in records if "cwd" in r)
    assert info.cwd is None
    [row] = [r for r in harness.dump(forest, "sessions")["sessions"] if r["id"] == info.id]
    assert row["git_branch"] == [r["gitBranch"] for r in records if r.get("gitBranch")][-1]


IDE_CHAT = (
    CLAUDE / "real_projects/-Users-dain-workspace-coderabbit-review-helper/"
    "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"
)


def test_a_chat_is_titled_by_its_first_real_request_not_an_ide_selection(
    forest: Forest, raw: Raw
) -> None:
    forest.import_chats("claude-code", IDE_CHAT)
    [info] = [i for i in raw.chats_from(forest, IDE_CHAT) if i.visibility == "top-level"]
    records = [rec for _, rec in raw.lines(IDE_CHAT)]
    # The file's first user line is an <ide_selection> of the word BeautifulSoup.
    first = next(r for r in records if r["type"] == "user" and not r.get("isMeta"))
    assert "<ide_selection>" in json.dumps(first) and "BeautifulSoup" in json.dumps(first)
    assert info.title.startswith("How can I make this possible to install as a library")
    assert len(info.title) <= 80 and info.title.endswith("…")
    assert not info.title[:-1].endswith(" ")


def _record(kind: str, n: int, **fields: object) -> str:
    base = {"type": kind, "uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n > 1 else None,
            "sessionId": "s1", "timestamp": f"2026-01-01T00:00:0{n}.000Z", "cwd": "/w"}  # fmt: skip
    return json.dumps({**base, **fields})


@pytest.mark.parametrize(
    ("extra", "title"),
    [
        ([], "Fix the flaky upload test"),
        ([{"type": "summary", "summary": "Upload test fix", "leafUuid": "u2"}], "Upload test fix"),
        ([{"type": "ai-title", "aiTitle": "Flaky upload test", "sessionId": "s1"},
          {"type": "summary", "summary": "Upload test fix", "leafUuid": "u2"}],
         "Flaky upload test"),
        ([{"type": "ai-title", "aiTitle": "Flaky upload test", "sessionId": "s1"},
          {"type": "custom-title", "customTitle": "my upload saga", "sessionId": "s1"}],
         "my upload saga"),
    ],
)  # fmt: skip
def test_the_harness_titles_win_over_the_first_request_the_users_own_first(
    forest: Forest, raw: Raw, tmp_path: Path, extra: list[dict[str, str]], title: str
) -> None:
    path = tmp_path / "s1.jsonl"
    said = ("<command-name>/clear</command-name>", "[Image #1] Fix the flaky upload test")
    lines = [
        *(
            _record("user", n, message={"role": "user", "content": c})
            for n, c in enumerate(said, 1)
        ),
        *(json.dumps(e) for e in extra),
    ]
    path.write_text("\n".join(lines) + "\n")
    forest.import_chats("claude-code", path)
    [info] = raw.chats_from(forest, path)
    assert info.title == title
