export type UsernameError =
  | "bad-username"
  | "unknown-region"
  | "state-without-region"
  | "city-without-state"
  | "session-incomplete"
  | "sesstime-out-of-range";

export interface NodeTarget {
  type: "res" | "mob";
  region: string;
  state: string | null;
  city: string | null;
  asn: number | null;
  session_id: string | null;
  sesstime: number | null;
}

export const MAX_SESSTIME_MINUTES: { residential: 30; mobile: 60 };

export function parseUsername(
  username: string,
  prefix?: string,
):
  | { ok: true; value: { name: string; product: "residential" | "mobile"; target: NodeTarget } }
  | { ok: false; error: UsernameError };
