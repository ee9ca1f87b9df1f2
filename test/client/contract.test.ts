import { describe, expect, it } from "vitest";
import { contractFingerprint } from "../../clients/typescript/scripts/fingerprint";
import { CONTRACT_SHA256 } from "../../clients/typescript/src/schema";
import { call, json } from "../helpers/http";

describe("the typed client's generated contract", () => {
  it("was generated from the OpenAPI document the worker serves today (else: npm run client:generate)", async () => {
    const response = await call("GET", "/v1/openapi.json");
    expect(response.status).toBe(200);
    const served = await contractFingerprint(await json(response));
    expect(
      served,
      "clients/typescript/src/schema.ts is stale: run `npm ci --prefix clients/typescript && npm run client:generate`",
    ).toBe(CONTRACT_SHA256);
  });

  it("the fingerprint ignores the origin the document was served from, and sees any other change", async () => {
    const document = { openapi: "3.1.0", paths: { "/a": {} }, servers: [{ url: "https://one.test/v1" }] };
    const elsewhere = { ...document, servers: [{ url: "http://localhost:8787/v1" }] };
    const changed = { ...document, paths: { "/a": {}, "/b": {} } };
    expect(await contractFingerprint(elsewhere)).toBe(await contractFingerprint(document));
    expect(await contractFingerprint(changed)).not.toBe(await contractFingerprint(document));
  });
});
