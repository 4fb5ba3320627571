// Live updates applied in place: a `sessions/changed` notification touches one chat, so
// the app reads that chat's row (sessions/get) and, for the open chat, only the entries
// the change names, and folds them into what it holds. What cannot be folded safely (a
// head moved elsewhere, a branch, a stamped entry whose divergence the server computes)
// asks for the one document that changed, never the whole list.
import type { ChangeJson, LogEntryJson, SessionJson, SnapshotJson } from "./api/types.gen";

/** The list with `info` in its place: latest activity first, as `sessions/list` orders it. */
export function upsertSession(list: readonly SessionJson[], info: SessionJson): SessionJson[] {
  const rest = list.filter((s) => s.id !== info.id);
  const t = Date.parse(info.updated_at);
  let at = rest.findIndex((s) => Date.parse(s.updated_at) < t);
  if (at < 0) at = rest.length;
  return [...rest.slice(0, at), info, ...rest.slice(at)];
}

/** The ids an append or import added, when the change names them all. */
export function addedIds(c: ChangeJson): string[] | null {
  if (c.change !== "appended" && c.change !== "imported") return null;
  return c.entry_ids && c.entry_ids.length ? c.entry_ids : null;
}

/** `entries` (one chain, in order) after the shown ones, if they continue them; the same
 * entries if they are all shown already; null when they do not continue them. */
export function extendEntries(shown: readonly LogEntryJson[], entries: readonly LogEntryJson[]): LogEntryJson[] | null {
  if (!entries.length) return [...shown];
  const have = new Set(shown.map((e) => e.id));
  if (entries.every((e) => have.has(e.id))) return [...shown];
  const last = shown[shown.length - 1];
  if (entries[0].parent_id !== (last?.id ?? null)) return null;
  return [...shown, ...entries];
}

/** The snapshot with a chain appended at its head, or null when the server must say:
 * the chain starts elsewhere, or a stamp is involved (the head's divergence is the
 * server's to compute). */
export function extendSnapshot(snap: SnapshotJson, entries: readonly LogEntryJson[]): SnapshotJson | null {
  if (!entries.length) return snap;
  const known = new Set(snap.nodes.map((n) => n.id));
  if (entries.every((e) => known.has(e.id))) return snap;
  if (entries.some((e) => known.has(e.id))) return null;
  if (entries[0].parent_id !== snap.head || snap.stamp !== null || entries.some((e) => e.stamp !== null)) return null;
  const ids = entries.map((e) => e.id);
  const last = ids[ids.length - 1];
  const checkpoints = entries
    .filter((e) => e.kind === "checkpoint")
    .map((e) => ({ id: e.id, label: String((e.payload as { label?: unknown }).label ?? "") }));
  return {
    ...snap,
    head: last,
    active_path: [...snap.active_path, ...ids],
    tips: [...snap.tips.filter((t) => t !== entries[0].parent_id), last],
    checkpoints: [...snap.checkpoints, ...checkpoints],
    nodes: [
      ...snap.nodes,
      ...entries.map((e) => ({
        id: e.id,
        parent_id: e.parent_id,
        sequence: e.sequence,
        kind: e.kind,
        context_visibility: e.context_visibility,
        active: true,
      })),
    ],
  };
}
