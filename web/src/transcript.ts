// The transcript contract, one for every harness: turns the active path's entries into the
// units the transcript draws. The harness and provider never change the result: a tool call
// is grouped with its result, thinking is its own block, hidden entries stay (collapsed), and
// an assistant message has exactly one of four stream states.
import type { LogEntryJson } from "./api/types.gen";

export type StreamState = "streaming" | "complete" | "incomplete" | "failed";

export type Block =
  | { type: "text"; text: string }
  | { type: "thinking"; text: string; redacted: boolean }
  | { type: "tool"; id: string; name: string; input: unknown; result: ToolResult | null; raw: LogEntryJson[] }
  | { type: "image"; media_type: string };

export interface ToolResult {
  entryId: string;
  text: string;
  isError: boolean;
}

export type Unit =
  | { type: "user"; entry: LogEntryJson; blocks: Block[] }
  | { type: "assistant"; entry: LogEntryJson; blocks: Block[]; state: StreamState; dropped: number }
  | { type: "tool"; entry: LogEntryJson; block: Block }
  | { type: "summary"; entry: LogEntryJson; label: string; text: string }
  | { type: "checkpoint"; entry: LogEntryJson; label: string; text: string }
  | { type: "system"; entry: LogEntryJson; text: string }
  | { type: "hidden"; entry: LogEntryJson };

type Payload = Record<string, unknown>;

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b: Payload) => (b.type === "text" ? String(b.text) : b.type === "image" ? "[image]" : ""))
    .join("\n");
}

function blocksOf(content: unknown): Block[] {
  if (!Array.isArray(content)) return [];
  const out: Block[] = [];
  for (const b of content as Payload[]) {
    if (b.type === "text") out.push({ type: "text", text: String(b.text) });
    else if (b.type === "thinking") out.push({ type: "thinking", text: String(b.thinking), redacted: false });
    else if (b.type === "redacted_thinking") out.push({ type: "thinking", text: "", redacted: true });
    else if (b.type === "image") out.push({ type: "image", media_type: String(b.media_type) });
    else if (b.type === "tool_call")
      out.push({ type: "tool", id: String(b.id), name: String(b.name), input: b.input, result: null, raw: [] });
  }
  return out;
}

export function streamState(payload: Payload): StreamState {
  if (!payload.incomplete) return "complete";
  return payload.stop_reason === "error" ? "failed" : "incomplete";
}

export function buildUnits(entries: readonly LogEntryJson[]): Unit[] {
  const units: Unit[] = [];
  const openCalls = new Map<string, Extract<Block, { type: "tool" }>>();
  for (const entry of entries) {
    const p = entry.payload as Payload;
    switch (entry.kind) {
      case "user.message":
        units.push({ type: "user", entry, blocks: blocksOf(p.content) });
        break;
      case "assistant.message": {
        const blocks = blocksOf(p.content);
        for (const b of blocks) if (b.type === "tool") openCalls.set(b.id, b);
        const dropped = Array.isArray(p.dropped) ? p.dropped.length : 0;
        units.push({ type: "assistant", entry, blocks, state: streamState(p), dropped });
        break;
      }
      case "tool.completed": {
        const result = {
          entryId: entry.id,
          text: textOf(p.output),
          isError: Boolean(p.is_error),
        };
        const call = openCalls.get(String(p.call_id));
        if (call && call.result === null) {
          call.result = result;
          call.raw.push(entry);
        }
        else
          units.push({
            type: "tool",
            entry,
            block: { type: "tool", id: String(p.call_id), name: String(p.name ?? "tool"), input: null, result, raw: [entry] },
          });
        break;
      }
      case "tool.started": {
        // The harness's own "tool started" record belongs to the call it announces.
        const call = openCalls.get(String(p.call_id));
        if (call) call.raw.push(entry);
        else units.push({ type: "hidden", entry });
        break;
      }
      case "compaction":
        units.push({ type: "summary", entry, label: "Compaction summary", text: String(p.summary) });
        break;
      case "branch.summary":
        units.push({ type: "summary", entry, label: "Branch summary", text: String(p.summary) });
        break;
      case "checkpoint":
        units.push({ type: "checkpoint", entry, label: String(p.label), text: String(p.summary ?? "") });
        break;
      case "system.message":
        units.push({ type: "system", entry, text: textOf(p.content) });
        break;
      case "worker.result":
        units.push({ type: "summary", entry, label: `Worker ${String(p.status)}`, text: String(p.summary) });
        break;
      default:
        units.push({ type: "hidden", entry });
    }
  }
  return units;
}

/** Splits a snippet with `**word**` marks into plain and matched parts. */
export function markParts(snippet: string): { text: string; match: boolean }[] {
  return snippet
    .split("**")
    .map((text, i) => ({ text, match: i % 2 === 1 }))
    .filter((part) => part.text !== "");
}
