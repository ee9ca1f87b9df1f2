import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { createAccount } from "../helpers/accounts";
import { BASE, env } from "../helpers/http";

describe("request log", () => {
  it("writes one JSON line per request with id, account, route, status and duration — never a secret", async () => {
    const account = await createAccount();
    const app = createApp();
    const lines: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((line: string) => lines.push(line));
    try {
      const response = await app.fetch(
        new Request(`${BASE}/v1/users/me?x=1`, { headers: { Authorization: `Bearer ${account.token}` } }),
        { ...env, LOG_REQUESTS: "true" },
        createExecutionContext(),
      );
      expect(response.status).toBe(200);
      expect(lines).toHaveLength(1);
      const entry = JSON.parse(lines[0]!);
      expect(entry).toMatchObject({
        event: "request",
        request_id: response.headers.get("X-Request-Id"),
        account_id: account.id,
        method: "GET",
        route: "/v1/users/me",
        status: 200,
      });
      expect(typeof entry.duration_ms).toBe("number");
      expect(lines[0]).not.toContain(account.token);
      expect(lines[0]).not.toMatch(/authorization/i);
    } finally {
      spy.mockRestore();
    }
  });
});
