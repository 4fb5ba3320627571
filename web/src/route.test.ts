import { describe, expect, it } from "vitest";
import type { NodeJson } from "./api/types.gen";
import { formatRoute, parseRoute, type Route } from "./route";
import { byParent, foldHidden, newestTip, pathTo, tipsOf, versionsOf } from "./tree";

describe("routes", () => {
  it("round-trips every view through the address", () => {
    const routes: Route[] = [
      { view: "none" },
      { view: "chat", chat: "01abc" },
      { view: "at", chat: "01abc", entry: "01e/x" },
      { view: "compare", chat: "01abc", a: "1", b: "2" },
    ];
    for (const r of routes) expect(parseRoute(formatRoute(r))).toEqual(r);
    expect(parseRoute("#/chat/")).toEqual({ view: "none" });
    expect(parseRoute("")).toEqual({ view: "none" });
  });
});

function node(id: string, parent: string | null, sequence: number, kind = "user.message", hidden = false): NodeJson {
  return { id, parent_id: parent, sequence, kind, active: false, context_visibility: hidden ? "hidden" : "context" };
}

// a → n1 (hidden) → b → c ; b → d (an edit of c) ; a separate hidden chain h1 → h2
const nodes = [
  node("a", null, 1),
  node("n1", "a", 2, "provider.notification", true),
  node("b", "n1", 3, "assistant.message"),
  node("c", "b", 4),
  node("d", "b", 5),
  node("h1", null, 6, "provider.notification", true),
  node("h2", "h1", 7, "provider.notification", true),
];

describe("the tree", () => {
  it("folds hidden entries away, reparenting on the nearest shown ancestor", () => {
    const shown = foldHidden(nodes, false);
    expect(shown.map((n) => [n.id, n.parent_id])).toEqual([["a", null], ["b", "a"], ["c", "b"], ["d", "b"]]);
    expect(tipsOf(shown)).toEqual(["c", "d"]);
    expect(tipsOf(foldHidden(nodes, true))).toEqual(["c", "d", "h2"]);
  });

  it("finds the newest tip below an entry and the path to it", () => {
    expect(newestTip(nodes, "b")).toBe("d");
    expect(newestTip(nodes, "c")).toBe("c");
    expect(pathTo(nodes, "d")).toEqual(["a", "n1", "b", "d"]);
  });

  it("numbers a message's versions among its siblings of the same kind", () => {
    const shown = foldHidden(nodes, false);
    const byId = new Map(shown.map((n) => [n.id, n]));
    const kids = byParent(shown);
    expect(versionsOf(byId, kids, "d")).toEqual({ index: 1, count: 2, prev: "c", next: null });
    expect(versionsOf(byId, kids, "b")).toBeNull();
  });
});
