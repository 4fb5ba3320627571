// The transcript contract, one for every harness: turns a path's entries into the units the
// transcript draws. Only the entries decide (kind, visibility, content blocks, tool names and
// inputs), never the harness or provider id: a user message is one card, an assistant turn
// (every assistant message, tool call and result until the next user message) is ONE card with
// its thinking, text and tools inside, a tool call carries its result and a view of its input
// (the key argument, an edit as a diff, a todo list as a checklist, a worker task), harness
// wrappers are labels, hidden entries are left out unless asked for, and an assistant message
// has exactly one of four stream states.
import { diffLines } from "diff";
import type { LogEntryJson } from "./api/types.gen";

const EDIT_BOUND = 500;

export type StreamState = "streaming" | "complete" | "incomplete" | "failed";

export interface ToolResult {
  entryId: string;
  text: string;
  isError: boolean;
}

export interface Todo {
  text: string;
  status: "pending" | "in_progress" | "completed";
}

/** One file's change: unified hunks as `[" " | "+" | "-", line]` rows. */
export interface FileDiff {
  path: string;
  lines: [string, string][];
}

export type ToolView =
  | { kind: "edit"; files: FileDiff[] }
  | { kind: "todos"; items: Todo[] }
  | { kind: "plan"; markdown: string }
  | { kind: "task"; description: string; agent: string | null; prompt: string }
  | { kind: "generic" };

export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
  /** The argument a reader needs to know what the call did: a command, a path, a pattern. */
  key: string | null;
  result: ToolResult | null;
  raw: LogEntryJson[];
  view: ToolView;
}

export type Block =
  | { type: "text"; text: string; entry: LogEntryJson; partial?: boolean }
  | { type: "thinking"; text: string; redacted: boolean; entry: LogEntryJson }
  | { type: "tool"; call: ToolCall; entry: LogEntryJson }
  | { type: "image"; media_type: string; entry: LogEntryJson }
  | { type: "hidden"; entry: LogEntryJson };

export type Unit =
  | { type: "user"; key: string; entry: LogEntryJson; entries: LogEntryJson[]; blocks: Block[] }
  | { type: "wrapper"; key: string; entry: LogEntryJson; entries: LogEntryJson[]; label: string; text: string }
  | {
      type: "turn";
      key: string;
      entry: LogEntryJson;
      entries: LogEntryJson[];
      blocks: Block[];
      state: StreamState;
      dropped: number;
    }
  | { type: "summary"; key: string; entry: LogEntryJson; entries: LogEntryJson[]; label: string; text: string }
  | { type: "checkpoint"; key: string; entry: LogEntryJson; entries: LogEntryJson[]; label: string; text: string }
  | { type: "system"; key: string; entry: LogEntryJson; entries: LogEntryJson[]; text: string }
  | { type: "hidden"; key: string; entry: LogEntryJson; entries: LogEntryJson[] };

/** What the reader asked to see: tool calls, thinking, hidden entries (raw records). */
export interface Filters {
  tools: boolean;
  thinking: boolean;
  hidden: boolean;
}

export const DEFAULT_FILTERS: Filters = { tools: true, thinking: true, hidden: false };

type Payload = Record<string, unknown>;

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b: Payload) => (b.type === "text" ? String(b.text) : b.type === "image" ? "[image]" : ""))
    .join("\n");
}

/** The entry's wrapper label when a harness (not the person) wrote this user message. The
 * server decides (`wrapper` on a log entry, from the one shared detection rule); the UI never
 * guesses from the text. */
export function wrapperOf(entry: LogEntryJson): string | null {
  const w = (entry as { wrapper?: unknown }).wrapper;
  return typeof w === "string" && w ? w : null;
}

/** A wrapper's label with what it carries, e.g. "command-name: /context". */
export function wrapperLabel(label: string, text: string): string {
  const line = text
    .replace(/<[^>]*>/g, " ")
    .split("\n")
    .map((l) => l.replace(/\s+/g, " ").trim())
    .find((l) => l);
  if (!line) return label;
  return `${label}: ${line.length > 60 ? `${line.slice(0, 59)}…` : line}`;
}

const str = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v : null);

/** The key argument of a tool call, by what its input holds (any harness's names). */
export function keyArgument(input: unknown): string | null {
  if (typeof input === "string") return str(input.split("\n")[0]);
  if (!input || typeof input !== "object") return null;
  const i = input as Payload;
  const command = i.command ?? i.cmd;
  if (Array.isArray(command)) {
    // codex-style argv: ["bash", "-lc", "the command"] reads as its last word
    const words = command.map(String);
    return words.length >= 3 && /^(ba|z)?sh$/.test(words[0]) && words[1].startsWith("-") ? words[2] : words.join(" ");
  }
  for (const k of [command, i.file_path, i.notebook_path, i.pattern, i.path, i.query, i.url, i.description, i.subject, i.skill]) {
    const s = str(k);
    if (s) return s;
  }
  if (Array.isArray(i.todos)) return `${i.todos.length} item${i.todos.length === 1 ? "" : "s"}`;
  // An unknown tool: its first short string argument.
  for (const v of Object.values(i)) {
    const s = str(v);
    if (s && s.length <= 120 && !s.includes("\n")) return s;
  }
  return null;
}

function lines(text: string): string[] {
  if (text === "") return [];
  const out = text.split("\n");
  if (out.length > 1 && out[out.length - 1] === "") out.pop();
  return out;
}

/** A replacement as diff rows (jsdiff's line diff; past EDIT_BOUND edits, where that turns
 * slow, the common head and tail as context and the rest as -/+). */
export function replacementDiff(oldText: string, newText: string): [string, string][] {
  const rows: [string, string][] = [];
  const changes = diffLines(oldText, newText, { maxEditLength: EDIT_BOUND });
  if (changes) {
    for (const c of changes) for (const l of lines(c.value)) rows.push([c.added ? "+" : c.removed ? "-" : " ", l]);
    return rows;
  }
  const a = lines(oldText);
  const c = lines(newText);
  let head = 0;
  while (head < a.length && head < c.length && a[head] === c[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < c.length - head && a[a.length - 1 - tail] === c[c.length - 1 - tail]) tail++;
  for (const l of a.slice(0, head)) rows.push([" ", l]);
  for (const l of a.slice(head, a.length - tail)) rows.push(["-", l]);
  for (const l of c.slice(head, c.length - tail)) rows.push(["+", l]);
  for (const l of a.slice(a.length - tail)) rows.push([" ", l]);
  return rows;
}

/** The files of an apply_patch body (`*** Update File: p` sections) or a unified diff. */
export function patchFiles(patch: string): FileDiff[] {
  const files: FileDiff[] = [];
  let file: FileDiff | null = null;
  for (const line of patch.split("\n")) {
    const section = /^\*\*\* (?:Update|Add|Delete) File: (.+)$/.exec(line) ?? /^\+\+\+ (?:b\/)?(.+)$/.exec(line);
    if (section) {
      file = { path: section[1].trim(), lines: [] };
      files.push(file);
      continue;
    }
    if (!file || /^(\*\*\* |--- |diff --git |index )/.test(line)) continue;
    if (line.startsWith("@@")) file.lines.push(["@", line]);
    else if (line.startsWith("+") || line.startsWith("-") || line.startsWith(" ")) file.lines.push([line[0], line.slice(1)]);
  }
  return files.filter((f) => f.lines.length > 0);
}

const TODO_STATES: Record<string, Todo["status"]> = {
  pending: "pending",
  in_progress: "in_progress",
  completed: "completed",
  done: "completed",
};

/** How a tool call is drawn, from its name and input (edits, todo lists, plans, worker tasks). */
export function toolView(name: string, input: unknown): ToolView {
  const n = name.toLowerCase();
  const i = (input && typeof input === "object" ? input : {}) as Payload;
  const path = str(i.file_path) ?? str(i.path) ?? "";
  if (typeof i.old_string === "string" && typeof i.new_string === "string")
    return { kind: "edit", files: [{ path, lines: replacementDiff(i.old_string, i.new_string) }] };
  if (typeof i.oldText === "string" && typeof i.newText === "string")
    return { kind: "edit", files: [{ path, lines: replacementDiff(i.oldText, i.newText) }] };
  if (Array.isArray(i.edits)) {
    const rows: [string, string][] = [];
    for (const e of i.edits as Payload[]) {
      const o = e.old_string ?? e.oldText;
      const w = e.new_string ?? e.newText;
      if (typeof o !== "string" || typeof w !== "string") continue;
      if (rows.length) rows.push(["@", "@@"]);
      rows.push(...replacementDiff(o, w));
    }
    if (rows.length) return { kind: "edit", files: [{ path, lines: rows }] };
  }
  const patch =
    n === "apply_patch"
      ? (str(i.input) ?? str(i.patch) ?? (typeof input === "string" ? input : null))
      : Array.isArray(i.command) && String(i.command[0]) === "apply_patch"
        ? String(i.command[1] ?? "")
        : null;
  if (patch) {
    const files = patchFiles(patch);
    if (files.length) return { kind: "edit", files };
  }
  if ((n === "write" || n === "create") && typeof i.content === "string" && path)
    return { kind: "edit", files: [{ path, lines: lines(i.content).map((l) => ["+", l]) }] };
  const list = Array.isArray(i.todos) ? i.todos : Array.isArray(i.plan) ? i.plan : null;
  if (list) {
    const items = (list as Payload[])
      .map((t) => ({
        text: String(t.content ?? t.step ?? t.text ?? ""),
        status: TODO_STATES[String(t.status)] ?? "pending",
      }))
      .filter((t) => t.text);
    return { kind: "todos", items };
  }
  if (typeof i.plan === "string") return { kind: "plan", markdown: i.plan };
  if (typeof i.prompt === "string" && (typeof i.subagent_type === "string" || n === "task" || n === "agent"))
    return { kind: "task", description: String(i.description ?? ""), agent: str(i.subagent_type), prompt: i.prompt };
  return { kind: "generic" };
}

function blocksOf(entry: LogEntryJson, filters: Filters, hiddenEntry: boolean): Block[] {
  const content = (entry.payload as Payload).content;
  if (!Array.isArray(content)) return [];
  const out: Block[] = [];
  // A stopped reply keeps the text block it was streaming, cut off: `partial` names it.
  const cut = new Set(Array.isArray((entry.payload as Payload).partial) ? ((entry.payload as Payload).partial as number[]) : []);
  (content as Payload[]).forEach((b, index) => {
    if (b.type === "text" && cut.has(index)) b = { ...b, partial: true };
    blockOf(b);
  });
  return out;
  function blockOf(b: Payload): void {
    if (b.type === "thinking" || b.type === "redacted_thinking") {
      if (!filters.thinking) return;
      const redacted = b.type === "redacted_thinking";
      out.push({ type: "thinking", text: redacted ? "" : String(b.thinking ?? ""), redacted, entry });
    } else if (hiddenEntry) {
      return; // a hidden message's text or calls are raw records: shown with the hidden ones
    } else if (b.type === "text") {
      if (String(b.text ?? "").trim()) out.push({ type: "text", text: String(b.text), entry, partial: b.partial === true });
    } else if (b.type === "image") out.push({ type: "image", media_type: String(b.media_type), entry });
    else if (b.type === "tool_call") {
      const name = String(b.name);
      const call: ToolCall = {
        id: String(b.id),
        name,
        input: b.input,
        key: keyArgument(b.input),
        result: null,
        raw: [],
        view: toolView(name, b.input),
      };
      out.push({ type: "tool", call, entry });
    }
  }
}

export function streamState(payload: Payload): StreamState {
  if (!payload.incomplete) return "complete";
  return payload.stop_reason === "error" ? "failed" : "incomplete";
}

const WORST: StreamState[] = ["complete", "incomplete", "failed", "streaming"];

type Turn = Extract<Unit, { type: "turn" }>;

/** The units of `entries` (a path, root first) for the reader's `filters`. */
export function buildUnits(entries: readonly LogEntryJson[], filters: Filters = DEFAULT_FILTERS): Unit[] {
  const units: Unit[] = [];
  let turn: Turn | null = null;
  let calls = new Map<string, ToolCall>();
  const end = () => {
    turn = null;
    calls = new Map();
  };
  const openTurn = (entry: LogEntryJson): Turn => {
    if (turn) {
      turn.entries.push(entry);
      return turn;
    }
    const t: Turn = { type: "turn", key: entry.id, entry, entries: [entry], blocks: [], state: "complete", dropped: 0 };
    units.push(t);
    turn = t;
    return t;
  };
  const push = (u: Unit) => {
    end();
    units.push(u);
  };
  for (const entry of entries) {
    const p = entry.payload as Payload;
    const hidden = entry.context_visibility === "hidden";
    const one = { key: entry.id, entry, entries: [entry] };
    switch (entry.kind) {
      case "user.message": {
        if (hidden && !filters.hidden) continue;
        const label = wrapperOf(entry);
        if (label) push({ type: "wrapper", ...one, label: wrapperLabel(label, textOf(p.content)), text: textOf(p.content) });
        else push({ type: "user", ...one, blocks: blocksOf(entry, filters, false) });
        break;
      }
      case "assistant.message": {
        const blocks = blocksOf(entry, filters, hidden);
        if (hidden && filters.hidden) blocks.push({ type: "hidden", entry });
        if (!blocks.length && hidden) continue;
        const t = openTurn(entry);
        for (const b of blocks) {
          if (b.type === "tool") calls.set(b.call.id, b.call);
          if (b.type !== "tool" || filters.tools) t.blocks.push(b);
        }
        if (!hidden) {
          const state = streamState(p);
          if (WORST.indexOf(state) > WORST.indexOf(t.state)) t.state = state;
          t.dropped += Array.isArray(p.dropped) ? p.dropped.length : 0;
        }
        break;
      }
      case "tool.completed": {
        const result = { entryId: entry.id, text: textOf(p.output), isError: Boolean(p.is_error) };
        const call = calls.get(String(p.call_id));
        const t = openTurn(entry);
        if (call && call.result === null) {
          call.result = result;
          call.raw.push(entry);
        } else if (filters.tools) {
          const name = String(p.name ?? "tool");
          const orphan: ToolCall = { id: String(p.call_id), name, input: null, key: null, result, raw: [entry], view: { kind: "generic" } };
          t.blocks.push({ type: "tool", call: orphan, entry });
        }
        break;
      }
      case "tool.started": {
        // The harness's own "tool started" record belongs to the call it announces.
        const call = calls.get(String(p.call_id));
        if (call) {
          call.raw.push(entry);
          if (turn) (turn as Turn).entries.push(entry);
        } else if (filters.hidden) openTurn(entry).blocks.push({ type: "hidden", entry });
        break;
      }
      case "compaction":
        push({ type: "summary", ...one, label: "Compaction summary", text: String(p.summary) });
        break;
      case "branch.summary":
        push({ type: "summary", ...one, label: "Branch summary", text: String(p.summary) });
        break;
      case "checkpoint":
        push({ type: "checkpoint", ...one, label: String(p.label), text: String(p.summary ?? "") });
        break;
      case "system.message":
        push({ type: "system", ...one, text: textOf(p.content) });
        break;
      case "worker.result":
        push({ type: "summary", ...one, label: `Worker ${String(p.status)}`, text: String(p.summary) });
        break;
      default:
        if (!filters.hidden) continue;
        // A raw record inside a turn stays in it (it does not split the turn).
        if (turn) (turn as Turn).blocks.push({ type: "hidden", entry }), (turn as Turn).entries.push(entry);
        else units.push({ type: "hidden", ...one });
    }
  }
  return units;
}

/** A short one-line text for an entry (forest nodes, tooltips, compare rows). */
export function previewText(kind: string, payload: unknown, max = 80): string {
  const p = (payload ?? {}) as Payload;
  let text = "";
  if (kind === "user.message" || kind === "assistant.message" || kind === "system.message") {
    text = textOf(p.content);
    if (!text.trim() && Array.isArray(p.content)) {
      const call = (p.content as Payload[]).find((b) => b.type === "tool_call");
      const think = (p.content as Payload[]).find((b) => b.type === "thinking");
      if (call) text = `${String(call.name)} ${keyArgument(call.input) ?? ""}`;
      else if (think) text = `(thinking) ${String(think.thinking ?? "")}`;
    }
  } else if (kind === "tool.completed") text = `→ ${textOf(p.output)}`;
  else if (kind === "checkpoint") text = `⚑ ${String(p.label ?? "")}`;
  else if (kind === "compaction" || kind === "branch.summary" || kind === "worker.result") text = String(p.summary ?? "");
  text = text.replace(/\s+/g, " ").trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Splits a snippet with `**word**` marks into plain and matched parts. */
export function markParts(snippet: string): { text: string; match: boolean }[] {
  return snippet
    .split("**")
    .map((text, i) => ({ text, match: i % 2 === 1 }))
    .filter((part) => part.text !== "");
}

const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
const ABSOLUTE = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const STEPS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["second", 60],
  ["minute", 60],
  ["hour", 24],
  ["day", 7],
  ["week", 4.35],
  ["month", 12],
  ["year", Infinity],
];

/** "3 minutes ago", "yesterday", "2 years ago" for `iso` seen at `now`. */
export function relativeTime(iso: string, now: number = Date.now()): string {
  let value = (new Date(iso).getTime() - now) / 1000;
  if (Number.isNaN(value)) return iso;
  for (const [unit, size] of STEPS) {
    if (Math.abs(value) < size) return RELATIVE.format(Math.round(value), unit);
    value /= size;
  }
  return iso;
}

export function absoluteTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : ABSOLUTE.format(d);
}
