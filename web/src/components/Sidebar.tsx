import { useEffect, useRef, useState } from "react";
import { call } from "../api/client";
import type { ChatSearchJson, SessionJson } from "../api/types.gen";
import { Snippet } from "./Snippet";

interface Props {
  sessions: SessionJson[];
  openId: string | null;
  onOpen: (id: string) => void;
  query: string;
  onQuery: (q: string) => void;
  searchRef: React.RefObject<HTMLInputElement | null>;
}

// One formatter for every row: toLocaleString builds a new one per call (slow for 1,000 chats).
const FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

export function when(iso: string): string {
  return FORMAT.format(new Date(iso));
}

/** Debounced T1 search; a response older than the newest request is dropped. */
export function useChatSearch(query: string, delay = 120) {
  const [result, setResult] = useState<ChatSearchJson | null>(null);
  const [error, setError] = useState<string | null>(null);
  const latest = useRef(0);
  useEffect(() => {
    const ticket = ++latest.current;
    if (!query.trim()) {
      setResult(null);
      setError(null);
      return;
    }
    const timer = setTimeout(() => {
      call("sessions/search_chats", { query, limit: 20 }).then(
        (r) => {
          if (ticket === latest.current) {
            setResult(r);
            setError(null);
          }
        },
        (e: Error) => {
          if (ticket === latest.current) setError(e.message);
        },
      );
    }, delay);
    return () => clearTimeout(timer);
  }, [query, delay]);
  return { result: query.trim() ? result : null, error };
}

export function Sidebar({ sessions, openId, onOpen, query, onQuery, searchRef }: Props) {
  const { result, error } = useChatSearch(query);
  const [notSure, setNotSure] = useState<string | null>(null);
  useEffect(() => setNotSure(null), [query]);

  const onKeyDown = (event: React.KeyboardEvent<HTMLInputElement>) => {
    if (event.key === "Escape") onQuery("");
    if (event.key !== "Enter" || !result) return;
    if (result.confident && result.hits.length > 0) {
      onOpen(result.hits[0].session_id);
      setNotSure(null);
    } else {
      setNotSure(
        `Not sure which chat you mean (${result.reason}${result.detail ? `: ${result.detail}` : ""}). ` +
          "No deep search is configured, so these are the index's best matches.",
      );
    }
  };

  return (
    <nav aria-label="Chats" className="sidebar">
      <h2 className="sidebar-title">Chats</h2>
      <input
        ref={searchRef}
        type="search"
        role="searchbox"
        aria-label="Find a chat"
        placeholder="Find a chat…"
        value={query}
        onChange={(e) => onQuery(e.target.value)}
        onKeyDown={onKeyDown}
        aria-describedby="search-status"
      />
      <p id="search-status" className="search-status" role="status">
        {error
          ? `Search failed: ${error}`
          : notSure
            ? notSure
            : result
              ? `${result.hits.length} chat${result.hits.length === 1 ? "" : "s"}${result.confident ? " — Enter opens the first" : ""}`
              : ""}
      </p>
      {result ? (
        <ul className="chat-list" aria-label="Search results">
          {result.hits.map((hit) => (
            <li key={hit.session_id}>
              <button
                className={hit.session_id === openId ? "chat open" : "chat"}
                aria-current={hit.session_id === openId ? "page" : undefined}
                onClick={() => onOpen(hit.session_id)}
              >
                <span className="chat-title">{hit.title || hit.session_id.slice(0, 8)}</span>
                <span className="chat-meta">
                  <span className="label">{hit.harness || "unknown"}</span> {when(hit.updated_at)}
                  {hit.status !== "active" ? <span className="status-badge">{hit.status}</span> : null}
                </span>
                {hit.snippet ? <Snippet text={hit.snippet} /> : null}
              </button>
            </li>
          ))}
        </ul>
      ) : (
        <ul className="chat-list" aria-label="All chats">
          {sessions.map((s) => (
            <li key={s.id}>
              <button
                className={s.id === openId ? "chat open" : "chat"}
                aria-current={s.id === openId ? "page" : undefined}
                onClick={() => onOpen(s.id)}
              >
                <span className="chat-title">{s.title || s.id.slice(0, 8)}</span>
                <span className="chat-meta">
                  <span className="label">{s.harness || "unknown"}</span> {when(s.updated_at)}
                  {s.status !== "active" ? <span className="status-badge">{s.status}</span> : null}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </nav>
  );
}
