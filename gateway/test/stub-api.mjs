// A stand-in for the API's side of the node contract, in memory: sub-users' snapshots, a gate that hands out
// shares (a single node's: what it wants, up to the limit), sessions, and a count of the calls made.
import { sha256Hex } from "../credentials.mjs";

export function snapshotOf(name, overrides = {}) {
  return {
    name,
    subuser: `sub_${name}`,
    version: 1,
    status: "active",
    products: ["residential", "mobile"],
    passwords: [{ sha256: sha256Hex("secret"), until: null }],
    whitelist: [],
    limits: { residential: { concurrent: null, rps: null }, mobile: { concurrent: null, rps: null } },
    exhausted: { residential: false, mobile: false },
    cap: { month: new Date().toISOString().slice(0, 7), reached: false },
    ...overrides,
  };
}

export function stubApi({ now = Date.now } = {}) {
  const api = {
    snapshots: new Map(),
    calls: { subusers: [], leases: [], sessions: [] },
    /** While set, every call fails as if the API were down. */
    down: false,
    /** The gate's version, when it should differ from the snapshot's (a missed push). */
    gateVersion: new Map(),
    add(snapshot) {
      api.snapshots.set(snapshot.name, snapshot);
      return snapshot;
    },
    async subusers(names) {
      api.calls.subusers.push(names);
      if (api.down) throw new Error("POST /subusers: 503");
      return {
        subusers: names
          .filter((name) => api.snapshots.has(name))
          .map((name) => structuredClone(api.snapshots.get(name))),
        unknown: names.filter((name) => !api.snapshots.has(name)),
      };
    },
    async leases(leases) {
      api.calls.leases.push(leases);
      if (api.down) throw new Error("POST /leases: 503");
      return {
        leases: leases.map(({ name, product, want }) => {
          const limits = api.snapshots.get(name).limits[product];
          const share = (limit, wanted) => (limit === null ? null : Math.min(limit, wanted));
          return {
            name,
            product,
            concurrent: share(limits.concurrent, want.concurrent),
            rps: share(limits.rps, want.rps),
            expires_at: new Date(now() + 5000).toISOString(),
            version: api.gateVersion.get(name) ?? api.snapshots.get(name).version,
          };
        }),
      };
    },
    async session({ name, username, exitIp }) {
      api.calls.sessions.push({ name, username, exitIp });
      if (api.down) throw new Error("POST /sessions: 503");
      const startedAt = now();
      return {
        session: {
          id: `ses_${api.calls.sessions.length}`,
          exit_ip: exitIp,
          started_at: new Date(startedAt).toISOString(),
          expires_at: new Date(startedAt + 600_000).toISOString(),
        },
      };
    },
    async authorize() {
      throw new Error("ISP is not stubbed");
    },
    async release() {},
  };
  return api;
}
