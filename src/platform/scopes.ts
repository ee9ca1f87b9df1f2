import { type KeyAccess, type KeyArea, type KeyScopes, scopeAllows } from "../vocabulary";
import { ApiError } from "./errors";

/** 403 `insufficient_scope`, naming the scope needed, unless the key's scopes (null: a full key) allow it. */
export function assertScope(scopes: KeyScopes | null, area: KeyArea, access: KeyAccess): void {
  if (!scopeAllows(scopes, area, access)) {
    throw new ApiError("insufficient_scope", `This API key's scopes do not include ${area}:${access}.`);
  }
}
