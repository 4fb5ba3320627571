// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { createRef, useState } from "react";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Result } from "../api/client";
import type { ChatHitJson, ChatSearchJson, SessionJson } from "../api/types.gen";
import { type Search, Sidebar } from "./Sidebar";
import { Snippet } from "./Snippet";

afterEach(() => {
  cleanup();
  window.localStorage.clear(); // the list's options are kept there
});

beforeAll(() => {
  // jsdom lays nothing out: give the virtualised list's scroller a size, as a browser would.
  Object.defineProperty(HTMLElement.prototype, "offsetHeight", { configurable: true, get: () => 800 });
  Object.defineProperty(HTMLElement.prototype, "offsetWidth", { configurable: true, get: () => 300 });
  Object.defineProperty(HTMLElement.prototype, "clientHeight", { configurable: true, get: () => 800 });
  Object.defineProperty(HTMLElement.prototype, "clientWidth", { configurable: true, get: () => 300 });
  HTMLElement.prototype.getBoundingClientRect = () => ({ x: 0, y: 0, top: 0, left: 0, bottom: 800, right: 300, width: 300, height: 800, toJSON: () => ({}) });
});

function session(id: string, title: string, harness: string, status = "active"): SessionJson {
  return {
    id,
    title,
    harness,
    status,
    created_at: "2026-01-01T10:00:00Z",
    updated_at: "2026-01-02T10:00:00Z",
    cwd: null,
    origin_cwd: null,
    git_branch: null,
    git_commit: null,
    git_repository: null,
    origin_project: null,
    entry_count: 3,
    messages: 3,
    head: null,
    quarantine: null,
    source: null,
    visibility: "visible",
  };
}

function hit(id: string, title: string, snippet: string): ChatHitJson {
  return {
    session_id: id,
    title,
    snippet,
    harness: "anthropic",
    status: "active",
    created_at: "2026-01-01T10:00:00Z",
    updated_at: "2026-01-02T10:00:00Z",
    digest_match: false,
    entry_matches: 1,
    matched_terms: ["weather"],
    score: 1,
    entry_id: null,
    sequence: null,
    active: null,
  };
}

function answer(query: string, hits: ChatHitJson[], confident: boolean): ChatSearchJson {
  return {
    query,
    hits,
    confident,
    reason: confident ? "clear-lead" : "narrow-lead",
    detail: "",
    dropped_terms: [],
    excluded_terms: [],
    harness: [],
    mode: "and",
    outside_window: [],
    prefix_terms: [],
    terms: ["weather"],
    unknown_terms: [],
    window: null,
  };
}

const sessions = [session("s1", "Paris trip", "anthropic"), session("s2", "Refactor the parser", "openai", "archived")];

/** The Sidebar with its query held in state, as App holds it; `search` is a fake server. */
function renderSidebar(search: Search, opts: { deepConfigured?: boolean; openId?: string | null } = {}) {
  const onOpen = vi.fn();
  function Harness() {
    const [query, setQuery] = useState("");
    return (
      <Sidebar
        sessions={sessions}
        openId={opts.openId ?? null}
        onOpen={onOpen}
        query={query}
        onQuery={setQuery}
        searchRef={createRef<HTMLInputElement>()}
        search={search}
        deepConfigured={opts.deepConfigured ?? false}
      />
    );
  }
  render(<Harness />);
  return onOpen;
}

describe("Snippet", () => {
  it("marks the matched words", () => {
    const { container } = render(<Snippet text="the **weather** in **Paris** today" />);
    expect(Array.from(container.querySelectorAll("mark"), (m) => m.textContent)).toEqual(["weather", "Paris"]);
    expect(container.textContent).toBe("the weather in Paris today");
  });
});

describe("Sidebar", () => {
  it("lists every chat, archived ones on request", () => {
    renderSidebar(vi.fn());
    const nav = screen.getByRole("navigation", { name: "Chats" });
    const list = within(nav).getByRole("list", { name: "All chats" });
    expect(within(list).getAllByRole("button")).toHaveLength(1);
    fireEvent.click(within(nav).getByRole("checkbox", { name: /archived \(1\)/ }));
    const buttons = within(list).getAllByRole("button");
    expect(buttons).toHaveLength(2);
    expect(within(buttons[0]).getByText("Paris trip")).toBeTruthy();
    expect(within(buttons[1]).getByText("archived")).toBeTruthy();
    expect(within(buttons[1]).getByText("openai")).toBeTruthy();
  });

  it("marks the open chat with aria-current and opens a chat on click", () => {
    const onOpen = renderSidebar(vi.fn(), { openId: "s2" });
    fireEvent.click(screen.getByRole("checkbox", { name: /archived/ }));
    const open = screen.getByRole("button", { name: /Refactor the parser/ });
    expect(open.getAttribute("aria-current")).toBe("page");
    expect(screen.getByRole("button", { name: /Paris trip/ }).hasAttribute("aria-current")).toBe(false);
    fireEvent.click(screen.getByRole("button", { name: /Paris trip/ }));
    expect(onOpen).toHaveBeenCalledWith("s1");
  });

  it("shows results with the matched words marked when typing in Find a chat", async () => {
    const search = vi.fn(async (method: string, params: { query: string }) => {
      expect(method).toBe("sessions/search_chats");
      return answer(params.query, [hit("s1", "Paris trip", "asked about the **weather** in Paris")], true);
    }) as unknown as Search;
    const onOpen = renderSidebar(search);
    const box = screen.getByRole("searchbox", { name: "Find a chat" });
    fireEvent.change(box, { target: { value: "weather" } });
    const results = await screen.findByRole("list", { name: "Search results" });
    expect(screen.queryByRole("list", { name: "All chats" })).toBeNull();
    const button = within(results).getByRole("button", { name: /Paris trip/ });
    expect(Array.from(button.querySelectorAll("mark"), (m) => m.textContent)).toEqual(["weather"]);
    expect(screen.getByRole("status").textContent).toBe("1 chat — Enter opens the first");
    expect(search).toHaveBeenCalledWith("sessions/search_chats", { query: "weather", limit: 20, prestart: true });
    // The index is sure: Enter opens the first hit.
    fireEvent.keyDown(box, { key: "Enter" });
    expect(onOpen).toHaveBeenCalledWith("s1");
    // Escape clears the box and brings back every chat.
    fireEvent.keyDown(box, { key: "Escape" });
    expect(await screen.findByRole("list", { name: "All chats" })).toBeTruthy();
  });

  it("lists the matches from outside a time window under a note of their own", async () => {
    const inside = hit("s1", "Paris trip", "the **weather** in Paris");
    const outside = hit("s2", "Refactor the parser", "**weather** api parser");
    const search = vi.fn(async (_method: string, params: { query: string }) => ({
      ...answer(params.query, [inside, outside], false),
      outside_window: [outside],
      window: { phrase: "last week", start: "2026-01-01T00:00:00Z", end: "2026-01-08T00:00:00Z" },
    })) as unknown as Search;
    renderSidebar(search);
    fireEvent.change(screen.getByRole("searchbox", { name: "Find a chat" }), { target: { value: "weather last week" } });
    const results = await screen.findByRole("list", { name: "Search results" });
    const items = Array.from(results.querySelectorAll("li"));
    expect(items.map((li) => li.className)).toEqual(["", "outside-note", "outside"]);
    expect(items[1].textContent).toBe("Outside “last week”, from any time:");
    expect(within(items[2]).getByRole("button", { name: /Refactor the parser/ })).toBeTruthy();
  });

  it("says no chat matched the window when every match is from outside it", async () => {
    const outside = hit("s2", "Refactor the parser", "**weather** api parser");
    const search = vi.fn(async (_method: string, params: { query: string }) => ({
      ...answer(params.query, [outside], false),
      outside_window: [outside],
      window: { phrase: "yesterday", start: "2026-01-01T00:00:00Z", end: "2026-01-02T00:00:00Z" },
    })) as unknown as Search;
    renderSidebar(search);
    fireEvent.change(screen.getByRole("searchbox", { name: "Find a chat" }), { target: { value: "weather yesterday" } });
    const results = await screen.findByRole("list", { name: "Search results" });
    const note = within(results).getByRole("note");
    expect(note.textContent).toBe("No chat matched “yesterday”; from any time:");
  });

  it("says it is not sure when no deep search is configured", async () => {
    const search = vi.fn(async (_m: string, p: { query: string }) =>
      answer(p.query, [hit("s1", "Paris trip", "**weather**"), hit("s2", "Refactor the parser", "**weather** api")], false),
    ) as unknown as Search;
    const onOpen = renderSidebar(search);
    const box = screen.getByRole("searchbox", { name: "Find a chat" });
    fireEvent.change(box, { target: { value: "weather" } });
    await screen.findByRole("list", { name: "Search results" });
    expect(screen.getByRole("status").textContent).toBe("2 chats");
    fireEvent.keyDown(box, { key: "Enter" });
    expect(screen.getByRole("status").textContent).toMatch(/^Not sure which chat you mean \(narrow-lead\)\. No deep search/);
    expect(onOpen).not.toHaveBeenCalled();
  });

  it("asks the deep search on Enter when unsure and opens the model's answer", async () => {
    const search = vi.fn(async (method: string, p: { query: string }) => {
      if (method === "sessions/search_chats") return answer(p.query, [hit("s1", "Paris trip", "**weather**")], false);
      const deep: Result<"search/deep"> = {
        ...answer(p.query, [hit("s2", "Refactor the parser", "**weather**")], true),
        tier: "model",
        answer: "s2",
        fallback: null,
        fallback_detail: null,
        lookups: 1,
        lookup_tokens: 10,
        usage: null,
        elapsed_ms: 5,
        model_ms: 4,
      } as Result<"search/deep">;
      return deep;
    }) as unknown as Search;
    const onOpen = renderSidebar(search, { deepConfigured: true });
    const box = screen.getByRole("searchbox", { name: "Find a chat" });
    fireEvent.change(box, { target: { value: "weather" } });
    await screen.findByRole("list", { name: "Search results" });
    fireEvent.keyDown(box, { key: "Enter" });
    expect(screen.getByRole("status").getAttribute("aria-busy")).toBe("true");
    await screen.findByText("Answered by the model (deep search): opened its chat, shown first.");
    expect(onOpen).toHaveBeenCalledWith("s2");
    expect(search).toHaveBeenCalledWith("search/deep", { query: "weather", limit: 20 });
  });

  it("reports a failed search", async () => {
    const search = vi.fn(async () => {
      throw new Error("server down");
    }) as unknown as Search;
    renderSidebar(search);
    fireEvent.change(screen.getByRole("searchbox", { name: "Find a chat" }), { target: { value: "x" } });
    expect(await screen.findByText("Search failed: server down")).toBeTruthy();
  });
});
