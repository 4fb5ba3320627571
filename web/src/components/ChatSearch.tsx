// The chat toolbar's search box: recall in this one chat as you type
// (sessions/search_session_entries, the API /recall uses), each hit with its branch (the
// active one or another) and opening at its entry. Arrow keys move through the hits.
import { useEffect, useRef, useState } from "react";
import { call } from "../api/client";
import type { EntryHitJson } from "../api/types.gen";
import { Snippet } from "./Snippet";

const KIND: Record<string, string> = {
  "user.message": "you",
  "assistant.message": "assistant",
  "tool.completed": "tool result",
  checkpoint: "checkpoint",
  compaction: "summary",
  "branch.summary": "summary",
  "worker.result": "worker",
};

export function ChatSearch({ sessionId, onOpen, delay = 150 }: { sessionId: string; onOpen: (entryId: string) => void; delay?: number }) {
  const [query, setQuery] = useState("");
  const [hits, setHits] = useState<EntryHitJson[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState(false);
  const ticket = useRef(0);
  const list = useRef<HTMLUListElement>(null);
  useEffect(() => {
    setQuery("");
    setHits(null);
  }, [sessionId]);
  useEffect(() => {
    const mine = ++ticket.current;
    if (!query.trim()) {
      setHits(null);
      setError(null);
      return;
    }
    const timer = setTimeout(() => {
      call("sessions/search_session_entries", { session_id: sessionId, query, limit: 20 }).then(
        (found) => {
          if (mine !== ticket.current) return;
          setHits(found);
          setError(null);
          setOpen(true);
        },
        (e: Error) => mine === ticket.current && setError(e.message),
      );
    }, delay);
    return () => clearTimeout(timer);
  }, [query, sessionId, delay]);

  const pick = (h: EntryHitJson) => {
    setOpen(false);
    onOpen(h.entry_id);
  };
  const move = (from: number, by: number) => {
    const buttons = list.current?.querySelectorAll<HTMLButtonElement>("button");
    if (!buttons?.length) return;
    buttons[Math.max(0, Math.min(buttons.length - 1, from + by))].focus();
  };
  return (
    <div className="chat-search" onKeyDown={(e) => e.key === "Escape" && setOpen(false)}>
      <input
        type="search"
        aria-label="Search this chat"
        placeholder="Search this chat…"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
        onFocus={() => hits && setOpen(true)}
        onKeyDown={(e) => {
          if (e.key === "ArrowDown") {
            e.preventDefault();
            setOpen(true);
            move(-1, 1);
          } else if (e.key === "Enter" && hits?.[0]) pick(hits[0]);
        }}
      />
      {open && (hits || error) ? (
        <div className="chat-search-results" role="region" aria-label="Hits in this chat">
          <p className="muted" role="status">
            {error ? `Search failed: ${error}` : `${hits!.length} hit${hits!.length === 1 ? "" : "s"} in this chat`}
          </p>
          <ul ref={list}>
            {(hits ?? []).map((h, i) => (
              <li key={h.entry_id}>
                <button
                  className="hit"
                  onClick={() => pick(h)}
                  onKeyDown={(e) => {
                    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
                      e.preventDefault();
                      move(i, e.key === "ArrowDown" ? 1 : -1);
                    }
                  }}
                >
                  <span className="hit-meta">
                    #{h.sequence} {KIND[h.kind] ?? h.kind}
                    <span className={h.on_active_branch ? "branch active" : "branch other"}>
                      {h.on_active_branch ? "active branch" : "other branch"}
                    </span>
                  </span>
                  <Snippet text={h.snippet} />
                </button>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </div>
  );
}
