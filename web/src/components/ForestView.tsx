// The forest: every shown entry of the chat as a node of the graph forestLayout.ts lays
// out (hidden entries folded away unless the reader shows them), each with a line of its
// text (sessions/previews, read for the nodes in view), the head and the selected entry
// marked, lanes as narrow as the panel needs, scrolled to the head in both directions. A
// click or Enter opens the path through a node read-only: it never moves the head.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { call } from "../api/client";
import type { LogEntryJson, NodeJson, SnapshotJson } from "../api/types.gen";
import { layout, visible, type Placed } from "../forestLayout";
import { pathTo, tipsOf } from "../tree";

const H = 34; // node height
const ROW = 50; // row pitch
const PAD = 12;
const OVERSCAN = 3;
const MIN_LANE = 120; // narrowest lane pitch before the panel scrolls sideways
const MAX_LANE = 420;

const SHORT: Record<string, string> = {
  "user.message": "user",
  "assistant.message": "assistant",
  "tool.completed": "tool result",
  "tool.started": "tool call",
  "system.message": "system",
  "provider.notification": "notification",
  checkpoint: "checkpoint",
  compaction: "compaction",
  "branch.summary": "summary",
};

const DIVERGENCE: Record<string, { symbol: string; text: string }> = {
  match: { symbol: "✓", text: "matches the worktree" },
  diverged: { symbol: "≠", text: "diverged from the worktree" },
  unknown: { symbol: "?", text: "worktree state unknown" },
};

interface Props {
  snapshot: SnapshotJson;
  /** The nodes shown (hidden ones folded away unless asked for: tree.ts foldHidden). */
  nodes: NodeJson[];
  log: LogEntryJson[];
  selected: string | null;
  onSelect: (entryId: string) => void;
}

/** Texts of nodes, read as they come into view, kept per chat. */
function usePreviews(sessionId: string, wanted: string[]) {
  const [texts, setTexts] = useState<Map<string, string>>(new Map());
  const asked = useRef(new Set<string>());
  useEffect(() => {
    setTexts(new Map());
    asked.current = new Set();
  }, [sessionId]);
  const missing = wanted.filter((id) => !asked.current.has(id));
  const key = missing.join(",");
  useEffect(() => {
    if (!key) return;
    const ids = key.split(",").slice(0, 500);
    // Asked once the nodes stayed in view a moment (panning past them asks nothing).
    const timer = setTimeout(() => {
      ids.forEach((id) => asked.current.add(id));
      call("sessions/previews", { session_id: sessionId, entry_ids: ids as [string, ...string[]] }).then(
        (found) => setTexts((t) => new Map([...t, ...Object.entries(found)])),
        () => ids.forEach((id) => asked.current.delete(id)),
      );
    }, 40);
    return () => clearTimeout(timer);
  }, [key, sessionId]);
  return texts;
}

export function ForestView({ snapshot, nodes, log, selected, onSelect }: Props) {
  const l = useMemo(() => layout(nodes), [nodes]);
  const active = useMemo(() => new Set(snapshot.active_path), [snapshot]);
  const tips = useMemo(() => tipsOf(nodes), [nodes]);
  const labels = useMemo(() => new Map(snapshot.checkpoints.map((c) => [c.id, c.label])), [snapshot]);
  const diverged = useMemo(() => new Set(log.filter((e) => e.diverged).map((e) => e.id)), [log]);
  const scroller = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: 0, left: 0, width: 400, height: 600 });
  const [focused, setFocused] = useState<string | null>(null);
  const wantFocus = useRef(false);
  // The head as drawn: itself, or its nearest shown ancestor when it is folded away.
  const headId = useMemo(() => {
    if (!snapshot.head) return null;
    if (l.byId.has(snapshot.head)) return snapshot.head;
    const up = pathTo(snapshot.nodes, snapshot.head).reverse();
    return up.find((id) => l.byId.has(id)) ?? null;
  }, [snapshot, l]);
  const lane = Math.max(MIN_LANE, Math.min(MAX_LANE, Math.floor((view.width - 2 * PAD) / Math.max(1, l.lanes))));
  const W = lane - 14;

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const measure = () => setView({ top: el.scrollTop, left: el.scrollLeft, width: el.clientWidth, height: el.clientHeight });
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  // The head (or the selected node) starts in view, both ways.
  const anchor = selected && l.byId.has(selected) ? selected : headId;
  useLayoutEffect(() => {
    const p = anchor ? l.byId.get(anchor) : undefined;
    const el = scroller.current;
    if (!p || !el) return;
    const y = PAD + p.row * ROW;
    const x = PAD + p.lane * lane;
    if (y < el.scrollTop || y > el.scrollTop + el.clientHeight - ROW) el.scrollTop = Math.max(0, y - el.clientHeight / 2);
    if (x < el.scrollLeft || x + W > el.scrollLeft + el.clientWidth) el.scrollLeft = Math.max(0, x - (el.clientWidth - W) / 2);
  }, [l, anchor, lane, W]);

  const focusId = focused && l.byId.has(focused) ? focused : (anchor ?? l.placed[0]?.node.id ?? null);
  const row0 = Math.floor((view.top - PAD) / ROW) - OVERSCAN;
  const row1 = Math.ceil((view.top + view.height) / ROW) + OVERSCAN;
  const lane0 = Math.floor((view.left - PAD) / lane) - OVERSCAN;
  const lane1 = Math.ceil((view.left + view.width) / lane) + OVERSCAN;
  const shown = visible(l, row0, row1, lane0, lane1);
  const focusPlaced = focusId ? l.byId.get(focusId) : undefined;
  if (focusPlaced && !shown.includes(focusPlaced)) shown.push(focusPlaced);
  const texts = usePreviews(snapshot.session_id, shown.map((p) => p.node.id));

  useEffect(() => {
    if (!wantFocus.current || !focusId) return;
    wantFocus.current = false;
    scroller.current?.querySelector<HTMLElement>(`[data-node="${focusId}"]`)?.focus({ preventScroll: false });
  });

  const go = (p: Placed | undefined) => {
    if (!p) return;
    wantFocus.current = true;
    setFocused(p.node.id);
    const el = scroller.current;
    if (el) {
      const x = PAD + p.lane * lane;
      const y = PAD + p.row * ROW;
      if (y < el.scrollTop || y + H > el.scrollTop + el.clientHeight) el.scrollTop = y - el.clientHeight / 2;
      if (x < el.scrollLeft || x + W > el.scrollLeft + el.clientWidth) el.scrollLeft = x - el.clientWidth / 2;
    }
  };

  const onKeyDown = (event: React.KeyboardEvent, p: Placed) => {
    const row = l.rows[p.row] ?? [];
    const i = row.indexOf(p);
    let target: Placed | undefined;
    switch (event.key) {
      case "ArrowUp":
        target = p.node.parent_id ? l.byId.get(p.node.parent_id) : undefined;
        break;
      case "ArrowDown":
        target = (l.rows[p.row + 1] ?? []).find((c) => c.node.parent_id === p.node.id);
        break;
      case "ArrowLeft":
        target = row[i - 1];
        break;
      case "ArrowRight":
        target = row[i + 1];
        break;
      case "Home":
        target = l.placed[0];
        break;
      case "End":
        target = headId ? l.byId.get(headId) : undefined;
        break;
      case "Enter":
      case " ":
        event.preventDefault();
        onSelect(p.node.id);
        return;
      default:
        return;
    }
    event.preventDefault();
    go(target);
  };

  const width = PAD * 2 + l.lanes * lane;
  const height = PAD * 2 + l.rows.length * ROW;
  const headDivergence = DIVERGENCE[snapshot.divergence] ?? DIVERGENCE.unknown;

  return (
    <section className="forest" aria-label="Forest view">
      <h2 className="forest-title">
        Forest{" "}
        <span className="forest-count">
          {nodes.length} entries · {tips.length} branch{tips.length === 1 ? "" : "es"}
        </span>
      </h2>
      <div
        className="forest-scroll"
        ref={scroller}
        onScroll={(e) => {
          const el = e.currentTarget;
          setView((v) => ({ ...v, top: el.scrollTop, left: el.scrollLeft }));
        }}
      >
        <div role="tree" aria-label="Entries of this chat" className="forest-canvas" style={{ width, height }}>
          {shown.map((p) => {
            const x = PAD + p.lane * lane;
            const y = PAD + p.row * ROW;
            const isHead = p.node.id === headId;
            const label = labels.get(p.node.id);
            const kind = SHORT[p.node.kind] ?? p.node.kind;
            const text = texts.get(p.node.id) ?? "";
            const div = isHead ? headDivergence : diverged.has(p.node.id) ? DIVERGENCE.diverged : null;
            const cls = [
              "node",
              `kind-${kind.replace(/\s/g, "-")}`,
              active.has(p.node.id) ? "active" : "",
              isHead ? "head" : "",
              p.node.id === selected ? "selected" : "",
              p.node.context_visibility === "hidden" ? "hidden" : "",
            ].join(" ");
            let edge = null;
            if (p.parentLane !== null) {
              const px = PAD + p.parentLane * lane + W / 2;
              const left = Math.min(px, x + W / 2) - 2;
              const w = Math.abs(px - (x + W / 2)) + 4;
              const d = `M ${px - left} 0 V ${(ROW - H) / 2} H ${x + W / 2 - left} V ${ROW - H}`;
              edge = (
                <svg aria-hidden="true" className={active.has(p.node.id) ? "edge active" : "edge"} style={{ left, top: y - (ROW - H), width: w, height: ROW - H }}>
                  <path d={d} />
                </svg>
              );
            }
            // The accessible name starts with the node's visible text (seq, then text).
            const shown = label ? `⚑ ${label}` : text || kind;
            const more = `${kind}${label ? `, checkpoint ${label}` : ""}`;
            return (
              <div key={p.node.id}>
                {edge}
                <div
                  role="treeitem"
                  data-node={p.node.id}
                  aria-level={p.row + 1}
                  aria-selected={p.node.id === selected}
                  aria-current={isHead ? "true" : undefined}
                  title={`#${p.node.sequence} ${kind}${text ? `: ${text}` : ""}`}
                  tabIndex={p.node.id === focusId ? 0 : -1}
                  className={cls}
                  style={{ left: x, top: y, width: W, height: H }}
                  onClick={() => {
                    setFocused(p.node.id);
                    onSelect(p.node.id);
                  }}
                  onFocus={() => setFocused(p.node.id)}
                  onKeyDown={(e) => onKeyDown(e, p)}
                >
                  {/* Named by its content: the visible text first, then what only a screen reader needs. */}
                  <span className="node-seq">#{p.node.sequence}</span> <span className="node-text">{shown}</span>
                  <span className="visually-hidden">
                    {`, ${more}${isHead ? `, head, ${headDivergence.text}` : div ? `, ${div.text}` : ""}${active.has(p.node.id) ? ", on the active path" : ""}`}
                  </span>
                  {div ? (
                    <span className={`badge ${isHead ? snapshot.divergence : "diverged"}`} aria-hidden="true">
                      {div.symbol}
                    </span>
                  ) : null}
                  {isHead ? (
                    <span className="head-mark" aria-hidden="true">
                      HEAD
                    </span>
                  ) : null}
                </div>
              </div>
            );
          })}
        </div>
      </div>
      <p className="forest-legend">click: read that branch · ✓ matches worktree · ≠ diverged · ? unknown · ⚑ checkpoint · thick border: active path</p>
    </section>
  );
}
