import { defineConfig } from "vitest/config";

// The bundle is shipped inside the Python package (served by `forest serve` at /).
// SF_UI_OUT lets the staleness test build into a temporary folder and compare.
export default defineConfig({
  esbuild: { jsx: "automatic" }, // React 17+ JSX, no plugin needed
  base: "./",
  build: {
    outDir: process.env.SF_UI_OUT ?? "../src/sessionforest/server/static",
    emptyOutDir: true,
    reportCompressedSize: false,
  },
  server: { proxy: { "/rpc": "http://127.0.0.1:8765", "/ws": { target: "ws://127.0.0.1:8765", ws: true } } },
  // testTimeout: a bound for a test that hangs, not a speed check: under the suite's
  // load (three pytest workers, real CLIs, Chromium) one jsdom render took over 5 s.
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.ts", "src/**/*.test.tsx"],
    testTimeout: 60_000,
  },
});
