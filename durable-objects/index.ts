export { ApiKeyGuard } from "./api-key-guard";
export { ApiKeyGuardClient } from "./api-key-guard-client";
export { SubuserGate } from "./subuser-gate";
export { SubuserGateClient } from "./subuser-gate-client";
export { TrafficStore } from "./traffic-store";
export { TrafficStoreClient } from "./traffic-store-client";
