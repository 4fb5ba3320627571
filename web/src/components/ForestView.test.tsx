// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { LogEntryJson, NodeJson, SnapshotJson } from "../api/types.gen";
import { foldHidden } from "../tree";
import { ForestView } from "./ForestView";

const TEXTS: Record<string, string> = { e1: "fix the lock", e2: "WAL mode", e3: "thanks", e4: "try a timeout" };

beforeAll(() => {
  // jsdom has no ResizeObserver; the view only needs it to re-measure.
  vi.stubGlobal(
    "ResizeObserver",
    class {
      observe() {}
      unobserve() {}
      disconnect() {}
    },
  );
  // The node texts come from sessions/previews: a fake server answers them.
  vi.stubGlobal("fetch", async (_url: unknown, init: { body: string }) => {
    const { id, params } = JSON.parse(init.body);
    const result = Object.fromEntries(params.entry_ids.map((e: string) => [e, TEXTS[e] ?? ""]));
    return { status: 200, json: async () => ({ jsonrpc: "2.0", id, result }) };
  });
});
afterEach(cleanup);

function node(id: string, parent: string | null, sequence: number, kind: string, active: boolean, visibility = "context"): NodeJson {
  return { id, parent_id: parent, sequence, kind, active, context_visibility: visibility };
}

// e1 user → e2 assistant (checkpoint "plan") → e3 user (head); e2 → e4 user (an edit, another branch).
const snapshot: SnapshotJson = {
  session_id: "s1",
  nodes: [
    node("e1", null, 1, "user.message", true),
    node("e2", "e1", 2, "assistant.message", true),
    node("e3", "e2", 3, "user.message", true),
    node("e4", "e2", 4, "user.message", false),
  ],
  active_path: ["e1", "e2", "e3"],
  checkpoints: [{ id: "e2", label: "plan" } as SnapshotJson["checkpoints"][number]],
  tips: ["e3", "e4"],
  head: "e3",
  selected: null,
  current: null,
  differs: null,
  dirty_differs: false,
  divergence: "match",
  head_differs: false,
  reason: "",
  stamp: null,
};

function logEntry(id: string, diverged: boolean): LogEntryJson {
  return {
    id,
    session_id: "s1",
    parent_id: null,
    sequence: 0,
    kind: "user.message",
    payload: {},
    context_visibility: "context",
    semantic_schema_version: 1,
    created_at: "2026-01-01T00:00:00Z",
    stamp: null,
    diverged,
  };
}

function renderForest(onMove = vi.fn(), snap: SnapshotJson = snapshot, showHidden = false) {
  render(<ForestView snapshot={snap} nodes={foldHidden(snap.nodes, showHidden)} log={[logEntry("e1", true)]} selected={null} onSelect={onMove} />);
  return onMove;
}

describe("ForestView", () => {
  it("draws every entry as a treeitem with its text, in a labelled tree", async () => {
    renderForest();
    const region = screen.getByRole("region", { name: "Forest view" });
    expect(within(region).getByRole("heading", { name: /Forest\s*4 entries · 2 branches/ })).toBeTruthy();
    const tree = within(region).getByRole("tree", { name: "Entries of this chat" });
    expect(within(tree).getAllByRole("treeitem")).toHaveLength(4);
    // The accessible name starts with what the node shows: its number and text.
    const first = await screen.findByRole("treeitem", { name: "#1 fix the lock, user, diverged from the worktree, on the active path" });
    expect(first.getAttribute("title")).toBe("#1 user: fix the lock");
    expect(first.textContent).toContain("fix the lock");
    expect(screen.getByRole("treeitem", { name: "#2 ⚑ plan, assistant, checkpoint plan, on the active path" })).toBeTruthy();
    // Off the active path: no "on the active path".
    expect(screen.getByRole("treeitem", { name: "#4 try a timeout, user" })).toBeTruthy();
  });

  it("folds hidden entries away: they are neither nodes nor branch tips", () => {
    const hidden: SnapshotJson = {
      ...snapshot,
      nodes: [...snapshot.nodes, node("n1", null, 5, "provider.notification", false, "hidden"), node("n2", "e3", 6, "provider.notification", false, "hidden"), node("e5", "n2", 7, "assistant.message", false)],
    };
    renderForest(vi.fn(), hidden);
    expect(screen.getByRole("heading", { name: /5 entries · 2 branches/ })).toBeTruthy();
    expect(screen.queryByRole("treeitem", { name: /notification/ })).toBeNull();
    cleanup();
    renderForest(vi.fn(), hidden, true);
    expect(screen.getByRole("heading", { name: /7 entries · 3 branches/ })).toBeTruthy();
  });

  it("marks the head, and only the head, with aria-current", () => {
    renderForest();
    const head = screen.getByRole("treeitem", { name: /^#3 .*, head, matches the worktree, on the active path$/ });
    expect(head.getAttribute("aria-current")).toBe("true");
    expect(head.getAttribute("aria-selected")).toBe("false"); // selected: the entry being read
    const current = screen.getAllByRole("treeitem").filter((t) => t.hasAttribute("aria-current"));
    expect(current).toEqual([head]);
    // Roving tabindex: the head is the one tab stop.
    expect(head.tabIndex).toBe(0);
    expect(screen.getByRole("treeitem", { name: /^#4 / }).tabIndex).toBe(-1);
  });

  it("opens a node's branch (never moves the head) when Enter is pressed on it", () => {
    const onMove = renderForest();
    fireEvent.keyDown(screen.getByRole("treeitem", { name: /^#4 / }), { key: "Enter" });
    expect(onMove).toHaveBeenCalledWith("e4");
  });

  it("opens it on Space and on click too", () => {
    const onMove = renderForest();
    fireEvent.keyDown(screen.getByRole("treeitem", { name: /^#2 / }), { key: " " });
    fireEvent.click(screen.getByRole("treeitem", { name: /^#1 / }));
    expect(onMove.mock.calls).toEqual([["e2"], ["e1"]]);
  });

  it("walks the tree with the arrow keys without opening anything", () => {
    const onMove = renderForest();
    const head = screen.getByRole("treeitem", { name: /head/ });
    head.focus();
    fireEvent.keyDown(head, { key: "ArrowUp" });
    const parent = screen.getByRole("treeitem", { name: /^#2 / });
    expect(document.activeElement).toBe(parent);
    expect(parent.tabIndex).toBe(0);
    fireEvent.keyDown(parent, { key: "Home" });
    expect(document.activeElement).toBe(screen.getByRole("treeitem", { name: /^#1 / }));
    fireEvent.keyDown(document.activeElement!, { key: "End" });
    expect(document.activeElement).toBe(screen.getByRole("treeitem", { name: /head/ }));
    expect(onMove).not.toHaveBeenCalled();
  });
});
