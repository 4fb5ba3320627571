// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { LogEntryJson, NodeJson, SnapshotJson } from "../api/types.gen";
import { ForestView } from "./ForestView";

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

function renderForest(onMove = vi.fn()) {
  render(<ForestView snapshot={snapshot} log={[logEntry("e1", true)]} onMove={onMove} />);
  return onMove;
}

describe("ForestView", () => {
  it("draws every entry as a treeitem in a labelled tree", () => {
    renderForest();
    const region = screen.getByRole("region", { name: "Forest view" });
    expect(within(region).getByRole("heading", { name: /Forest\s*4 entries · 2 branch tips/ })).toBeTruthy();
    const tree = within(region).getByRole("tree", { name: "Entries of this chat" });
    const items = within(tree).getAllByRole("treeitem");
    expect(items).toHaveLength(4);
    expect(screen.getByRole("treeitem", { name: "#1 user, diverged from the worktree, on the active path" })).toBeTruthy();
    expect(screen.getByRole("treeitem", { name: "#2 assistant, checkpoint plan, on the active path" })).toBeTruthy();
    // Off the active path: no "on the active path".
    expect(screen.getByRole("treeitem", { name: "#4 user" })).toBeTruthy();
  });

  it("marks the head, and only the head, with aria-current", () => {
    renderForest();
    const head = screen.getByRole("treeitem", { name: "#3 user, head, matches the worktree, on the active path" });
    expect(head.getAttribute("aria-current")).toBe("true");
    expect(head.getAttribute("aria-selected")).toBe("true");
    const current = screen.getAllByRole("treeitem").filter((t) => t.hasAttribute("aria-current"));
    expect(current).toEqual([head]);
    // Roving tabindex: the head is the one tab stop.
    expect(head.tabIndex).toBe(0);
    expect(screen.getByRole("treeitem", { name: "#4 user" }).tabIndex).toBe(-1);
  });

  it("moves the head when Enter is pressed on a node", () => {
    const onMove = renderForest();
    fireEvent.keyDown(screen.getByRole("treeitem", { name: "#4 user" }), { key: "Enter" });
    expect(onMove).toHaveBeenCalledWith("e4");
  });

  it("moves the head on Space and on click too", () => {
    const onMove = renderForest();
    fireEvent.keyDown(screen.getByRole("treeitem", { name: /^#2 assistant/ }), { key: " " });
    fireEvent.click(screen.getByRole("treeitem", { name: /^#1 user/ }));
    expect(onMove.mock.calls).toEqual([["e2"], ["e1"]]);
  });

  it("walks the tree with the arrow keys without moving the head", () => {
    const onMove = renderForest();
    const head = screen.getByRole("treeitem", { name: /head/ });
    head.focus();
    fireEvent.keyDown(head, { key: "ArrowUp" });
    const parent = screen.getByRole("treeitem", { name: /^#2 assistant/ });
    expect(document.activeElement).toBe(parent);
    expect(parent.tabIndex).toBe(0);
    fireEvent.keyDown(parent, { key: "Home" });
    expect(document.activeElement).toBe(screen.getByRole("treeitem", { name: /^#1 user/ }));
    fireEvent.keyDown(document.activeElement!, { key: "End" });
    expect(document.activeElement).toBe(screen.getByRole("treeitem", { name: /head/ }));
    expect(onMove).not.toHaveBeenCalled();
  });
});
