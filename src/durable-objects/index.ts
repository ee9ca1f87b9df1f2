// The Durable Object classes, for the worker's entry (src/index.ts) and wrangler.toml's bindings. Everything else
// imports an object's own door: `src/durable-objects/<object>` or its `contract`.
export { ApiKeyGuard } from "./api-key-guard";
export { GatewayHub } from "./gateway-hub";
export { RequestTail } from "./request-tail";
export { SubuserGate } from "./subuser-gate";
export { TrafficStore } from "./traffic-store";
export { UsageBatchLedger } from "./usage-batch-ledger";
