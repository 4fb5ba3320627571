import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import type { LogEntryJson, SnapshotJson } from "../api/types.gen";
import { layout, visible, type Placed } from "../forestLayout";

const W = 150; // node width
const H = 30; // node height
const LANE = 168; // lane pitch
const ROW = 46; // row pitch
const PAD = 12;
const OVERSCAN = 3;

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
  log: LogEntryJson[];
  onMove: (entryId: string) => void;
}

export function ForestView({ snapshot, log, onMove }: Props) {
  const l = useMemo(() => layout(snapshot.nodes), [snapshot]);
  const active = useMemo(() => new Set(snapshot.active_path), [snapshot]);
  const labels = useMemo(() => new Map(snapshot.checkpoints.map((c) => [c.id, c.label])), [snapshot]);
  const diverged = useMemo(() => new Set(log.filter((e) => e.diverged).map((e) => e.id)), [log]);
  const scroller = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: 0, left: 0, width: 800, height: 600 });
  const [focused, setFocused] = useState<string | null>(null);
  const wantFocus = useRef(false);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const measure = () =>
      setView({ top: el.scrollTop, left: el.scrollLeft, width: el.clientWidth, height: el.clientHeight });
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  // The head starts in view.
  const headId = snapshot.head;
  useLayoutEffect(() => {
    const p = headId ? l.byId.get(headId) : undefined;
    const el = scroller.current;
    if (!p || !el) return;
    const y = PAD + p.row * ROW;
    if (y < el.scrollTop || y > el.scrollTop + el.clientHeight - ROW) el.scrollTop = Math.max(0, y - el.clientHeight / 2);
  }, [l, headId]);

  const focusId = focused && l.byId.has(focused) ? focused : (headId ?? l.placed[0]?.node.id ?? null);

  const row0 = Math.floor((view.top - PAD) / ROW) - OVERSCAN;
  const row1 = Math.ceil((view.top + view.height) / ROW) + OVERSCAN;
  const lane0 = Math.floor((view.left - PAD) / LANE) - OVERSCAN;
  const lane1 = Math.ceil((view.left + view.width) / LANE) + OVERSCAN;
  const shown = visible(l, row0, row1, lane0, lane1);
  // The focused node is always rendered, so focus never falls off the page.
  const focusPlaced = focusId ? l.byId.get(focusId) : undefined;
  if (focusPlaced && !shown.includes(focusPlaced)) shown.push(focusPlaced);

  useEffect(() => {
    if (!wantFocus.current || !focusId) return;
    wantFocus.current = false;
    const el = scroller.current?.querySelector<HTMLElement>(`[data-node="${focusId}"]`);
    el?.focus({ preventScroll: false });
  });

  const go = (p: Placed | undefined) => {
    if (!p) return;
    wantFocus.current = true;
    setFocused(p.node.id);
    const el = scroller.current;
    if (el) {
      const x = PAD + p.lane * LANE;
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
        onMove(p.node.id);
        return;
      default:
        return;
    }
    event.preventDefault();
    go(target);
  };

  const width = PAD * 2 + l.lanes * LANE;
  const height = PAD * 2 + l.rows.length * ROW;
  const headDivergence = DIVERGENCE[snapshot.divergence] ?? DIVERGENCE.unknown;

  return (
    <section className="forest" aria-label="Forest view">
      <h2 className="forest-title">
        Forest <span className="forest-count">{snapshot.nodes.length} entries · {snapshot.tips.length} branch tips</span>
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
            const x = PAD + p.lane * LANE;
            const y = PAD + p.row * ROW;
            const isHead = p.node.id === headId;
            const label = labels.get(p.node.id);
            const kind = SHORT[p.node.kind] ?? p.node.kind;
            const div = isHead ? headDivergence : diverged.has(p.node.id) ? DIVERGENCE.diverged : null;
            const cls = ["node", active.has(p.node.id) ? "active" : "", isHead ? "head" : "", p.node.context_visibility === "hidden" ? "hidden" : ""].join(" ");
            let edge = null;
            if (p.parentLane !== null) {
              const px = PAD + p.parentLane * LANE + W / 2;
              const left = Math.min(px, x + W / 2) - 2;
              const w = Math.abs(px - (x + W / 2)) + 4;
              const d = `M ${px - left} 0 V ${(ROW - H) / 2} H ${x + W / 2 - left} V ${ROW - H}`;
              edge = (
                <svg
                  aria-hidden="true"
                  className={active.has(p.node.id) ? "edge active" : "edge"}
                  style={{ left, top: y - (ROW - H), width: w, height: ROW - H }}
                >
                  <path d={d} />
                </svg>
              );
            }
            return (
              <div key={p.node.id}>
                {edge}
                <div
                  role="treeitem"
                  data-node={p.node.id}
                  aria-level={p.row + 1}
                  aria-selected={isHead}
                  aria-current={isHead ? "true" : undefined}
                  aria-label={`#${p.node.sequence} ${kind}${label ? `, checkpoint ${label}` : ""}${isHead ? `, head, ${headDivergence.text}` : div ? `, ${div.text}` : ""}${active.has(p.node.id) ? ", on the active path" : ""}`}
                  tabIndex={p.node.id === focusId ? 0 : -1}
                  className={cls}
                  style={{ left: x, top: y, width: W, height: H }}
                  onClick={() => {
                    setFocused(p.node.id);
                    onMove(p.node.id);
                  }}
                  onFocus={() => setFocused(p.node.id)}
                  onKeyDown={(e) => onKeyDown(e, p)}
                >
                  <span className="node-text">
                    {label ? `⚑ ${label}` : `#${p.node.sequence} ${kind}`}
                  </span>
                  {div ? (
                    <span className={`badge ${isHead ? snapshot.divergence : "diverged"}`} aria-hidden="true">
                      {div.symbol}
                    </span>
                  ) : null}
                  {isHead ? <span className="head-mark" aria-hidden="true">HEAD</span> : null}
                </div>
              </div>
            );
          })}
        </div>
      </div>
      <p className="forest-legend">
        ✓ matches worktree · ≠ diverged · ? unknown · ⚑ checkpoint · thick border: active path
      </p>
    </section>
  );
}
