import { Fragment, useCallback, useEffect, useRef, useState } from "react";
import { call, type Params, type Result } from "../api/client";
import type { ChatSearchJson, SessionJson } from "../api/types.gen";
import { Snippet } from "./Snippet";

interface Props {
  sessions: SessionJson[];
  openId: string | null;
  onOpen: (id: string) => void;
  query: string;
  onQuery: (q: string) => void;
  searchRef: React.RefObject<HTMLInputElement | null>;
  /** How searches reach the server (the WebSocket when open). */
  search: Search;
  /** Whether the server has a model, so Enter on an unsure query can run the deep search. */
  deepConfigured: boolean;
}

// One formatter for every row: toLocaleString builds a new one per call (slow for 1,000 chats).
const FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

export function when(iso: string): string {
  return FORMAT.format(new Date(iso));
}

/** How the search reaches the server: over the app's WebSocket when it is open (so the
 * server can pre-start a deep search for this client), else over HTTP. */
export type Search = <M extends "sessions/search_chats" | "search/deep">(
  method: M,
  params: Params<M>,
) => Promise<Result<M>>;

export const httpSearch: Search = (method, params) => call(method, params);

/** The deep search's state for the query in the box. */
export type Deep =
  | { state: "busy" }
  | { state: "done"; result: Result<"search/deep"> }
  | { state: "failed"; message: string };

const LIMIT = 20;

/** Why the model tier fell back, in words (the provider's raw message is left to
 * `fallback_detail`, shown on hover: it can be a long SDK dump). */
export function fallbackWords(result: Result<"search/deep">): string {
  const detail = result.fallback_detail ?? "";
  const provider = /^(anthropic|openai):/.exec(detail)?.[1];
  const whose = provider ? `the ${provider === "openai" ? "OpenAI" : "Anthropic"} account's` : "the model provider's";
  switch (result.fallback) {
    case "quota":
      return /rate limited/.test(detail)
        ? "the model provider rate-limited the request; try again shortly"
        : `${whose} quota is used up`;
    case "timeout":
      return "the model did not answer within its time budget";
    case "lookup_budget":
      return "the model asked for more lookups than allowed";
    case "token_budget":
      return "the model's lookups went over the token budget";
    case "invalid_answer":
      return "the model's reply was not a valid answer";
    case "provider_error":
      return "the model provider failed";
    default:
      return "";
  }
}

/** Debounced T1 search (`prestart: true`, so the server can prepare the deep search
 * while the person reads); Enter's deep search takes a ticket from the same counter, so
 * an answer older than the newest request — as-you-type or deep — is dropped. */
export function useChatSearch(query: string, search: Search, delay = 120) {
  const [result, setResult] = useState<ChatSearchJson | null>(null);
  const [answered, setAnswered] = useState<string | null>(null); // the query `result` answers
  const [error, setError] = useState<string | null>(null);
  const [deep, setDeep] = useState<Deep | null>(null);
  const latest = useRef(0);
  useEffect(() => {
    const ticket = ++latest.current;
    setDeep(null);
    if (!query.trim()) {
      setResult(null);
      setError(null);
      return;
    }
    const timer = setTimeout(() => {
      search("sessions/search_chats", { query, limit: LIMIT, prestart: true }).then(
        (r) => {
          if (ticket === latest.current) {
            setResult(r);
            setAnswered(query);
            setError(null);
          }
        },
        (e: Error) => {
          if (ticket === latest.current) setError(e.message);
        },
      );
    }, delay);
    return () => clearTimeout(timer);
  }, [query, delay, search]);

  const runDeep = useCallback(
    (onAnswer: (id: string) => void) => {
      const ticket = ++latest.current;
      setDeep({ state: "busy" });
      search("search/deep", { query, limit: LIMIT }).then(
        (r) => {
          if (ticket !== latest.current) return;
          setResult(r);
          setError(null);
          setDeep({ state: "done", result: r });
          if (r.tier === "model" && r.answer) onAnswer(r.answer);
        },
        (e: Error) => {
          if (ticket === latest.current) setDeep({ state: "failed", message: e.message });
        },
      );
    },
    [query, search],
  );
  return { result: query.trim() ? result : null, current: answered === query, error, deep, runDeep };
}

// A time window that leaves fewer chats than asked for is followed by matches from
// any time (`outside_window`, a tail of `hits`): they are listed under a note of their own.
const outsideCache = new WeakMap<ChatSearchJson, Set<string>>();
function outsideIds(r: ChatSearchJson): Set<string> {
  let ids = outsideCache.get(r);
  if (!ids) {
    ids = new Set(r.outside_window.map((h) => h.session_id));
    outsideCache.set(r, ids);
  }
  return ids;
}

function firstOutside(r: ChatSearchJson): number {
  const ids = outsideIds(r);
  return ids.size ? r.hits.findIndex((h) => ids.has(h.session_id)) : -1;
}

function windowPhrase(r: ChatSearchJson): string {
  return r.window?.phrase ?? "the time window";
}

function deepStatus(deep: Deep): string {
  if (deep.state === "busy") return "⋯ Not sure from the index: asking the model (deep search)…";
  if (deep.state === "failed") return `Deep search failed: ${deep.message}. These are the index's best matches.`;
  const r = deep.result;
  if (r.tier === "model") {
    return r.answer
      ? "Answered by the model (deep search): opened its chat, shown first."
      : "Answered by the model (deep search): none of these chats is it, so these are the index's best matches.";
  }
  if (r.fallback) return `Answered by the index: ${fallbackWords(r)}. These are the index's best matches.`;
  return r.confident && r.hits.length > 0
    ? "Answered by the index: it is sure."
    : `Answered by the index (${r.reason}${r.detail ? `: ${r.detail}` : ""}).`;
}

/** One chat in a list (every chat, or a search's hits): title, harness, time, status. */
function ChatButton({
  chat,
  openId,
  onOpen,
  children,
}: {
  chat: { id: string; title: string; harness: string; updated_at: string; status: string };
  openId: string | null;
  onOpen: (id: string) => void;
  children?: React.ReactNode;
}) {
  return (
    <button
      className={chat.id === openId ? "chat open" : "chat"}
      aria-current={chat.id === openId ? "page" : undefined}
      onClick={() => onOpen(chat.id)}
    >
      <span className="chat-title">{chat.title || chat.id.slice(0, 8)}</span>
      <span className="chat-meta">
        <span className="label">{chat.harness || "unknown"}</span> {when(chat.updated_at)}
        {chat.status !== "active" ? <span className="status-badge">{chat.status}</span> : null}
      </span>
      {children}
    </button>
  );
}

export function Sidebar({ sessions, openId, onOpen, query, onQuery, searchRef, search, deepConfigured }: Props) {
  const { result, current, error, deep, runDeep } = useChatSearch(query, search);
  const [notSure, setNotSure] = useState<string | null>(null);
  // Enter pressed before the answer to what is in the box arrived: act when it does.
  const [enterWaiting, setEnterWaiting] = useState(false);
  useEffect(() => {
    setNotSure(null);
    setEnterWaiting(false);
  }, [query]);

  const enter = () => {
    if (!result) return;
    if (result.confident && result.hits.length > 0) {
      onOpen(result.hits[0].session_id);
      setNotSure(null);
    } else if (deepConfigured) {
      if (deep?.state !== "busy") runDeep(onOpen);
    } else {
      setNotSure(
        `Not sure which chat you mean (${result.reason}${result.detail ? `: ${result.detail}` : ""}). ` +
          "No deep search is configured, so these are the index's best matches.",
      );
    }
  };

  useEffect(() => {
    if (enterWaiting && current && result) {
      setEnterWaiting(false);
      enter();
    }
  });

  const onKeyDown = (event: React.KeyboardEvent<HTMLInputElement>) => {
    if (event.key === "Escape") onQuery("");
    if (event.key !== "Enter" || !query.trim()) return;
    if (current && result) enter();
    else setEnterWaiting(true);
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
      <p
        id="search-status"
        className={deep?.state === "busy" ? "search-status busy" : "search-status"}
        role="status"
        aria-busy={deep?.state === "busy"}
        title={deep?.state === "done" ? (deep.result.fallback_detail ?? undefined) : undefined}
      >
        {error
          ? `Search failed: ${error}`
          : deep
            ? deepStatus(deep)
            : notSure
            ? notSure
            : result
              ? `${result.hits.length} chat${result.hits.length === 1 ? "" : "s"}${result.confident ? " — Enter opens the first" : ""}`
              : ""}
      </p>
      {result ? (
        <ul className="chat-list" aria-label="Search results">
          {result.hits.map((hit, i) => (
            <Fragment key={hit.session_id}>
              {i === firstOutside(result) ? (
                <li className="outside-note" role="note">
                  {i === 0
                    ? `No chat matched “${windowPhrase(result)}”; from any time:`
                    : `Outside “${windowPhrase(result)}”, from any time:`}
                </li>
              ) : null}
              <li className={outsideIds(result).has(hit.session_id) ? "outside" : undefined}>
                <ChatButton chat={{ ...hit, id: hit.session_id }} openId={openId} onOpen={onOpen}>
                  {hit.snippet ? <Snippet text={hit.snippet} /> : null}
                </ChatButton>
              </li>
            </Fragment>
          ))}
        </ul>
      ) : (
        <ul className="chat-list" aria-label="All chats">
          {sessions.map((s) => (
            <li key={s.id}>
              <ChatButton chat={s} openId={openId} onOpen={onOpen} />
            </li>
          ))}
        </ul>
      )}
    </nav>
  );
}
