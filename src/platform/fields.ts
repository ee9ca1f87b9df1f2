import { z } from "@hono/zod-openapi";
import { isWithinInstants } from "./clock";
import type { ErrorCode } from "./errors";
import { type IdKind, idPrefixes } from "./ids";
import { canonicalIp } from "./ip";

/** Free text: anything but control characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
export const NO_CONTROL_CHARACTERS = /^[^\x00-\x1F\x7F]*$/;
/** The characters of an IPv4 or IPv6 address (its shape only). */
const IP_TEXT = /^[0-9A-Fa-f:.]+$/;
/** The longest address text: IPv6 with a dotted IPv4 tail (`ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255`). */
export const IP_MAX_LENGTH = 45;

/**
 * The building blocks of every request and response schema. Each is bounded, as OWASP API4 (unrestricted
 * resource consumption) asks: strings have a maximum length and a pattern or format, integers a range and a
 * format, decimals the unit they are stored in. Request schemas enforce exactly what the document says.
 */

const INT32_MAX = 2_147_483_647;

function integerFormat(min: number, max: number): "int32" | "int64" {
  return min >= -INT32_MAX - 1 && max <= INT32_MAX ? "int32" : "int64";
}

export function integer(min: number, max: number) {
  return z
    .number()
    .int()
    .min(min)
    .max(max)
    .openapi({ format: integerFormat(min, max) });
}

/** An integer in a query string. */
export function queryInteger(min: number, max: number) {
  return z.coerce
    .number()
    .int()
    .min(min)
    .max(max)
    .openapi({ format: integerFormat(min, max) });
}

/**
 * An integer whose allowed range has its own error code in the catalogue (e.g. ISP quantity 5-5000 →
 * 422 `quantity_out_of_range`): a value outside it answers that code rather than `invalid_request`.
 */
export function rangedInteger(min: number, max: number, code: ErrorCode) {
  return z
    .number()
    .int()
    .min(-INT32_MAX - 1)
    .max(INT32_MAX)
    .refine((value) => value >= min && value <= max, { error: `must be ${min}-${max}`, params: { code } })
    .openapi({ minimum: min, maximum: max, format: "int32" });
}

/**
 * A decimal amount stored as a whole number of `unit`s (money in cents: 0.01; bandwidth in MB: 0.001 GB).
 * It must be exactly representable at that unit and at least `min`, so no amount ever rounds to nothing.
 */
export function decimal(options: { unit: number; min: number; max: number }) {
  const scale = Math.round(1 / options.unit);
  return z
    .number()
    .min(options.min)
    .max(options.max)
    .refine((value) => {
      const units = Math.round(value * scale);
      return Number.isSafeInteger(units) && units / scale === value;
    }, `must be a multiple of ${options.unit}`)
    .openapi({ multipleOf: options.unit });
}

/** A USD amount in a request: cents at most, positive unless `min` says otherwise. */
export function usd(max: number, min = 0.01) {
  return decimal({ unit: 0.01, min, max });
}

/** A USD amount in a response (two decimals). */
export function usdAmount() {
  return z.number().openapi({ multipleOf: 0.01 });
}

/** Free text: no control characters. */
export function text(max: number, min = 0) {
  return z.string().min(min).max(max).regex(NO_CONTROL_CHARACTERS, "must not contain control characters");
}

/** A multi-line text document (lines of text, no other control characters); `crlf`: lines may end in CRLF. */
export function lines(max: number, { crlf = false } = {}) {
  return z
    .string()
    .max(max)
    .regex(
      crlf
        ? // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
          /^[^\x00-\x09\x0B\x0C\x0E-\x1F\x7F]*$/
        : // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
          /^[^\x00-\x09\x0B-\x1F\x7F]*$/,
    );
}

/** A string matching `pattern`, at most `max` characters. */
export function token(pattern: RegExp, max: number, message = `must match ${pattern.source}`) {
  return z.string().max(max).regex(pattern, message);
}

/** A resource id in a response: the resource's prefix and a ULID. */
export function id(kind: IdKind) {
  const prefix = idPrefixes[kind];
  return token(new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`), prefix.length + 27).openapi({
    example: `${prefix}_01JD2W6Q6J5E4V3N0Z9Y8X7W6V`,
  });
}

/** An id given in a path or body. Malformed ids are answered like unknown ones (404), so only the shape is bounded. */
export function idParam(kind: IdKind) {
  return token(/^[A-Za-z0-9_-]+$/, 64, "must be an id").openapi({
    example: `${idPrefixes[kind]}_01JD2W6Q6J5E4V3N0Z9Y8X7W6V`,
  });
}

export function timestamp() {
  return z.iso.datetime().max(32);
}

/** An instant given as an RFC 3339 timestamp or a plain date (midnight UTC), as epoch ms. */
export function instant() {
  return token(
    /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/,
    40,
    "must be an RFC 3339 timestamp or a date (YYYY-MM-DD)",
  )
    .transform((value, context) => {
      const ms = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
      if (isWithinInstants(ms)) return ms;
      context.addIssue({ code: "custom", message: "is not a valid date between years 0000 and 9999 (UTC)" });
      return z.NEVER;
    })
    .openapi({ example: "2026-11-01T00:00:00Z" });
}

export function email() {
  return z.email().max(254);
}

export function countryCode() {
  return token(/^[A-Za-z]{2}$/, 2, "must be an ISO 3166-1 alpha-2 code").openapi({ example: "US" });
}

/** An IPv4 or IPv6 address as text, in a response: the shape only (what was stored was parsed on the way in). */
export function ipText() {
  return token(IP_TEXT, IP_MAX_LENGTH, "must be an IPv4 or IPv6 address");
}

/**
 * What the document says of an address a request takes: either format, as JSON Schema names them (typeless, so it
 * holds of a nullable field too). Not said of responses: a client generated from the document types such a field
 * `unknown`, where the one reading it wants `string`.
 */
const IP_FORMATS = { anyOf: [{ format: "ipv4" }, { format: "ipv6" }] };

/**
 * An IPv4 or IPv6 address in a request, parsed (`canonicalIp`) and handed on as its canonical text: IPv6 in RFC
 * 5952 form, an IPv4-mapped IPv6 address as the IPv4 one. Text of an address's characters that is none (`999.1.1.1`,
 * `....`) is refused like any other, so what is stored is always an address.
 */
export function ipAddress() {
  return ipText()
    .transform((value, context) => {
      const canonical = canonicalIp(value);
      if (canonical !== null) return canonical;
      context.addIssue({ code: "custom", message: "must be an IPv4 or IPv6 address" });
      return z.NEVER;
    })
    .openapi({ ...IP_FORMATS, example: "203.0.113.7" });
}

export function list<T extends z.ZodType>(item: T, max: number) {
  return z.array(item).max(max);
}
