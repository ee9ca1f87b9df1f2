/**
 * Functions the collection's scripts call, run in Postman's sandbox (newman runs the same), not in the Worker. The
 * collection's build compiles this file with esbuild (types stripped, nothing bundled or renamed) and adds to each
 * script the declarations of the functions it calls, and of those these call in turn. Hence:
 *
 * - every function is an exported top-level declaration (the build refuses anything else): one the scenario's
 *   `before` names takes no argument, and its result is the request-local variable's value;
 * - only the sandbox (`pm`), these functions (by name), built-ins and the sandbox's libraries (`require`) are used;
 *   nothing is imported but types.
 */
import type { CryptoJs, Postman } from "./sandbox";

declare const pm: Postman;

/** A compact form of a response schema for `conform`: types, enums, patterns, date-times, required properties. */
export interface Shape {
  t?: string[];
  e?: unknown[];
  x?: string;
  d?: true;
  r?: string[];
  p?: Record<string, Shape>;
  i?: Shape;
  all?: Shape[];
  any?: Shape[];
}

/** The value at a dotted path (`details.batch_id`, `data.0.id`); `undefined` past a missing step. */
export function pick(value: unknown, path: string): unknown {
  return path
    .split(".")
    .reduce<unknown>(
      (found, key) => (found === null || found === undefined ? undefined : (found as Record<string, unknown>)[key]),
      value,
    );
}

/** The ways `value` departs from `shape`, added to `problems`, each named by its place (`body.data[0].id`). */
export function conform(value: unknown, shape: Shape, at: string, problems: string[]): string[] {
  for (const part of shape.all ?? []) conform(value, part, at, problems);
  if (shape.any && !shape.any.some((candidate) => conform(value, candidate, at, []).length === 0)) {
    problems.push(`${at} matches no alternative`);
  }
  const type = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  if (shape.t && !shape.t.some((allowed) => allowed === type || (allowed === "integer" && Number.isInteger(value)))) {
    problems.push(`${at} is ${type}, not ${shape.t.join("|")}`);
  }
  if (shape.e && !shape.e.some((option) => option === value)) {
    problems.push(`${at} is ${JSON.stringify(value)}, not one of ${JSON.stringify(shape.e)}`);
  }
  if (shape.x && typeof value === "string" && !new RegExp(shape.x).test(value)) {
    problems.push(`${at} does not match ${shape.x}`);
  }
  if (shape.d && typeof value === "string" && Number.isNaN(Date.parse(value))) {
    problems.push(`${at} is not a date-time`);
  }
  if (type === "object") {
    const fields = value as Record<string, unknown>;
    for (const key of shape.r ?? []) {
      if (!(key in fields)) problems.push(`${at}.${key} is missing`);
    }
    for (const [key, fieldShape] of Object.entries(shape.p ?? {})) {
      if (key in fields) conform(fields[key], fieldShape, `${at}.${key}`, problems);
    }
  }
  if (type === "array" && shape.i) {
    for (const [position, item] of (value as unknown[]).entries())
      conform(item, shape.i, `${at}[${position}]`, problems);
  }
  return problems;
}

/** The sandbox's `crypto-js`. */
export function cryptoJs(): CryptoJs {
  return require("crypto-js") as CryptoJs;
}

/** RFC 6238 TOTP (HMAC-SHA1, 30 s steps, 6 digits) of a base32 secret. */
export function totp(secret: string): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const secretBits = [...secret.replace(/=+$/, "").toUpperCase()]
    .map((letter) => alphabet.indexOf(letter).toString(2).padStart(5, "0"))
    .join("");
  const key: number[] = [];
  for (let start = 0; start + 8 <= secretBits.length; start += 8) {
    key.push(parseInt(secretBits.slice(start, start + 8), 2));
  }
  const words: number[] = [];
  key.forEach((byte, byteIndex) => {
    words[byteIndex >>> 2] = (words[byteIndex >>> 2] ?? 0) | (byte << (24 - (byteIndex % 4) * 8));
  });
  const counter = Math.floor(Date.now() / 30000);
  const CryptoJS = cryptoJs();
  const digest = CryptoJS.HmacSHA1(
    CryptoJS.lib.WordArray.create([Math.floor(counter / 2 ** 32), counter >>> 0], 8),
    CryptoJS.lib.WordArray.create(words, key.length),
  ).toString();
  const offset = parseInt(digest.slice(-1), 16);
  return String((parseInt(digest.slice(offset * 2, offset * 2 + 8), 16) & 0x7fffffff) % 1000000).padStart(6, "0");
}

/** The current TOTP code of the MFA secret `enrollMfa` captured. */
export function mfaCode(): string {
  return totp(pm.collectionVariables.get("mfa_secret")!);
}

/** The time 24 hours ago, ISO 8601. */
export function dayAgo(): string {
  return new Date(Date.now() - 24 * 3600 * 1000).toISOString();
}

/** The time now, ISO 8601. */
export function rightNow(): string {
  return new Date().toISOString();
}

/** Today's date (UTC), `YYYY-MM-DD`. */
export function today(): string {
  return new Date().toISOString().slice(0, 10);
}

/** The `exp` of the report file's signed link that `getReportRun` captured. */
export function downloadLinkExp(): string {
  return linkParameter(pm.collectionVariables.get("download_url")!, "exp");
}

/** The `sig` of the same link. */
export function downloadLinkSig(): string {
  return linkParameter(pm.collectionVariables.get("download_url")!, "sig");
}

/** A query parameter of a URL, as it is written there. */
export function linkParameter(url: string, name: string): string {
  return new RegExp(`[?&]${name}=([^&]+)`).exec(url)?.[1] ?? "";
}

/**
 * With a sandbox key (the `livemode` getAccount remembered), buys 1 GB of residential bandwidth: simulated money.
 * What it returns is only for the variable it is stored in.
 */
export function buyTestBandwidth(): string {
  if (pm.collectionVariables.get("livemode") !== "false") return "not bought: a live key";
  pm.sendRequest(
    {
      url: pm.variables.replaceIn("{{baseUrl}}/orders"),
      method: "POST",
      header: {
        Authorization: `Bearer ${pm.variables.get("api_key")}`,
        "Content-Type": "application/json",
        "Idempotency-Key": pm.variables.replaceIn("{{$guid}}"),
      },
      body: { mode: "raw", raw: JSON.stringify({ product: "residential", gb: 1 }) },
    },
    (requestError, response) => {
      if (requestError || response.code !== 201) {
        throw new Error(`buying sandbox bandwidth failed: ${requestError || response.text()}`);
      }
    },
  );
  return "1 GB";
}
