import { describe, expect, it } from "vitest";
import type { NodeJson } from "./api/types.gen";
import { layout, visible } from "./forestLayout";

function node(id: string, parent: string | null, sequence: number): NodeJson {
  return { id, parent_id: parent, sequence, kind: "user.message", context_visibility: "context", active: false };
}

describe("layout", () => {
  it("continues the first-written child's lane and puts later branches to the right", () => {
    const nodes = [node("a", null, 1), node("c", "a", 3), node("b", "a", 2), node("d", "c", 4)];
    const l = layout(nodes);
    expect(l.byId.get("b")!.lane).toBe(0);
    expect(l.byId.get("c")!.lane).toBe(1);
    expect(l.byId.get("d")!.lane).toBe(1);
    expect(l.byId.get("c")!.parentLane).toBe(0);
    expect(l.lanes).toBe(2);
    expect(l.rows.map((r) => r.map((p) => p.node.id))).toEqual([["a"], ["b", "c"], ["d"]]);
  });

  it("gives overlapping branches their own lanes", () => {
    const nodes = [node("a", null, 1), node("b", "a", 2), node("c", "b", 3), node("x", "a", 4), node("y", "x", 5), node("z", "a", 6)];
    const l = layout(nodes);
    expect([l.byId.get("b")!.lane, l.byId.get("x")!.lane, l.byId.get("z")!.lane]).toEqual([0, 1, 2]);
    expect(l.byId.get("y")!.lane).toBe(1);
  });

  it("lays out a 10,000-entry chain with 300 branches without recursion", () => {
    const nodes: NodeJson[] = [];
    for (let i = 0; i < 10000; i++) nodes.push(node(`n${i}`, i ? `n${i - 1}` : null, i + 1));
    for (let b = 0; b < 300; b++) nodes.push(node(`b${b}`, `n${b * 30}`, 10001 + b));
    const l = layout(nodes);
    expect(l.placed).toHaveLength(10300);
    expect(new Set(l.placed.map((p) => `${p.row}:${p.lane}`)).size).toBe(10300); // no overlaps
    expect(l.rows).toHaveLength(10000);
    expect(l.lanes).toBe(2); // the short side branches share the lane beside the main line
    expect(l.byId.get("b0")!.lane).toBe(1);
    expect(l.byId.get("b299")!.lane).toBe(1);
    expect(l.byId.get("b299")!.parentLane).toBe(0);
    const window = visible(l, 100, 120, 0, 5);
    expect(window.every((p) => p.row >= 100 && p.row < 120 && p.lane < 5)).toBe(true);
    expect(window.length).toBeGreaterThanOrEqual(20);
  });
});
