// The soak's fault schedule. Every minute of load: a traffic store aborted right after an ingest (10 s in), a usage
// message failed after it was applied so the queue delivers it again (25 s in), and a gateway node killed and
// restarted 5 s later (40 s in, the nodes in turn). A usage settlement's D1 write failing once is armed at the start
// and again every 5 minutes (settlements are due every 5 minutes while usage arrives). The worker's faults are armed
// through `POST /internal/dev/faults` (a worker started with `FAULTS=on`); their firing is read back from it.
import { sleep } from "../../../bench/http.mjs";

const PERIOD_MS = 60_000;
const OFFSETS_MS = { "store-abort": 10_000, redelivery: 25_000, "node-kill": 40_000 };
const D1_WRITE_EVERY_MS = 5 * 60_000;
const NODE_DOWN_MS = 5_000;
/** A fault's effects are looked for until this long after it fired (a queue retry waits 2-4 s). */
const AFTERMATH_MS = 15_000;
const POLL_MS = 2_000;

export function faultSchedule({ base, adminToken, fleet, metrics }) {
  const headers = { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" };
  const armedAt = { "store-abort": [], redelivery: [], "d1-write": [] };
  const nodeKills = [];
  let last = null;

  async function arm(kind) {
    const response = await fetch(`${base}/internal/dev/faults`, {
      method: "POST",
      headers,
      body: JSON.stringify({ kind, count: 1 }),
    });
    if (!response.ok) throw new Error(`arming ${kind}: ${response.status} ${await response.text()}`);
    armedAt[kind].push(Date.now());
  }

  /** The worker's counts; a fault seen fired opens its window of effect, from when it was armed. */
  async function poll() {
    const response = await fetch(`${base}/internal/dev/faults`, { headers });
    if (!response.ok) throw new Error(`reading the faults: ${response.status}`);
    const { faults } = await response.json();
    for (const [kind, counts] of Object.entries(faults)) {
      const before = last?.[kind].fired ?? 0;
      for (let fired = before; fired < counts.fired; fired++) {
        metrics.faultWindow(kind, armedAt[kind][fired] ?? Date.now(), Date.now() + AFTERMATH_MS);
      }
    }
    last = faults;
    return faults;
  }

  /** Runs the schedule until `stop()`; kills in progress finish first. */
  async function run(stop) {
    const started = Date.now();
    const due = { "store-abort": OFFSETS_MS["store-abort"], redelivery: OFFSETS_MS.redelivery };
    let nextKill = OFFSETS_MS["node-kill"];
    let nextD1 = 0;
    let kills = 0;
    let killing = null;
    while (!stop()) {
      const elapsed = Date.now() - started;
      if (elapsed >= nextD1) {
        await arm("d1-write");
        nextD1 += D1_WRITE_EVERY_MS;
      }
      for (const kind of Object.keys(due)) {
        if (elapsed >= due[kind]) {
          await arm(kind);
          due[kind] += PERIOD_MS;
        }
      }
      if (elapsed >= nextKill && !killing) {
        const index = kills++ % fleet.nodes.length;
        const from = Date.now();
        killing = fleet.killAndRestart(index, NODE_DOWN_MS).then((kill) => {
          nodeKills.push(kill);
          metrics.faultWindow("node-kill", from, kill.restartedAt + AFTERMATH_MS, {
            node: kill.node,
            restartedAt: kill.restartedAt,
          });
          killing = null;
        });
        nextKill += PERIOD_MS;
      }
      await poll();
      await sleep(POLL_MS);
    }
    await killing;
    await poll();
  }

  return {
    run,
    poll,
    /** Per kind: armed and fired (the worker's counts; node kills are the soak's own). */
    summary: () => ({
      ...Object.fromEntries(
        Object.entries(last ?? {}).map(([kind, counts]) => [
          kind,
          { armed: armedAt[kind].length, fired: counts.fired },
        ]),
      ),
      "node-kill": { armed: nodeKills.length, fired: nodeKills.length, kills: nodeKills },
    }),
  };
}
