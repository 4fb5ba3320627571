// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TokenForm } from "./TokenForm";

afterEach(cleanup);

describe("TokenForm", () => {
  it("sends the trimmed token only once something is typed", () => {
    const onToken = vi.fn();
    render(<TokenForm refused={false} onToken={onToken} />);
    const connect = screen.getByRole("button", { name: "Connect" });
    expect(connect).toHaveProperty("disabled", true);
    expect(screen.queryByRole("alert")).toBeNull();
    fireEvent.change(screen.getByLabelText("Access token", { selector: "input" }), {
      target: { value: "  s3cret  " },
    });
    expect(connect).toHaveProperty("disabled", false);
    fireEvent.click(connect);
    expect(onToken).toHaveBeenCalledWith("s3cret");
  });

  it("says when the server refused the token it was given", () => {
    render(<TokenForm refused={true} onToken={() => {}} />);
    expect(screen.getByRole("alert").textContent).toBe("The server refused that token.");
    expect(screen.getByRole("form", { name: "This server needs an access token" })).toBeTruthy();
  });
});
