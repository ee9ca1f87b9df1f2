import { z } from "@hono/zod-openapi";
import { products } from "../../db/schema";
import { IP_MAX_LENGTH, id, integer, ipAddress, NO_CONTROL_CHARACTERS, text, token } from "../../platform/fields";
import { canonicalIp } from "../../platform/ip";
import { OWNER_TAG, OWNER_TAG_LENGTH } from "../../platform/owner-tag";

/**
 * The gateway's usage report (docs/gateway.md): the exact field names the gateway is built against. Bytes are
 * counted as the gateway counts them; 1 GB = 10^9 bytes.
 */
export const MAX_RECORDS_PER_BATCH = 1000;
const MAX_BYTES = 1_000_000_000_000; // 1 TB for one request is far beyond any real one
const MAX_ASN = 4_294_967_295;
const REQUEST_ID = /^req_[0-9A-Za-z]{1,60}$/;
const METHOD = /^[A-Z][A-Z_-]{0,15}$/;
const EXIT_GEO = /^[a-z]{2}\/[a-z0-9]{0,3}\/[a-z0-9_-]{0,40}$/;
const TAG = /^[a-z0-9_-]{1,64}$/;
const ERROR_CODE = /^[a-z0-9_.-]{1,64}$/;
const SESSION = /^ses_[0-9A-HJKMNP-TV-Z]{26}$/;
const SUBUSER = /^sub_[0-9A-HJKMNP-TV-Z]{26}$/;
const ACCOUNT = /^usr_[0-9A-HJKMNP-TV-Z]{26}$/;

export const usageRecordSchema = z
  .strictObject({
    request_id: token(REQUEST_ID, 64).openapi({ description: "The gateway's request id." }),
    ts: z.iso
      .datetime({ offset: true })
      .max(40)
      .openapi({
        description:
          "When the request finished (RFC 3339, `Z` or an offset). Counted within 400 days before the batch first " +
          "arrived and 5 minutes after: a time outside is billed at the nearer end.",
      }),
    product: z.enum(products),
    username: text(512, 1).openapi({
      description: "The full gateway username (the session key); for ISP the `{prefix}_{name}` user.",
    }),
    dest_ip: ipAddress().nullable().openapi({ description: "ISP: the batch IP addressed." }),
    method: token(METHOD, 16),
    target_host: text(255, 1),
    status: integer(0, 999).openapi({ description: "HTTP status returned to the client." }),
    bytes_in: integer(0, MAX_BYTES).openapi({ description: "Bytes from the target.", format: "int64" }),
    bytes_out: integer(0, MAX_BYTES).openapi({ description: "Bytes sent to the target.", format: "int64" }),
    exit_ip: ipAddress(),
    exit_geo: token(EXIT_GEO, 48, "must be cc/state/city").openapi({
      example: "us/ca/la",
    }),
    exit_asn: integer(0, MAX_ASN),
    carrier_name: text(100).nullable().openapi({ description: "Mobile: the carrier." }),
    tag: token(TAG, 64).nullable().openapi({ description: "The client's tag header." }),
    error_code: token(ERROR_CODE, 64)
      .nullable()
      .openapi({ description: "Set when the proxy request failed (e.g. `rps-limit`, `upstream-timeout`): an error." }),
    repinned: z.boolean().openapi({ description: "The upstream IP of a sticky session was reassigned." }),
    client_ip: ipAddress()
      .nullable()
      .optional()
      .openapi({
        description:
          "The address that connected to the gateway (the sub-user's client). Optional: records without it (older " +
          "gateways) count everywhere but in the sub-user's client sources.",
      }),
    session: id("session")
      .nullable()
      .optional()
      .openapi({
        description:
          "A sticky session's request: the `session.id` the authorize decision gave it. Its usage is added to that " +
          "session in the account's store with no call to the sub-user's gate. Optional: a sticky record without it " +
          "(older gateways) is matched to its session by the gate, from the username and the time.",
      }),
    session_gen: integer(0, 2_147_483_647)
      .optional()
      .openapi({
        description:
          "A sticky request decided at the node: the generation of its username (the session key) that the " +
          "sub-user's snapshot gave. The account's store names the session from the key, the generation and the " +
          "first request's time.",
      }),
    subuser: id("subuser").optional().openapi({
      description: "The sub-user the node decided for (from its snapshot), with `account` and `owner_tag`.",
    }),
    account: id("account").optional().openapi({ description: "The sub-user's account (from the node's snapshot)." }),
    owner_tag: token(OWNER_TAG, OWNER_TAG_LENGTH)
      .optional()
      .openapi({
        description:
          "The snapshot's `owner_tag`: with `subuser` and `account`, the record's owner is taken from the record. " +
          "A record whose tag does not match is dropped; without all three, the owner is looked up.",
      }),
  })
  .openapi("UsageRecord");

export const usageBatchSchema = z
  .strictObject({
    batch_id: text(64, 1).openapi({ description: "The gateway's id of this batch: a retry sends the same one." }),
    records: z.array(usageRecordSchema).min(1).max(MAX_RECORDS_PER_BATCH),
  })
  .openapi("UsageBatch");

export type UsageRecord = z.infer<typeof usageRecordSchema>;
export type UsageBatch = z.infer<typeof usageBatchSchema>;

const RECORD_FIELDS = Object.keys(usageRecordSchema.shape).length;
/** The optional fields (absent in records of older gateways). */
const OPTIONAL_FIELDS = ["client_ip", "session", "session_gen", "subuser", "account", "owner_tag"];
/** RFC 3339 in UTC as the schema takes it (offsets are left to the schema); the calendar date is checked apart. */
const UTC_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?Z$/;

/**
 * The gateway's hot path: the batch when every record is plainly valid, else null — then `usageBatchSchema`
 * decides and names the problem. It accepts nothing the schema refuses and gives what the schema gives (a unit test
 * holds it to that): addresses are rewritten in place to their canonical text, as the schema's transform does. Zod
 * alone costs ~9 µs a record in workerd, this well under 1.
 */
export function plainlyValidBatch(body: unknown): UsageBatch | null {
  if (!isPlainObject(body) || Object.keys(body).length !== 2) return null;
  const { batch_id: batchId, records } = body;
  if (!isText(batchId, 1, 64) || !Array.isArray(records)) return null;
  if (records.length < 1 || records.length > MAX_RECORDS_PER_BATCH) return null;
  for (const record of records) if (!isPlainlyValidRecord(record)) return null;
  return body as UsageBatch;
}

function isPlainlyValidRecord(r: unknown): boolean {
  return (
    isPlainObject(r) &&
    Object.keys(r).length === RECORD_FIELDS - OPTIONAL_FIELDS.filter((field) => !(field in r)).length &&
    isToken(r.request_id, REQUEST_ID, 64) &&
    isUtcTimestamp(r.ts) &&
    (r.product === "residential" || r.product === "mobile" || r.product === "isp") &&
    isText(r.username, 1, 512) &&
    (r.dest_ip === null || isAddress(r, "dest_ip")) &&
    isToken(r.method, METHOD, 16) &&
    isText(r.target_host, 1, 255) &&
    isInteger(r.status, 999) &&
    isInteger(r.bytes_in, MAX_BYTES) &&
    isInteger(r.bytes_out, MAX_BYTES) &&
    isAddress(r, "exit_ip") &&
    isToken(r.exit_geo, EXIT_GEO, 48) &&
    isInteger(r.exit_asn, MAX_ASN) &&
    (r.carrier_name === null || isText(r.carrier_name, 0, 100)) &&
    (r.tag === null || isToken(r.tag, TAG, 64)) &&
    (r.error_code === null || isToken(r.error_code, ERROR_CODE, 64)) &&
    typeof r.repinned === "boolean" &&
    (r.client_ip === undefined || r.client_ip === null || isAddress(r, "client_ip")) &&
    (r.session === undefined || r.session === null || isToken(r.session, SESSION, 30)) &&
    (r.session_gen === undefined || isInteger(r.session_gen, 2_147_483_647)) &&
    (r.subuser === undefined || isToken(r.subuser, SUBUSER, 30)) &&
    (r.account === undefined || isToken(r.account, ACCOUNT, 30)) &&
    (r.owner_tag === undefined || isToken(r.owner_tag, OWNER_TAG, OWNER_TAG_LENGTH))
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isText(value: unknown, min: number, max: number): boolean {
  return typeof value === "string" && value.length >= min && value.length <= max && NO_CONTROL_CHARACTERS.test(value);
}

function isToken(value: unknown, pattern: RegExp, max: number): boolean {
  return typeof value === "string" && value.length <= max && pattern.test(value);
}

/** An address field, rewritten to its canonical text (a plain IPv4 address already is: nothing to write). */
function isAddress(record: Record<string, unknown>, field: "dest_ip" | "exit_ip" | "client_ip"): boolean {
  const value = record[field];
  if (typeof value !== "string" || value.length > IP_MAX_LENGTH) return false;
  const canonical = canonicalIp(value);
  if (canonical === null) return false;
  if (canonical !== value) record[field] = canonical;
  return true;
}

function isInteger(value: unknown, max: number): boolean {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= max;
}

/** Conservative: a year below 100 (which `Date.UTC` reads as 19xx) is left to the schema. */
function isUtcTimestamp(value: unknown): boolean {
  if (typeof value !== "string" || value.length > 32) return false;
  const match = UTC_TIMESTAMP.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 100 || month < 1 || month > 12) return false;
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
