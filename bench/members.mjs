// The members' rows: what a sign-in costs the worker (PBKDF2 at the production cap, the session written) and what
// the session check adds to a request, both as workerd CPU per request.
import { cpuSpent, treeCpu } from "./cpu.mjs";
import { fetchFresh, percentile } from "./http.mjs";

/** Sign-ins measured one at a time: under the per-account (60) and per-client-address (60) windows of a minute. */
const SIGN_INS = 50;
const PASSWORD = "bench correct horse battery";
export const SIGN_IN_CPU_GOAL_MS = 100;
export const SESSION_CHECK_CPU_GOAL_MS = 1;

/** workerd's CPU ms per request in a row (its processes; not wrangler's proxy, not this client). */
export function workerdCpuMs(row) {
  return Object.entries(row.cpuMsPerRequest)
    .filter(([key]) => key.startsWith("workerd") && !key.endsWith("busiest"))
    .reduce((sum, [, ms]) => sum + ms, 0);
}

/**
 * Members of the bench account (made by the admin API before anything is measured) and a signed-in session: its
 * cookie for the autocannon target of the session check.
 */
export async function setUpMembers(api, adminToken, accountId) {
  const admin = { Authorization: `Bearer ${adminToken}` };
  const stamp = Date.now();
  const emails = [];
  for (let i = 0; i < SIGN_INS + 1; i++) {
    const email = `bench-member-${stamp}-${i}@example.com`;
    await api.post(`/internal/admin/accounts/${accountId}/members`, admin, {
      email,
      name: `Bench ${i}`,
      role: "owner",
      password: PASSWORD,
    });
    emails.push(email);
  }
  const session = await signIn(api.base, emails.pop());
  return { emails, cookie: session.cookie };
}

async function signIn(base, email) {
  const started = performance.now();
  const response = await fetchFresh(`${base}/v1/auth/sign-in`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  const ms = performance.now() - started;
  if (response.status !== 201) throw new Error(`sign-in: ${response.status} ${await response.text()}`);
  const cookie = /__Host-session=([^;]+)/.exec(response.headers.get("set-cookie") ?? "")?.[1];
  return { ms, cookie };
}

/** Each member signs in once, one after the other: the row's CPU is workerd's per sign-in. */
export async function measureSignIns(base, members, workerPid) {
  const before = treeCpu(workerPid);
  const started = performance.now();
  const latencies = [];
  for (const email of members.emails) latencies.push((await signIn(base, email)).ms);
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuSpent(before, treeCpu(workerPid));
  return {
    name: `POST /v1/auth/sign-in (${members.emails.length} members, one at a time)`,
    bare: false,
    unit: "req/s",
    cpuGoalMs: SIGN_IN_CPU_GOAL_MS,
    rps: members.emails.length / seconds,
    p50: Math.round(percentile(latencies, 50)),
    p99: Math.round(percentile(latencies, 99)),
    ok: members.emails.length,
    errors: 0,
    cpuMsPerRequest: Object.fromEntries(
      Object.entries(cpu).map(([process, ms]) => [process, Math.round((ms / members.emails.length) * 100) / 100]),
    ),
  };
}

/** `GET /v1/users/me` with the session cookie: beside the same call with an API key, the session check's cost. */
export function sessionTarget(members) {
  return {
    name: "GET /v1/users/me, signed-in member (session cookie)",
    path: "/v1/users/me",
    headers: { Cookie: `__Host-session=${members.cookie}` },
    cpuOverGoalMs: SESSION_CHECK_CPU_GOAL_MS,
    cpuOver: "GET /v1/users/me",
  };
}
