export {
  type Call,
  type ClientOptions,
  createProxyAccountClient,
  type ItemOf,
  type ListPath,
  type ProxyAccountClient,
} from "./client.js";
export { ApiError, type ErrorCode, type FieldProblem } from "./errors.js";
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.js";
export type { components, operations, paths } from "./schema.js";
export type { Fetch, RetryOptions } from "./transport.js";
