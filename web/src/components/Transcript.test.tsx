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

function renderTranscript(entries: LogEntryJson[], live: Parameters<typeof Transcript>[0]["live"] = null) {
  const onEdit = vi.fn();
  const onRegenerate = vi.fn();
  const view = render(<Transcript entries={entries} live={live} onEdit={onEdit} onRegenerate={onRegenerate} />);
  return { ...view, onEdit, onRegenerate };
}

/** The <details> element whose own <summary> has this text. */
function disclosure(scope: HTMLElement, summary: RegExp): HTMLDetailsElement {
  const s = within(scope).getByText((_, el) => el?.tagName === "SUMMARY" && summary.test(el.textContent ?? ""));
  return s.parentElement as HTMLDetailsElement;
}

describe("Transcript", () => {
  it("shows the user's turn and the assistant's reply as labelled articles", () => {
    renderTranscript(conversation("anthropic"));
    const transcript = screen.getByRole("region", { name: "Transcript" });
    const articles = within(transcript).getAllByRole("article");
    expect(articles.map((a) => a.getAttribute("aria-label"))).toEqual([
      "You, entry 1",
      "Assistant, entry 2",
      "Assistant, entry 6",
    ]);
    expect(within(articles[0]).getByText("What is the weather in Paris?")).toBeTruthy();
    // Markdown is rendered: **18°C** becomes <strong>.
    expect(within(articles[2]).getByText("18°C").tagName).toBe("STRONG");
  });

  it("groups a tool call with its result in one collapsible block", () => {
    renderTranscript(conversation("anthropic"));
    const reply = screen.getByRole("article", { name: "Assistant, entry 2" });
    const tool = disclosure(reply, /Tool\s*forecast\s*— done/);
    expect(tool.tagName).toBe("DETAILS");
    expect(tool.open).toBe(false);
    // Call and result live in the same block, with the harness's raw records.
    expect(within(tool).getByRole("heading", { name: "Call" })).toBeTruthy();
    expect(within(tool).getByRole("heading", { name: "Result" })).toBeTruthy();
    const call = within(tool).getByRole("heading", { name: "Call" }).nextElementSibling!;
    expect(JSON.parse(call.textContent!)).toEqual({ city: "Paris" });
    expect(within(tool).getByRole("heading", { name: "Result" }).nextElementSibling!.textContent).toBe("18°C and sunny");
    expect(disclosure(tool, /Raw\s*tool\.started\s*#3/).className).toBe("hidden-entry");
    expect(disclosure(tool, /Raw\s*tool\.completed\s*#4/).className).toBe("hidden-entry");
    // The result is not drawn a second time as its own unit.
    expect(screen.getAllByText("18°C and sunny")).toHaveLength(1);
    fireEvent.click(tool.querySelector(":scope > summary")!);
    expect(tool.open).toBe(true);
  });

  it("marks a failed tool result and a call still waiting for one", () => {
    seq = 0;
    const entries = [
      entry("assistant.message", {
        content: [
          { type: "tool_call", id: "a", name: "shell", input: { cmd: "false" } },
          { type: "tool_call", id: "b", name: "search", input: { q: "x" } },
        ],
        incomplete: false,
      }),
      entry("tool.completed", { call_id: "a", output: "exit 1", is_error: true }),
    ];
    renderTranscript(entries);
    const failed = disclosure(screen.getByRole("article", { name: "Assistant, entry 1" }), /Tool\s*shell\s*— error/);
    expect(failed.className).toContain("error");
    expect(disclosure(screen.getByRole("article"), /Tool\s*search\s*— no result yet/).open).toBe(false);
  });

  it("keeps thinking collapsed and distinct from the reply text", () => {
    renderTranscript(conversation("anthropic"));
    const reply = screen.getByRole("article", { name: "Assistant, entry 2" });
    const thinking = disclosure(reply, /^Thinking$/);
    expect(thinking.open).toBe(false);
    expect(thinking.className).toBe("thinking");
    expect(within(thinking).getByText("I should call the forecast tool.")).toBeTruthy();
    // The visible text is not inside the thinking block.
    expect(thinking.contains(within(reply).getByText("Let me look it up."))).toBe(false);
  });

  it("says when the provider redacted thinking", () => {
    seq = 0;
    renderTranscript([entry("assistant.message", { content: [{ type: "redacted_thinking", data: "…" }], incomplete: false })]);
    const thinking = disclosure(screen.getByRole("article"), /Thinking \(redacted\)/);
    expect(within(thinking).getByText("The provider redacted this thinking.")).toBeTruthy();
  });

  it("keeps hidden entries, collapsed, expanding to their raw JSON", () => {
    renderTranscript(conversation("openai"));
    const hidden = disclosure(screen.getByRole("region", { name: "Transcript" }), /Hidden:\s*provider\.notification\s*#5/);
    expect(hidden.open).toBe(false);
    fireEvent.click(hidden.querySelector(":scope > summary")!);
    expect(hidden.open).toBe(true);
    const raw = hidden.querySelector("pre")!;
    expect(JSON.parse(raw.textContent!)).toEqual({ provider: "openai", event: { type: "ping" } });
  });

  it("renders the four stream states differently", () => {
    seq = 0;
    const entries = [
      entry("assistant.message", { content: [{ type: "text", text: "done" }], stop_reason: "end_turn", incomplete: false }),
      entry("assistant.message", {
        content: [{ type: "text", text: "partial" }],
        stop_reason: "interrupted",
        incomplete: true,
        dropped: [{ type: "text" }, { type: "tool_call" }],
      }),
      entry("assistant.message", { content: [], stop_reason: "error", incomplete: true }),
    ];
    renderTranscript(entries, { text: "typing **now**", state: "streaming" });
    const label = (name: string) => screen.getByRole("article", { name }).querySelector(".state")!.textContent;
    const states = [
      label("Assistant, entry 1"),
      label("Assistant, entry 2"),
      label("Assistant, entry 3"),
      label("Assistant, streaming"),
    ];
    expect(states).toEqual(["✓ complete", "◐ incomplete (stopped before the end)", "✕ failed", "● streaming"]);
    expect(new Set(states).size).toBe(4);
    expect(screen.getByRole("article", { name: "Assistant, entry 2" }).className).toContain("state-incomplete");
    expect(screen.getByRole("article", { name: "Assistant, entry 3" }).className).toContain("state-failed");
    const live = screen.getByRole("article", { name: "Assistant, streaming" });
    expect(live.getAttribute("aria-live")).toBe("polite");
    expect(within(live).getByText("now").tagName).toBe("STRONG");
    expect(screen.getByText(/2 unfinished blocks were not kept/)).toBeTruthy();
  });

  it("shows a failed live reply's error", () => {
    renderTranscript([], { text: "", state: "failed", error: "the provider returned 500" });
    const live = screen.getByRole("article", { name: "Assistant, streaming" });
    expect(within(live).getByText("✕ failed")).toBeTruthy();
    expect(within(live).getByText("the provider returned 500")).toBeTruthy();
  });

  it("renders identical markup for the same conversation from anthropic and openai", () => {
    const a = renderTranscript(conversation("anthropic")).container.innerHTML;
    cleanup();
    // Only the hidden notification's raw JSON names the provider: compare without it.
    const b = renderTranscript(conversation("openai")).container.innerHTML;
    const strip = (html: string) => html.replace(/&quot;provider&quot;: &quot;(anthropic|openai)&quot;/g, "PROVIDER")
      .replace(/"provider": "(anthropic|openai)"/g, "PROVIDER");
    expect(a).not.toBe("");
    expect(strip(a)).toBe(strip(b));
  });

  it("calls back for Edit and Regenerate with the entry", () => {
    const { onEdit, onRegenerate } = renderTranscript(conversation("anthropic"));
    fireEvent.click(screen.getByRole("button", { name: "Edit message 1" }));
    expect(onEdit).toHaveBeenCalledWith(expect.objectContaining({ id: "e1", kind: "user.message" }));
    fireEvent.click(screen.getByRole("button", { name: "Regenerate reply 6" }));
    expect(onRegenerate).toHaveBeenCalledWith(expect.objectContaining({ id: "e6" }));
  });

  it("says when the branch is empty", () => {
    renderTranscript([]);
    expect(screen.getByText("No entries on this branch yet.")).toBeTruthy();
  });
});
