// The API key guard's public door: the class (for wrangler), its typed client and the contract both sides use.
export { ApiKeyGuard } from "./api-key-guard";
export { ApiKeyGuardClient } from "./client";
export * from "./contract";
