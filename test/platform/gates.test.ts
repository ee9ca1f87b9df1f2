import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { Plan } from "../../src/db/schema";
import type { Principal } from "../../src/domain/context";
import { assertPlanHas } from "../../src/domain/plans";
import type { AppEnv } from "../../src/env";
import { handleError } from "../../src/platform/error-handler";
import { planAtLeast, plansWith } from "../../src/vocabulary";

describe("plan gate", () => {
  it("orders plans trial < pay-as-you-go < starter < pro < business < enterprise", () => {
    expect(planAtLeast("pro", "pro")).toBe(true);
    expect(planAtLeast("enterprise", "pro")).toBe(true);
    expect(planAtLeast("starter", "pro")).toBe(false);
    expect(planAtLeast("pay-as-you-go", "starter")).toBe(false);
  });

  it("lists the plans that have a feature from its one gate (reports: Pro and above)", () => {
    expect(plansWith("reports")).toEqual(["pro", "business", "enterprise"]);
    expect(plansWith("webhooks")).not.toContain("trial");
  });

  it("answers 403 feature_not_in_plan below the minimum plan", async () => {
    const app = new Hono<AppEnv>();
    app.use("*", async (c, next) => {
      c.set("requestId", "req_test");
      await next();
    });
    app.get("/reports", (c) => {
      const principal: Principal = {
        keyId: "k",
        member: null,
        guardId: "k",
        accountId: "a",
        plan: c.req.query("plan") as Plan,
        products: null,
        scopes: null,
        subuserIds: null,
        keysOf: null,
        keyExpiresAt: null,
        tokenHash: "",
        tokenReplacedUntil: null,
        accountRevision: "r",
        livemode: true,
      };
      assertPlanHas(principal, "reports");
      return c.json({ ok: true });
    });
    app.onError(handleError);
    const denied = await app.request("/reports?plan=starter");
    expect(denied.status).toBe(403);
    expect(await denied.json()).toMatchObject({ code: "feature_not_in_plan", request_id: "req_test" });
    expect((await app.request("/reports?plan=pro")).status).toBe(200);
  });
});
