import { describe, expect, it } from "vitest";
import type { Result } from "../api/client";
import { fallbackWords } from "./Sidebar";

function deep(fallback: string | null, detail: string | null): Result<"search/deep"> {
  return {
    query: "q",
    hits: [],
    confident: false,
    reason: "narrow-lead",
    detail: null,
    tier: "index",
    fallback,
    fallback_detail: detail,
    answer: null,
    lookups: 0,
    lookup_tokens: 0,
    usage: null,
    elapsed_ms: 1,
    model_ms: 0,
    prestarted: false,
  } as unknown as Result<"search/deep">;
}

describe("fallbackWords", () => {
  it("says a used-up quota as such, naming the provider's account", () => {
    const words = fallbackWords(deep("quota", "anthropic: quota used up: Error code: 429 - {...}"));
    expect(words).toBe("the Anthropic account's quota is used up");
    expect(fallbackWords(deep("quota", "openai: quota used up: 429"))).toContain("OpenAI account's quota");
  });
  it("tells a rate limit apart from a used-up quota", () => {
    expect(fallbackWords(deep("quota", "openai: rate limited: 429"))).toContain("rate-limited");
  });
  it("has words for every other fallback and none without one", () => {
    for (const reason of ["timeout", "lookup_budget", "token_budget", "invalid_answer", "provider_error"]) {
      const words = fallbackWords(deep(reason, "x"));
      expect(words.length).toBeGreaterThan(10);
      expect(words).not.toContain("_");
    }
    expect(fallbackWords(deep(null, null))).toBe("");
  });
});
