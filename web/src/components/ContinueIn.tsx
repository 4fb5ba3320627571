// "Continue in…" on an entry: hands the path to it to Claude Code, Codex or Gemini CLI (sessions/resume
// writes a new transcript of that harness on the server's machine) and shows the one command
// that continues it, with a copy button and what could not be carried as it was.
import { useState } from "react";
import { call, RpcError } from "../api/client";
import type { Resumed } from "../api/types.gen";

type Target = "claude-code" | "codex" | "gemini";
const TARGETS: [Target, string][] = [
  ["claude-code", "Claude Code"],
  ["codex", "Codex"],
  ["gemini", "Gemini CLI"],
];

export function ContinueIn({ sessionId, entryId, sequence }: { sessionId: string; entryId: string; sequence: number }) {
  const [open, setOpen] = useState(false);
  const [target, setTarget] = useState<Target>("claude-code");
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<Resumed | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);

  const write = async () => {
    setBusy(true);
    setError(null);
    setDone(null);
    setCopied(null);
    try {
      setDone(await call("sessions/resume", { session_id: sessionId, at: entryId, to: target }));
    } catch (e) {
      setError(e instanceof RpcError || e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  const copy = async () => {
    if (!done) return;
    try {
      await navigator.clipboard.writeText(done.command);
      setCopied("yes");
    } catch {
      setCopied("failed");
    }
  };

  if (!open) {
    return (
      <button className="link action continue-in" onClick={() => setOpen(true)} aria-label={`Continue in… from entry ${sequence}`}>
        Continue in…
      </button>
    );
  }
  return (
    <section className="continue-panel" role="region" aria-label={`Continue from entry ${sequence}`}>
      <label>
        Continue in{" "}
        <select value={target} onChange={(e) => setTarget(e.target.value as Target)} aria-label="Agent">
          {TARGETS.map(([value, name]) => (
            <option key={value} value={value}>
              {name}
            </option>
          ))}
        </select>
      </label>{" "}
      <button onClick={write} disabled={busy}>
        {busy ? "Writing…" : "Write the transcript"}
      </button>{" "}
      <button className="link" onClick={() => setOpen(false)}>
        Close
      </button>
      {error ? (
        <p className="continue-error" role="alert">
          {error}
        </p>
      ) : null}
      {done ? (
        <div className="continue-done">
          <p>
            Wrote a new {TARGETS.find(([t]) => t === done.target)?.[1] ?? done.target} session ({done.turns} message{done.turns === 1 ? "" : "s"}). Run:
          </p>
          <div className="continue-command">
            <code aria-label="Command">{done.command}</code>
            <button onClick={copy}>{copied === "yes" ? "Copied the command" : "Copy the command"}</button>
          </div>
          {copied === "failed" ? <p className="continue-error">The browser refused the clipboard: select the command and copy it.</p> : null}
          {done.notes.map((line) => (
            <p key={line} className="continue-note" role="note">
              {line}
            </p>
          ))}
          {done.folded.length ? (
            <ul className="continue-folded" aria-label="Folded or left out">
              {done.folded.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
