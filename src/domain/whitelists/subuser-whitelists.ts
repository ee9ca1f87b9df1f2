import type { Product, WhitelistEntryRow } from "../../db/schema";
import { ApiError } from "../../platform/errors";
import type { PageQuery } from "../../platform/pagination";
import type { DomainContext, Principal } from "../context";
import { syncGate } from "../subusers/gate-sync";
import { findSubuser } from "../subusers/subusers";
import { addWhitelistEntry, findWhitelistEntry, listWhitelistEntries, removeWhitelistEntry } from "./store";

/** Sub-user whitelists: the shared whitelist store, scoped to a sub-user and one of its products. */
export async function whitelistSubuserIp(
  ctx: DomainContext,
  principal: Principal,
  input: { subuserId: string; product: Product; ip: string; label?: string | null },
): Promise<WhitelistEntryRow> {
  const subuser = await findSubuser(ctx, principal, input.subuserId);
  if (!subuser.products.includes(input.product)) {
    const message = `product: the sub-user has no ${input.product} access (its products: ${subuser.products.join(", ")}).`;
    throw new ApiError("invalid_request", message, { details: [{ field: "product", message }] });
  }
  const entry = await addWhitelistEntry(
    ctx,
    { accountId: principal.accountId, scope: "subuser", scopeId: subuser.id, product: input.product },
    input.ip,
    input.label ?? null,
  );
  await syncGate(ctx, subuser.name);
  return entry;
}

export async function listSubuserWhitelist(
  ctx: DomainContext,
  principal: Principal,
  query: PageQuery & { subuserId: string },
) {
  const subuser = await findSubuser(ctx, principal, query.subuserId);
  return listWhitelistEntries(ctx, { accountId: principal.accountId, scope: "subuser", scopeId: subuser.id }, query);
}

export async function removeSubuserWhitelistEntry(ctx: DomainContext, principal: Principal, id: string) {
  const entry = await findWhitelistEntry(ctx, principal.accountId, "subuser", id, principal.subuserIds);
  const subuser = await findSubuser(ctx, principal, entry.scopeId);
  await removeWhitelistEntry(ctx, entry);
  await syncGate(ctx, subuser.name);
  return entry;
}
