/** The limit fields of the sub-user forms (create and edit): limits, caps and expiry, and the changes they send. */
import type { Schemas } from "./api";
import * as field from "./components/fields";

/** The limits as typed: an empty one means the plan's limit (connections, requests), no cap or no expiry. */
export interface LimitValues {
  concurrent_max: string;
  rps_max: string;
  traffic_limit_gb: string;
  daily_limit_gb: string;
  lifetime_limit_gb: string;
  expires_on: string;
}

type Limits = Pick<
  Schemas["SubuserUpdate"],
  "concurrent_max" | "rps_max" | "traffic_limit_gb" | "daily_limit_gb" | "lifetime_limit_gb" | "expires_at"
>;

type CapName = "traffic_limit_gb" | "daily_limit_gb" | "lifetime_limit_gb";

function capField(label: string, cap: number | null | undefined, hint: string): field.Field<string> {
  return field.number(label, { min: 0.001, step: "any", value: cap == null ? "" : String(cap), hint });
}

export function limitFields(subuser?: Schemas["Subuser"]): field.Fields<LimitValues> {
  return {
    concurrent_max: field.number("Concurrent connections", {
      min: 1,
      max: 10000,
      value: String(subuser?.concurrent_max ?? ""),
      hint: "1-10,000, within the plan's limit. Empty: the plan's limit.",
    }),
    rps_max: field.number("Requests per second", {
      min: 1,
      max: 10000,
      value: String(subuser?.rps_max ?? ""),
      hint: "1-10,000. Empty: the plan's limit.",
    }),
    traffic_limit_gb: capField("Monthly traffic cap (GB)", subuser?.traffic_limit_gb, "Empty: no cap."),
    daily_limit_gb: capField("Daily traffic cap (GB)", subuser?.daily_limit_gb, "Resets at 00:00 UTC. Empty: no cap."),
    lifetime_limit_gb: capField(
      "Lifetime traffic cap (GB)",
      subuser?.lifetime_limit_gb,
      "Never resets: raise it to let the sub-user go on. Empty: no cap.",
    ),
    expires_on: field.text("Expires on", {
      type: "date",
      value: subuser?.expires_at ? subuser.expires_at.slice(0, 10) : "",
      hint: "At 00:00 UTC that day the gateway refuses it (403 subuser-expired). Empty: never.",
    }),
  };
}

/**
 * The limits to send: an empty one is left out, but when editing `original` an emptied cap or expiry is removed
 * (`null`), and an expiry left as it was is not sent (it may have passed: the API takes only future ones).
 */
export function limitChanges(values: LimitValues, original?: Schemas["Subuser"]): Limits {
  const emptied = original ? null : undefined;
  const cap = (name: CapName) => (values[name] === "" ? emptied : Number(values[name]));
  const caps = Object.fromEntries(
    (["traffic_limit_gb", "daily_limit_gb", "lifetime_limit_gb"] as const).flatMap((name) => {
      const value = cap(name);
      return value === undefined ? [] : [[name, value]];
    }),
  );
  const unchanged = original !== undefined && values.expires_on === (original.expires_at?.slice(0, 10) ?? "");
  const expiresAt = unchanged ? undefined : values.expires_on === "" ? emptied : `${values.expires_on}T00:00:00Z`;
  return {
    ...(values.concurrent_max === "" ? {} : { concurrent_max: Number(values.concurrent_max) }),
    ...(values.rps_max === "" ? {} : { rps_max: Number(values.rps_max) }),
    ...caps,
    ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
  };
}
