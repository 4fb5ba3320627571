// Reading the forest snapshot's nodes (no payloads): the tree with hidden entries folded
// away, branch tips, the newest tip below an entry, the path to an entry, the versions of
// a message (its siblings). Linear in the nodes and without recursion (10,000-deep chains);
// a parent is always written before its children, so sequence order is a topological order.
import type { NodeJson } from "./api/types.gen";

/** The nodes a reader sees: hidden ones folded away unless `showHidden`, each node's
 * parent being its nearest shown ancestor. */
export function foldHidden(nodes: readonly NodeJson[], showHidden: boolean): NodeJson[] {
  if (showHidden) return nodes as NodeJson[];
  const up = new Map<string, string | null>(); // a node's nearest shown ancestor (or itself)
  const sorted = [...nodes].sort((a, b) => a.sequence - b.sequence);
  const out: NodeJson[] = [];
  for (const n of sorted) {
    const parent = n.parent_id === null ? null : (up.get(n.parent_id) ?? null);
    // A checkpoint is a label on a state, hidden from the model but not from a reader.
    if (n.context_visibility === "hidden" && n.kind !== "checkpoint") {
      up.set(n.id, parent);
      continue;
    }
    up.set(n.id, n.id);
    out.push(parent === n.parent_id ? n : { ...n, parent_id: parent });
  }
  return out;
}

export function tipsOf(nodes: readonly NodeJson[]): string[] {
  const parents = new Set(nodes.map((n) => n.parent_id));
  return nodes.filter((n) => !parents.has(n.id)).map((n) => n.id);
}

function childrenOf(nodes: readonly NodeJson[]): Map<string | null, NodeJson[]> {
  const children = new Map<string | null, NodeJson[]>();
  for (const n of nodes) {
    const list = children.get(n.parent_id);
    if (list) list.push(n);
    else children.set(n.parent_id, [n]);
  }
  return children;
}

/** The newest tip at or below `entry` (the end of the branch a reader opens there). */
export function newestTip(nodes: readonly NodeJson[], entry: string): string {
  const children = childrenOf(nodes);
  const seq = new Map(nodes.map((n) => [n.id, n.sequence]));
  let best = entry;
  const stack = [entry];
  while (stack.length) {
    const id = stack.pop()!;
    const kids = children.get(id);
    if (!kids) {
      if ((seq.get(id) ?? -1) > (seq.get(best) ?? -1) || best === entry) best = id;
      continue;
    }
    for (const k of kids) stack.push(k.id);
  }
  return best;
}

/** Root-first ids of the path to `entry` (through every node, hidden ones included). */
export function pathTo(nodes: readonly NodeJson[], entry: string): string[] {
  const parent = new Map(nodes.map((n) => [n.id, n.parent_id]));
  const out: string[] = [];
  let at: string | null | undefined = entry;
  while (at && out.length <= nodes.length) {
    out.push(at);
    at = parent.get(at);
  }
  return out.reverse();
}

export interface Versions {
  index: number;
  count: number;
  prev: string | null;
  next: string | null;
}

/** The other versions of `entry` (an edit, a regeneration): the shown children of its
 * shown parent with the same kind, in the order they were written. */
export function versionsOf(byId: Map<string, NodeJson>, byParent: Map<string | null, NodeJson[]>, entry: string): Versions | null {
  const node = byId.get(entry);
  if (!node) return null;
  const same = (byParent.get(node.parent_id) ?? []).filter((n) => n.kind === node.kind);
  if (same.length < 2) return null;
  const index = same.findIndex((n) => n.id === entry);
  return { index, count: same.length, prev: same[index - 1]?.id ?? null, next: same[index + 1]?.id ?? null };
}

export function byParent(nodes: readonly NodeJson[]): Map<string | null, NodeJson[]> {
  const m = childrenOf(nodes);
  for (const list of m.values()) list.sort((a, b) => a.sequence - b.sequence);
  return m;
}
