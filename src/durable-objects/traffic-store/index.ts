// The traffic store's public door: the class (for wrangler), its typed clients and the contract both sides use.

export { AccountTrafficStores } from "./account-stores";
export { TrafficStoreClient } from "./client";
export * from "./contract";
export { lessonOf } from "./spike-detector";
export { isShardCount, MAX_TRAFFIC_SHARDS, storeName, subuserShard } from "./store-shards";
export { TrafficStore } from "./traffic-store";
