import type { Product, WhitelistEntryRow } from "../../db/schema";
import type { Principal } from "../../env";
import { ApiError } from "../../platform/errors";
import type { DomainContext } from "../context";
import { syncGate } from "../subusers/gate-sync";
import { findSubuser } from "../subusers/subusers";
import { addWhitelistEntry, findWhitelistEntry, listWhitelistEntries, removeWhitelistEntry } from "./whitelists";

/** Sub-user whitelists: the shared whitelist store, scoped to a sub-user and one of its products. */
export async function whitelistSubuserIp(
  ctx: DomainContext,
  principal: Principal,
  input: { subuser: string; product: Product; ip: string; label?: string | null },
): Promise<WhitelistEntryRow> {
  const subuser = await findSubuser(ctx, principal, input.subuser);
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
  query: { subuser: string; cursor?: string; limit: number },
) {
  const subuser = await findSubuser(ctx, principal, query.subuser);
  return listWhitelistEntries(ctx, { accountId: principal.accountId, scope: "subuser", scopeId: subuser.id }, query);
}

export async function removeSubuserWhitelistEntry(ctx: DomainContext, principal: Principal, id: string) {
  const entry = await findWhitelistEntry(ctx, principal.accountId, "subuser", id);
  const subuser = await findSubuser(ctx, principal, entry.scopeId);
  await removeWhitelistEntry(ctx, entry);
  await syncGate(ctx, subuser.name);
  return entry;
}
