import { useVirtualizer } from "@tanstack/react-virtual";
import { Fragment, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { call, type Params, type Result } from "../api/client";
import type { ChatSearchJson, SessionJson } from "../api/types.gen";
import { Snippet } from "./Snippet";

interface Props {
  /** Every chat, hidden (worker) ones included: they are listed on request. */
  sessions: SessionJson[];
  openId: string | null;
  onOpen: (id: string) => void;
  /** Open a chat at an entry (a search hit that names its entry). */
  onOpenAt?: (id: string, entryId: string) => void;
  query: string;
  onQuery: (q: string) => void;
  searchRef: React.RefObject<HTMLInputElement | null>;
  /** How searches reach the server (the WebSocket when open). */
  search: Search;
  /** Whether the server has a model, so Enter on an unsure query can run the deep search. */
  deepConfigured: boolean;
  /** Archive a chat from its row's menu (it leaves the list; still searchable). */
  onArchive?: (id: string) => void;
  /** Bring an archived chat back into the list, from its row's menu. */
  onUnarchive?: (id: string) => void;
  /** Rename a chat from its row's menu (when the server can). */
  onRename?: (id: string, title: string) => Promise<void>;
}

// One formatter for every count (toLocaleString builds one per call).
const COUNT = new Intl.NumberFormat("en-US");

/** "1 message", "2 messages": counts in words, as the CLI's text.plural says them. */
export function plural(n: number, one: string, many: string): string {
  return `${COUNT.format(n)} ${n === 1 ? one : many}`;
}

export type Counts = Result<"sessions/counts">[number];

/** Branches of the chats drawn (`sessions/counts`, a screenful at a time; their messages
 * come with the list): kept per chat until its entry count changes. */
export function useCounts(drawn: readonly SessionJson[]): Map<string, Counts> {
  const [known, setKnown] = useState<Map<string, Counts>>(() => new Map());
  const asked = useRef(new Map<string, number>()); // chat -> entry count asked for
  const pending = useRef(new Map<string, number>()); // to ask for at the next tick
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  // A branch needs two messages answering one turn: a chat of fewer has none to ask for.
  const want = drawn.filter((s) => s.messages > 1 && asked.current.get(s.id) !== s.entry_count);
  const key = want.map((s) => `${s.id}:${s.entry_count}`).join(",");
  useEffect(() => {
    for (const s of want) {
      asked.current.set(s.id, s.entry_count);
      pending.current.set(s.id, s.entry_count);
    }
    if (!pending.current.size || timer.current) return;
    // Rows drawn while scrolling gather for a moment, then go in batches of 200.
    timer.current = setTimeout(() => {
      timer.current = null;
      const all = [...pending.current.keys()];
      pending.current.clear();
      for (let i = 0; i < all.length; i += 200) {
        const ids = all.slice(i, i + 200) as [string, ...string[]];
        call("sessions/counts", { session_ids: ids }).then(
          (found) =>
            setKnown((m) => {
              const next = new Map(m);
              for (const c of found) next.set(c.session_id, c);
              return next;
            }),
          () => {
            for (const id of ids) asked.current.delete(id);
          },
        );
      }
    }, 40);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  return known;
}

// The deep-search usage records: hidden chats of their own, never listed as worker chats.
const SEARCH_RECORDS = "chat_search";

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

/** The directory a chat ran in, as a project name (its last part) and the whole path. */
export function projectOf(s: { cwd: string | null; origin_cwd: string | null }): { name: string; path: string } {
  const path = s.cwd ?? s.origin_cwd ?? "";
  const name = path.replace(/[\\/]+$/, "").split(/[\\/]/).pop() ?? "";
  return { name: name || "no project", path };
}

const DAY = 86_400_000;
const MONTH = new Intl.DateTimeFormat(undefined, { month: "long", year: "numeric" });

/** The date group a chat's last activity falls in, seen at `now`. */
export function dateGroup(iso: string, now: number = Date.now()): string {
  const t = new Date(iso).getTime();
  const today = new Date(now);
  today.setHours(0, 0, 0, 0);
  const start = today.getTime();
  if (t >= start) return "Today";
  if (t >= start - DAY) return "Yesterday";
  if (t >= start - 7 * DAY) return "Previous 7 days";
  if (t >= start - 30 * DAY) return "Previous 30 days";
  return Number.isNaN(t) ? "Unknown date" : MONTH.format(new Date(t));
}

export type Grouping = "date" | "project";

export interface ListOptions {
  grouping: Grouping;
  harness: string; // "" : every harness
  project: string; // "" : every project
  workers: boolean; // list hidden worker chats too
  empty: boolean; // list chats without a message too (only tool noise, notifications, metadata)
  archived: boolean; // list archived chats too
}

export type Row = { type: "group"; label: string; count: number } | { type: "chat"; chat: SessionJson };

/** The sidebar's rows: the chats the options keep, under their group headers, in the
 * given (latest activity first) order; a project's group sits where its newest chat is. */
export function listRows(
  sessions: readonly SessionJson[],
  o: ListOptions,
  now: number = Date.now(),
): { rows: Row[]; emptyHidden: number; archivedHidden: number } {
  let emptyHidden = 0;
  let archivedHidden = 0;
  const kept = sessions.filter((s) => {
    if (s.visibility === "hidden" && (!o.workers || s.harness === SEARCH_RECORDS)) return false;
    if (!o.archived && s.status === "archived") {
      archivedHidden += 1;
      return false;
    }
    if (o.harness && s.harness !== o.harness) return false;
    if (o.project && projectOf(s).path !== o.project) return false;
    if (!o.empty && s.messages === 0) {
      emptyHidden += 1;
      return false;
    }
    return true;
  });
  const groups = new Map<string, SessionJson[]>();
  for (const s of kept) {
    const key = o.grouping === "date" ? dateGroup(s.updated_at, now) : projectOf(s).name;
    const list = groups.get(key);
    if (list) list.push(s);
    else groups.set(key, [s]);
  }
  const rows: Row[] = [];
  for (const [label, chats] of groups) {
    rows.push({ type: "group", label, count: chats.length });
    for (const chat of chats) rows.push({ type: "chat", chat });
  }
  return { rows, emptyHidden, archivedHidden };
}

/** One chat in a list (every chat, or a search's hits): title, harness, time, counts. */
function ChatButton({
  chat,
  openId,
  onOpen,
  children,
  tabbable = true,
  onKeyDown,
  counts,
}: {
  chat: { id: string; title: string; harness: string; updated_at: string; status: string; entry_count?: number; messages?: number; visibility?: string };
  openId: string | null;
  onOpen: (id: string) => void;
  children?: React.ReactNode;
  tabbable?: boolean;
  onKeyDown?: (e: React.KeyboardEvent<HTMLButtonElement>) => void;
  counts?: Counts;
}) {
  return (
    <button
      className={chat.id === openId ? "chat open" : "chat"}
      aria-current={chat.id === openId ? "page" : undefined}
      onClick={() => onOpen(chat.id)}
      tabIndex={tabbable ? 0 : -1}
      data-chat={chat.id}
      onKeyDown={onKeyDown}
    >
      <span className="chat-title">{chat.title || chat.id.slice(0, 8)}</span>
      <span className="chat-meta">
        <span className="label">{chat.harness || "unknown"}</span> {when(chat.updated_at)}
        {chat.messages !== undefined || counts ? (
          <span className="count" title={chat.entry_count !== undefined ? plural(chat.entry_count, "entry", "entries") + " in all" : undefined}>
            {plural(chat.messages ?? counts?.messages ?? 0, "message", "messages")}
          </span>
        ) : chat.entry_count !== undefined ? (
          <span className="count" title="entries in this chat">
            {plural(chat.entry_count, "entry", "entries")}
          </span>
        ) : null}
        {counts && counts.branches > 0 ? (
          <span className="branch-badge" title={`${plural(counts.branches, "turn", "turns")} re-done: the chat branches there`}>
            {plural(counts.branches + 1, "branch", "branches")}
          </span>
        ) : null}
        {chat.visibility === "hidden" ? <span className="status-badge">worker</span> : null}
        {chat.status !== "active" ? <span className="status-badge">{chat.status}</span> : null}
      </span>
      {children}
    </button>
  );
}

const OPTIONS_KEY = "sessionforest.list";

function savedOptions(): ListOptions {
  const base: ListOptions = { grouping: "date", harness: "", project: "", workers: false, empty: false, archived: false };
  try {
    return { ...base, ...JSON.parse(window.localStorage.getItem(OPTIONS_KEY) ?? "{}") };
  } catch {
    return base;
  }
}

/** Arrow keys from one chat button to the next in the same list. */
function arrows(list: HTMLElement | null, from: HTMLElement, by: number, scrollTo?: (i: number) => void) {
  const buttons = Array.from(list?.querySelectorAll<HTMLButtonElement>("button.chat") ?? []);
  const i = buttons.indexOf(from as HTMLButtonElement);
  const next = buttons[i + by];
  if (next) next.focus();
  else if (scrollTo) scrollTo(by);
}

/** A chat row's menu: rename (in place) and archive. */
function RowMenu({
  chat,
  onArchive,
  onUnarchive,
  onRename,
  tabbable,
}: {
  chat: SessionJson;
  onArchive?: (id: string) => void;
  onUnarchive?: (id: string) => void;
  onRename?: (id: string, title: string) => Promise<void>;
  tabbable: boolean;
}) {
  const [open, setOpen] = useState(false);
  const [renaming, setRenaming] = useState<string | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const name = chat.title || chat.id.slice(0, 8);
  const first = useRef<HTMLButtonElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const ended = useRef(false); // the edit was saved or cancelled: a blur after it does nothing
  const back = useRef(false); // give the focus back to the menu button once the edit closes
  useEffect(() => {
    if (open) first.current?.focus();
  }, [open]);
  useEffect(() => {
    if (renaming === null && back.current) {
      back.current = false;
      button.current?.focus();
    }
  }, [renaming]);
  if (!onArchive && !onUnarchive && !onRename) return null;
  if (renaming !== null) {
    const close = () => {
      ended.current = true;
      back.current = true;
      setRenaming(null);
    };
    // Enter (and leaving the field) saves; Escape puts the title back untouched.
    const save = () => {
      if (ended.current) return;
      const title = renaming.trim();
      if (!title || title === chat.title || !onRename) return close();
      ended.current = true;
      onRename(chat.id, title).then(
        () => {
          back.current = true;
          setRenaming(null);
        },
        (e: Error) => {
          ended.current = false;
          setFailed(e.message);
        },
      );
    };
    return (
      <form
        className="row-rename"
        onSubmit={(e) => {
          e.preventDefault();
          save();
        }}
      >
        <input
          aria-label={`New title for “${name}”`}
          value={renaming}
          autoFocus
          maxLength={200}
          onChange={(e) => setRenaming(e.target.value)}
          onKeyDown={(e) => {
            if (e.key !== "Escape") return;
            e.preventDefault();
            e.stopPropagation();
            close();
          }}
          onBlur={save}
        />
        {failed ? (
          <span role="alert" className="error">
            {failed}
          </span>
        ) : null}
      </form>
    );
  }
  return (
    <span className="row-menu" onKeyDown={(e) => e.key === "Escape" && setOpen(false)}>
      <button
        ref={button}
        className="row-menu-button"
        aria-label={`Actions for “${name}”`}
        aria-haspopup="menu"
        aria-expanded={open}
        tabIndex={tabbable ? 0 : -1}
        onClick={() => setOpen((o) => !o)}
      >
        ⋯
      </button>
      {open ? (
        <span role="menu" className="row-menu-items" aria-label={`Actions for “${name}”`}>
          {onRename ? (
            <button
              role="menuitem"
              ref={first}
              onClick={() => {
                setOpen(false);
                setFailed(null);
                ended.current = false;
                setRenaming(chat.title);
              }}
            >
              Rename…
            </button>
          ) : null}
          {onArchive && chat.status !== "archived" ? (
            <button
              role="menuitem"
              ref={onRename ? undefined : first}
              onClick={() => {
                setOpen(false);
                onArchive(chat.id);
              }}
            >
              Archive
            </button>
          ) : null}
          {onUnarchive && chat.status === "archived" ? (
            <button
              role="menuitem"
              ref={onRename ? undefined : first}
              onClick={() => {
                setOpen(false);
                onUnarchive(chat.id);
              }}
            >
              Unarchive
            </button>
          ) : null}
        </span>
      ) : null}
    </span>
  );
}

export function Sidebar({ sessions, openId, onOpen, onOpenAt, query, onQuery, searchRef, search, deepConfigured, onArchive, onUnarchive, onRename }: Props) {
  const { result, current, error, deep, runDeep } = useChatSearch(query, search);
  const [notSure, setNotSure] = useState<string | null>(null);
  const [enterWaiting, setEnterWaiting] = useState(false);
  const [options, setOptionsState] = useState<ListOptions>(savedOptions);
  const setOptions = (o: ListOptions) => {
    setOptionsState(o);
    window.localStorage.setItem(OPTIONS_KEY, JSON.stringify(o));
  };
  useEffect(() => {
    setNotSure(null);
    setEnterWaiting(false);
  }, [query]);

  const openHit = (hit: { session_id: string; entry_id?: string | null }) =>
    hit.entry_id && onOpenAt ? onOpenAt(hit.session_id, hit.entry_id) : onOpen(hit.session_id);

  const enter = () => {
    if (!result) return;
    if (result.confident && result.hits.length > 0) {
      openHit(result.hits[0] as { session_id: string; entry_id?: string | null });
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

  const resultsRef = useRef<HTMLUListElement>(null);
  const scrollRef = useRef<HTMLDivElement>(null);
  const onKeyDown = (event: React.KeyboardEvent<HTMLInputElement>) => {
    if (event.key === "Escape") onQuery("");
    if (event.key === "ArrowDown") {
      event.preventDefault();
      const list = result ? resultsRef.current : scrollRef.current;
      list?.querySelector<HTMLButtonElement>("button.chat")?.focus();
      return;
    }
    if (event.key !== "Enter" || !query.trim()) return;
    if (current && result) enter();
    else setEnterWaiting(true);
  };

  const { rows, emptyHidden, archivedHidden } = useMemo(() => listRows(sessions, options), [sessions, options]);
  const harnesses = useMemo(() => [...new Set(sessions.filter((s) => s.visibility !== "hidden").map((s) => s.harness))].sort(), [sessions]);
  const projects = useMemo(() => {
    const m = new Map<string, string>();
    for (const s of sessions) {
      const p = projectOf(s);
      if (p.path && s.visibility !== "hidden") m.set(p.path, p.name);
    }
    return [...m].sort((a, b) => a[1].localeCompare(b[1]));
  }, [sessions]);
  const workerCount = useMemo(() => sessions.filter((s) => s.visibility === "hidden" && s.harness !== SEARCH_RECORDS).length, [sessions]);

  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: (i) => (rows[i].type === "group" ? 30 : 62),
    // Sizes measured are kept per row, not per position: a filter that moves the rows
    // (a toggle, a harness) would otherwise place each at the height of the one before.
    getItemKey: (i) => {
      const row = rows[i];
      return row.type === "chat" ? row.chat.id : `g:${row.label}`;
    },
    overscan: 8,
    initialRect: { width: 300, height: 900 },
  });
  const drawn = virtual
    .getVirtualItems()
    .map((item) => rows[item.index])
    .flatMap((r) => (r && r.type === "chat" ? [r.chat] : []));
  const counts = useCounts(drawn);
  const focusNext = useRef<string | null>(null); // the chat the arrow keys moved to, until drawn
  useEffect(() => {
    const id = focusNext.current;
    const button = id ? scrollRef.current?.querySelector<HTMLButtonElement>(`button[data-chat="${id}"]`) : null;
    if (button) {
      focusNext.current = null;
      button.focus();
    }
  });
  // The open chat's row is the one reached by Tab (the others by the arrow keys).
  const tabRow = Math.max(0, rows.findIndex((r) => r.type === "chat" && r.chat.id === openId));
  const firstChat = rows.findIndex((r) => r.type === "chat");
  const tabIndexRow = rows[tabRow]?.type === "chat" ? tabRow : firstChat;
  const listArrow = (e: React.KeyboardEvent<HTMLButtonElement>, index: number) => {
    if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
    e.preventDefault();
    const by = e.key === "ArrowDown" ? 1 : -1;
    let j = index + by;
    while (rows[j] && rows[j].type !== "chat") j += by;
    if (!rows[j]) return;
    const id = (rows[j] as { chat: SessionJson }).chat.id;
    const drawnButton = scrollRef.current?.querySelector<HTMLButtonElement>(`button[data-chat="${id}"]`);
    // A drawn row takes the focus now (focus() scrolls it into view); one not drawn yet is
    // focused by the effect above once the scroll has drawn it, not after a guessed frame.
    if (drawnButton) return drawnButton.focus();
    focusNext.current = id;
    virtual.scrollToIndex(j, { align: "auto" });
  };

  return (
    <nav aria-label="Chats" className="sidebar">
      <h2 className="sidebar-title">Chats</h2>
      <input
        ref={searchRef}
        type="search"
        role="searchbox"
        aria-label="Find a chat"
        placeholder="Find a chat…  ( / or Ctrl+K )"
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
        <ul className="chat-list" aria-label="Search results" ref={resultsRef}>
          {result.hits.map((hit, i) => (
            <Fragment key={hit.session_id}>
              {i === firstOutside(result) ? (
                <li className="outside-note" role="note">
                  {i === 0 ? `No chat matched “${windowPhrase(result)}”; from any time:` : `Outside “${windowPhrase(result)}”, from any time:`}
                </li>
              ) : null}
              <li className={outsideIds(result).has(hit.session_id) ? "outside" : undefined}>
                <ChatButton
                  chat={{ ...hit, id: hit.session_id }}
                  openId={openId}
                  onOpen={() => openHit(hit as { session_id: string; entry_id?: string | null })}
                  tabbable={i === 0}
                  onKeyDown={(e) => {
                    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
                      e.preventDefault();
                      arrows(resultsRef.current, e.currentTarget, e.key === "ArrowDown" ? 1 : -1);
                    }
                  }}
                >
                  {hit.snippet ? <Snippet text={hit.snippet} /> : null}
                </ChatButton>
              </li>
            </Fragment>
          ))}
        </ul>
      ) : (
        <>
          <div className="list-options" role="group" aria-label="List options">
            <label>
              Group{" "}
              <select value={options.grouping} onChange={(e) => setOptions({ ...options, grouping: e.target.value as Grouping })}>
                <option value="date">by date</option>
                <option value="project">by project</option>
              </select>
            </label>
            <label>
              Harness{" "}
              <select value={options.harness} onChange={(e) => setOptions({ ...options, harness: e.target.value })}>
                <option value="">all</option>
                {harnesses.map((h) => (
                  <option key={h} value={h}>
                    {h || "unknown"}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Project{" "}
              <select value={options.project} onChange={(e) => setOptions({ ...options, project: e.target.value })}>
                <option value="">all</option>
                {projects.map(([path, name]) => (
                  <option key={path} value={path} title={path}>
                    {name}
                  </option>
                ))}
              </select>
            </label>
            {workerCount ? (
              <label>
                <input type="checkbox" checked={options.workers} onChange={(e) => setOptions({ ...options, workers: e.target.checked })} /> worker chats ({workerCount})
              </label>
            ) : null}
            {archivedHidden || options.archived ? (
              <label>
                <input type="checkbox" checked={options.archived} onChange={(e) => setOptions({ ...options, archived: e.target.checked })} /> archived
                {archivedHidden ? ` (${archivedHidden})` : ""}
              </label>
            ) : null}
            {emptyHidden || options.empty ? (
              <label>
                <input type="checkbox" checked={options.empty} onChange={(e) => setOptions({ ...options, empty: e.target.checked })} /> chats without messages
                {emptyHidden ? ` (${emptyHidden})` : ""}
              </label>
            ) : null}
          </div>
          <div className="chat-scroll" ref={scrollRef}>
            <ul className="chat-list" aria-label="All chats" style={{ height: virtual.getTotalSize(), position: "relative" }}>
              {virtual.getVirtualItems().map((item) => {
                const row = rows[item.index];
                return (
                  <li
                    key={row.type === "chat" ? row.chat.id : `g:${row.label}`}
                    data-index={item.index}
                    ref={virtual.measureElement}
                    className={row.type === "group" ? "group-header" : undefined}
                    style={{ position: "absolute", top: 0, left: 0, width: "100%", transform: `translateY(${item.start}px)` }}
                  >
                    {row.type === "group" ? (
                      <span>
                        {row.label} <span className="muted">({row.count})</span>
                      </span>
                    ) : (
                      <div className="chat-row">
                        <ChatButton
                          chat={row.chat}
                          openId={openId}
                          onOpen={onOpen}
                          tabbable={item.index === tabIndexRow}
                          onKeyDown={(e) => listArrow(e, item.index)}
                          counts={counts.get(row.chat.id)}
                        />
                        <RowMenu chat={row.chat} onArchive={onArchive} onUnarchive={onUnarchive} onRename={onRename} tabbable={item.index === tabIndexRow} />
                      </div>
                    )}
                  </li>
                );
              })}
            </ul>
          </div>
        </>
      )}
    </nav>
  );
}
