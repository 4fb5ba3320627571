// Lays the forest snapshot out as a graph: row = depth from the root, lane = column. A
// branch segment is a chain that follows each node's first-written child; the segments are
// packed into lanes greedily by the rows they span (a lane is reused once the branch that
// held it has ended, as git's graph drawings do), so hundreds of short side branches share a
// few lanes beside the main line. The layout depends only on the tree (not on the head), so
// nothing jumps when the head moves. Linear in the nodes, no recursion (10,000-deep chains).
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

interface Segment {
  nodes: NodeJson[];
  row: number; // the first node's row
  parent: string | null;
}

export function layout(nodes: readonly NodeJson[]): Layout {
  const children = new Map<string | null, NodeJson[]>();
  for (const node of nodes) {
    const list = children.get(node.parent_id);
    if (list) list.push(node);
    else children.set(node.parent_id, [node]);
  }
  for (const list of children.values()) list.sort((a, b) => a.sequence - b.sequence);

  // Cut the tree into segments (preorder), each following first-written children down.
  const segments: Segment[] = [];
  const starts: { node: NodeJson; row: number }[] = (children.get(null) ?? []).map((node) => ({ node, row: 0 })).reverse();
  while (starts.length) {
    const { node: first, row } = starts.pop()!;
    const seg: Segment = { nodes: [], row, parent: first.parent_id };
    let node: NodeJson | undefined = first;
    let r = row;
    const later: { node: NodeJson; row: number }[] = [];
    while (node) {
      seg.nodes.push(node);
      const kids: NodeJson[] = children.get(node.id) ?? [];
      for (let i = kids.length - 1; i >= 1; i--) later.push({ node: kids[i], row: r + 1 });
      node = kids[0];
      r += 1;
    }
    segments.push(seg);
    for (let i = 0; i < later.length; i++) starts.push(later[i]);
  }

  // Pack: earliest-starting segment first, into the lowest lane free over its rows.
  const order = segments.map((_, i) => i).sort((a, b) => segments[a].row - segments[b].row || a - b);
  const freeFrom: number[] = [];
  const placed: Placed[] = [];
  const byId = new Map<string, Placed>();
  for (const i of order) {
    const seg = segments[i];
    let lane = 0;
    // A free row between the old occupant and the new branch, so its connector is unambiguous.
    while (lane < freeFrom.length && freeFrom[lane] >= seg.row) lane++;
    freeFrom[lane] = seg.row + seg.nodes.length;
    seg.nodes.forEach((node, k) => {
      const parentLane = k > 0 ? lane : seg.parent ? (byId.get(seg.parent)?.lane ?? null) : null;
      const p: Placed = { node, row: seg.row + k, lane, parentLane };
      placed.push(p);
      byId.set(node.id, p);
    });
  }
  const rows: Placed[][] = [];
  for (const p of placed) (rows[p.row] ??= []).push(p);
  for (const row of rows) row?.sort((a, b) => a.lane - b.lane);
  return { placed, byId, rows, lanes: freeFrom.length };
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
