// One tool call inside an assistant turn: a header naming the tool, its key argument (command,
// path, pattern) and its status; inside, the call drawn for what it is (an edit as a diff, a
// todo list as a checklist, a plan as Markdown, a worker task with a link to the worker's
// chat) and its result. Raw records only when hidden entries are shown.
import { memo } from "react";
import type { LogEntryJson } from "../api/types.gen";
import type { FileDiff, ToolCall } from "../transcript";
import { LongText, Md } from "./Markdown";

/** A worker chat a task may have started (matched by the prompt it was given). */
export interface WorkerLink {
  session_id: string;
  title: string;
  prompt: string;
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

const STATUS = {
  done: { mark: "✓", text: "done" },
  error: { mark: "✕", text: "error" },
  waiting: { mark: "…", text: "no result yet" },
};

export function toolStatus(call: ToolCall): keyof typeof STATUS {
  return call.result === null ? "waiting" : call.result.isError ? "error" : "done";
}

export function Diff({ file }: { file: FileDiff }) {
  const added = file.lines.filter(([k]) => k === "+").length;
  const removed = file.lines.filter(([k]) => k === "-").length;
  return (
    <figure className="diff">
      <figcaption>
        <code>{file.path || "(file)"}</code> <span className="diff-stat added">+{added}</span>{" "}
        <span className="diff-stat removed">−{removed}</span>
      </figcaption>
      <pre className="diff-body">
        {file.lines.map(([k, line], i) => (
          <span key={i} className={k === "+" ? "add" : k === "-" ? "del" : k === "@" ? "hunk" : "ctx"}>
            <span className="diff-sign" aria-hidden="true">
              {k === "@" ? "" : k}
            </span>
            {k === "@" ? line : line || " "}
            {"\n"}
          </span>
        ))}
      </pre>
    </figure>
  );
}

const TODO_MARK = { completed: "☑", in_progress: "◐", pending: "☐" };

function CallBody({ call, workers, onOpenChat }: { call: ToolCall } & Pick<Props, "workers" | "onOpenChat">) {
  const v = call.view;
  switch (v.kind) {
    case "edit":
      return (
        <>
          {v.files.map((f, i) => (
            <Diff key={i} file={f} />
          ))}
        </>
      );
    case "todos":
      return (
        <ul className="todos" aria-label="Todo list">
          {v.items.map((t, i) => (
            <li key={i} className={`todo ${t.status}`}>
              <span aria-hidden="true">{TODO_MARK[t.status]} </span>
              <span className="visually-hidden">{t.status.replace("_", " ")}: </span>
              {t.text}
            </li>
          ))}
        </ul>
      );
    case "plan":
      return <Md text={v.markdown} />;
    case "task": {
      const worker = workers?.find((w) => w.prompt && v.prompt.trim().startsWith(w.prompt.trim().slice(0, 200)));
      return (
        <div className="task">
          {worker ? (
            <p>
              <button className="link" onClick={() => onOpenChat?.(worker.session_id)}>
                Open the worker's chat{worker.title ? `: ${worker.title}` : ""}
              </button>
            </p>
          ) : (
            <p className="muted">The worker's chat is not in this store.</p>
          )}
          <details>
            <summary>Prompt</summary>
            <Md text={v.prompt} />
          </details>
        </div>
      );
    }
    default:
      return call.input !== null ? (
        <>
          <h4>Call</h4>
          <LongText text={json(call.input)} limit={20_000} />
        </>
      ) : null;
  }
}

interface Props {
  call: ToolCall;
  showRaw: boolean;
  workers?: WorkerLink[];
  onOpenChat?: (sessionId: string) => void;
}

export const ToolCard = memo(function ToolCard({ call, showRaw, workers, onOpenChat }: Props) {
  const status = STATUS[toolStatus(call)];
  const open = call.view.kind === "edit" || call.view.kind === "todos" || call.view.kind === "plan";
  const label = call.view.kind === "task" ? (call.view.description || call.key) : call.key;
  return (
    <>
      {call.raw.map((r) => (
        <span key={r.id} className="anchor" data-entry={r.id} />
      ))}
    <details className={`tool ${toolStatus(call)}`} open={open}>
      <summary>
        <span className="tool-name">{call.name}</span>
        {label ? <code className="tool-key">{label}</code> : null}
        <span className={`tool-status ${toolStatus(call)}`} title={status.text}>
          <span aria-hidden="true">{status.mark} </span>
          {status.text}
        </span>
      </summary>
      <CallBody call={call} workers={workers} onOpenChat={onOpenChat} />
      {call.result ? (
        <>
          <h4>{call.result.isError ? "Error" : "Result"}</h4>
          {call.result.text ? <LongText text={call.result.text} limit={20_000} /> : <p className="muted">(empty)</p>}
        </>
      ) : null}
      {showRaw ? call.raw.map((e) => <Raw key={e.id} entry={e} />) : null}
    </details>
    </>
  );
});

export function Raw({ entry, label = "Raw" }: { entry: LogEntryJson; label?: string }) {
  return (
    <details className="hidden-entry" data-entry={entry.id}>
      <summary>
        {label} <code>{entry.kind}</code> #{entry.sequence}
      </summary>
      <LongText text={json(entry.payload)} limit={20_000} />
    </details>
  );
}
