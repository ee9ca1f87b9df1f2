import { and, eq, gt, isNull, type SQL, sql } from "drizzle-orm";
import { type Product, proxyTests, subusers } from "../../db/schema";
import { pruneMadeBefore } from "../../db/statements";
import { DAY, now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { refusal, type TargetRules, targetRefusal } from "../../platform/gateway-rules";
import { isId, newId } from "../../platform/ids";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import { commitAudited } from "../audit/audit-log";
import type { DomainContext, Principal } from "../context";
import { type GatewayTarget, parseUsername } from "../gateway/username";
import { assertInScope, subusersReached } from "../scope";
import { probeFor } from "./gateway-probe";
import type { ProbeOutcome, ProbeProtocol } from "./probe";

/** Runs are kept this long so they can be compared (spec §4.10), then the cron deletes them. */
export const PROXY_TEST_KEPT_MS = DAY;
/** The gateway answers this host itself with the exit as JSON, using no credit (gateway/proxy-server.ts). */
export const DEFAULT_PROXY_TEST_TARGET = "http://echo.gateway.local/echo";
/** Mobile exits are slower: three times the timeout (spec §8.4 asks clients for at least 30 s). */
const MOBILE_TIMEOUT_FACTOR = 3;

export interface ProxyTestInput {
  username: string;
  password: string;
  protocol: ProbeProtocol;
  target?: string;
}

/** One stored run: what was asked (never the password) and what the gateway answered. */
export interface ProxyTestRecord {
  id: string;
  createdAt: number;
  username: string;
  protocol: ProbeProtocol;
  target: string;
  subuserId: string | null;
  /** The username's segments; null when the grammar refused it. */
  parsed: GatewayTarget | null;
  outcome: ProbeOutcome;
}

/** The gateway's 400 for a username it cannot parse: known before connecting, so nothing is sent. */
function grammarRefusal(errorCode: string): ProbeOutcome {
  return {
    status: 400,
    errorCode,
    serviceCode: null,
    retryAfterS: null,
    exit: null,
    targetStatus: null,
    latencyMs: { connect: null, tls: null, ttfb: null, total: 0 },
  };
}

/**
 * SOCKS5 has one reply for a target the gateway will not reach ("not allowed by ruleset"): when the sub-user's
 * target rules keep it from the target, the run says so by the rules' code, as the HTTP proxy's header does.
 */
function namedRuleRefusal(outcome: ProbeOutcome, rules: TargetRules | null, host: string): ProbeOutcome {
  if (outcome.errorCode !== "target-not-allowed" || !targetRefusal(rules, host)) return outcome;
  const { status, errorCode } = refusal("target-denied");
  return { ...outcome, status, errorCode };
}

/** A live sub-user of the caller's account by its gateway name; another account's or none is 404. */
async function subuserByName(ctx: DomainContext, principal: Principal, name: string) {
  const subuser = await ctx.db
    .select({ id: subusers.id, targetRules: subusers.targetRules })
    .from(subusers)
    .where(
      and(
        eq(subusers.name, name),
        eq(subusers.accountId, principal.accountId),
        isNull(subusers.deletedAt),
        subusersReached(principal, subusers.id),
      ),
    )
    .get();
  if (!subuser) throw new ApiError("subuser_not_found", "No sub-user of this account has the username's name.");
  return subuser;
}

/** Tests a gateway username and password against the gateway, as the account that owns the key; keeps the run. */
export async function runProxyTest(
  ctx: DomainContext,
  principal: Principal,
  input: ProxyTestInput,
): Promise<ProxyTestRecord> {
  const target = new URL(input.target ?? DEFAULT_PROXY_TEST_TARGET);
  const parsed = parseUsername(input.username, ctx.env.GATEWAY_USER_PREFIX);
  let subuserId: string | null = null;
  let outcome: ProbeOutcome;
  if (parsed.ok) {
    // The product first: a key outside it learns nothing, not even whether the name is a sub-user's.
    assertInScope(principal, [parsed.value.product]);
    const subuser = await subuserByName(ctx, principal, parsed.value.name);
    subuserId = subuser.id;
    const timeoutMs =
      Number(ctx.env.PROXY_TEST_TIMEOUT_MS) * (parsed.value.product === "mobile" ? MOBILE_TIMEOUT_FACTOR : 1);
    const answer = await probeFor(ctx, principal).run({ ...input, target, timeoutMs });
    outcome = namedRuleRefusal(answer, subuser.targetRules, target.hostname);
  } else {
    outcome = grammarRefusal(parsed.error);
  }

  const createdAt = now();
  const record: ProxyTestRecord = {
    id: newId("proxyTest", createdAt),
    createdAt,
    username: input.username,
    protocol: input.protocol,
    target: target.toString(),
    subuserId,
    parsed: parsed.ok ? parsed.value.target : null,
    outcome,
  };
  const row = {
    id: record.id,
    accountId: principal.accountId,
    result: record as unknown as Record<string, unknown>,
    createdAt,
  };
  await commitAudited(ctx, ctx.db.insert(proxyTests).values(row), {
    action: "proxy_test.created",
    accountId: principal.accountId,
    resourceId: record.id,
    products: parsed.ok ? [parsed.value.product] : null,
    after: { target: record.target, subuserId },
  });
  return record;
}

const kept = () => gt(proxyTests.createdAt, now() - PROXY_TEST_KEPT_MS);

/** The product a run tested, by its username's type; null when the grammar refused the username. */
const PRODUCT_OF_TYPE = { res: "residential", mob: "mobile" } as const satisfies Record<GatewayTarget["type"], Product>;

function productOf(record: ProxyTestRecord): Product | null {
  return record.parsed ? PRODUCT_OF_TYPE[record.parsed.type] : null;
}

/** Runs the key's product scope covers: those of its products, and those of no product (a refused username). */
function runsInScope(principal: Principal): SQL | undefined {
  if (principal.products === null) return undefined;
  const types = Object.entries(PRODUCT_OF_TYPE)
    .filter(([, product]) => principal.products?.includes(product))
    .map(([type]) => sql`${type}`);
  const type = sql`json_extract(${proxyTests.result}, '$.parsed.type')`;
  return types.length === 0 ? sql`${type} IS NULL` : sql`(${type} IS NULL OR ${type} IN (${sql.join(types, sql`, `)}))`;
}

/**
 * Runs a bound key sees: those of its sub-users (a username no sub-user has, or one the grammar refused, may name
 * another: it is not shown).
 */
function runsReached(principal: Principal): SQL | undefined {
  return subusersReached(principal, sql`json_extract(${proxyTests.result}, '$.subuserId')`);
}

/** The account's runs of the last 24 hours that the key's product scope covers (and binding reaches), newest first. */
export async function listProxyTests(
  ctx: DomainContext,
  principal: Principal,
  query: PageQuery,
): Promise<ProxyTestRecord[]> {
  const page = keysetPage(proxyTests.id, query);
  const rows = await ctx.db
    .select({ result: proxyTests.result })
    .from(proxyTests)
    .where(
      and(
        eq(proxyTests.accountId, principal.accountId),
        kept(),
        runsInScope(principal),
        runsReached(principal),
        page.where,
      ),
    )
    .orderBy(page.orderBy)
    .limit(page.limit);
  return rows.map((row) => row.result as unknown as ProxyTestRecord);
}

export async function findProxyTest(ctx: DomainContext, principal: Principal, id: string): Promise<ProxyTestRecord> {
  const row = isId("proxyTest", id)
    ? await ctx.db
        .select({ result: proxyTests.result })
        .from(proxyTests)
        .where(
          and(eq(proxyTests.id, id), eq(proxyTests.accountId, principal.accountId), kept(), runsReached(principal)),
        )
        .get()
    : undefined;
  if (!row) throw new ApiError("proxy_test_not_found");
  const record = row.result as unknown as ProxyTestRecord;
  const product = productOf(record);
  if (product) assertInScope(principal, [product]);
  return record;
}

/** Deletes runs older than 24 hours (reads already hide them). Returns how many went. */
export function pruneProxyTests(ctx: DomainContext, at: number): Promise<number> {
  return pruneMadeBefore(ctx.db, proxyTests, "proxyTest", at - PROXY_TEST_KEPT_MS);
}
