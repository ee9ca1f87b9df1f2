// The traffic store's public door: the class (for wrangler), its typed client and the contract both sides use.

export { TrafficStoreClient } from "./client";
export * from "./contract";
export { TrafficStore } from "./traffic-store";
