// @vitest-environment jsdom
import { cleanup, render } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { HIGHLIGHT_LIMIT, Md, highlighted } from "./Markdown";

afterEach(cleanup);

describe("Md", () => {
  it("highlights a fenced or indented code block, and leaves prose without the highlighter", () => {
    expect(highlighted("Run `make`, then read the log.")).toBe(false);
    expect(highlighted("before\n```python\nprint(1)\n```")).toBe(true);
    expect(highlighted("a list:\n\n    indented code")).toBe(true);
    expect(highlighted("```js\n" + "x;".repeat(HIGHLIGHT_LIMIT) + "\n```")).toBe(false);
    const { container } = render(<Md text={"```python\ndef f():\n    return 1\n```"} />);
    expect(container.querySelector("pre code.hljs .hljs-keyword")?.textContent).toBe("def");
    const plain = render(<Md text="Run `make` first" />);
    expect(plain.container.querySelector("code")?.textContent).toBe("make");
  });
});
