import { afterEach, describe, expect, it, vi } from "vitest";
import { ArrivalRows } from "../../src/durable-objects/traffic-store/arrival-rows";
import { createAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";
import { createSubuser, username } from "../helpers/subusers";
import { holdUsageMessages, reportUsage, settleUsage, traffic, usageRecord } from "../helpers/usage";

const HOUR = 3_600_000;
/** The hour up to now (and the minute after). */
const window = (at = Date.now()) =>
  `from=${new Date(at - HOUR).toISOString()}&to=${new Date(at + 60_000).toISOString()}`;

describe("a traffic store's change that fails", () => {
  afterEach(() => vi.restoreAllMocks());

  it("a store whose write fails half-way through an ingest (a row past SQLite's limit) keeps nothing of it: the redelivery counts each record once", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const { sent, deliver } = holdUsageMessages();
    const first = Array.from({ length: 3 }, () => usageRecord(username(subuser.name), { bytes_in: 100_000_000 }));
    expect((await reportUsage(first)).status).toBe(202);
    expect((await deliver()).retryMessages).toHaveLength(0);
    sent.length = 0;
    const second = Array.from({ length: 5 }, () => usageRecord(username(subuser.name), { bytes_in: 200_000_000 }));
    expect((await reportUsage(second)).status).toBe(202);
    // The store has applied the parts in memory (open row, meter, request log) when its row's write is refused.
    vi.spyOn(ArrivalRows.prototype, "write").mockImplementationOnce(() => {
      throw new Error("string or blob too big: SQLITE_TOOBIG");
    });
    expect((await deliver()).retryMessages).toHaveLength(1);
    vi.restoreAllMocks();
    expect((await deliver()).retryMessages).toHaveLength(0);
    expect((await traffic(account, "residential", window())).rows[0]).toMatchObject({ requests: 8 });
    await settleUsage(account);
    const balance = await json(await call("GET", "/v1/residential/balance", { token: account.token }));
    expect(balance.gb_used).toBe(1.300_000_8);
  });
});
