import type { TestAccount } from "./accounts";
import { call, env, gateway, json } from "./http";

export interface TestSubuser {
  id: string;
  name: string;
  password: string;
  label: string;
  products: string[];
  status: string;
  concurrent_max: number;
  rps_max: number;
}

let counter = 0;

export async function createSubuser(
  account: TestAccount,
  body: {
    label?: string;
    products?: string[];
    concurrent_max?: number;
    rps_max?: number;
    traffic_limit_gb?: number | null;
    daily_limit_gb?: number | null;
    lifetime_limit_gb?: number | null;
    alert_on_new_source?: boolean;
    spike_sensitivity?: string;
    spike_action?: string;
  } = {},
): Promise<TestSubuser> {
  const response = await call("POST", "/v1/subusers", {
    token: account.token,
    body: { label: `sub-${++counter}`, products: ["residential"], ...body },
  });
  if (response.status !== 201) throw new Error(`sub-user creation failed: ${response.status} ${await response.text()}`);
  return json(response);
}

export function username(name: string, segments = "type-res-region-us"): string {
  return `user_${name}-${segments}`;
}

export async function authorize(body: {
  username: string;
  password?: string | null;
  source_ip?: string;
  product?: string;
}): Promise<Record<string, any>> {
  const response = await gateway("/authorize", { source_ip: "198.51.100.10", product: "residential", ...body });
  if (response.status !== 200) throw new Error(`authorize failed: ${response.status} ${await response.text()}`);
  return json(response);
}

/** The sub-user's gate (its Durable Object), to run its alarm or look inside. */
export function gateOf(subuser: { name: string }) {
  return env.SUBUSER_GATE.get(env.SUBUSER_GATE.idFromName(subuser.name));
}
