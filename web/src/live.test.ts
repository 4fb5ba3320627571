import { describe, expect, it } from "vitest";
import type { LogEntryJson, SessionJson, SnapshotJson } from "./api/types.gen";
import { addedIds, extendEntries, extendSnapshot, upsertSession } from "./live";

function chat(id: string, updated: string): SessionJson {
  return { id, title: id, harness: "", cwd: null, origin_cwd: null, status: "active", visibility: "top-level",
    created_at: updated, updated_at: updated, head: null, entry_count: 1, messages: 1, quarantine: null, source: null,
    git_branch: null, git_commit: null, git_repository: null, origin_project: null }; // prettier-ignore
}

function entry(id: string, parent: string | null, sequence: number, kind = "user.message", stamp: {} | null = null): LogEntryJson {
  return { id, parent_id: parent, sequence, kind, session_id: "s", created_at: "2026-01-01T00:00:00Z", payload: kind === "checkpoint" ? { label: "ok" } : {},
    context_visibility: "context", semantic_schema_version: 1, stamp, diverged: false }; // prettier-ignore
}

function snapshot(): SnapshotJson {
  return { session_id: "s", head: "b", selected: null, active_path: ["a", "b"], tips: ["b", "x"], checkpoints: [],
    nodes: [{ id: "a", parent_id: null, sequence: 1, kind: "user.message", context_visibility: "context", active: true },
            { id: "b", parent_id: "a", sequence: 2, kind: "assistant.message", context_visibility: "context", active: true },
            { id: "x", parent_id: "a", sequence: 3, kind: "user.message", context_visibility: "context", active: false }],
    divergence: "unknown", stamp: null, current: null, differs: null, dirty_differs: false, head_differs: false, reason: "" }; // prettier-ignore
}

describe("live updates in place", () => {
  it("moves a chat with new activity to its place in the list", () => {
    const list = [chat("a", "2026-01-03T00:00:00Z"), chat("b", "2026-01-02T00:00:00Z"), chat("c", "2026-01-01T00:00:00Z")];
    expect(upsertSession(list, chat("c", "2026-01-04T00:00:00Z")).map((s) => s.id)).toEqual(["c", "a", "b"]);
    expect(upsertSession(list, chat("d", "2026-01-02T12:00:00Z")).map((s) => s.id)).toEqual(["a", "d", "b", "c"]);
    expect(upsertSession(list, { ...list[1], title: "renamed" })[1].title).toBe("renamed");
  });
  it("names the added entries of appends and imports only", () => {
    const base = { epoch: "e", seq: 1, session_id: "s", subscription: "1", status: "active", head: "c", first_sequence: 3, last_sequence: 3 };
    expect(addedIds({ ...base, change: "appended", entry_ids: ["c"] })).toEqual(["c"]);
    expect(addedIds({ ...base, change: "imported", entry_ids: null })).toBeNull();
    expect(addedIds({ ...base, change: "head_moved", entry_ids: null })).toBeNull();
  });
  it("appends entries that continue the shown path, and no entry twice", () => {
    const shown = [entry("a", null, 1), entry("b", "a", 2)];
    expect(extendEntries(shown, [entry("c", "b", 4), entry("d", "c", 5)])!.map((e) => e.id)).toEqual(["a", "b", "c", "d"]);
    expect(extendEntries(shown, [entry("b", "a", 2)])!.map((e) => e.id)).toEqual(["a", "b"]);
    expect(extendEntries(shown, [entry("y", "a", 4)])).toBeNull();
  });
  it("grows the forest at its head, and leaves the rest to the server", () => {
    const snap = snapshot();
    const grown = extendSnapshot(snap, [entry("c", "b", 4), entry("k", "c", 5, "checkpoint")])!;
    expect(grown.head).toBe("k");
    expect(grown.active_path).toEqual(["a", "b", "c", "k"]);
    expect(grown.tips).toEqual(["x", "k"]);
    expect(grown.checkpoints).toEqual([{ id: "k", label: "ok" }]);
    expect(grown.nodes.map((n) => n.id)).toEqual(["a", "b", "x", "c", "k"]);
    expect(extendSnapshot(snap, [entry("b", "a", 2)])).toBe(snap);
    expect(extendSnapshot(snap, [entry("y", "x", 4)])).toBeNull(); // another branch: the head moved there
    expect(extendSnapshot(snap, [entry("c", "b", 4, "user.message", { head: "1" })])).toBeNull(); // stamped
  });
});
