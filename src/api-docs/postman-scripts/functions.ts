/**
 * Functions the collection's scripts call. This code runs in Postman's sandbox, not in the Worker: a script that
 * calls one gets its definition as text (`./index.ts`), as the Worker's bundle holds it. Hence, inside a method:
 *
 * - only the sandbox (`pm`), the functions of this object (by name), the libraries of `./index.ts` and built-ins;
 *   nothing imported, since a bundler renames imported names;
 * - no named inner function (`const f = () => …`, `function f`): wrangler's esbuild wraps those in `__name(…)`,
 *   which the sandbox does not define;
 * - no `require`: the bundler would resolve it as one of its own;
 * - a local named like a top-level name elsewhere in the bundle comes out numbered (`shape2`): still correct, only
 *   less readable.
 */
import type { CryptoJs, Postman } from "./sandbox";

// What a script has besides these functions: declared here, defined by the sandbox or by `./index.ts`.
declare const pm: Postman;
declare function cryptoJs(): CryptoJs;
// `conform` calls itself: by its name in the script, which the bundle leaves alone since nothing here defines it.
declare function conform(value: unknown, shape: Shape, at: string, problems: string[]): string[];

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

export const SCRIPT_FUNCTIONS = {
  /** The value at a dotted path (`details.batch_id`, `data.0.id`); `undefined` past a missing step. */
  pick(value: unknown, path: string): unknown {
    return path
      .split(".")
      .reduce<unknown>(
        (found, key) => (found === null || found === undefined ? undefined : (found as Record<string, unknown>)[key]),
        value,
      );
  },

  /** The ways `value` departs from `shape`, added to `problems`, each named by its place (`body.data[0].id`). */
  conform(value: unknown, shape: Shape, at: string, problems: string[]): string[] {
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
  },

  /** RFC 6238 TOTP (HMAC-SHA1, 30 s steps, 6 digits) of a base32 secret. */
  totp(secret: string): string {
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
  },

  /**
   * With a sandbox key (the `livemode` getAccount remembered), buys 1 GB of residential bandwidth: simulated money.
   * What it returns is only for the variable it is stored in.
   */
  buyTestBandwidth(): string {
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
  },
};
