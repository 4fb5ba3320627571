// The view an address names, so Back/Forward, reloads and pasted URLs open the same view:
//   #/chat/ID                 the chat's active branch
//   #/chat/ID/at/ENTRY        the path through ENTRY, read-only, ENTRY marked
//   #/chat/ID/compare/A/B     the branches ending at A and B side by side
export type Route =
  | { view: "none" }
  | { view: "chat"; chat: string }
  | { view: "at"; chat: string; entry: string }
  | { view: "compare"; chat: string; a: string; b: string };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (parts[0] !== "chat" || !parts[1]) return { view: "none" };
  const chat = parts[1];
  if (parts[2] === "at" && parts[3]) return { view: "at", chat, entry: parts[3] };
  if (parts[2] === "compare" && parts[3] && parts[4]) return { view: "compare", chat, a: parts[3], b: parts[4] };
  return { view: "chat", chat };
}

export function formatRoute(r: Route): string {
  const e = encodeURIComponent;
  switch (r.view) {
    case "none":
      return "#/";
    case "chat":
      return `#/chat/${e(r.chat)}`;
    case "at":
      return `#/chat/${e(r.chat)}/at/${e(r.entry)}`;
    case "compare":
      return `#/chat/${e(r.chat)}/compare/${e(r.a)}/${e(r.b)}`;
  }
}

export function sameRoute(a: Route, b: Route): boolean {
  return formatRoute(a) === formatRoute(b);
}
