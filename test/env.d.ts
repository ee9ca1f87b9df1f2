declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** A loopback HTTP target behind the proxy test's fake gateway (test/tools/fake-gateway.ts). */
    TEST_PROXY_TARGET: string;
  }
}

/** A file's text, imported with Vite's `?raw` (a built asset the test compares with what the worker serves). */
declare module "*?raw" {
  const text: string;
  export default text;
}
