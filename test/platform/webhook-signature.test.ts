import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { isWebhookSecret, newWebhookSecret, webhookHeaders } from "../../src/platform/webhook-signature";

describe("Standard Webhooks signatures", () => {
  it("a signature verifies with the reference implementation (standardwebhooks)", async () => {
    const secret = newWebhookSecret();
    const body = JSON.stringify({ type: "webhook.test", data: { ok: true } });
    const headers = await webhookHeaders([secret], { id: "evt_1", timestamp: Date.now(), body });
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it("during a rotation both the old and the new secret verify the same delivery", async () => {
    const [previous, next] = [newWebhookSecret(), newWebhookSecret()];
    const body = "{}";
    const headers = await webhookHeaders([next, previous], { id: "msg_2", timestamp: Date.now(), body });
    expect(headers["webhook-signature"]?.split(" ")).toHaveLength(2);
    expect(new Webhook(previous).verify(body, headers)).toEqual({});
    expect(new Webhook(next).verify(body, headers)).toEqual({});
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
  });

  it("a tampered body fails verification", async () => {
    const secret = newWebhookSecret();
    const headers = await webhookHeaders([secret], { id: "msg_3", timestamp: Date.now(), body: '{"a":1}' });
    expect(() => new Webhook(secret).verify('{"a":2}', headers)).toThrow();
  });

  it("secrets are whsec_ + 24–64 bytes of base64", () => {
    expect(isWebhookSecret(newWebhookSecret())).toBe(true);
    expect(isWebhookSecret("whsec_short")).toBe(false);
    expect(isWebhookSecret("sk_abc")).toBe(false);
  });
});
