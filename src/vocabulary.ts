/**
 * The words every part of the product shares — the API's schemas, the domain, the database and the Durable
 * Objects: products, plans and the features plans unlock. A leaf module: it imports nothing, so anything may
 * import it.
 */

export const products = ["residential", "mobile", "isp"] as const;
export type Product = (typeof products)[number];

/** Products sold by the gigabyte: pools, bandwidth orders, subscriptions and sticky sessions. ISP is sold per IP. */
export const bandwidthProducts = ["residential", "mobile"] as const satisfies readonly Product[];
export type BandwidthProduct = (typeof bandwidthProducts)[number];

/** Plans in ascending order: "this plan or above" compares positions. */
export const plans = ["trial", "pay-as-you-go", "starter", "pro", "business", "enterprise"] as const;
export type Plan = (typeof plans)[number];

/** The lowest plan that has each gated feature. */
export const planGates = {
  reports: { minimum: "pro", name: "Reports" },
  webhooks: { minimum: "pay-as-you-go", name: "Webhooks" },
} as const satisfies Record<string, { minimum: Plan; name: string }>;
export type GatedFeature = keyof typeof planGates;

export function planAtLeast(plan: Plan, minimum: Plan): boolean {
  return plans.indexOf(plan) >= plans.indexOf(minimum);
}

/** Every plan that has `feature` (for queries over many accounts, e.g. the scheduled reports' cron). */
export function plansWith(feature: GatedFeature): Plan[] {
  return plans.filter((plan) => planAtLeast(plan, planGates[feature].minimum));
}

/**
 * The areas an API key's scopes name, each read or write (write includes read): account (profile, MFA), billing
 * (orders, quotes, balances, subscriptions), subusers (and their whitelists, the proxy test), isp, traffic
 * (sessions, analytics, the request log), reports, webhooks (endpoints, events), api_keys, members (the account's
 * people and their invitations).
 */
export const keyAreas = [
  "account",
  "billing",
  "subusers",
  "isp",
  "traffic",
  "reports",
  "webhooks",
  "api_keys",
  "members",
] as const;
export type KeyArea = (typeof keyAreas)[number];
export const keyAccesses = ["read", "write"] as const;
export type KeyAccess = (typeof keyAccesses)[number];
/** A key's scopes: the access it has per area; an area left out is not accessible. */
export type KeyScopes = Partial<Record<KeyArea, KeyAccess>>;

/** Whether `scopes` (null: a full key) allow `access` to `area`. */
export function scopeAllows(scopes: KeyScopes | null, area: KeyArea, access: KeyAccess): boolean {
  if (scopes === null) return true;
  const granted = scopes[area];
  return granted === "write" || (granted === "read" && access === "read");
}

/**
 * A member's role: one of the fixed grants below. A member's requests are authorized by the same scopes as a key's
 * (one guard decides both), so a role is a named set of scopes.
 */
export const memberRoles = ["owner", "admin", "billing", "developer", "viewer"] as const;
export type MemberRole = (typeof memberRoles)[number];

const everyArea = (access: KeyAccess): KeyScopes =>
  Object.fromEntries(keyAreas.map((area) => [area, access])) as KeyScopes;

/**
 * The scopes of each role (null: everything, like a full key). `admin`: everything but the account's money
 * (billing read only) and its people (members read only: an admin invites and removes people below admin, decided
 * by the member rules, not by a wider scope). `billing`: orders, balances, budget, subscriptions and the account's
 * invoices and profile. `developer`: sub-users, traffic and its own API keys. `viewer`: every area, read only.
 */
export const roleScopes: Record<MemberRole, KeyScopes | null> = {
  owner: null,
  admin: { ...everyArea("write"), billing: "read", members: "write" },
  billing: { billing: "write", account: "read" },
  developer: { subusers: "write", traffic: "write", api_keys: "write" },
  viewer: everyArea("read"),
};

/** Whether a role is at least as strong as another (owner > admin > the rest, which are side by side). */
export function roleRank(role: MemberRole): number {
  return role === "owner" ? 2 : role === "admin" ? 1 : 0;
}

/**
 * The areas an OAuth grant may cover (an AI assistant's connection to `/mcp`): every area but the ones that make
 * credentials or people (`api_keys`, `members`), which would outlive the grant's revocation.
 */
export const oauthAreas = keyAreas.filter((area) => area !== "api_keys" && area !== "members");
/** An OAuth scope: `area:access`, as the operations' `x-key-scope` names them. */
export const oauthScopes = oauthAreas.flatMap((area) => keyAccesses.map((access) => `${area}:${access}`));

/** The OAuth scopes `scopes` (null: everything) hold: `write` implies `read`. */
export function oauthScopesOf(scopes: KeyScopes | null): string[] {
  return oauthScopes.filter((scope) => {
    const [area, access] = scope.split(":") as [KeyArea, KeyAccess];
    return scopeAllows(scopes, area, access);
  });
}

/**
 * The key scopes of a list of OAuth scopes, within `ceiling` (null: no ceiling): a grant never reaches further than
 * the member's role has at the time of the call. Unknown scopes give nothing.
 */
export function grantedScopes(list: readonly string[], ceiling: KeyScopes | null): KeyScopes {
  const scopes: KeyScopes = {};
  for (const area of oauthAreas) {
    const access = list.includes(`${area}:write`) ? "write" : list.includes(`${area}:read`) ? "read" : null;
    if (access === "write" && scopeAllows(ceiling, area, "write")) scopes[area] = "write";
    else if (access && scopeAllows(ceiling, area, "read")) scopes[area] = "read";
  }
  return scopes;
}
