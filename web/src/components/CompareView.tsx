// Two branches side by side from their common ancestor (sessions/compare): each row is a
// turn of each side, the same turns marked as such, a re-done turn beside its other
// version; then the files: `git diff` between the HEADs the two ends were stamped in, and
// whether their uncommitted changes differ.
import { useEffect, useMemo, useRef, useState } from "react";
import { call, type Result } from "../api/client";
import type { LogEntryJson } from "../api/types.gen";
import type { Filters } from "../transcript";
import { patchFiles } from "../transcript";
import { Diff } from "./ToolCard";
import { UnitList } from "./Transcript";

type Compared = Result<"sessions/compare">;

const noop = () => {};

/** Turns drawn at first and added each time the end of the drawn ones comes near: two
 * 500-turn branches drew every turn, both sides, before the first showed. */
export const ROWS = 40;

export function CompareView({ sessionId, a, b, filters, onPreview, onClose }: { sessionId: string; a: string; b: string; filters: Filters; onPreview: (entry: string) => void; onClose: () => void }) {
  const [doc, setDoc] = useState<Compared | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    setDoc(null);
    call("sessions/compare", { session_id: sessionId, a, b }).then(
      (d) => live && setDoc(d),
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [sessionId, a, b]);
  const [shown, setShown] = useState(ROWS);
  useEffect(() => setShown(ROWS), [doc]);
  const more = useRef<HTMLButtonElement>(null);
  const total = doc?.rows.length ?? 0;
  useEffect(() => {
    const el = more.current;
    if (!el || typeof IntersectionObserver === "undefined") return;
    // Scrolled to within a screen of the last drawn turn: draw the next ones.
    const seen = new IntersectionObserver((es) => es.some((e) => e.isIntersecting) && setShown((n) => n + ROWS), { rootMargin: "800px 0px" });
    seen.observe(el);
    return () => seen.disconnect();
  }, [shown, total]);
  const byId = useMemo(() => new Map<string, LogEntryJson>([...(doc?.a_entries ?? []), ...(doc?.b_entries ?? [])].map((e) => [e.id, e])), [doc]);
  if (error) return <p className="error">Could not compare: {error}</p>;
  if (!doc) return <p className="empty">Comparing…</p>;
  const side = (ids: string[] | null) => (ids ? ids.map((i) => byId.get(i)!).filter(Boolean) : []);
  const seqOf = (id: string) => byId.get(id)?.sequence;
  const git = doc.git;
  const files = git.diff ? patchFiles(git.diff) : [];
  return (
    <section className="compare" aria-label="Compare branches">
      <header className="compare-head">
        <p>
          From their common ancestor{doc.ancestor ? "" : " (none: the branches start apart)"}: {doc.shared} shared entr{doc.shared === 1 ? "y" : "ies"}, then{" "}
          {doc.a_entries.length} on A and {doc.b_entries.length} on B.
        </p>
        <button className="link" onClick={onClose}>
          Close
        </button>
      </header>
      <div className="compare-grid" role="table" aria-label="Turns of both branches">
        <div role="row" className="compare-row compare-titles">
          <div role="columnheader">
            A{seqOf(doc.a) ? ` (to #${seqOf(doc.a)})` : ""}{" "}
            <button className="link" onClick={() => onPreview(doc.a)}>
              open
            </button>
          </div>
          <div role="columnheader">
            B{seqOf(doc.b) ? ` (to #${seqOf(doc.b)})` : ""}{" "}
            <button className="link" onClick={() => onPreview(doc.b)}>
              open
            </button>
          </div>
        </div>
        {doc.rows.slice(0, shown).map((row, i) => (
          <div role="row" key={i} className={row.same ? "compare-row same" : "compare-row differs"}>
            {[row.a, row.b].map((ids, k) => (
              <div role="cell" key={k} className={ids ? "compare-cell" : "compare-cell empty-side"}>
                {row.same && k === 1 ? (
                  <p className="muted">= the same turn</p>
                ) : ids ? (
                  <UnitList entries={side(ids)} filters={filters} readOnly onEdit={noop} onRegenerate={noop} />
                ) : (
                  <p className="muted">(nothing here on this branch)</p>
                )}
              </div>
            ))}
          </div>
        ))}
      </div>
      {shown < doc.rows.length ? (
        <button ref={more} className="earlier" onClick={() => setShown((n) => n + ROWS)}>
          Show more turns ({doc.rows.length - shown} not shown)
        </button>
      ) : null}
      <section className="compare-files" aria-label="Files">
        <h2>Files</h2>
        {git.state !== "compared" ? (
          <p className="muted">Not compared: {git.reason}</p>
        ) : git.a_head === git.b_head ? (
          <p>Both ends were written at commit <code>{git.a_head?.slice(0, 12)}</code>.</p>
        ) : (
          <>
            <p>
              <code>git diff {git.a_head?.slice(0, 12)} {git.b_head?.slice(0, 12)}</code>
            </p>
            <pre>{git.stat}</pre>
            {files.map((f, i) => (
              <Diff key={i} file={f} />
            ))}
            {git.truncated ? <p className="muted">The patch was cut at 256 KiB.</p> : null}
          </>
        )}
        {git.dirty_differs !== null ? (
          <p>
            Uncommitted changes {git.dirty_differs ? "differ" : "are the same"} (A: {git.a_dirty_files ?? "?"} dirty files, B:{" "}
            {git.b_dirty_files ?? "?"}).
          </p>
        ) : null}
      </section>
    </section>
  );
}
