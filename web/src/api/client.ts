// The typed JSON-RPC client: calls over POST /rpc, `sessions/changed` over WebSocket /ws.
// Method names, params and results come from types.gen.ts (generated from rpc.discover).
import type { ChangeJson, Methods } from "./types.gen";

export type Method = keyof Methods;
export type Params<M extends Method> = Methods[M]["params"];
export type Result<M extends Method> = Methods[M]["result"];

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(message);
  }
}

let nextId = 1;

// The access token of a server started with --token: given once in the address
// (`/#token=…`, a fragment, so it never reaches a log) or typed into the page; kept
// for this tab only. Sent as `Authorization: Bearer` and as the WebSocket's first message.
const TOKEN_KEY = "sessionforest.token";

export function accessToken(): string | null {
  try {
    return window.sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function setAccessToken(token: string | null): void {
  if (token) window.sessionStorage.setItem(TOKEN_KEY, token);
  else window.sessionStorage.removeItem(TOKEN_KEY);
}

/** Move a `#token=…` from the address into this tab's storage and out of sight. */
export function takeTokenFromAddress(): void {
  const m = /^#token=([^&]+)$/.exec(window.location.hash);
  if (!m) return;
  setAccessToken(decodeURIComponent(m[1]));
  window.history.replaceState(null, "", window.location.pathname + window.location.search);
}

/** The server wants a token this tab does not have (or refused the one it has). */
export class Unauthorized extends Error {
  constructor() {
    super("the server needs an access token");
  }
}

let unauthorized: (() => void) | null = null;

/** Called once whenever the server refuses a request for want of the right token. */
export function onUnauthorized(listener: (() => void) | null): void {
  unauthorized = listener;
}

export async function call<M extends Method>(
  method: M,
  params: Params<M>,
  signal?: AbortSignal,
): Promise<Result<M>> {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  const token = accessToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(new URL("rpc", document.baseURI), {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", method, params, id: nextId++ }),
    signal,
  });
  if (response.status === 401) {
    unauthorized?.();
    throw new Unauthorized();
  }
  const body = await response.json();
  if (body.error) throw new RpcError(body.error.code, body.error.message, body.error.data);
  return body.result as Result<M>;
}

export type ConnectionState = "connecting" | "live" | "offline";

/** A subscription to every session's changes that reconnects and catches up by itself. */
export class Changes {
  private socket: WebSocket | null = null;
  private epoch: string | null = null;
  private seq: number | null = null;
  private delay = 200;
  private closed = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 100;
  /** Called with each `chat/delta` notification (a model reply's text as it streams). */
  onDelta: ((delta: { reply_id: string; session_id: string; text: string }) => void) | null = null;

  constructor(
    private readonly onChange: (change: ChangeJson) => void,
    private readonly onResync: () => void,
    private readonly onState: (state: ConnectionState) => void,
  ) {
    this.open();
  }

  private open(): void {
    if (this.closed) return;
    this.onState("connecting");
    const url = new URL("ws", document.baseURI);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(url, ["jsonrpc"]);
    this.socket = socket;
    socket.onopen = () => {
      const token = accessToken();
      if (token) {
        // Browsers cannot set headers on a WebSocket: the first message carries the token.
        socket.send(JSON.stringify({ jsonrpc: "2.0", method: "rpc.authenticate", params: { token }, id: 0 }));
      }
      const params: Params<"sessions/subscribe"> = {};
      if (this.epoch !== null && this.seq !== null) {
        params.since = this.seq;
        params.epoch = this.epoch;
      }
      socket.send(JSON.stringify({ jsonrpc: "2.0", method: "sessions/subscribe", params, id: 1 }));
    };
    socket.onmessage = (event) => {
      const message = JSON.parse(String(event.data));
      if (message.id === 1 && message.result) {
        const answer = message.result as Result<"sessions/subscribe">;
        const resync = answer.resync || this.epoch === null;
        this.epoch = answer.epoch;
        this.seq = answer.seq;
        this.delay = 200;
        this.onState("live");
        if (resync) this.onResync();
      } else if (message.id !== undefined && this.pending.has(message.id)) {
        const waiting = this.pending.get(message.id)!;
        this.pending.delete(message.id);
        if (message.error) waiting.reject(new RpcError(message.error.code, message.error.message, message.error.data));
        else waiting.resolve(message.result);
      } else if (message.method === "chat/delta") {
        this.onDelta?.(message.params);
      } else if (message.method === "sessions/changed") {
        const change = message.params as ChangeJson;
        this.seq = change.seq;
        this.onChange(change);
      }
    };
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      if (event.code === 4401) {
        // Refused for want of the right token: asking again cannot help.
        this.closed = true;
        unauthorized?.();
      }
      for (const waiting of this.pending.values()) waiting.reject(new Error("the connection to the server closed"));
      this.pending.clear();
      this.socket = null;
      if (this.closed) return;
      this.onState("offline");
      this.timer = setTimeout(() => this.open(), this.delay);
      this.delay = Math.min(this.delay * 2, 2000);
    };
  }

  /** Whether calls can go over the WebSocket now. */
  get connected(): boolean {
    return this.socket !== null && this.socket.readyState === WebSocket.OPEN;
  }

  /** A call over the WebSocket: its notifications (chat/delta) come back on the same one. */
  call<M extends Method>(method: M, params: Params<M>): Promise<Result<M>> {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) return Promise.reject(new Error("not connected to the server"));
    const id = this.nextId++;
    return new Promise<Result<M>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      socket.send(JSON.stringify({ jsonrpc: "2.0", method, params, id }));
    });
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.socket?.close();
  }
}
