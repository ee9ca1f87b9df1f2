import { and, eq, type SQL, sql } from "drizzle-orm";
import { type WebhookEndpointRow, type WebhookEndpointStatus, webhookEndpoints } from "../../db/schema";
import { insertWhere } from "../../db/statements";
import { DAY, now } from "../../platform/clock";
import { seal, unseal } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { isId, newId } from "../../platform/ids";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import { newWebhookSecret } from "../../platform/webhook-signature";
import { type AuditAction, commitAudited } from "../audit/audit-log";
import type { DomainContext, Principal } from "../context";
import { assertPlanHas } from "../plans";
import { assertAccountWide } from "../scope";
import { checkWebhookUrl } from "./url-policy";

/** Endpoints per account (Stripe's bound too): each event costs one delivery per endpoint. */
export const MAX_ENDPOINTS_PER_ACCOUNT = 16;
/** After a rotation the previous secret keeps signing, beside the new one, this long. */
export const SECRET_OVERLAP_MS = DAY;

export interface NewEndpoint {
  url: string;
  events: string[];
  description?: string | null;
}

export interface EndpointPatch {
  url?: string;
  events?: string[];
  description?: string | null;
  status?: WebhookEndpointStatus;
}

/**
 * Webhooks are for every plan but `trial`, and for keys without a product scope: an endpoint receives the
 * events of every product of the account, which a scoped key may not see.
 */
export function assertWebhooksAllowed(principal: Principal): void {
  assertPlanHas(principal, "webhooks");
  assertAccountWideKey(principal);
}

/** Events span every product: a product-scoped key may not read or subscribe to them. */
export function assertAccountWideKey(principal: Principal): void {
  assertAccountWide(principal, "Events and webhooks cover every product of the account");
}

function allowedUrl(ctx: DomainContext, url: string): string {
  const verdict = checkWebhookUrl(url, { allowLocalHttp: ctx.env.WEBHOOK_ALLOW_LOCAL_HTTP === "true" });
  if (verdict.ok) return verdict.url;
  const message = `url: ${verdict.reason}.`;
  throw new ApiError("webhook_url_not_allowed", message, { details: [{ field: "url", message }] });
}

export async function createEndpoint(
  ctx: DomainContext,
  principal: Principal,
  input: NewEndpoint,
): Promise<{ endpoint: WebhookEndpointRow; secret: string }> {
  assertWebhooksAllowed(principal);
  const url = allowedUrl(ctx, input.url);
  const secret = newWebhookSecret();
  const at = now();
  const row: WebhookEndpointRow = {
    id: newId("webhookEndpoint", at),
    accountId: principal.accountId,
    url,
    description: input.description ?? null,
    events: input.events,
    status: "enabled",
    disabledReason: null,
    secretSealed: await seal(secret, ctx.env.SEALING_KEY),
    previousSecretSealed: null,
    previousSecretExpiresAt: null,
    createdAt: at,
    updatedAt: at,
  };
  // The bound is checked in the insert itself, so two concurrent creates cannot pass it together.
  const insert = insertWhere(
    ctx.db,
    webhookEndpoints,
    row,
    sql`(SELECT COUNT(*) FROM ${webhookEndpoints} WHERE account_id = ${row.accountId}) < ${MAX_ENDPOINTS_PER_ACCOUNT}`,
  ).returning();
  const [endpoint] = await commitAudited(ctx, insert, {
    ...endpointAudit(row, "webhook_endpoint.created"),
    after: row,
  });
  if (!endpoint) {
    const limit = MAX_ENDPOINTS_PER_ACCOUNT;
    throw new ApiError("webhook_endpoint_limit", undefined, {
      limit: { limit, current: limit, raisedBy: "nothing: delete an endpoint to make room" },
    });
  }
  return { endpoint, secret };
}

export async function listEndpoints(ctx: DomainContext, principal: Principal, query: PageQuery) {
  assertWebhooksAllowed(principal);
  const page = keysetPage(webhookEndpoints.id, query);
  return ctx.db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.accountId, principal.accountId), page.where))
    .orderBy(page.orderBy)
    .limit(page.limit);
}

/** An endpoint of the caller's account; unknown ids and other accounts' ids are both 404. */
export async function findEndpoint(ctx: DomainContext, principal: Principal, id: string): Promise<WebhookEndpointRow> {
  assertWebhooksAllowed(principal);
  const endpoint = isId("webhookEndpoint", id)
    ? await ctx.db
        .select()
        .from(webhookEndpoints)
        .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.accountId, principal.accountId)))
        .get()
    : undefined;
  if (!endpoint) throw new ApiError("webhook_endpoint_not_found");
  return endpoint;
}

function endpointAudit(endpoint: { id: string; accountId: string }, action: AuditAction) {
  return { action, accountId: endpoint.accountId, resourceId: endpoint.id };
}

async function updateRow(
  ctx: DomainContext,
  endpoint: WebhookEndpointRow,
  action: AuditAction,
  set: Partial<typeof webhookEndpoints.$inferInsert>,
): Promise<WebhookEndpointRow> {
  const [updated] = await commitAudited(
    ctx,
    ctx.db
      .update(webhookEndpoints)
      .set({ ...set, updatedAt: now() })
      .where(and(eq(webhookEndpoints.id, endpoint.id), eq(webhookEndpoints.accountId, endpoint.accountId)))
      .returning(),
    { ...endpointAudit(endpoint, action), before: endpoint, after: set },
  );
  if (!updated) throw new ApiError("webhook_endpoint_not_found");
  return updated;
}

export async function updateEndpoint(
  ctx: DomainContext,
  principal: Principal,
  id: string,
  patch: EndpointPatch,
): Promise<WebhookEndpointRow> {
  const endpoint = await findEndpoint(ctx, principal, id);
  const statusChange =
    patch.status === undefined || patch.status === endpoint.status
      ? {}
      : { status: patch.status, disabledReason: patch.status === "disabled" ? ("manual" as const) : null };
  return updateRow(ctx, endpoint, "webhook_endpoint.updated", {
    ...(patch.url === undefined ? {} : { url: allowedUrl(ctx, patch.url) }),
    ...(patch.events === undefined ? {} : { events: patch.events }),
    ...(patch.description === undefined ? {} : { description: patch.description }),
    ...statusChange,
  });
}

/** Deletes the endpoint and its delivery log (the foreign key cascades); queued attempts find nothing to send. */
export async function deleteEndpoint(ctx: DomainContext, principal: Principal, id: string): Promise<void> {
  const endpoint = await findEndpoint(ctx, principal, id);
  await commitAudited(
    ctx,
    ctx.db
      .delete(webhookEndpoints)
      .where(and(eq(webhookEndpoints.id, endpoint.id), eq(webhookEndpoints.accountId, principal.accountId))),
    { ...endpointAudit(endpoint, "webhook_endpoint.deleted"), before: endpoint },
  );
}

/** A new secret, shown once; the current one keeps signing beside it for 24 hours (a second rotation ends that). */
export async function rotateSecret(
  ctx: DomainContext,
  principal: Principal,
  id: string,
): Promise<{ endpoint: WebhookEndpointRow; secret: string }> {
  const endpoint = await findEndpoint(ctx, principal, id);
  const secret = newWebhookSecret();
  const updated = await updateRow(ctx, endpoint, "webhook_endpoint.secret_rotated", {
    secretSealed: await seal(secret, ctx.env.SEALING_KEY),
    previousSecretSealed: endpoint.secretSealed,
    previousSecretExpiresAt: now() + SECRET_OVERLAP_MS,
  });
  return { endpoint: updated, secret };
}

/** The secrets that sign a delivery at `at`: the current one, and the previous one during its overlap. */
export async function signingSecrets(ctx: DomainContext, endpoint: WebhookEndpointRow, at: number): Promise<string[]> {
  const sealed = [endpoint.secretSealed];
  if (endpoint.previousSecretSealed && (endpoint.previousSecretExpiresAt ?? 0) > at) {
    sealed.push(endpoint.previousSecretSealed);
  }
  return Promise.all(sealed.map((value) => unseal(value, ctx.env.SEALING_KEY)));
}

/** Disables an endpoint that is still enabled; true when this call disabled it (so the owner is told once). */
export async function disableEndpoint(
  ctx: DomainContext,
  endpointId: string,
  reason: "gone" | "failing",
): Promise<boolean> {
  const disabled = await ctx.db
    .update(webhookEndpoints)
    .set({ status: "disabled", disabledReason: reason, updatedAt: now() })
    .where(and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.status, "enabled")) as SQL)
    .returning({ id: webhookEndpoints.id });
  return disabled.length > 0;
}
