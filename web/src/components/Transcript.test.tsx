// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { LogEntryJson } from "../api/types.gen";
import { Transcript } from "./Transcript";

afterEach(cleanup);

let seq = 0;
function entry(kind: string, payload: Record<string, unknown>, visibility = "context"): LogEntryJson {
  seq += 1;
  return {
    id: `e${seq}`,
    session_id: "s1",
    parent_id: seq > 1 ? `e${seq - 1}` : null,
    sequence: seq,
    kind,
    payload,
    context_visibility: visibility,
    semantic_schema_version: 1,
    created_at: "2026-01-01T00:00:00Z",
    stamp: null,
    diverged: false,
  };
}

/** One weather turn as a harness records it; `provider` only changes provider-specific labels. */
function conversation(provider: "anthropic" | "openai"): LogEntryJson[] {
  seq = 0;
  return [
    entry("user.message", { content: [{ type: "text", text: "What is the weather in Paris?" }] }),
    entry("assistant.message", {
      content: [
        { type: "thinking", thinking: "I should call the forecast tool." },
        { type: "text", text: "Let me look it up." },
        { type: "tool_call", id: "call_1", name: "forecast", input: { city: "Paris" } },
      ],
      provider,
      model: provider === "anthropic" ? "claude-x" : "gpt-x",
      stop_reason: provider === "anthropic" ? "tool_use" : "completed",
      incomplete: false,
    }),
    entry("tool.started", { call_id: "call_1", name: "forecast", input: { city: "Paris" } }, "hidden"),
    entry("tool.completed", { call_id: "call_1", output: "18°C and sunny" }),
    entry("provider.notification", { provider, event: { type: "ping" } }, "hidden"),
    entry("assistant.message", {
      content: [{ type: "text", text: "It is **18°C** and sunny." }],
      provider,
      stop_reason: provider === "anthropic" ? "end_turn" : "completed",
      incomplete: false,
    }),
  ];
}

type Extra = Partial<Parameters<typeof Transcript>[0]>;

function renderTranscript(entries: LogEntryJson[], live: Parameters<typeof Transcript>[0]["live"] = null, extra: Extra = {}) {
  const onEdit = vi.fn();
  const onRegenerate = vi.fn();
  const view = render(<Transcript entries={entries} live={live} onEdit={onEdit} onRegenerate={onRegenerate} {...extra} />);
  return { ...view, onEdit, onRegenerate };
}

const text = (t: string) => ({ content: [{ type: "text", text: t }] });

/** The <details> element whose own <summary> has this text. */
function disclosure(scope: HTMLElement, summary: RegExp): HTMLDetailsElement {
  const s = within(scope).getByText((_, el) => el?.tagName === "SUMMARY" && summary.test(el.textContent ?? ""));
  return s.parentElement as HTMLDetailsElement;
}

describe("Transcript", () => {
  it("draws the user's message and the whole assistant turn as one card each", () => {
    renderTranscript(conversation("anthropic"));
    const transcript = screen.getByRole("region", { name: "Transcript" });
    const articles = within(transcript).getAllByRole("article");
    expect(articles.map((a) => a.getAttribute("aria-label"))).toEqual(["You, entry 1", "Assistant, entry 2"]);
    expect(within(articles[0]).getByText("What is the weather in Paris?")).toBeTruthy();
    // Markdown is rendered: **18°C** becomes <strong>, in the same card as the tool call.
    expect(within(articles[1]).getByText("18°C").tagName).toBe("STRONG");
    expect(within(articles[1]).getAllByRole("button", { name: /Regenerate/ })).toHaveLength(1);
    // Relative time, absolute on hover.
    const time = articles[0].querySelector("time")!;
    expect(time.getAttribute("dateTime")).toBe("2026-01-01T00:00:00Z");
    expect(time.getAttribute("title")).toMatch(/2026/);
  });

  it("names a tool's key argument and status in its header, its result inside", () => {
    renderTranscript(conversation("anthropic"));
    const reply = screen.getByRole("article", { name: "Assistant, entry 2" });
    const tool = disclosure(reply, /forecast\s*Paris\s*✓ done/);
    expect(tool.open).toBe(false);
    const call = within(tool).getByRole("heading", { name: "Call" }).nextElementSibling!;
    expect(JSON.parse(call.textContent!)).toEqual({ city: "Paris" });
    expect(within(tool).getByRole("heading", { name: "Result" }).nextElementSibling!.textContent).toBe("18°C and sunny");
    // Raw records only when hidden entries are asked for.
    expect(tool.querySelector(".hidden-entry")).toBeNull();
    expect(screen.getAllByText("18°C and sunny")).toHaveLength(1);
  });

  it("shows hidden entries, collapsed inside their turn, only when asked", () => {
    renderTranscript(conversation("openai"));
    expect(screen.queryByText(/provider\.notification/)).toBeNull();
    cleanup();
    renderTranscript(conversation("openai"), null, { filters: { tools: true, thinking: true, hidden: true } });
    const reply = screen.getByRole("article", { name: "Assistant, entry 2" });
    const hidden = disclosure(reply, /Hidden\s*provider\.notification\s*#5/);
    expect(hidden.open).toBe(false);
    expect(JSON.parse(hidden.querySelector("pre")!.textContent!)).toEqual({ provider: "openai", event: { type: "ping" } });
    expect(disclosure(reply, /Raw\s*tool\.started\s*#3/).className).toBe("hidden-entry");
  });

  it("draws an edit as a diff, open, and a todo list as a checklist", () => {
    seq = 0;
    renderTranscript([
      entry("assistant.message", {
        content: [
          { type: "tool_call", id: "a", name: "Edit", input: { file_path: "app.py", old_string: "x = 1", new_string: "x = 2" } },
          { type: "tool_call", id: "b", name: "TodoWrite", input: { todos: [{ content: "write tests", status: "completed" }, { content: "ship", status: "pending" }] } },
        ],
      }),
      entry("tool.completed", { call_id: "a", output: "ok" }),
      entry("tool.completed", { call_id: "b", output: "ok" }),
    ]);
    const edit = disclosure(screen.getByRole("article"), /Edit\s*app\.py/);
    expect(edit.open).toBe(true);
    expect(edit.querySelector(".del")!.textContent).toContain("x = 1");
    expect(edit.querySelector(".add")!.textContent).toContain("x = 2");
    const todos = screen.getByRole("list", { name: "Todo list" });
    expect(within(todos).getAllByRole("listitem").map((li) => li.className)).toEqual(["todo completed", "todo pending"]);
  });

  it("links a task to its worker's chat", () => {
    seq = 0;
    const onOpenChat = vi.fn();
    renderTranscript(
      [entry("assistant.message", { content: [{ type: "tool_call", id: "t", name: "Task", input: { description: "explore", prompt: "Look at the repo", subagent_type: "Explore" } }] })],
      null,
      { workers: [{ session_id: "w1", title: "explore", prompt: "Look at the repo" }], onOpenChat },
    );
    fireEvent.click(screen.getByRole("button", { name: /Open the worker's chat/ }));
    expect(onOpenChat).toHaveBeenCalledWith("w1");
  });

  it("marks a failed tool result and a call still waiting for one", () => {
    seq = 0;
    renderTranscript([
      entry("assistant.message", {
        content: [
          { type: "tool_call", id: "a", name: "shell", input: { cmd: "false" } },
          { type: "tool_call", id: "b", name: "search", input: { q: "x" } },
        ],
      }),
      entry("tool.completed", { call_id: "a", output: "exit 1", is_error: true }),
    ]);
    const article = screen.getByRole("article", { name: "Assistant, entry 1" });
    expect(disclosure(article, /shell\s*false\s*✕ error/).className).toContain("error");
    expect(disclosure(article, /search\s*x\s*… no result yet/).open).toBe(false);
  });

  it("keeps thinking collapsed and distinct from the reply text", () => {
    renderTranscript(conversation("anthropic"));
    const reply = screen.getByRole("article", { name: "Assistant, entry 2" });
    const thinking = disclosure(reply, /^Thinking$/);
    expect(thinking.open).toBe(false);
    expect(within(thinking).getByText("I should call the forecast tool.")).toBeTruthy();
    expect(thinking.contains(within(reply).getByText("Let me look it up."))).toBe(false);
  });

  it("says when the provider redacted thinking", () => {
    seq = 0;
    renderTranscript([entry("assistant.message", { content: [{ type: "redacted_thinking", data: "…" }], incomplete: false })]);
    const thinking = disclosure(screen.getByRole("article"), /Thinking \(redacted\)/);
    expect(within(thinking).getByText("The provider redacted this thinking.")).toBeTruthy();
  });

  it("never loads a remote image, opens links without a referrer, and draws GFM tables", () => {
    seq = 0;
    renderTranscript([
      entry("assistant.message", text("![pixel](https://tracker.example/p.gif) see [docs](https://docs.example/x)\n\n| a | b |\n|---|---|\n| 1 | 2 |")),
    ]);
    const article = screen.getByRole("article");
    expect(article.querySelector("img")).toBeNull();
    const image = within(article).getByRole("link", { name: /pixel/ });
    expect(image.getAttribute("href")).toBe("https://tracker.example/p.gif");
    expect(image.getAttribute("rel")).toContain("noreferrer");
    expect(within(article).getByRole("link", { name: "docs" }).getAttribute("rel")).toContain("noreferrer");
    expect(within(article).getByRole("table")).toBeTruthy();
    expect(within(article).getAllByRole("cell").map((c) => c.textContent)).toEqual(["1", "2"]);
  });

  it("draws a huge message as a plain prefix with Show all", () => {
    seq = 0;
    const big = "word ".repeat(400_000); // 2 MB
    renderTranscript([entry("user.message", text(big))]);
    const article = screen.getByRole("article");
    const pre = article.querySelector("pre.plain")!;
    expect(pre.textContent!.length).toBeLessThan(100_000);
    fireEvent.click(within(article).getByRole("button", { name: /Show all \(1\.9 MB/ }));
    expect(article.querySelector("pre.plain")!.textContent!.length).toBe(big.length);
  });

  it("renders the four stream states differently", () => {
    seq = 0;
    const entries = [
      entry("assistant.message", { content: [{ type: "text", text: "done" }], stop_reason: "end_turn", incomplete: false }),
      entry("user.message", text("go on")),
      entry("assistant.message", {
        content: [{ type: "text", text: "partial" }],
        stop_reason: "interrupted",
        incomplete: true,
        dropped: [{ type: "text" }, { type: "tool_call" }],
      }),
      entry("user.message", text("again")),
      entry("assistant.message", { content: [], stop_reason: "error", incomplete: true }),
    ];
    renderTranscript(entries, { text: "typing **now**", state: "streaming" });
    const label = (name: string) => screen.getByRole("article", { name }).querySelector(".state")!.textContent;
    const states = [label("Assistant, entry 1"), label("Assistant, entry 3"), label("Assistant, entry 5"), label("Assistant, streaming")];
    expect(states).toEqual(["✓ complete", "◐ incomplete (stopped before the end)", "✕ failed", "● streaming"]);
    const live = screen.getByRole("article", { name: "Assistant, streaming" });
    expect(live.getAttribute("aria-live")).toBe("polite");
    expect(within(live).getByText("now").tagName).toBe("STRONG");
    expect(screen.getByText(/2 unfinished blocks were not kept/)).toBeTruthy();
  });

  it("shows a failed live reply's error", () => {
    renderTranscript([], { text: "", state: "failed", error: "the provider returned 500" });
    const live = screen.getByRole("article", { name: "Assistant, streaming" });
    expect(within(live).getByText("the provider returned 500")).toBeTruthy();
  });

  it("renders identical markup for the same conversation from anthropic and openai", () => {
    const a = renderTranscript(conversation("anthropic"), null, { filters: { tools: true, thinking: true, hidden: true } }).container.innerHTML;
    cleanup();
    const b = renderTranscript(conversation("openai"), null, { filters: { tools: true, thinking: true, hidden: true } }).container.innerHTML;
    // Only the hidden records' raw JSON names the provider: compare without it.
    const strip = (html: string) => html.replace(/"provider": "(anthropic|openai)"/g, "PROVIDER").replace(/"(claude|gpt)-x"/g, "MODEL").replace(/"(tool_use|completed|end_turn)"/g, "STOP");
    expect(a).not.toBe("");
    expect(strip(a)).toBe(strip(b));
  });

  it("calls back for Edit and for the one Regenerate of a turn; a preview has neither", () => {
    const { onEdit, onRegenerate } = renderTranscript(conversation("anthropic"));
    fireEvent.click(screen.getByRole("button", { name: "Edit message 1" }));
    expect(onEdit).toHaveBeenCalledWith(expect.objectContaining({ id: "e1", kind: "user.message" }));
    fireEvent.click(screen.getByRole("button", { name: "Regenerate reply 2" }));
    expect(onRegenerate).toHaveBeenCalledWith(expect.objectContaining({ id: "e2" }));
    cleanup();
    renderTranscript(conversation("anthropic"), null, { readOnly: true });
    expect(screen.queryByRole("button", { name: /Edit message|Regenerate/ })).toBeNull();
  });

  it("switches between the versions of a message", () => {
    const onPreview = vi.fn();
    renderTranscript(conversation("anthropic"), null, {
      onPreview,
      siblings: (e) => (e.id === "e1" ? { index: 0, count: 2, prev: null, next: "x9" } : null),
    });
    const group = screen.getByRole("group", { name: "Version 1 of 2" });
    expect(group.textContent).toContain("1/2");
    fireEvent.click(within(group).getByRole("button", { name: "Next version" }));
    expect(onPreview).toHaveBeenCalledWith("x9");
  });

  it("marks the highlighted entry's card, even inside a turn", () => {
    renderTranscript(conversation("anthropic"), null, { highlight: "e4" });
    expect(screen.getByRole("article", { name: "Assistant, entry 2" }).className).toContain("highlight");
  });

  it("says when the branch is empty", () => {
    renderTranscript([]);
    expect(screen.getByText("No entries on this branch yet.")).toBeTruthy();
  });
});
