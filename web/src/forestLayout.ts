// Lays the forest snapshot out as a graph: row = depth from the root, lane = column. The
// first child continues its parent's lane, every other child opens a new lane to the right,
// so branches stand side by side. Linear in the number of nodes (no recursion: a 10,000-entry
// chain must not overflow the stack).
import type { NodeJson } from "./api/types.gen";

export interface Placed {
  node: NodeJson;
  row: number;
  lane: number;
  parentLane: number | null;
}

export interface Layout {
  placed: Placed[];
  byId: Map<string, Placed>;
  rows: Placed[][]; // per row, sorted by lane
  lanes: number;
}

export function layout(nodes: readonly NodeJson[], activePath: readonly string[]): Layout {
  const children = new Map<string | null, NodeJson[]>();
  for (const node of nodes) {
    const key = node.parent_id;
    const list = children.get(key);
    if (list) list.push(node);
    else children.set(key, [node]);
  }
  const active = new Set(activePath);
  // Active children first (the active path stays in lane 0), then by sequence.
  for (const list of children.values())
    list.sort((a, b) => Number(active.has(b.id)) - Number(active.has(a.id)) || a.sequence - b.sequence);
  const placed: Placed[] = [];
  const byId = new Map<string, Placed>();
  let lanes = 0;
  const stack: { node: NodeJson; row: number; lane: number; parentLane: number | null }[] = [];
  const roots = children.get(null) ?? [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push({ node: roots[i], row: 0, lane: -1, parentLane: null });
  while (stack.length) {
    const item = stack.pop()!;
    if (item.lane === -1) item.lane = lanes++;
    const p: Placed = { node: item.node, row: item.row, lane: item.lane, parentLane: item.parentLane };
    placed.push(p);
    byId.set(item.node.id, p);
    const kids = children.get(item.node.id) ?? [];
    // Push in reverse so the first child is visited next (depth first, lanes left to right).
    for (let i = kids.length - 1; i >= 0; i--)
      stack.push({ node: kids[i], row: item.row + 1, lane: i === 0 ? item.lane : -1, parentLane: item.lane });
  }
  const rows: Placed[][] = [];
  for (const p of placed) (rows[p.row] ??= []).push(p);
  for (const row of rows) row?.sort((a, b) => a.lane - b.lane);
  return { placed, byId, rows, lanes };
}

/** The nodes of `rows` in the visible window [row0, row1) x [lane0, lane1). */
export function visible(l: Layout, row0: number, row1: number, lane0: number, lane1: number): Placed[] {
  const out: Placed[] = [];
  for (let r = Math.max(0, row0); r < Math.min(row1, l.rows.length); r++) {
    const row = l.rows[r];
    if (!row) continue;
    // Binary search for the first lane >= lane0.
    let lo = 0;
    let hi = row.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (row[mid].lane < lane0) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < row.length && row[i].lane < lane1; i++) out.push(row[i]);
  }
  return out;
}
