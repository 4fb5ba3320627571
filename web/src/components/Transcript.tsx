// The transcript: the units of transcript.ts drawn as cards (one per user message, one per
// assistant turn), the newest page first and earlier pages on request, following the end of
// the path, or centred on the entry the reader came to see (a search hit, a node).
import { memo, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import type { LogEntryJson } from "../api/types.gen";
import { absoluteTime, buildUnits, type Block, DEFAULT_FILTERS, type Filters, relativeTime, type StreamState, type Unit } from "../transcript";
import { ContinueIn } from "./ContinueIn";
import { Md } from "./Markdown";
import { Raw, ToolCard, type WorkerLink } from "./ToolCard";

const STATE_LABEL: Record<StreamState, string> = {
  streaming: "● streaming",
  complete: "✓ complete",
  incomplete: "◐ incomplete (stopped before the end)",
  failed: "✕ failed",
};

/** An entry's place among its parent's children of the same kind (edits, regenerations). */
export interface Siblings {
  index: number;
  count: number;
  prev: string | null;
  next: string | null;
}

export function When({ iso }: { iso: string }) {
  return (
    <time className="when" dateTime={iso} title={absoluteTime(iso)}>
      {relativeTime(iso)}
    </time>
  );
}

interface Actions {
  onEdit: (entry: LogEntryJson) => void;
  onRegenerate: (entry: LogEntryJson) => void;
  /** Open the path through another entry (a sibling) read-only. */
  onPreview?: (entryId: string) => void;
  siblings?: (entry: LogEntryJson) => Siblings | null;
  workers?: WorkerLink[];
  onOpenChat?: (sessionId: string) => void;
  readOnly?: boolean;
}

function BlockView({ block, showRaw, workers, onOpenChat }: { block: Block; showRaw: boolean } & Pick<Actions, "workers" | "onOpenChat">) {
  switch (block.type) {
    case "text":
      return block.partial ? (
        <>
          <Md text={block.text} />
          <p className="cut-off">⋯ stopped here: the reply was interrupted while this was being written</p>
        </>
      ) : (
        <Md text={block.text} />
      );
    case "image":
      return <p className="image-block">[image: {block.media_type}]</p>;
    case "thinking":
      return (
        <details className="thinking" data-entry={block.entry.id}>
          <summary>{block.redacted ? "Thinking (redacted)" : "Thinking"}</summary>
          {block.redacted ? <p>The provider redacted this thinking.</p> : <div className="thinking-text">{block.text}</div>}
        </details>
      );
    case "tool":
      return <ToolCard call={block.call} showRaw={showRaw} workers={workers} onOpenChat={onOpenChat} />;
    case "hidden":
      return <Raw entry={block.entry} label="Hidden" />;
  }
}

function Switcher({ sib: s, onPreview }: { sib: Siblings | null } & Pick<Actions, "onPreview">) {
  if (!s || s.count < 2) return null;
  return (
    <span className="switcher" role="group" aria-label={`Version ${s.index + 1} of ${s.count}`}>
      <button className="link" disabled={!s.prev} aria-label="Previous version" onClick={() => s.prev && onPreview?.(s.prev)}>
        ‹
      </button>
      {s.index + 1}/{s.count}
      <button className="link" disabled={!s.next} aria-label="Next version" onClick={() => s.next && onPreview?.(s.next)}>
        ›
      </button>
    </span>
  );
}

function Meta({ e }: { e: LogEntryJson }) {
  return (
    <span className="meta">
      <When iso={e.created_at} /> · #{e.sequence}
      {e.diverged ? (
        <span className="badge diverged" title="the worktree changed since this entry">
          {" "}
          ≠ diverged
        </span>
      ) : null}
    </span>
  );
}

type UnitProps = { unit: Unit; filters: Filters; highlighted: boolean; sib: Siblings | null } & Actions;

function sameSiblings(a: Siblings | null, b: Siblings | null): boolean {
  return a === b || (!!a && !!b && a.index === b.index && a.count === b.count && a.prev === b.prev && a.next === b.next);
}

/** Entries never change, so a unit drawn from the same entries draws the same: a reload or an
 * append re-draws only the units it touched. (The callbacks are compared by nothing: the App
 * hands stable ones that read its latest state.) */
function sameUnit(a: UnitProps, b: UnitProps): boolean {
  const x = a.unit.entries;
  const y = b.unit.entries;
  return (
    a.unit.key === b.unit.key &&
    a.unit.type === b.unit.type &&
    x.length === y.length &&
    x[x.length - 1].id === y[y.length - 1].id &&
    a.filters === b.filters &&
    a.highlighted === b.highlighted &&
    a.readOnly === b.readOnly &&
    a.workers === b.workers &&
    sameSiblings(a.sib, b.sib) &&
    x[0].diverged === y[0].diverged
  );
}

const UnitView = memo(function UnitView({ unit, filters, highlighted, sib, ...a }: UnitProps) {
  const e = unit.entry;
  const hl = highlighted ? " highlight" : "";
  switch (unit.type) {
    case "user":
      return (
        <article className={`msg user${hl}`} aria-label={`You, entry ${e.sequence}`} data-entry={e.id}>
          <header>
            <strong>You</strong> <Meta e={e} />
            <Switcher sib={sib} onPreview={a.onPreview} />
            {a.readOnly ? null : (
              <button className="link action" onClick={() => a.onEdit(e)} aria-label={`Edit message ${e.sequence}`}>
                Edit
              </button>
            )}
            <ContinueIn sessionId={e.session_id} entryId={unit.entries[unit.entries.length - 1].id} sequence={e.sequence} />
          </header>
          {unit.blocks.map((b, i) => (
            <BlockView key={i} block={b} showRaw={filters.hidden} />
          ))}
        </article>
      );
    case "wrapper":
      return (
        <details className={`wrapper-label${hl}`} data-entry={e.id}>
          <summary>
            <span className="label">{unit.label}</span> <Meta e={e} />
          </summary>
          <pre>{unit.text}</pre>
        </details>
      );
    case "turn": {
      const tools = unit.blocks.filter((b) => b.type === "tool").length;
      // Each entry's first block carries its id (a tool's result: its card), so a hit or
      // a node lands on it; entries with no block of their own sit at the card's end.
      const first = new Map<number, string>();
      const placed = new Set<string>([e.id]);
      unit.blocks.forEach((b, i) => {
        if (!placed.has(b.entry.id)) first.set(i, b.entry.id);
        placed.add(b.entry.id);
        if (b.type === "tool") b.call.raw.forEach((r) => placed.add(r.id));
      });
      return (
        <article className={`msg assistant state-${unit.state}${hl}`} aria-label={`Assistant, entry ${e.sequence}`} data-entry={e.id}>

          <header>
            <strong>Assistant</strong> <Meta e={e} />
            {tools ? <span className="meta">{tools} tool call{tools === 1 ? "" : "s"}</span> : null}
            <span className={`state state-${unit.state}`}>{STATE_LABEL[unit.state]}</span>
            <Switcher sib={sib} onPreview={a.onPreview} />
            {a.readOnly ? null : (
              <button className="link action" onClick={() => a.onRegenerate(e)} aria-label={`Regenerate reply ${e.sequence}`}>
                Regenerate
              </button>
            )}
            <ContinueIn sessionId={e.session_id} entryId={unit.entries[unit.entries.length - 1].id} sequence={e.sequence} />
          </header>
          {unit.blocks.map((b, i) => (
            // Each entry's first block carries its id: a hit or a node lands on it.
            <div key={i} className="block" data-entry={first.get(i)}>
              <BlockView block={b} showRaw={filters.hidden} workers={a.workers} onOpenChat={a.onOpenChat} />
            </div>
          ))}
          {unit.entries
            .filter((x) => x.id !== e.id && !placed.has(x.id))
            .map((x) => (
              <span key={x.id} data-entry={x.id} className="anchor" />
            ))}
          {unit.dropped ? (
            <p className="dropped">
              {unit.dropped} unfinished block{unit.dropped === 1 ? " was" : "s were"} not kept: only what was
              shown of a reply is recorded.
            </p>
          ) : null}
        </article>
      );
    }
    case "summary":
      return (
        <article className={`msg summary${hl}`} data-entry={e.id}>
          <header>
            <strong>{unit.label}</strong> <Meta e={e} />
          </header>
          <Md text={unit.text} />
        </article>
      );
    case "checkpoint":
      return (
        <article className={`msg checkpoint${hl}`} data-entry={e.id}>
          <header>
            <strong>⚑ Checkpoint “{unit.label}”</strong> <Meta e={e} />
          </header>
          {unit.text ? <p>{unit.text}</p> : null}
        </article>
      );
    case "system":
      return (
        <article className={`msg system${hl}`} data-entry={e.id}>
          <details>
            <summary>System prompt</summary>
            <Md text={unit.text} />
          </details>
        </article>
      );
    case "hidden":
      return <Raw entry={e} label="Hidden:" />;
  }
}, sameUnit);

/** Units drawn in place (no paging, no scrolling): a turn of a comparison. */
export function UnitList({ entries, filters = DEFAULT_FILTERS, ...actions }: { entries: LogEntryJson[]; filters?: Filters } & Actions) {
  const units = useMemo(() => buildUnits(entries, filters), [entries, filters]);
  return (
    <>
      {units.map((unit) => (
        <UnitView key={unit.key} unit={unit} filters={filters} highlighted={false} sib={null} {...actions} />
      ))}
    </>
  );
}

export interface Live {
  text: string;
  state: StreamState;
  error?: string;
}

/** Units drawn at first and added per "Show earlier entries". */
export const PAGE = 60;

interface Props extends Actions {
  entries: LogEntryJson[];
  live: Live | null;
  filters?: Filters;
  /** The entry to centre and mark (a hit, a node); null: follow the end. */
  highlight?: string | null;
  /** Whether the server holds earlier entries of this path than `entries` starts with. */
  earlier?: boolean;
  onEarlier?: () => Promise<void>;
  /** Whether the path goes on after the last of `entries` (a target far back was opened). */
  later?: boolean;
  onLater?: () => Promise<void>;
}

export function Transcript({ entries, live, filters = DEFAULT_FILTERS, highlight = null, earlier = false, onEarlier, later = false, onLater, ...actions }: Props) {
  const units = useMemo(() => buildUnits(entries, filters), [entries, filters]);
  const [shown, setShown] = useState(PAGE);
  const [loading, setLoading] = useState(false);
  const first = entries[0]?.session_id;
  useEffect(() => setShown(PAGE), [first]);
  // The highlighted entry's unit is always drawn.
  const target = useMemo(
    () => (highlight ? units.findIndex((u) => u.entries.some((x) => x.id === highlight)) : -1),
    [units, highlight],
  );
  const start = Math.max(0, Math.min(units.length - shown, target >= 0 ? target - 5 : Infinity));
  const section = useRef<HTMLElement>(null);
  const keep = useRef<number | null>(null); // distance from the bottom to keep when prepending
  const last = entries[entries.length - 1]?.id;
  useLayoutEffect(() => {
    const el = section.current;
    if (!el) return;
    if (keep.current !== null) {
      el.scrollTop = el.scrollHeight - keep.current;
      keep.current = null;
    } else if (!highlight) el.scrollTop = el.scrollHeight;
  }, [last, live?.text, start, highlight]);
  useLayoutEffect(() => {
    if (!highlight) return;
    // Scroll only the transcript (scrollIntoView would scroll every ancestor, the page too):
    // the entry's top a quarter down the view.
    const sec = section.current;
    const el = sec?.querySelector(`[data-entry="${highlight}"]`);
    if (sec && el) sec.scrollTop += el.getBoundingClientRect().top - sec.getBoundingClientRect().top - sec.clientHeight / 4;
  }, [highlight, target]);

  const showEarlier = async () => {
    const el = section.current;
    if (el) keep.current = el.scrollHeight - el.scrollTop;
    if (start > 0) setShown((n) => Math.max(n, units.length - start) + PAGE);
    else if (onEarlier) {
      setLoading(true);
      try {
        await onEarlier();
        setShown((n) => n + PAGE);
      } finally {
        setLoading(false);
      }
    }
  };
  const hiddenBefore = start > 0 || earlier;
  // What follows a far target is read as the reader scrolls to the end of what is drawn
  // (the button stays for the keyboard).
  const laterRef = useRef<HTMLButtonElement>(null);
  const reading = useRef(false);
  useEffect(() => {
    const el = laterRef.current;
    if (!el || !onLater || typeof IntersectionObserver === "undefined") return;
    const seen = new IntersectionObserver((found) => {
      if (!found.some((f) => f.isIntersecting) || reading.current) return;
      reading.current = true;
      void onLater().finally(() => (reading.current = false));
    }, { root: section.current, rootMargin: "0px 0px 400px 0px" });
    seen.observe(el);
    return () => seen.disconnect();
  }, [onLater, later, last]);
  return (
    <section className="transcript" aria-label="Transcript" ref={section} tabIndex={-1}>
      {units.length === 0 && !live ? <p className="empty">No entries on this branch yet.</p> : null}
      {hiddenBefore ? (
        <button className="earlier" onClick={() => void showEarlier()} disabled={loading}>
          {loading ? "Loading…" : `Show earlier entries${start > 0 ? ` (${start} not shown)` : ""}`}
        </button>
      ) : null}
      {units.slice(start).map((unit) => (
        <UnitView
          key={unit.key}
          unit={unit}
          filters={filters}
          highlighted={target >= 0 && units[target] === unit}
          sib={actions.siblings?.(unit.entry) ?? null}
          {...actions}
        />
      ))}
      {later && onLater ? (
        <button className="earlier" ref={laterRef} onClick={() => void onLater()}>
          Show later entries
        </button>
      ) : null}
      {live ? (
        <article className={`msg assistant state-${live.state}`} aria-label="Assistant, streaming" aria-live="polite">
          <header>
            <strong>Assistant</strong>
            <span className={`state state-${live.state}`}>{STATE_LABEL[live.state]}</span>
          </header>
          <Md text={live.text} />
          {live.error ? <p className="error">{live.error}</p> : null}
        </article>
      ) : null}
    </section>
  );
}
