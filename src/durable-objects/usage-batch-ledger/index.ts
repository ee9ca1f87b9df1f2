// The usage batch ledger's public door: the class (for wrangler) and its typed client.
export { ledgerShards, UsageBatchLedgerClient } from "./client";
export { UsageBatchLedger } from "./usage-batch-ledger";
