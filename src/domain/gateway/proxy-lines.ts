import { csvLine } from "../../platform/csv.ts";

/**
 * A proxy list's lines, in the forms proxy tools import: `txt` (`host:port:user:pass`), `url`
 * (`http://user:pass@host:port`, or `socks5://`: the gateway serves both on one port) and `csv` with a header row.
 * The API's lists and the console's generator write lines here only.
 */
export const proxyListFormats = ["txt", "url", "csv"] as const;
export type ProxyListFormat = (typeof proxyListFormats)[number];
export const proxyProtocols = ["http", "socks5"] as const;
export type ProxyProtocol = (typeof proxyProtocols)[number];

/**
 * Where a sub-user's password goes in a line: the API keeps only its hash, so its lists carry this and the caller
 * (or the console, which holds a password it was just shown) puts the password in. Never part of a username.
 */
export const PASSWORD_PLACEHOLDER = "PASSWORD";

/** What one line says: where the proxy listens and the credentials it takes. */
export interface ProxyLogin {
  host: string;
  port: number;
  username: string;
  password: string;
}

export interface ProxyEntry<Column extends string = never> extends ProxyLogin {
  /** The csv format's columns after `host,port,username,password`. */
  columns?: Record<Column, string | number | null>;
}

/** `host:port:user:pass`. */
export function txtLine(entry: ProxyLogin): string {
  return `${entry.host}:${entry.port}:${entry.username}:${entry.password}`;
}

/** `protocol://user:pass@host:port`, an IPv6 host in brackets. */
export function urlLine(entry: ProxyLogin, protocol: ProxyProtocol): string {
  const host = entry.host.includes(":") ? `[${entry.host}]` : entry.host;
  const credentials = `${encodeURIComponent(entry.username)}:${encodeURIComponent(entry.password)}`;
  return `${protocol}://${credentials}@${host}:${entry.port}`;
}

/** The whole list: a line per entry, each ending in a line break (CRLF in csv, RFC 4180). */
export function proxyListText<Column extends string>(
  entries: readonly ProxyEntry<Column>[],
  options: { format: ProxyListFormat; protocol: ProxyProtocol; columns: readonly Column[] },
): string {
  switch (options.format) {
    case "txt":
      return entries.map((entry) => `${txtLine(entry)}\n`).join("");
    case "url":
      return entries.map((entry) => `${urlLine(entry, options.protocol)}\n`).join("");
    case "csv": {
      const cells = (entry: ProxyEntry<Column>) =>
        options.columns.map((column) => String(entry.columns?.[column] ?? ""));
      const rows = entries.map((entry) =>
        csvLine([entry.host, String(entry.port), entry.username, entry.password, ...cells(entry)]),
      );
      return csvLine(["host", "port", "username", "password", ...options.columns]) + rows.join("");
    }
  }
}
