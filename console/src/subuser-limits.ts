/** The limit fields of the sub-user forms (create and edit), and the limits they send. */
import type { Schemas } from "./api";
import * as field from "./components/fields";

/** The limits as typed: an empty one means the plan's limit (connections, requests) or no cap (traffic). */
export interface LimitValues {
  concurrent_max: string;
  rps_max: string;
  traffic_limit_gb: string;
}

type Limits = Pick<Schemas["SubuserUpdate"], "concurrent_max" | "rps_max" | "traffic_limit_gb">;

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
    traffic_limit_gb: field.number("Monthly traffic cap (GB)", {
      min: 0.001,
      step: "any",
      value: subuser?.traffic_limit_gb == null ? "" : String(subuser.traffic_limit_gb),
      hint: "Empty: no cap.",
    }),
  };
}

/** The limits to send: an empty one is left out, but an emptied cap is removed (`null`) when `editing`. */
export function limitChanges(values: LimitValues, editing: boolean): Limits {
  const cap = values.traffic_limit_gb === "" ? (editing ? null : undefined) : Number(values.traffic_limit_gb);
  return {
    ...(values.concurrent_max === "" ? {} : { concurrent_max: Number(values.concurrent_max) }),
    ...(values.rps_max === "" ? {} : { rps_max: Number(values.rps_max) }),
    ...(cap === undefined ? {} : { traffic_limit_gb: cap }),
  };
}
