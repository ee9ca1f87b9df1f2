import { ApiError } from "../../platform/errors";
import type { PageQuery } from "../../platform/pagination";
import type { DomainContext, Principal } from "../context";
import { findBatch } from "../isp/batches";
import { addWhitelistEntry, findWhitelistEntry, listWhitelistEntries, removeWhitelistEntry } from "./store";

/** ISP batch whitelists: the shared whitelist store, scoped to a batch (product `isp`); applies to every IP of it. */
export async function whitelistBatchIp(
  ctx: DomainContext,
  principal: Principal,
  batchId: string,
  input: { ip: string; label?: string | null },
) {
  const batch = await findBatch(ctx, principal, batchId);
  if (batch.status === "released") throw new ApiError("batch_not_active", "The batch was released.");
  return addWhitelistEntry(
    ctx,
    { accountId: principal.accountId, scope: "batch", scopeId: batch.id, product: "isp" },
    input.ip,
    input.label ?? null,
  );
}

export async function listBatchWhitelist(ctx: DomainContext, principal: Principal, batchId: string, query: PageQuery) {
  const batch = await findBatch(ctx, principal, batchId);
  return listWhitelistEntries(ctx, { accountId: principal.accountId, scope: "batch", scopeId: batch.id }, query);
}

export async function removeBatchWhitelistEntry(
  ctx: DomainContext,
  principal: Principal,
  batchId: string,
  entryId: string,
) {
  const batch = await findBatch(ctx, principal, batchId);
  const entry = await findWhitelistEntry(ctx, principal.accountId, "batch", entryId);
  if (entry.scopeId !== batch.id) throw new ApiError("not_found", "No whitelist entry with this id exists.");
  await removeWhitelistEntry(ctx, entry);
  return entry;
}
