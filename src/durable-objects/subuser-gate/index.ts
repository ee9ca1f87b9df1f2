// The sub-user gate's public door: the class (for wrangler), its typed client and the contract both sides use.

export { SubuserGateClient } from "./client";
export * from "./contract";
export { SubuserGate } from "./subuser-gate";
