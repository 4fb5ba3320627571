import { useState } from "react";

/** Shown when the server was started with --token and this tab lacks the right one. */
export function TokenForm({ refused, onToken }: { refused: boolean; onToken: (token: string) => void }) {
  const [token, setToken] = useState("");
  return (
    <main className="token-gate">
      <form
        aria-labelledby="token-title"
        onSubmit={(event) => {
          event.preventDefault();
          if (token.trim()) onToken(token.trim());
        }}
      >
        <h1 id="token-title">This server needs an access token</h1>
        <p>
          It was started with <code>forest serve --token</code> (or <code>FOREST_TOKEN</code>). Ask whoever runs it
          for the token; it is kept in this tab only.
        </p>
        {refused ? (
          <p role="alert" className="token-refused">
            The server refused that token.
          </p>
        ) : null}
        <label htmlFor="token-input">Access token</label>
        <input
          id="token-input"
          type="password"
          autoComplete="current-password"
          autoFocus
          value={token}
          onChange={(e) => setToken(e.target.value)}
        />
        <button type="submit" disabled={!token.trim()}>
          Connect
        </button>
      </form>
    </main>
  );
}
