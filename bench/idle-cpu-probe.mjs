// scratch experiment: background CPU of the worker after seeding the traffic history, with no load
import { mkdtempSync } from "node:fs";
import path from "node:path";
import { prepare, startWorker } from "../scripts/lib/local-worker.mjs";
import { cpuSpent, treeCpu } from "./cpu.mjs";
import { apiClient, sleep } from "./http.mjs";
import { seedTrafficHistory } from "./seed-traffic.mjs";

const persistTo = mkdtempSync(path.join("/dev/shm", "probe-"));
const vars = prepare({ persistTo });
const { child, base } = await startWorker(8797, { quiet: true, persistTo, vars: { LOG_REQUESTS: "false" } });
const api = apiClient(base);
const started = Date.now();
const history = await seedTrafficHistory(api, { adminToken: vars.ADMIN_TOKEN, gatewayToken: vars.GATEWAY_TOKEN }, { subusers: 1000, minuteSubusers: 50, concurrency: 12 });
console.log("seeded", (Date.now() - started) / 1000, JSON.stringify(history.details));
let before = treeCpu(child.pid);
for (let i = 0; i < 200; i++) {
  await sleep(5000);
  const after = treeCpu(child.pid);
  const spent = cpuSpent(before, after);
  before = after;
  const total = Object.entries(spent).filter(([k]) => !k.endsWith("busiest")).map(([k, v]) => `${k.split(":")[0]}=${Math.round(v)}`).join(" ");
  console.log(new Date().toISOString().slice(11, 19), `+${Math.round((Date.now() - started) / 1000)}s`, total);
}
child.kill("SIGTERM");
