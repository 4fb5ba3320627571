// The app: the chat list, and the open chat in one of three views the address names
// (route.ts): its active branch, a read-only preview of the path through any entry (a node,
// a search hit, another version of a message), or two branches compared. Looking never
// writes: only "Continue from here" moves the head. A chat's path is read a page at a time
// from the end (sessions/log with a limit; earlier pages are the path to the first shown
// entry's parent), and a target entry's page is read before it is shown.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import {
  accessToken,
  call,
  Changes,
  type ConnectionState,
  onUnauthorized,
  type Params,
  type Result,
  setAccessToken,
  Unauthorized,
} from "./api/client";
import type { ChangeJson, LogEntryJson, SessionJson, SnapshotJson, WorkersJson } from "./api/types.gen";
import { ChatSearch } from "./components/ChatSearch";
import { CompareView } from "./components/CompareView";
import { Composer, type RecallCard } from "./components/Composer";
import { ForestView } from "./components/ForestView";
import { httpSearch, type Search, Sidebar } from "./components/Sidebar";
import { TokenForm } from "./components/TokenForm";
import { Transcript, type Live } from "./components/Transcript";
import type { WorkerLink } from "./components/ToolCard";
import { addedIds, extendEntries, extendSnapshot, upsertSession } from "./live";
import { formatRoute, parseRoute, type Route, sameRoute } from "./route";
import { DEFAULT_FILTERS, type Filters } from "./transcript";
import { byParent, foldHidden, newestTip, pathTo, versionsOf } from "./tree";

/** Entries read per page of a path. */
export const PAGE_ENTRIES = 200;

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

const FILTERS_KEY = "sessionforest.filters";

function savedFilters(): Filters {
  try {
    return { ...DEFAULT_FILTERS, ...JSON.parse(window.localStorage.getItem(FILTERS_KEY) ?? "{}") };
  } catch {
    return DEFAULT_FILTERS;
  }
}

/** The path on screen: its entries (a tail of the path to `end`) and whether more precede. */
interface PathView {
  chat: string;
  end: string | null; // null: the active branch
  ids: string[]; // the whole path's ids, root first (from the snapshot)
  entries: LogEntryJson[];
  earlier: boolean;
  later: boolean; // the entries stop before the path's end (a target far back)
}

/** Entries read after a far target, so it shows with what followed it. */
const AFTER_TARGET = 100;

export function App() {
  const [sessions, setSessions] = useState<SessionJson[]>([]);
  const [route, setRoute] = useState<Route>(() => parseRoute(window.location.hash));
  const openId = route.view === "none" ? null : route.chat;
  const [path, setPath] = useState<PathView | null>(null);
  const [snapshot, setSnapshot] = useState<SnapshotJson | null>(null);
  const [workers, setWorkers] = useState<WorkersJson | null>(null);
  const [query, setQuery] = useState("");
  const [editing, setEditing] = useState<LogEntryJson | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [card, setCard] = useState<RecallCard | null>(null);
  const [live, setLive] = useState<Live | null>(null);
  const [model, setModel] = useState<Result<"chat/model"> | null>(null);
  const [filters, setFiltersState] = useState<Filters>(savedFilters);
  const [forestOpen, setForestOpen] = useState(false); // the drawer on narrow screens
  const changesRef = useRef<Changes | null>(null);
  const replyRef = useRef<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [connection, setConnection] = useState<ConnectionState>("connecting");
  const searchRef = useRef<HTMLInputElement>(null);
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const routeRef = useRef(route);
  routeRef.current = route;
  const loadTicket = useRef(0);
  const [locked, setLocked] = useState(false);
  useEffect(() => {
    onUnauthorized(() => setLocked(true));
    return () => onUnauthorized(null);
  }, []);

  const setFilters = useCallback((f: Filters) => {
    setFiltersState(f);
    window.localStorage.setItem(FILTERS_KEY, JSON.stringify(f));
  }, []);

  /** Go to a view: a new history entry (Back returns), or replacing the current one. */
  const navigate = useCallback((next: Route, replace = false) => {
    if (sameRoute(next, routeRef.current)) return;
    const url = formatRoute(next);
    if (replace) window.history.replaceState(null, "", url);
    else window.history.pushState(null, "", url);
    setRoute(next);
  }, []);
  useEffect(() => {
    const onPop = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener("popstate", onPop);
    window.addEventListener("hashchange", onPop);
    return () => {
      window.removeEventListener("popstate", onPop);
      window.removeEventListener("hashchange", onPop);
    };
  }, []);

  // `/` or Ctrl+K (Cmd+K) focuses the chat search from anywhere but a text field.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      const typing = target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.isContentEditable);
      if ((e.key === "k" && (e.ctrlKey || e.metaKey)) || (e.key === "/" && !typing)) {
        e.preventDefault();
        searchRef.current?.focus();
        searchRef.current?.select();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  const search = useCallback<Search>((method, params) => {
    const changes = changesRef.current;
    return changes && changes.connected ? changes.call(method, params) : httpSearch(method, params);
  }, []);

  const loadSessions = useCallback(async () => {
    try {
      const page = await call("sessions/list", { include_hidden: true, order: "updated", limit: 1000 });
      const all = [...page.sessions];
      // The newest chats are drawn as soon as their page is in (the rest follow: with 5,000
      // chats, waiting for every page kept the list blank for seconds). Every page is read:
      // the list is virtualised, so thousands of chats cost nothing to draw. By cursor:
      // each page costs the server one page, however deep it is.
      if (page.next_cursor != null) setSessions([...all]);
      for (let next = page.next_cursor; next != null; ) {
        const more = await call("sessions/list", { include_hidden: true, order: "updated", limit: 1000, cursor: next });
        all.push(...more.sessions);
        next = more.next_cursor;
      }
      setSessions(all);
    } catch (e) {
      if (!(e instanceof Unauthorized)) setNotice(`Could not list the chats: ${message(e)}`);
    }
  }, []);

  /** Read the chat's snapshot and the page of its path that shows `target` (else its end).
   * A target's window comes first: the path to it (a page, read from the target up, whatever
   * the chat's size) is drawn and marked without waiting for the snapshot of every node,
   * which the forest view and the entries after the target (their branch) need. */
  const loadChat = useCallback(async (r: Route) => {
    if (r.view === "none" || r.view === "compare") return;
    const ticket = ++loadTicket.current;
    const id = r.chat;
    const target = r.view === "at" ? r.entry : null;
    try {
      const readWhole = () => Promise.all([call("sessions/forest_snapshot", { session_id: id }), call("sessions/workers", { session_id: id })]);
      let upTo: LogEntryJson[] | null = null;
      if (target) {
        // Asked alone, before the snapshot: the server builds and sends every node only
        // once the window is answered, so the two never share its CPU or the page's.
        upTo = await call("sessions/log", { session_id: id, end: target, limit: PAGE_ENTRIES });
        if (ticket !== loadTicket.current) return;
        const ids = upTo.map((e) => e.id);
        const earlier = upTo.length > 0 && upTo[0].parent_id !== null;
        // Until the snapshot says where the path goes on, it may: the later entries follow.
        setPath((cur) => (cur && cur.chat === id && cur.ids.includes(target) && cur.entries.some((e) => e.id === target)
          ? cur
          : { chat: id, end: null, ids, entries: upTo!, earlier, later: true }));
      }
      const [snap, ws] = await readWhole();
      if (ticket !== loadTicket.current) return;
      const onActive = target === null || snap.active_path.includes(target);
      const end = onActive ? null : newestTip(snap.nodes, target);
      const ids = end === null ? snap.active_path : pathTo(snap.nodes, end);
      const from = target ? Math.max(0, ids.indexOf(target)) : ids.length;
      // Near the end: read to the end. Far back: a page around it; later pages on request.
      const far = ids.length - from > PAGE_ENTRIES * 4;
      let entries: LogEntryJson[];
      let after: LogEntryJson[] | null = null;
      if (upTo && upTo.length && upTo[upTo.length - 1].id === target) {
        // The path to the target is in: read only what follows it (to the end, or a page).
        const stop = Math.min(ids.length - 1, far ? from + AFTER_TARGET : ids.length - 1);
        after = stop > from ? await call("sessions/log", { session_id: id, end: ids[stop], limit: stop - from }) : [];
        entries = [...upTo, ...after];
      } else {
        const stop = far ? ids[Math.min(ids.length - 1, from + AFTER_TARGET)] : (end ?? undefined);
        const limit = far ? PAGE_ENTRIES : Math.max(PAGE_ENTRIES, ids.length - from + 20);
        const params: Params<"sessions/log"> = { session_id: id, limit };
        if (stop) params.end = stop;
        entries = await call("sessions/log", params);
      }
      if (ticket !== loadTicket.current) return;
      setSnapshot(snap);
      setWorkers(ws);
      const last = entries[entries.length - 1]?.id;
      const later = far && last !== ids[ids.length - 1];
      setPath((cur) => {
        // Earlier pages read while the window was on screen are kept: the window's entries
        // up to the target, then what follows it.
        const at = cur && cur.chat === id && after ? cur.entries.findIndex((e) => e.id === target) : -1;
        const kept = at >= 0 && cur && after ? [...cur.entries.slice(0, at + 1), ...after] : entries;
        return { chat: id, end, ids, entries: kept, earlier: kept.length > 0 && kept[0].parent_id !== null, later };
      });
    } catch (e) {
      if (ticket === loadTicket.current) setNotice(`Could not open the chat: ${message(e)}`);
    }
  }, []);

  const loadEarlier = useCallback(async () => {
    const p = path;
    const first = p?.entries[0];
    if (!p || !first?.parent_id) return;
    const entries = await call("sessions/log", { session_id: p.chat, end: first.parent_id, limit: PAGE_ENTRIES });
    setPath((cur) =>
      cur && cur.chat === p.chat && cur.entries[0]?.id === first.id
        ? { ...cur, entries: [...entries, ...cur.entries], earlier: entries[0]?.parent_id != null }
        : cur,
    );
  }, [path]);

  const loadLater = useCallback(async () => {
    const p = path;
    const last = p?.entries[p.entries.length - 1];
    if (!p || !last) return;
    const at = p.ids.indexOf(last.id);
    const next = Math.min(p.ids.length - 1, at + PAGE_ENTRIES);
    if (at < 0 || next <= at) return;
    const entries = await call("sessions/log", { session_id: p.chat, end: p.ids[next], limit: next - at });
    setPath((cur) =>
      cur && cur.chat === p.chat && cur.entries[cur.entries.length - 1]?.id === last.id
        ? { ...cur, entries: [...cur.entries, ...entries], later: next < p.ids.length - 1 }
        : cur,
    );
  }, [path]);

  useEffect(() => {
    void loadSessions();
    call("chat/model", {}).then(setModel, () => setModel(null));
  }, [loadSessions]);

  // A new chat: forget the last one's state. A new view of the same chat: reload its path.
  useEffect(() => {
    setCard(null);
    setEditing(null);
    setNotice(null);
    setForestOpen(false);
    if (!openId) {
      setPath(null);
      setSnapshot(null);
      setWorkers(null);
    }
  }, [openId]);
  const routeKey = formatRoute(route);
  useEffect(() => {
    void loadChat(parseRoute(routeKey));
  }, [routeKey, loadChat]);

  // Live: a change touches one chat. Its row is read again (sessions/get); the open
  // chat takes the entries the change names when they continue what is shown (live.ts),
  // and reads again only the view they do not fit. A resync (missed changes) reads all.
  const latestView = useRef({ path, snapshot });
  latestView.current = { path, snapshot };
  const applyOpen = useCallback(
    async (c: ChangeJson) => {
      const r = routeRef.current;
      if (r.view === "none" || r.view === "compare" || r.chat !== c.session_id) return;
      const ids = addedIds(c);
      const { path: shown, snapshot: snap } = latestView.current;
      if (!ids || !shown || !snap || shown.chat !== c.session_id) {
        // A status or a title is the row's (read with sessions/get), not the transcript's.
        if (c.change !== "status" && c.change !== "created" && c.change !== "renamed") await loadChat(r);
        return;
      }
      const entries = await call("sessions/log", { session_id: c.session_id, end: ids[ids.length - 1], limit: ids.length });
      if (entries.map((e) => e.id).join() !== ids.join()) return void (await loadChat(routeRef.current));
      const cur = latestView.current;
      const onEnd = cur.path && cur.path.end === null && !cur.path.later;
      const moreEntries = onEnd && cur.path ? extendEntries(cur.path.entries, entries) : null;
      const moreSnap = cur.snapshot ? extendSnapshot(cur.snapshot, entries) : null;
      if ((onEnd && !moreEntries) || !moreSnap) return void (await loadChat(routeRef.current));
      if (moreEntries) {
        const added = moreEntries.slice(cur.path!.entries.length).map((e) => e.id);
        setPath((p) =>
          p && p === cur.path ? { ...p, entries: moreEntries, ids: added.length ? [...p.ids, ...added] : p.ids } : p,
        );
      }
      setSnapshot((s) => (s === cur.snapshot ? moreSnap : s));
    },
    [loadChat],
  );
  useEffect(() => {
    let pending: ReturnType<typeof setTimeout> | null = null;
    let queued: ChangeJson[] = [];
    let chain: Promise<void> = Promise.resolve();
    const flush = () => {
      pending = null;
      const batch = queued;
      queued = [];
      const chats = [...new Set(batch.map((c) => c.session_id))];
      // Many chats at once (an import of a folder): one listing beats many reads.
      if (chats.length > 20) void loadSessions();
      else
        for (const id of chats)
          call("sessions/get", { session_id: id }).then(
            (info) => setSessions((list) => upsertSession(list, info)),
            () => void loadSessions(),
          );
      for (const c of batch) chain = chain.then(() => applyOpen(c)).catch(() => loadChat(routeRef.current));
    };
    const changes = new Changes(
      (c: ChangeJson) => {
        queued.push(c);
        if (!pending) pending = setTimeout(flush, 30);
      },
      () => {
        void loadSessions();
        void loadChat(routeRef.current);
      },
      setConnection,
    );
    changes.onDelta = (d) => {
      if (d.reply_id !== replyRef.current) return;
      setLive((l) => ({ text: (l?.text ?? "") + d.text, state: "streaming" }));
    };
    changesRef.current = changes;
    return () => {
      if (pending) clearTimeout(pending);
      changes.close();
    };
  }, [loadSessions, loadChat, applyOpen]);

  const openChat = useCallback((id: string) => navigate({ view: "chat", chat: id }), [navigate]);
  const openAt = useCallback(
    (chat: string, entry: string) => {
      // An entry on the active branch opens the chat there; any other in its preview.
      navigate({ view: "at", chat, entry });
    },
    [navigate],
  );
  const preview = useCallback((entry: string) => openId && openAt(openId, entry), [openId, openAt]);

  const continueFrom = async (entryId: string) => {
    if (!openId) return;
    try {
      await call("sessions/move_head", { session_id: openId, entry_id: entryId });
      navigate({ view: "chat", chat: openId });
      void loadChat({ view: "chat", chat: openId });
      setNotice("The head moved here: what you send now continues this branch.");
    } catch (e) {
      setNotice(`Could not move the head: ${message(e)}`);
    }
  };

  /** Ask the configured model for a reply on the active branch (below `parent` if given). */
  const askModel = async (sessionId: string, parent?: string) => {
    const changes = changesRef.current;
    if (!changes) return;
    const replyId = `r${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    replyRef.current = replyId;
    setLive({ text: "", state: "streaming" });
    try {
      const params: Params<"chat/reply"> = { session_id: sessionId, reply_id: replyId };
      if (parent) params.parent = parent;
      const answer = await changes.call("chat/reply", params);
      setLive(null);
      setNotice(answer.stopped ? "Stopped: what was shown is kept, marked incomplete." : null);
    } catch (e) {
      setLive((l) => ({ text: l?.text ?? "", state: "failed", error: message(e) }));
    } finally {
      replyRef.current = null;
      void loadChat(routeRef.current);
    }
  };

  const stopModel = () => {
    const replyId = replyRef.current;
    if (replyId) void changesRef.current?.call("chat/stop", { reply_id: replyId });
  };

  // Callbacks the transcript's memoised cards hold: stable, reading the latest state.
  const latest = useRef({ path, model, openId, snapshot });
  latest.current = { path, model, openId, snapshot };
  const onRegenerate = useCallback((entry: LogEntryJson) => {
    const { model: m, openId: chat, snapshot: snap } = latest.current;
    if (!chat) return;
    if (!m?.configured) {
      setNotice("No model is configured on the server, so there is nothing to regenerate with.");
      return;
    }
    // The reply's parent is the turn it answered: skip hidden entries recorded with it.
    const nodes = new Map((snap?.nodes ?? []).map((n) => [n.id, n]));
    let parent = entry.parent_id ? nodes.get(entry.parent_id) : undefined;
    while (parent && parent.context_visibility === "hidden" && parent.parent_id) parent = nodes.get(parent.parent_id);
    if (!parent) return setNotice("This reply has no earlier turn to regenerate from.");
    void askModel(chat, parent.id);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const onEdit = useCallback((e: LogEntryJson) => {
    setEditing(e);
    inputRef.current?.focus();
  }, []);

  const submit = async (text: string) => {
    if (!openId) return;
    setBusy(true);
    try {
      const [command, ...rest] = text.split(/\s+/);
      const arg = text.slice(command.length).trim();
      if (command === "/recall") {
        if (!arg) return setNotice("Usage: /recall <words>");
        const hits = await call("sessions/search_session_entries", { session_id: openId, query: arg, limit: 20 });
        setCard({ query: arg, hits });
        setNotice(null);
      } else if (command === "/find") {
        setQuery(arg);
        searchRef.current?.focus();
        setNotice(null);
      } else if (command === "/checkpoint") {
        if (!arg) return setNotice("Usage: /checkpoint <label>");
        await call("sessions/checkpoint", { session_id: openId, label: arg });
        setNotice(`Checkpoint “${arg}” recorded.`);
        await loadChat(routeRef.current);
      } else if (command.startsWith("/") && rest !== undefined && /^\/[a-z]+$/.test(command)) {
        setNotice(`Unknown command ${command}: use /recall, /find or /checkpoint (a leading space sends it as text).`);
        return;
      } else {
        const params: Params<"sessions/append"> = {
          session_id: openId,
          kind: "user.message",
          payload: { content: [{ type: "text", text }] },
        };
        if (editing) {
          if (!editing.parent_id) {
            setNotice("The first message of a chat has no parent to branch from; it cannot be edited.");
            return;
          }
          params.parent = editing.parent_id;
        }
        await call("sessions/append", params);
        setEditing(null);
        await loadChat(routeRef.current);
        if (model?.configured) {
          setNotice(null);
          void askModel(openId);
        } else {
          setNotice("Recorded. No model is configured on the server, so nothing will reply.");
        }
      }
    } catch (e) {
      setNotice(`Failed: ${message(e)}`);
      throw e;
    } finally {
      setBusy(false);
    }
  };

  const openSession = sessions.find((s) => s.id === openId) ?? null;
  const shownNodes = useMemo(() => (snapshot ? foldHidden(snapshot.nodes, filters.hidden) : []), [snapshot, filters.hidden]);
  const versions = useMemo(() => {
    const byId = new Map(shownNodes.map((n) => [n.id, n]));
    const kids = byParent(shownNodes);
    return (e: LogEntryJson) => versionsOf(byId, kids, e.id);
  }, [shownNodes]);
  const workerLinks = useMemo<WorkerLink[]>(
    () => (workers?.workers ?? []).map((w) => ({ session_id: w.session_id, title: w.title, prompt: w.prompt })),
    [workers],
  );

  if (locked) {
    return (
      <TokenForm
        refused={accessToken() !== null}
        onToken={(token) => {
          setAccessToken(token);
          window.location.reload();
        }}
      />
    );
  }

  const previewing = route.view === "at" && path !== null && path.end !== null;
  const target = route.view === "at" ? route.entry : null;
  const head = snapshot?.head ?? null;
  const onActiveBranch = Boolean(target && snapshot?.active_path.includes(target));
  const archive = async (id: string) => {
    try {
      const info = await call("sessions/archive", { session_id: id });
      setSessions((list) => upsertSession(list, info));
      setNotice("Archived: the chat is still searchable and readable (the list shows it under “archived”).");
    } catch (e) {
      setNotice(`Could not archive: ${message(e)}`);
    }
  };
  const rename = async (id: string, title: string) => {
    const info = await call("sessions/rename", { session_id: id, title });
    setSessions((list) => upsertSession(list, info));
  };
  const unarchive = async (id: string) => {
    try {
      const info = await call("sessions/unarchive", { session_id: id });
      setSessions((list) => upsertSession(list, info));
      setNotice("Brought back: the chat is in the list again.");
    } catch (e) {
      setNotice(`Could not bring the chat back: ${message(e)}`);
    }
  };

  return (
    <div className={openId ? "app chat-open" : "app"}>
      <Sidebar
        sessions={sessions}
        openId={openId}
        onOpen={openChat}
        onOpenAt={openAt}
        query={query}
        onQuery={setQuery}
        searchRef={searchRef}
        search={search}
        deepConfigured={Boolean(model?.configured)}
        onArchive={(id) => void archive(id)}
        onUnarchive={(id) => void unarchive(id)}
        onRename={rename}
      />
      <main className="main">
        <header className="chat-header">
          {openId ? (
            <button className="back link" onClick={() => navigate({ view: "none" })} aria-label="Back to the chats">
              ← Chats
            </button>
          ) : null}
          <div className="chat-heading">
            <h1>{openSession ? openSession.title || openSession.id : openId ? "Loading…" : "Open a chat"}</h1>
            {openSession ? (
              <span className="chat-sub">
                <span className="label" title="the harness that recorded this chat (a label only)">
                  {openSession.harness || "unknown harness"}
                </span>
                {openSession.status !== "active" ? <span className="status-badge">{openSession.status}</span> : null}
                {workers?.parent ? (
                  <button className="link" onClick={() => openChat(workers.parent!.id)}>
                    Worker of: {workers.parent.title || workers.parent.id.slice(0, 8)}
                  </button>
                ) : null}
              </span>
            ) : null}
          </div>
          {openId && route.view !== "compare" ? <ChatSearch sessionId={openId} onOpen={(entry) => openAt(openId, entry)} /> : null}
          {openSession ? (
            <span className="chat-actions">
              {openSession.status !== "archived" ? (
                <button className="link" onClick={() => void archive(openSession.id)}>
                  Archive
                </button>
              ) : (
                <button className="link" onClick={() => void unarchive(openSession.id)}>
                  Unarchive
                </button>
              )}
            </span>
          ) : null}
          <span className="label model" title="the model replies come from">
            {model?.configured ? `model: ${model.model}` : "no model configured"}
          </span>
          <span className={`connection ${connection}`} role="status" aria-label={`Live updates: ${connection}`}>
            {connection === "live" ? "● live" : connection === "connecting" ? "○ connecting" : "○ offline"}
          </span>
        </header>
        {openId && route.view === "compare" ? (
          <CompareView sessionId={openId} a={route.a} b={route.b} filters={filters} onPreview={preview} onClose={() => navigate({ view: "chat", chat: openId })} />
        ) : openId ? (
          <div className={forestOpen ? "chat-body forest-open" : "chat-body"}>
            <div className="conversation">
              <div className="chat-tools" role="toolbar" aria-label="Transcript filters">
                <FilterBox filters={filters} onChange={setFilters} name="tools" label="Tools" />
                <FilterBox filters={filters} onChange={setFilters} name="thinking" label="Thinking" />
                <FilterBox filters={filters} onChange={setFilters} name="hidden" label="Hidden entries" />
                {workers && workers.workers.length ? (
                  <details className="workers">
                    <summary>Worker chats ({workers.workers.length})</summary>
                    <ul>
                      {workers.workers.map((w) => (
                        <li key={w.session_id}>
                          <button className="link" onClick={() => openChat(w.session_id)}>
                            {w.title || w.prompt.slice(0, 60) || w.session_id.slice(0, 8)}
                          </button>{" "}
                          <span className="muted">
                            {w.agent_type ?? "worker"} · {w.entry_count} entries
                          </span>
                        </li>
                      ))}
                    </ul>
                  </details>
                ) : null}
                <button className="link forest-toggle" onClick={() => setForestOpen((o) => !o)} aria-expanded={forestOpen}>
                  {forestOpen ? "Hide the forest" : "Forest"}
                </button>
              </div>
              {route.view === "at" && target ? (
                <div className="preview-banner" role="region" aria-label="Preview">
                  <span>
                    {previewing
                      ? "Reading another branch: nothing changes until you continue from it."
                      : onActiveBranch
                        ? "On the active branch."
                        : "Loading…"}
                  </span>
                  {previewing ? (
                    <>
                      <button onClick={() => void continueFrom(target)}>Continue from here</button>
                      {path && path.end && path.end !== target ? (
                        <button onClick={() => void continueFrom(path.end!)}>Continue at this branch's end</button>
                      ) : null}
                      {head ? (
                        <button className="link" onClick={() => navigate({ view: "compare", chat: openId, a: head, b: path!.end! })}>
                          Compare with the active branch
                        </button>
                      ) : null}
                    </>
                  ) : null}
                  <button className="link" onClick={() => navigate({ view: "chat", chat: openId })}>
                    {previewing ? "Back to the active branch" : "Close"}
                  </button>
                </div>
              ) : null}
              <Transcript
                entries={path?.chat === openId ? path.entries : []}
                live={previewing ? null : live}
                filters={filters}
                highlight={target}
                earlier={Boolean(path?.earlier)}
                onEarlier={loadEarlier}
                later={Boolean(path?.later)}
                onLater={loadLater}
                onEdit={onEdit}
                onRegenerate={onRegenerate}
                onPreview={preview as (id: string) => void}
                siblings={versions}
                workers={workerLinks}
                onOpenChat={openChat}
                readOnly={previewing}
              />
              <Composer
                editing={editing}
                busy={busy}
                readOnly={previewing}
                onCancelEdit={() => setEditing(null)}
                onSubmit={submit}
                onStop={stopModel}
                streaming={live?.state === "streaming"}
                notice={notice}
                card={card}
                onCloseCard={() => setCard(null)}
                onJump={(id) => openAt(openId, id)}
                inputRef={inputRef}
              />
            </div>
            {snapshot ? (
              <ForestView
                snapshot={snapshot}
                nodes={shownNodes}
                log={path?.entries ?? []}
                selected={target}
                onSelect={(id) => {
                  setForestOpen(false);
                  openAt(openId, id);
                }}
              />
            ) : null}
          </div>
        ) : (
          <p className="empty">Choose a chat on the left, or find one by what was said in it.</p>
        )}
      </main>
    </div>
  );
}

function FilterBox({ filters, onChange, name, label }: { filters: Filters; onChange: (f: Filters) => void; name: keyof Filters; label: string }) {
  return (
    <label className="filter">
      <input type="checkbox" checked={filters[name]} onChange={(e) => onChange({ ...filters, [name]: e.target.checked })} /> {label}
    </label>
  );
}
