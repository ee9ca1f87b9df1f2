import { describe, expect, it } from "vitest";
import { createAccount } from "../helpers/accounts";
import { ADMIN_TOKEN, call, GATEWAY_TOKEN, json } from "../helpers/http";

const BAD_BODIES: unknown[] = [{ unexpected: true }, [], "text", 42, null, { label: { nested: [1, 2] }, gb: "ten" }];

describe("bad input never yields a 500 (every documented operation)", () => {
  it("answers every operation, fed garbage, with a 4xx {code, message, request_id}", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const document = await json(await call("GET", "/v1/openapi.json"));
    const failures: string[] = [];
    for (const [path, operations] of Object.entries<Record<string, unknown>>(document.paths)) {
      for (const method of Object.keys(operations)) {
        const token = path.startsWith("/internal/admin")
          ? ADMIN_TOKEN
          : path.startsWith("/internal/gateway")
            ? GATEWAY_TOKEN
            : account.token;
        const concrete = path.replace(/\{[^}]+\}/g, "x%20y").replace("{product}", "residential");
        const bodies = method === "get" || method === "delete" ? [undefined] : BAD_BODIES;
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
  });
});
