// @vitest-environment jsdom
import { act, cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { createRef } from "react";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { EntryHitJson, LogEntryJson, SessionJson, SnapshotJson } from "../api/types.gen";
import { Composer } from "./Composer";

// App talks to the server through ../api/client: a fake client answers only the calls used.
const rpc = vi.hoisted(() => ({ calls: [] as { method: string; params: Record<string, unknown> }[] }));
vi.mock("../api/client", () => {
  class RpcError extends Error {}
  class Changes {
    onDelta = null;
    constructor(_onChange: unknown, _onResync: unknown, onState: (s: string) => void) {
      onState("live");
    }
    get connected() {
      return false;
    }
    call() {
      return Promise.reject(new Error("not connected"));
    }
    close() {}
  }
  async function call(method: string, params: Record<string, unknown>) {
    rpc.calls.push({ method, params });
    switch (method) {
      case "sessions/list":
        return { sessions: [FAKE.session] };
      case "chat/model":
        return { configured: false, model: null };
      case "sessions/log":
        return FAKE.log;
      case "sessions/forest_snapshot":
        return FAKE.snapshot;
      case "sessions/search_session_entries":
        return FAKE.hits;
      case "sessions/workers":
        return { parent: null, workers: [] };
      case "sessions/previews":
        return {};
      case "sessions/checkpoint":
      case "sessions/append":
        return {};
      default:
        throw new Error(`unexpected call ${method}`);
    }
  }
  class Unauthorized extends Error {}
  return {
    call,
    Changes,
    RpcError,
    Unauthorized,
    accessToken: () => null,
    setAccessToken: () => {},
    onUnauthorized: () => {},
  };
});

const FAKE = vi.hoisted(() => {
  const entry = {
    id: "e1",
    session_id: "s1",
    parent_id: null,
    sequence: 1,
    kind: "user.message",
    payload: { content: [{ type: "text", text: "What is the weather in Paris?" }] },
    context_visibility: "context",
    semantic_schema_version: 1,
    created_at: "2026-01-01T00:00:00Z",
    stamp: null,
    diverged: false,
  };
  return {
    session: {
      id: "s1",
      title: "Paris trip",
      harness: "anthropic",
      status: "active",
      created_at: "2026-01-01T00:00:00Z",
      updated_at: "2026-01-01T00:00:00Z",
      cwd: null,
      origin_cwd: null,
      git_branch: null,
      git_commit: null,
      git_repository: null,
      origin_project: null,
      entry_count: 1,
      messages: 1,
      head: "e1",
      quarantine: null,
      source: null,
      visibility: "visible",
    },
    log: [entry],
    snapshot: {
      session_id: "s1",
      nodes: [{ id: "e1", parent_id: null, sequence: 1, kind: "user.message", active: true, context_visibility: "context" }],
      active_path: ["e1"],
      checkpoints: [],
      tips: ["e1"],
      head: "e1",
      selected: null,
      current: null,
      differs: null,
      dirty_differs: false,
      divergence: "unknown",
      head_differs: false,
      reason: "",
      stamp: null,
    },
    hits: [
      {
        entry_id: "e1",
        session_id: "s1",
        sequence: 1,
        kind: "user.message",
        on_active_branch: true,
        score: 1,
        created_at: "2026-01-01T00:00:00Z",
        snippet: "What is the **weather** in Paris?",
      },
    ],
  } as { session: SessionJson; log: LogEntryJson[]; snapshot: SnapshotJson; hits: EntryHitJson[] };
});

beforeAll(() => {
  vi.stubGlobal(
    "ResizeObserver",
    class {
      observe() {}
      unobserve() {}
      disconnect() {}
    },
  );
});
beforeEach(() => {
  rpc.calls.length = 0;
});
afterEach(cleanup);

type Props = Parameters<typeof Composer>[0];
function renderComposer(over: Partial<Props> = {}) {
  const props: Props = {
    editing: null,
    busy: false,
    onCancelEdit: vi.fn(),
    onSubmit: vi.fn(async () => {}),
    onStop: vi.fn(),
    streaming: false,
    notice: null,
    card: null,
    onCloseCard: vi.fn(),
    onJump: vi.fn(),
    inputRef: createRef<HTMLTextAreaElement>(),
    ...over,
  };
  render(<Composer {...props} />);
  return props;
}

describe("Composer", () => {
  it("sends the trimmed message on Enter and clears the box; Shift+Enter does not send", async () => {
    const props = renderComposer();
    const box = screen.getByRole("textbox", { name: "Message" });
    fireEvent.change(box, { target: { value: "  hello there \n" } });
    fireEvent.keyDown(box, { key: "Enter", shiftKey: true });
    expect(props.onSubmit).not.toHaveBeenCalled();
    await act(async () => {
      fireEvent.keyDown(box, { key: "Enter" });
    });
    expect(props.onSubmit).toHaveBeenCalledWith("hello there");
    expect((box as HTMLTextAreaElement).value).toBe("");
  });

  it("does not send an empty message or while busy", () => {
    const props = renderComposer({ busy: true });
    expect((screen.getByRole("button", { name: "Send" }) as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(screen.getByRole("textbox", { name: "Message" }), { target: { value: "hi" } });
    fireEvent.keyDown(screen.getByRole("textbox", { name: "Message" }), { key: "Enter" });
    expect(props.onSubmit).not.toHaveBeenCalled();
  });

  it("shows Stop instead of Send while a reply streams", () => {
    const props = renderComposer({ streaming: true });
    expect(screen.queryByRole("button", { name: "Send" })).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Stop" }));
    expect(props.onStop).toHaveBeenCalled();
  });

  it("prefills the message being edited and can cancel", () => {
    const props = renderComposer({ editing: FAKE.log[0] });
    expect((screen.getByRole("textbox", { name: "Message" }) as HTMLTextAreaElement).value).toBe("What is the weather in Paris?");
    expect(screen.getByText(/Editing message #1: sending starts a new branch beside it/)).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
    expect(props.onCancelEdit).toHaveBeenCalled();
  });

  it("shows a recall card whose hits jump to their entry", () => {
    const props = renderComposer({ card: { query: "weather", hits: FAKE.hits }, notice: "Recorded." });
    const card = screen.getByRole("region", { name: "Recall: weather" });
    expect(card.textContent).toMatch(/1 hit in this chat \(shown here only: not sent, not saved\)/);
    expect(within(card).getByText("weather").tagName).toBe("MARK");
    fireEvent.click(within(card).getByRole("button", { name: "#1 user.message (active branch)" }));
    expect(props.onJump).toHaveBeenCalledWith("e1");
    fireEvent.click(within(card).getByRole("button", { name: "Close" }));
    expect(props.onCloseCard).toHaveBeenCalled();
    expect(screen.getByRole("status").textContent).toBe("Recorded.");
  });
});

describe("Composer in the app: commands", () => {
  async function openApp() {
    window.location.hash = "#/chat/s1";
    const { App } = await import("../App");
    render(<App />);
    await screen.findByRole("article", { name: "You, entry 1" });
    return screen.getByRole("textbox", { name: "Message" });
  }
  async function send(box: HTMLElement, text: string) {
    fireEvent.change(box, { target: { value: text } });
    await act(async () => {
      fireEvent.keyDown(box, { key: "Enter" });
    });
  }
  const methods = () => rpc.calls.map((c) => c.method);

  it("/recall shows a card and appends nothing", async () => {
    const box = await openApp();
    await send(box, "/recall weather");
    const card = await screen.findByRole("region", { name: "Recall: weather" });
    expect(within(card).getByText("weather").tagName).toBe("MARK");
    expect(rpc.calls).toContainEqual({
      method: "sessions/search_session_entries",
      params: { session_id: "s1", query: "weather", limit: 20 },
    });
    expect(methods()).not.toContain("sessions/append");
    expect(methods()).not.toContain("sessions/checkpoint");
  });

  it("/checkpoint records a checkpoint, not a message", async () => {
    const box = await openApp();
    await send(box, "/checkpoint before refactor");
    expect(await screen.findByText("Checkpoint “before refactor” recorded.")).toBeTruthy();
    expect(rpc.calls).toContainEqual({ method: "sessions/checkpoint", params: { session_id: "s1", label: "before refactor" } });
    expect(methods()).not.toContain("sessions/append");
  });

  it("a plain message is appended as the user's turn", async () => {
    const box = await openApp();
    await send(box, "And tomorrow?");
    expect(await screen.findByText(/^Recorded\. No model is configured/)).toBeTruthy();
    expect(rpc.calls).toContainEqual({
      method: "sessions/append",
      params: { session_id: "s1", kind: "user.message", payload: { content: [{ type: "text", text: "And tomorrow?" }] } },
    });
    expect(methods()).not.toContain("sessions/checkpoint");
    expect(methods()).not.toContain("sessions/search_session_entries");
  });

  it("an unknown command is neither sent nor saved", async () => {
    const box = await openApp();
    await send(box, "/frobnicate now");
    expect(await screen.findByText(/^Unknown command \/frobnicate/)).toBeTruthy();
    expect(methods()).not.toContain("sessions/append");
  });
});
