import { describe, expect, it } from "vitest";
import { createAccount } from "../helpers/accounts";
import { ADMIN_TOKEN, call, GATEWAY_TOKEN, json } from "../helpers/http";

const BAD_BODIES: unknown[] = [{ unexpected: true }, [], "text", 42, null, { label: { nested: [1, 2] }, gb: "ten" }];

describe("bad input never yields a 500 (every documented operation)", () => {
  it("answers every operation, fed garbage, with a 4xx {code, message, request_id}", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const publicDocument = await json(await call("GET", "/v1/openapi.json"));
    const internalDocument = await json(await call("GET", "/internal/openapi.json", { token: ADMIN_TOKEN }));
    const operations = [
      ...Object.entries<Record<string, unknown>>(publicDocument.paths).map(
        ([path, ops]) => [`/v1${path}`, ops] as const,
      ),
      ...Object.entries<Record<string, unknown>>(internalDocument.paths).map(
        ([path, ops]) => [`/internal${path}`, ops] as const,
      ),
    ];
    const failures: string[] = [];
    let probed = 0;
    for (const [path, methods] of operations) {
      for (const method of Object.keys(methods)) {
        probed++;
        const token = path.startsWith("/internal/admin")
          ? ADMIN_TOKEN
          : path.startsWith("/internal/gateway")
            ? GATEWAY_TOKEN
            : account.token;
        const concrete = path.replace(/\{[^}]+\}/g, "x%20y").replace("{product}", "residential");
        const bodies = method === "get" || method === "delete" ? [undefined] : BAD_BODIES;
        if (method !== "get") {
          // Every router has the same JSON-body rule: another media type is 400 invalid_json, never a 500.
          const notJson = await call(method.toUpperCase(), concrete, {
            token,
            body: "label=x",
            headers: { "Content-Type": "application/x-www-form-urlencoded" },
          });
          if (notJson.status !== 400 || (await json(notJson)).code !== "invalid_json") {
            failures.push(`${method.toUpperCase()} ${path} form body → ${notJson.status}`);
          }
        }
        for (const body of bodies) {
          const response = await call(method.toUpperCase(), `${concrete}?limit=-1&cursor=%00&format=zip`, {
            token,
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          if (response.status >= 500)
            failures.push(`${method.toUpperCase()} ${path} ${JSON.stringify(body)} → ${response.status}`);
          if (response.status >= 400) {
            const error = await json(response);
            if (typeof error.code !== "string" || !String(error.request_id).startsWith("req_")) {
              failures.push(`${method.toUpperCase()} ${path}: not an error body`);
            }
          }
        }
      }
    }
    expect(failures).toEqual([]);
    // The sweep must actually have probed the API: every documented operation, public and internal.
    expect(probed).toBeGreaterThanOrEqual(53);
    // One request per documented operation: its time grows with the API, and with a busy machine.
  }, 20_000);
});
