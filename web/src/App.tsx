import { useCallback, useEffect, useRef, useState } from "react";
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
import type { ChangeJson, LogEntryJson, SessionJson, SnapshotJson } from "./api/types.gen";
import { Composer, type RecallCard } from "./components/Composer";
import { ForestView } from "./components/ForestView";
import { httpSearch, type Search, Sidebar, when } from "./components/Sidebar";
import { TokenForm } from "./components/TokenForm";
import { Transcript, type Live } from "./components/Transcript";

function initialChat(): string | null {
  const m = /^#\/chat\/(.+)$/.exec(window.location.hash);
  return m ? decodeURIComponent(m[1]) : null;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function App() {
  const [sessions, setSessions] = useState<SessionJson[]>([]);
  const [openId, setOpenId] = useState<string | null>(initialChat);
  const [log, setLog] = useState<LogEntryJson[]>([]);
  const [snapshot, setSnapshot] = useState<SnapshotJson | null>(null);
  const [query, setQuery] = useState("");
  const [editing, setEditing] = useState<LogEntryJson | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [card, setCard] = useState<RecallCard | null>(null);
  const [live, setLive] = useState<Live | null>(null);
  const [model, setModel] = useState<Result<"chat/model"> | null>(null);
  const changesRef = useRef<Changes | null>(null);
  const replyRef = useRef<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [connection, setConnection] = useState<ConnectionState>("connecting");
  const searchRef = useRef<HTMLInputElement>(null);
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const openRef = useRef(openId);
  openRef.current = openId;
  const loadTicket = useRef(0);
  // Set when the server refuses this tab for want of the right access token.
  const [locked, setLocked] = useState(false);
  useEffect(() => {
    onUnauthorized(() => setLocked(true));
    return () => onUnauthorized(null);
  }, []);

  // Searches go over the WebSocket when it is open (the server pre-starts a deep search for
  // this connection, and Enter's search/deep must come from the same one), else over HTTP.
  const search = useCallback<Search>((method, params) => {
    const changes = changesRef.current;
    return changes && changes.connected ? changes.call(method, params) : httpSearch(method, params);
  }, []);

  const loadSessions = useCallback(async () => {
    try {
      const page = await call("sessions/list", { include_hidden: false, order: "updated", limit: 1000 });
      setSessions(page.sessions);
    } catch (e) {
      if (!(e instanceof Unauthorized)) setNotice(`Could not list the chats: ${message(e)}`);
    }
  }, []);

  const loadChat = useCallback(async (id: string) => {
    const ticket = ++loadTicket.current;
    try {
      const [entries, snap] = await Promise.all([
        call("sessions/log", { session_id: id }),
        call("sessions/forest_snapshot", { session_id: id }),
      ]);
      if (ticket !== loadTicket.current) return;
      setLog(entries);
      setSnapshot(snap);
    } catch (e) {
      if (ticket === loadTicket.current) setNotice(`Could not open the chat: ${message(e)}`);
    }
  }, []);

  useEffect(() => {
    void loadSessions();
    call("chat/model", {}).then(setModel, () => setModel(null));
  }, [loadSessions]);

  useEffect(() => {
    setCard(null);
    setEditing(null);
    setNotice(null);
    if (openId) {
      window.history.replaceState(null, "", `#/chat/${encodeURIComponent(openId)}`);
      void loadChat(openId);
    } else {
      setLog([]);
      setSnapshot(null);
    }
  }, [openId, loadChat]);

  // Live: every change reloads the list; a change to the open chat reloads it too.
  useEffect(() => {
    let pending: ReturnType<typeof setTimeout> | null = null;
    const refresh = (chat: boolean) => {
      if (pending) clearTimeout(pending);
      pending = setTimeout(() => {
        void loadSessions();
        if (chat && openRef.current) void loadChat(openRef.current);
      }, 30);
    };
    const changes = new Changes(
      (c: ChangeJson) => refresh(c.session_id === openRef.current),
      () => refresh(true),
      setConnection,
    );
    changes.onDelta = (d) => {
      if (d.reply_id !== replyRef.current) return;
      setLive((l) => ({ text: (l?.text ?? "") + d.text, state: "streaming" }));
    };
    changesRef.current = changes;
    return () => changes.close();
  }, [loadSessions, loadChat]);

  const open = useCallback((id: string) => setOpenId(id), []);

  const moveHead = useCallback(
    async (entryId: string) => {
      if (!openId) return;
      try {
        await call("sessions/move_head", { session_id: openId, entry_id: entryId });
        await loadChat(openId);
      } catch (e) {
        setNotice(`Could not move the head: ${message(e)}`);
      }
    },
    [openId, loadChat],
  );

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
      setNotice(answer.stopped ? "Stopped: the reply was recorded as incomplete." : null);
    } catch (e) {
      setLive((l) => ({ text: l?.text ?? "", state: "failed", error: message(e) }));
    } finally {
      replyRef.current = null;
      if (openRef.current) void loadChat(openRef.current);
    }
  };

  const stopModel = () => {
    const replyId = replyRef.current;
    if (replyId) void changesRef.current?.call("chat/stop", { reply_id: replyId });
  };

  const regenerate = (entry: LogEntryJson) => {
    if (!openId) return;
    if (!model?.configured) {
      setNotice("No model is configured on the server, so there is nothing to regenerate with.");
      return;
    }
    // The reply's parent is the turn it answered: skip the hidden notifications recorded
    // with it (they precede the message on the same chain).
    const byId = new Map(log.map((e) => [e.id, e]));
    let parent = entry.parent_id ? byId.get(entry.parent_id) : undefined;
    while (parent && parent.kind === "provider.notification" && parent.parent_id) parent = byId.get(parent.parent_id);
    if (!parent) return setNotice("This reply has no earlier turn to regenerate from.");
    void askModel(openId, parent.id);
  };

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
        await loadChat(openId);
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
        await loadChat(openId);
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

  if (locked) {
    return (
      <TokenForm
        refused={accessToken() !== null}
        onToken={(token) => {
          setAccessToken(token);
          window.location.reload(); // start over with the token: list, live updates, the open chat
        }}
      />
    );
  }

  return (
    <div className="app">
      <Sidebar
        sessions={sessions}
        openId={openId}
        onOpen={open}
        query={query}
        onQuery={setQuery}
        searchRef={searchRef}
        search={search}
        deepConfigured={Boolean(model?.configured)}
      />
      <main className="main">
        <header className="chat-header">
          {openSession ? (
            <>
              <h1>{openSession.title || openSession.id}</h1>
              <span className="label" title="the harness that recorded this chat (a label only)">
                {openSession.harness || "unknown harness"}
              </span>
              <span className="chat-when">{when(openSession.updated_at)}</span>
              {openSession.status !== "active" ? <span className="status-badge">{openSession.status}</span> : null}
            </>
          ) : (
            <h1>{openId ? "Loading…" : "Open a chat"}</h1>
          )}
          <span className="label" title="the model replies come from">
            {model?.configured ? `model: ${model.model}` : "no model configured"}
          </span>
          <span className={`connection ${connection}`} role="status" aria-label={`Live updates: ${connection}`}>
            {connection === "live" ? "● live" : connection === "connecting" ? "○ connecting" : "○ offline — reconnecting"}
          </span>
        </header>
        {openId ? (
          <div className="chat-body">
            <div className="conversation">
              <Transcript
                entries={log}
                live={live}
                onEdit={(e) => {
                  setEditing(e);
                  inputRef.current?.focus();
                }}
                onRegenerate={regenerate}
              />
              <Composer
                editing={editing}
                busy={busy}
                onCancelEdit={() => setEditing(null)}
                onSubmit={submit}
                onStop={stopModel}
                streaming={live?.state === "streaming"}
                notice={notice}
                card={card}
                onCloseCard={() => setCard(null)}
                onJump={(id) => document.querySelector(`[data-entry="${id}"]`)?.scrollIntoView({ block: "center" })}
                inputRef={inputRef}
              />
            </div>
            {snapshot ? <ForestView snapshot={snapshot} log={log} onMove={moveHead} /> : null}
          </div>
        ) : (
          <p className="empty">Choose a chat on the left, or find one by what was said in it.</p>
        )}
      </main>
    </div>
  );
}
