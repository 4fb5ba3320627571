import { useState } from "react";
import type { EntryHitJson, LogEntryJson } from "../api/types.gen";
import { Snippet } from "./Snippet";

export interface RecallCard {
  query: string;
  hits: EntryHitJson[];
}

interface Props {
  editing: LogEntryJson | null;
  busy: boolean;
  /** A read-only preview: nothing is sent until the reader continues from it. */
  readOnly?: boolean;
  onCancelEdit: () => void;
  onSubmit: (text: string) => Promise<void>;
  onStop: () => void;
  streaming: boolean;
  notice: string | null;
  card: RecallCard | null;
  onCloseCard: () => void;
  onJump: (entryId: string) => void;
  inputRef: React.RefObject<HTMLTextAreaElement | null>;
}

export function Composer(props: Props) {
  const [text, setText] = useState("");
  const [prevEditing, setPrevEditing] = useState<LogEntryJson | null>(null);
  if (props.editing !== prevEditing) {
    setPrevEditing(props.editing);
    if (props.editing) {
      const content = (props.editing.payload as { content?: { type: string; text?: string }[] }).content ?? [];
      setText(content.filter((b) => b.type === "text").map((b) => b.text).join("\n"));
    }
  }
  const submit = async () => {
    const value = text.trim();
    if (!value || props.busy) return;
    await props.onSubmit(value);
    setText("");
  };
  return (
    <section className="composer" aria-label="Composer">
      {props.card ? (
        <div className="recall-card" role="region" aria-label={`Recall: ${props.card.query}`}>
          <header>
            <strong>/recall “{props.card.query}”</strong> — {props.card.hits.length} hit
            {props.card.hits.length === 1 ? "" : "s"} in this chat (shown here only: not sent, not saved)
            <button className="link" onClick={props.onCloseCard}>
              Close
            </button>
          </header>
          <ol>
            {props.card.hits.map((h) => (
              <li key={h.entry_id}>
                <button className="link" onClick={() => props.onJump(h.entry_id)}>
                  #{h.sequence} {h.kind}
                  {h.on_active_branch ? " (active branch)" : " (other branch)"}
                </button>{" "}
                <Snippet text={h.snippet} />
              </li>
            ))}
          </ol>
        </div>
      ) : null}
      {props.editing ? (
        <p className="editing">
          Editing message #{props.editing.sequence}: sending starts a new branch beside it.{" "}
          <button className="link" onClick={props.onCancelEdit}>
            Cancel
          </button>
        </p>
      ) : null}
      <p className="notice" role="status">
        {props.notice ?? ""}
      </p>
      <div className="composer-row">
        <textarea
          ref={props.inputRef}
          aria-label="Message"
          placeholder={
            props.readOnly
              ? "Read-only preview: “Continue from here” to write on this branch"
              : "Message — /recall, /find, /checkpoint; Enter sends, Shift+Enter new line"
          }
          disabled={props.readOnly}
          value={text}
          rows={3}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey) {
              e.preventDefault();
              void submit();
            }
          }}
        />
        {props.streaming ? (
          <button onClick={props.onStop}>Stop</button>
        ) : (
          <button onClick={() => void submit()} disabled={props.busy || props.readOnly}>
            Send
          </button>
        )}
      </div>
    </section>
  );
}
