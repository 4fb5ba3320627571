import { describe, expect, it } from "vitest";
import type { LogEntryJson } from "./api/types.gen";
import { buildUnits, markParts, streamState } from "./transcript";

let seq = 0;
function entry(kind: string, payload: Record<string, unknown>, visibility = "context"): LogEntryJson {
  seq += 1;
  return {
    id: `e${seq}`,
    session_id: "s",
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

describe("buildUnits", () => {
  it("groups a tool call with its result and its started record", () => {
    seq = 0;
    const units = buildUnits([
      entry("user.message", { content: [{ type: "text", text: "weather?" }] }),
      entry("assistant.message", {
        content: [
          { type: "thinking", thinking: "look it up" },
          { type: "text", text: "Looking." },
          { type: "tool_call", id: "c1", name: "forecast", input: { city: "Paris" } },
        ],
        stop_reason: "tool_use",
        incomplete: false,
      }),
      entry("tool.started", { call_id: "c1", name: "forecast", input: {} }, "hidden"),
      entry("tool.completed", { call_id: "c1", output: "18C" }),
      entry("provider.notification", { provider: "anthropic", event: { type: "ping" } }, "hidden"),
    ]);
    expect(units.map((u) => u.type)).toEqual(["user", "assistant", "hidden"]);
    const assistant = units[1];
    if (assistant.type !== "assistant") throw new Error("not an assistant unit");
    expect(assistant.blocks.map((b) => b.type)).toEqual(["thinking", "text", "tool"]);
    const tool = assistant.blocks[2];
    if (tool.type !== "tool") throw new Error("not a tool block");
    expect(tool.result).toEqual({ entryId: "e4", text: "18C", isError: false });
    expect(tool.raw.map((e) => e.kind)).toEqual(["tool.started", "tool.completed"]);
  });

  it("keeps a result without its call as its own unit", () => {
    seq = 0;
    const units = buildUnits([entry("tool.completed", { call_id: "x", output: [{ type: "text", text: "out" }], is_error: true })]);
    expect(units).toHaveLength(1);
    expect(units[0].type).toBe("tool");
  });

  it("ignores the provider and harness: only the content decides", () => {
    seq = 0;
    const a = buildUnits([entry("assistant.message", { content: [{ type: "text", text: "hi" }], provider: "anthropic", model: "m1", stop_reason: "end_turn", incomplete: false })]);
    seq = 0;
    const b = buildUnits([entry("assistant.message", { content: [{ type: "text", text: "hi" }], provider: "openai", model: "m2", stop_reason: "completed", incomplete: false })]);
    const strip = (u: typeof a) => u.map((x) => ({ ...x, entry: null }));
    expect(strip(a)).toEqual(strip(b));
  });
});

describe("streamState", () => {
  it("counts the blocks an interrupted reply dropped", () => {
    seq = 0;
    const [unit] = buildUnits([entry("assistant.message", { content: [], incomplete: true, stop_reason: "interrupted", dropped: [{ type: "text" }] })]);
    expect(unit.type === "assistant" && unit.dropped).toBe(1);
  });

  it("tells complete, incomplete and failed apart", () => {
    expect(streamState({ incomplete: false, stop_reason: "end_turn" })).toBe("complete");
    expect(streamState({ incomplete: true, stop_reason: "interrupted" })).toBe("incomplete");
    expect(streamState({ incomplete: true, stop_reason: "error" })).toBe("failed");
  });
});

describe("markParts", () => {
  it("splits the server's ** marks into matches", () => {
    expect(markParts("the **wal** mode and **busy** timeout")).toEqual([
      { text: "the ", match: false },
      { text: "wal", match: true },
      { text: " mode and ", match: false },
      { text: "busy", match: true },
      { text: " timeout", match: false },
    ]);
  });
});
