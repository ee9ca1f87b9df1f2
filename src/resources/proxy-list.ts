import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import {
  type ProxyEntry,
  type ProxyListFormat,
  type ProxyProtocol,
  proxyListFormats,
  proxyListText,
  proxyProtocols,
} from "../domain/gateway/proxy-lines";
import { lines } from "../platform/fields";

/** The lines a list may hold at most (sub-user lists: sticky sessions; batches: their IPs, 5,000 at most). */
export const MAX_PROXY_LIST_LINES = 10_000;

/** The query parameters every proxy list takes: how its lines are written. */
export const proxyListFormatQuery = {
  format: z
    .enum(proxyListFormats)
    .default("txt")
    .openapi({
      description:
        "`txt` (default): `host:port:username:password` per line. `url`: `http://username:password@host:port` per " +
        "line (`socks5://` with `protocol=socks5`). `csv`: a header row, then a row per line (RFC 4180, CRLF).",
    }),
  protocol: z
    .enum(proxyProtocols)
    .optional()
    .openapi({
      description:
        "With `format=url` only: the scheme of each line, `http` (default) or `socks5`. The gateway serves HTTP, " +
        "HTTPS (CONNECT) and SOCKS5 on one port, so `txt` and `csv` lines work with either.",
    }),
};

/** A `protocol` sent with another format than `url` is refused rather than ignored. */
export function protocolOnlyWithUrl(
  query: { format: ProxyListFormat; protocol?: ProxyProtocol },
  context: z.RefinementCtx,
) {
  if (query.protocol !== undefined && query.format !== "url") {
    context.addIssue({ code: "custom", path: ["protocol"], message: "only with format=url" });
  }
}

/** The 200 answer of a proxy list, as the document shows it: plain text (`txt`, `url`) or CSV. */
export function proxyListContent(description: string, examples: { txt: string; csv: string }) {
  const bytes = MAX_PROXY_LIST_LINES * 400;
  return {
    description,
    content: {
      "text/plain": { schema: lines(bytes).openapi({ example: examples.txt }) },
      "text/csv": { schema: lines(bytes, { crlf: true }).openapi({ example: examples.csv }) },
    },
  };
}

/** Sends `entries` as the list file `name` (without extension) in the asked format. */
export function sendProxyList<Column extends string>(
  c: Context,
  entries: readonly ProxyEntry<Column>[],
  options: { format: ProxyListFormat; protocol: ProxyProtocol | undefined; columns: readonly Column[]; name: string },
): Response {
  const { format, name } = options;
  const text = proxyListText(entries, { ...options, protocol: options.protocol ?? "http" });
  return c.body(text, 200, {
    "Content-Type": format === "csv" ? "text/csv; charset=utf-8" : "text/plain; charset=utf-8",
    "Content-Disposition": `attachment; filename="${name}.${format === "csv" ? "csv" : "txt"}"`,
  });
}
