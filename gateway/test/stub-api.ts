// A stand-in for the API's side of the node contract, in memory: sub-users' snapshots, a gate that hands out
// shares (a single node's: what it wants, up to the limit), and the calls made. There is no sessions call: a node
// decides sticky sessions itself.
import type { ApiClient } from "../api-client.ts";
import { sha256Hex } from "../credentials.ts";
import type { LeaseRenewal, LeasesAnswer, SubuserSnapshot, SubusersAnswer } from "../wire.ts";

/** An owner tag of the right form (the stub signs nothing). */
export const OWNER_TAG = "AAAAAAAAAAAAAAAAAAAAAA";

export function snapshotOf(name: string, overrides: Partial<SubuserSnapshot> = {}): SubuserSnapshot {
  return {
    name,
    subuser: `sub_${name}`,
    account: "usr_01JAAAAAAAAAAAAAAAAAAAAAAA",
    owner_tag: null,
    generations: {},
    version: 1,
    status: "active",
    products: ["residential", "mobile"],
    passwords: [{ sha256: sha256Hex("secret"), until: null }],
    whitelist: [],
    limits: { residential: { concurrent: null, rps: null }, mobile: { concurrent: null, rps: null } },
    exhausted: { residential: false, mobile: false },
    cap: { month: new Date().toISOString().slice(0, 7), reached: false },
    day_cap: { day: new Date().toISOString().slice(0, 10), reached: false },
    lifetime_cap_reached: false,
    expires_at: null,
    target_rules: null,
    standing: [],
    ...overrides,
  };
}

/** The calls a node decider makes, and what tests steer: the snapshots, the API being down, the gate's versions. */
export interface StubApi extends Pick<ApiClient, "subusers" | "leases" | "changes" | "authorize" | "release"> {
  snapshots: Map<string, SubuserSnapshot>;
  calls: {
    subusers: string[][];
    leases: LeaseRenewal[][];
  };
  /** While set, every call fails as if the API were down. */
  down: boolean;
  /** The gate's version, when it should differ from the snapshot's (a missed push). */
  gateVersion: Map<string, number>;
  add(snapshot: SubuserSnapshot): SubuserSnapshot;
}

export function stubApi({ now = Date.now }: { now?: () => number } = {}): StubApi {
  const api: StubApi = {
    snapshots: new Map(),
    calls: { subusers: [], leases: [] },
    down: false,
    gateVersion: new Map(),
    add(snapshot) {
      api.snapshots.set(snapshot.name, snapshot);
      return snapshot;
    },
    async subusers(names): Promise<SubusersAnswer> {
      api.calls.subusers.push(names);
      if (api.down) throw new Error("POST /subusers: 503");
      return {
        subusers: names.flatMap((name) => {
          const snapshot = api.snapshots.get(name);
          return snapshot ? [structuredClone(snapshot)] : [];
        }),
        unknown: names.filter((name) => !api.snapshots.has(name)),
      };
    },
    async leases(leases): Promise<LeasesAnswer> {
      api.calls.leases.push(leases);
      if (api.down) throw new Error("POST /leases: 503");
      return {
        leases: leases.map(({ name, product, want }) => {
          const snapshot = api.snapshots.get(name);
          const limits = snapshot?.limits[product] ?? { concurrent: null, rps: null };
          const share = (limit: number | null, wanted: number) => (limit === null ? null : Math.min(limit, wanted));
          return {
            name,
            product,
            known: snapshot !== undefined,
            concurrent: share(limits.concurrent, want.concurrent),
            rps: share(limits.rps, want.rps),
            expires_at: new Date(now() + 5000).toISOString(),
            version: api.gateVersion.get(name) ?? snapshot?.version ?? 0,
          };
        }),
      };
    },
    changes() {
      throw new Error("no change feed: the test sets one");
    },
    async authorize() {
      throw new Error("ISP is not stubbed");
    },
    async release() {
      return { released: true };
    },
  };
  return api;
}
