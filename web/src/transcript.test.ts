import { describe, expect, it } from "vitest";
import type { LogEntryJson } from "./api/types.gen";
import {
  buildUnits,
  DEFAULT_FILTERS,
  keyArgument,
  markParts,
  patchFiles,
  previewText,
  relativeTime,
  replacementDiff,
  streamState,
  toolView,
  type Unit,
} from "./transcript";

let seq = 0;
function entry(kind: string, payload: Record<string, unknown>, visibility = "context", extra: Record<string, unknown> = {}): LogEntryJson {
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
    ...extra,
  } as LogEntryJson;
}

function turn(u: Unit): Extract<Unit, { type: "turn" }> {
  if (u.type !== "turn") throw new Error(`not a turn: ${u.type}`);
  return u;
}

/** A Claude Code-like turn: each block its own message, results in between, a ping. */
function codingTurn(): LogEntryJson[] {
  seq = 0;
  return [
    entry("user.message", { content: [{ type: "text", text: "fix the lock" }] }),
    entry("assistant.message", { content: [{ type: "thinking", thinking: "look first" }] }),
    entry("assistant.message", { content: [{ type: "tool_call", id: "c1", name: "Bash", input: { command: "git status" } }] }),
    entry("tool.started", { call_id: "c1", name: "Bash", input: {} }, "hidden"),
    entry("tool.completed", { call_id: "c1", output: "clean" }),
    entry("provider.notification", { provider: "anthropic", event: { type: "ping" } }, "hidden"),
    entry("assistant.message", {
      content: [{ type: "tool_call", id: "c2", name: "Edit", input: { file_path: "a.py", old_string: "x = 1\ny = 2\n", new_string: "x = 1\ny = 3\n" } }],
    }),
    entry("tool.completed", { call_id: "c2", output: "ok", is_error: false }),
    entry("assistant.message", { content: [{ type: "text", text: "Done." }], stop_reason: "end_turn" }),
    entry("user.message", { content: [{ type: "text", text: "thanks" }] }),
  ];
}

describe("buildUnits", () => {
  it("makes one card of an assistant turn: its thinking, tools and text inside", () => {
    const units = buildUnits(codingTurn());
    expect(units.map((u) => u.type)).toEqual(["user", "turn", "user"]);
    const t = turn(units[1]);
    expect(t.blocks.map((b) => b.type)).toEqual(["thinking", "tool", "tool", "text"]);
    expect(t.entries.map((e) => e.sequence)).toEqual([2, 3, 4, 5, 7, 8, 9]);
    const bash = t.blocks[1];
    if (bash.type !== "tool") throw new Error("not a tool");
    expect(bash.call.key).toBe("git status");
    expect(bash.call.result).toEqual({ entryId: "e5", text: "clean", isError: false });
    expect(bash.call.raw.map((e) => e.kind)).toEqual(["tool.started", "tool.completed"]);
  });

  it("leaves hidden entries out unless asked, and keeps them inside the turn when asked", () => {
    const hidden = buildUnits(codingTurn(), { ...DEFAULT_FILTERS, hidden: true });
    expect(hidden.map((u) => u.type)).toEqual(["user", "turn", "user"]);
    expect(turn(hidden[1]).blocks.map((b) => b.type)).toEqual(["thinking", "tool", "hidden", "tool", "text"]);
  });

  it("filters tools and thinking out of a turn", () => {
    const t = turn(buildUnits(codingTurn(), { tools: false, thinking: false, hidden: false })[1]);
    expect(t.blocks.map((b) => b.type)).toEqual(["text"]);
  });

  it("keeps the thinking of a hidden reasoning message, not its raw text", () => {
    seq = 0;
    const units = buildUnits([
      entry("user.message", { content: [{ type: "text", text: "q" }] }),
      entry("assistant.message", { content: [{ type: "text", text: "Thought for 4s" }] }, "hidden"),
      entry("assistant.message", { content: [{ type: "thinking", thinking: "step 1" }] }, "hidden"),
      entry("assistant.message", { content: [{ type: "text", text: "answer" }] }),
    ]);
    expect(turn(units[1]).blocks.map((b) => b.type)).toEqual(["thinking", "text"]);
  });

  it("draws a harness wrapper as a label, not as something the person said", () => {
    seq = 0;
    const units = buildUnits([entry("user.message", { content: [{ type: "text", text: "<command-name>/exit</command-name>" }] }, "context", { wrapper: "command /exit" })]);
    expect(units[0]).toMatchObject({ type: "wrapper", label: "command /exit: /exit" });
  });

  it("keeps a result without its call", () => {
    seq = 0;
    const units = buildUnits([entry("tool.completed", { call_id: "x", output: [{ type: "text", text: "out" }], is_error: true })]);
    const b = turn(units[0]).blocks[0];
    expect(b.type === "tool" && b.call.result?.isError).toBe(true);
  });

  it("ignores the provider and harness: only the content decides", () => {
    seq = 0;
    const a = buildUnits([entry("assistant.message", { content: [{ type: "text", text: "hi" }], provider: "anthropic", model: "m1", stop_reason: "end_turn", incomplete: false })]);
    seq = 0;
    const b = buildUnits([entry("assistant.message", { content: [{ type: "text", text: "hi" }], provider: "openai", model: "m2", stop_reason: "completed", incomplete: false })]);
    const strip = (u: Unit[]) => JSON.parse(JSON.stringify(u, (k, v) => (k === "entry" || k === "entries" ? undefined : v)));
    expect(strip(a)).toEqual(strip(b));
  });

  it("gives a turn its worst stream state and counts what an interrupted reply dropped", () => {
    seq = 0;
    const t = turn(
      buildUnits([
        entry("assistant.message", { content: [{ type: "text", text: "a" }] }),
        entry("assistant.message", { content: [{ type: "text", text: "par" }], incomplete: true, stop_reason: "interrupted", dropped: [{ type: "tool_call" }] }),
      ])[0],
    );
    expect(t.state).toBe("incomplete");
    expect(t.dropped).toBe(1);
  });

  it("marks the text block a stopped reply was cut off in", () => {
    seq = 0;
    const t = turn(buildUnits([entry("assistant.message", { content: [{ type: "text", text: "done" }, { type: "text", text: "half a sen" }], incomplete: true, stop_reason: "interrupted", partial: [1] })])[0]);
    expect(t.blocks.map((b) => b.type === "text" && b.partial)).toEqual([false, true]);
  });
});

describe("tool views", () => {
  it("names each harness's key argument", () => {
    expect(keyArgument({ command: "ls -la", description: "list" })).toBe("ls -la");
    expect(keyArgument({ path: "/src/main.ts" })).toBe("/src/main.ts");
    expect(keyArgument({ pattern: "TODO", output_mode: "files" })).toBe("TODO");
    expect(keyArgument({ command: ["bash", "-lc", "pytest -q"] })).toBe("pytest -q");
    expect(keyArgument({ todos: [{}, {}] })).toBe("2 items");
  });

  it("draws Edit, pi's edit, MultiEdit, Write and apply_patch as diffs", () => {
    expect(replacementDiff("a\nb\nc\n", "a\nB\nc\n")).toEqual([[" ", "a"], ["-", "b"], ["+", "B"], [" ", "c"]]);
    const pi = toolView("edit", { path: "x.ts", oldText: "old", newText: "new" });
    expect(pi).toEqual({ kind: "edit", files: [{ path: "x.ts", lines: [["-", "old"], ["+", "new"]] }] });
    const multi = toolView("MultiEdit", { file_path: "m.py", edits: [{ old_string: "a", new_string: "b" }, { old_string: "c", new_string: "d" }] });
    expect(multi.kind === "edit" && multi.files[0].lines.map((l) => l[0])).toEqual(["-", "+", "@", "-", "+"]);
    const write = toolView("Write", { file_path: "n.md", content: "one\ntwo\n" });
    expect(write.kind === "edit" && write.files[0].lines).toEqual([["+", "one"], ["+", "two"]]);
    const patch = "*** Begin Patch\n*** Update File: src/app.py\n@@ def main\n-print(1)\n+print(2)\n*** End Patch";
    expect(patchFiles(patch)).toEqual([{ path: "src/app.py", lines: [["@", "@@ def main"], ["-", "print(1)"], ["+", "print(2)"]] }]);
    expect(toolView("apply_patch", { input: patch }).kind).toBe("edit");
  });

  it("draws TodoWrite and update_plan as checklists, ExitPlanMode as a plan, Task as a worker task", () => {
    expect(toolView("TodoWrite", { todos: [{ content: "a", status: "completed" }, { content: "b", status: "in_progress" }] })).toEqual({
      kind: "todos",
      items: [
        { text: "a", status: "completed" },
        { text: "b", status: "in_progress" },
      ],
    });
    expect(toolView("update_plan", { plan: [{ step: "s", status: "pending" }] }).kind).toBe("todos");
    expect(toolView("ExitPlanMode", { plan: "## Plan" })).toEqual({ kind: "plan", markdown: "## Plan" });
    expect(toolView("Task", { description: "explore", prompt: "look around", subagent_type: "Explore" })).toEqual({
      kind: "task",
      description: "explore",
      agent: "Explore",
      prompt: "look around",
    });
  });
});

describe("streamState", () => {
  it("tells complete, incomplete and failed apart", () => {
    expect(streamState({ incomplete: false, stop_reason: "end_turn" })).toBe("complete");
    expect(streamState({ incomplete: true, stop_reason: "interrupted" })).toBe("incomplete");
    expect(streamState({ incomplete: true, stop_reason: "error" })).toBe("failed");
  });
});

describe("previewText and times", () => {
  it("gives one short line per entry", () => {
    expect(previewText("user.message", { content: [{ type: "text", text: "fix\n  the   lock" }] })).toBe("fix the lock");
    expect(previewText("assistant.message", { content: [{ type: "tool_call", name: "Bash", input: { command: "ls" } }] })).toBe("Bash ls");
    expect(previewText("user.message", { content: [{ type: "text", text: "x".repeat(200) }] }, 10)).toHaveLength(10);
  });

  it("says how long ago", () => {
    const now = Date.parse("2026-01-10T12:00:00Z");
    expect(relativeTime("2026-01-10T11:57:00Z", now)).toMatch(/3 minutes ago/);
    expect(relativeTime("2026-01-09T12:00:00Z", now)).toMatch(/yesterday|1 day ago/);
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
