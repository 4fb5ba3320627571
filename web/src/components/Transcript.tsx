import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import Markdown from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import type { LogEntryJson } from "../api/types.gen";
import { buildUnits, type Block, type StreamState, type Unit } from "../transcript";

const STATE_LABEL: Record<StreamState, string> = {
  streaming: "● streaming",
  complete: "✓ complete",
  incomplete: "◐ incomplete (stopped before the end)",
  failed: "✕ failed",
};

function Md({ text }: { text: string }) {
  return (
    <div className="md">
      <Markdown rehypePlugins={[rehypeHighlight]}>{text}</Markdown>
    </div>
  );
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

function BlockView({ block }: { block: Block }) {
  switch (block.type) {
    case "text":
      return <Md text={block.text} />;
    case "image":
      return <p className="image-block">[image: {block.media_type}]</p>;
    case "thinking":
      return (
        <details className="thinking">
          <summary>{block.redacted ? "Thinking (redacted)" : "Thinking"}</summary>
          {block.redacted ? <p>The provider redacted this thinking.</p> : <div className="thinking-text">{block.text}</div>}
        </details>
      );
    case "tool":
      return (
        <details className={block.result?.isError ? "tool error" : "tool"}>
          <summary>
            <span aria-hidden="true">⚙ </span>Tool <code>{block.name}</code>
            {block.result === null ? " — no result yet" : block.result.isError ? " — error" : " — done"}
          </summary>
          {block.input !== null ? (
            <>
              <h4>Call</h4>
              <pre>{json(block.input)}</pre>
            </>
          ) : null}
          {block.result ? (
            <>
              <h4>Result</h4>
              <pre>{block.result.text}</pre>
            </>
          ) : null}
          {block.raw.map((e) => (
            <details key={e.id} className="hidden-entry" data-entry={e.id}>
              <summary>
                Raw <code>{e.kind}</code> #{e.sequence}
              </summary>
              <pre>{json(e.payload)}</pre>
            </details>
          ))}
        </details>
      );
  }
}

interface ActionProps {
  onEdit: (entry: LogEntryJson) => void;
  onRegenerate: (entry: LogEntryJson) => void;
}

function UnitView({ unit, onEdit, onRegenerate }: { unit: Unit } & ActionProps) {
  const e = unit.entry;
  const meta = (
    <span className="meta">
      #{e.sequence}
      {e.diverged ? <span className="badge diverged" title="the worktree changed since this entry"> ≠ diverged</span> : null}
    </span>
  );
  switch (unit.type) {
    case "user":
      return (
        <article className="msg user" aria-label={`You, entry ${e.sequence}`} data-entry={e.id}>
          <header>
            <strong>You</strong> {meta}
            <button className="link" onClick={() => onEdit(e)} aria-label={`Edit message ${e.sequence}`}>
              Edit
            </button>
          </header>
          {unit.blocks.map((b, i) => (
            <BlockView key={i} block={b} />
          ))}
        </article>
      );
    case "assistant":
      return (
        <article className={`msg assistant state-${unit.state}`} aria-label={`Assistant, entry ${e.sequence}`} data-entry={e.id}>
          <header>
            <strong>Assistant</strong> {meta}
            <span className={`state state-${unit.state}`}>{STATE_LABEL[unit.state]}</span>
            <button className="link" onClick={() => onRegenerate(e)} aria-label={`Regenerate reply ${e.sequence}`}>
              Regenerate
            </button>
          </header>
          {unit.blocks.map((b, i) => (
            <BlockView key={i} block={b} />
          ))}
          {unit.dropped ? (
            <p className="dropped">
              {unit.dropped} unfinished block{unit.dropped === 1 ? " was" : "s were"} not kept: only finished
              parts of a reply are recorded.
            </p>
          ) : null}
        </article>
      );
    case "tool":
      return (
        <article className="msg tool-only" data-entry={e.id}>
          <BlockView block={unit.block} />
        </article>
      );
    case "summary":
      return (
        <article className="msg summary" data-entry={e.id}>
          <header>
            <strong>{unit.label}</strong> {meta}
          </header>
          <Md text={unit.text} />
        </article>
      );
    case "checkpoint":
      return (
        <article className="msg checkpoint" data-entry={e.id}>
          <header>
            <strong>⚑ Checkpoint “{unit.label}”</strong> {meta}
          </header>
          {unit.text ? <p>{unit.text}</p> : null}
        </article>
      );
    case "system":
      return (
        <article className="msg system" data-entry={e.id}>
          <details>
            <summary>System prompt</summary>
            <Md text={unit.text} />
          </details>
        </article>
      );
    case "hidden":
      return (
        <details className="hidden-entry" data-entry={e.id}>
          <summary>
            Hidden: <code>{e.kind}</code> #{e.sequence}
          </summary>
          <pre>{json(e.payload)}</pre>
        </details>
      );
  }
}

export interface Live {
  text: string;
  state: StreamState;
  error?: string;
}

const PAGE = 150;

export function Transcript({ entries, live, ...actions }: { entries: LogEntryJson[]; live: Live | null } & ActionProps) {
  const units = useMemo(() => buildUnits(entries), [entries]);
  // A long path renders its last PAGE units; earlier ones a page at a time, on request.
  const [shown, setShown] = useState(PAGE);
  const first = entries[0]?.id;
  useEffect(() => setShown(PAGE), [first]);
  const start = Math.max(0, units.length - shown);
  // Follow the end of the path: on open, on a new entry, while a reply streams.
  const section = useRef<HTMLElement>(null);
  const last = entries[entries.length - 1]?.id;
  useLayoutEffect(() => {
    const el = section.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [last, live?.text]);
  return (
    <section className="transcript" aria-label="Transcript" ref={section}>
      {units.length === 0 && !live ? <p className="empty">No entries on this branch yet.</p> : null}
      {start > 0 ? (
        <button className="earlier" onClick={() => setShown((n) => n + PAGE)}>
          Show earlier entries ({start} not shown)
        </button>
      ) : null}
      {units.slice(start).map((unit) => (
        <UnitView key={unit.entry.id} unit={unit} {...actions} />
      ))}
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
