import createFetchClient, { type Client, type MaybeOptionalInit } from "openapi-fetch";
import type { HttpMethod, OkStatus, PathsWithMethod, RequiredKeysOf } from "openapi-typescript-helpers";
import { ApiError } from "./errors.js";
import { DEFAULT_RETRY_POLICY } from "./retry.js";
import type { paths } from "./schema.js";
import { authenticatedFetch, type Fetch, type RetryOptions } from "./transport.js";

export interface ClientOptions {
  /**
   * An API key from the dashboard (`live_…`), sent as `Authorization: Bearer <apiKey>`. Left out, the client is a
   * signed-in member's browser on the API's own pages: its session cookie goes with every call (same origin), or it
   * calls the operations that need no credential (sign-in, accepting an invitation, password resets).
   */
  apiKey?: string;
  /** With the session cookie: the session's CSRF token (from sign-in), sent in `X-CSRF-Token` on every change. */
  csrfToken?: string;
  /** The API's base URL with its version, e.g. `https://api.example.com/v1`. */
  baseUrl: string;
  /** The fetch to send requests with (default: the global `fetch`). */
  fetch?: Fetch;
  /** Retries of 429, 5xx and network failures; `{ maxAttempts: 1 }` turns them off. */
  retry?: Partial<RetryOptions>;
}

/** openapi-fetch's trailing `init` argument: required when the operation has required parameters or a body. */
type InitArgument<Init> =
  RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];

/** The JSON body of an operation's success (2xx) answers; `undefined` for an answer without one (204). */
type SuccessBody<Operation> = Operation extends { responses: infer Responses }
  ? {
      [Status in keyof Responses & OkStatus]: Responses[Status] extends {
        content: { "application/json": infer Body };
      }
        ? Body
        : undefined;
    }[keyof Responses & OkStatus]
  : never;

/** A call that resolves to the success body and throws `ApiError` for any other answer. */
export type Call<Method extends HttpMethod> = <
  Path extends PathsWithMethod<paths, Method>,
  Init extends MaybeOptionalInit<paths[Path], Method>,
>(
  path: Path,
  ...init: InitArgument<Init>
) => Promise<SuccessBody<paths[Path][Method]>>;

type PageOf<Path extends keyof paths> = paths[Path]["get"] extends {
  responses: { 200: { content: { "application/json": infer Page } } };
}
  ? Page
  : never;

/** The list operations: a GET answering `{data: [...], next_cursor}`. */
export type ListPath = {
  [Path in PathsWithMethod<paths, "get">]: PageOf<Path> extends { data: unknown[]; next_cursor: string | null }
    ? Path
    : never;
}[PathsWithMethod<paths, "get">];

export type ItemOf<Path extends ListPath> = PageOf<Path> extends { data: (infer Item)[] } ? Item : never;

export interface ProxyAccountClient {
  get: Call<"get">;
  post: Call<"post">;
  put: Call<"put">;
  patch: Call<"patch">;
  delete: Call<"delete">;
  /**
   * Every item of a list, page after page (`cursor` is followed for you; `limit` sets the page size):
   * `for await (const subuser of client.paginate("/subusers", { params: { query: { status: "active" } } }))`.
   */
  paginate<Path extends ListPath, Init extends MaybeOptionalInit<paths[Path], "get">>(
    path: Path,
    ...init: InitArgument<Init>
  ): AsyncGenerator<ItemOf<Path>, void, undefined>;
  /** The underlying openapi-fetch client (same auth, idempotency and retries), for `{data, error, response}`. */
  raw: Client<paths>;
}

export function createProxyAccountClient(options: ClientOptions): ProxyAccountClient {
  const retry: RetryOptions = { ...DEFAULT_RETRY_POLICY, sleep: wait, random: Math.random, ...options.retry };
  const send = options.fetch ?? ((request: Request) => fetch(request));
  const raw = createFetchClient<paths>({
    baseUrl: options.baseUrl,
    fetch: authenticatedFetch(options, send, retry),
  });
  const get = unwrapped<"get">(raw.GET);
  return {
    get,
    post: unwrapped<"post">(raw.POST),
    put: unwrapped<"put">(raw.PUT),
    patch: unwrapped<"patch">(raw.PATCH),
    delete: unwrapped<"delete">(raw.DELETE),
    paginate: (path, ...init) => pages(get, path, init[0]) as AsyncGenerator<never, void, undefined>,
    raw,
  };
}

type AnyCall = (path: any, init?: any) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

function unwrapped<Method extends HttpMethod>(call: AnyCall): Call<Method> {
  return (async (path: string, init?: object) => {
    const { data, error, response } = await call(path, init);
    if (!response.ok) throw new ApiError(response, error);
    return data;
  }) as Call<Method>;
}

interface ListInit {
  params?: { query?: Record<string, unknown> } & Record<string, unknown>;
  [key: string]: unknown;
}

async function* pages(get: Call<"get">, path: string, init: ListInit = {}): AsyncGenerator<unknown, void, undefined> {
  const list = get as unknown as (
    path: string,
    init: ListInit,
  ) => Promise<{ data: unknown[]; next_cursor: string | null }>;
  let cursor: string | null = null;
  do {
    const query = { ...init.params?.query, ...(cursor ? { cursor } : {}) };
    const page = await list(path, { ...init, params: { ...init.params, query } });
    yield* page.data;
    cursor = page.next_cursor;
  } while (cursor);
}

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
