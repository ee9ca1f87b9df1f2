// A stand-in for wrangler at the command level, for the deploy script's tests (WRANGLER_BIN points here). It
// answers the commands `npm run deploy` runs as wrangler 4 does (same output lines, exit codes and error texts,
// read from wrangler's source), keeps a Cloudflare account's state in the JSON file FAKE_WRANGLER_STATE, and
// records every call there.
//
// State: { environments: {"" | name: {worker, database, queues}}, workers: {name: {secrets}}, queues: [name],
//          databases: {name: {applied: [file]}}, calls: [[arg]], unauthenticated?: true, appearing?: [name] }
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const stateFile = process.env.FAKE_WRANGLER_STATE;
const state = JSON.parse(readFileSync(stateFile, "utf8"));
const args = process.argv.slice(2);
state.calls.push(args);
const migrations = readdirSync(path.join(import.meta.dirname, "..", "..", "migrations")).filter((file) =>
  file.endsWith(".sql"),
);

const positional = args.filter((arg, i) => !arg.startsWith("--") && !args[i - 1]?.match(/^--(env|name|format)$/));
const flag = (name) => {
  const inline = args.find((arg) => arg.startsWith(`--${name}=`));
  if (inline !== undefined) return inline.slice(name.length + 3);
  const at = args.indexOf(`--${name}`);
  return at === -1 ? undefined : args[at + 1];
};
const environment = state.environments[flag("env") ?? ""];

if (state.unauthenticated) fail("In a non-interactive environment, it's necessary to set a CLOUDFLARE_API_TOKEN");
run(positional.join(" "));
save();

function run(command) {
  if (command === "secret list") return secretList(workerName());
  if (command.startsWith("queues info ")) return queueInfo(positional[2]);
  if (command.startsWith("queues create ")) return queueCreate(positional[2]);
  if (command === "d1 list") return print(JSON.stringify(Object.keys(state.databases).map((name) => ({ name }))));
  if (command.startsWith("d1 migrations apply ")) return migrationsApply(positional[3]);
  if (command === "deploy") return deploy();
  fail(`the fake wrangler does not know \`wrangler ${args.join(" ")}\``);
}

/** As wrangler's getLegacyScriptName: `--name` with `--env` names `<name>-<env>`; without `--name`, the config's. */
function workerName() {
  const name = flag("name");
  const env = flag("env");
  return name && env ? `${name}-${env}` : (name ?? environment.worker);
}

function secretList(worker) {
  if (!state.workers[worker])
    fail(`Worker "${worker}" not found.\n\nIf this is a new Worker, run \`wrangler deploy\` first to create it.`);
  print(JSON.stringify(state.workers[worker].secrets.map((name) => ({ name, type: "secret_text" }))));
}

function queueInfo(name) {
  // A queue in `appearing` is created by someone else right after this look (a concurrent run).
  if (state.appearing?.includes(name)) {
    state.appearing = state.appearing.filter((queue) => queue !== name);
    state.queues.push(name);
    fail(`Queue "${name}" does not exist. To create it, run: wrangler queues create ${name}`);
  }
  // The API's name filter matches by prefix, as the real one may: `info usage` can answer `usage-dead-letters`.
  const found = state.queues.find((queue) => queue.startsWith(name));
  if (!found) fail(`Queue "${name}" does not exist. To create it, run: wrangler queues create ${name}`);
  print(`Queue Name: ${found}\nQueue ID: q-${found}\nNumber of Producers: 0\nNumber of Consumers: 0`);
}

function queueCreate(name) {
  if (state.queues.includes(name)) fail(`A queue with name ${name} already exists [code: 11009]`);
  state.queues.push(name);
  print(`🌀 Creating queue '${name}'\n✅ Created queue '${name}'`);
}

function migrationsApply(name) {
  const database = state.databases[name];
  if (!database)
    fail(
      `Couldn't find a D1 DB named '${name}' (bound as 'DB') in the API. Run 'wrangler d1 create ${name}' to create it.`,
    );
  if (!args.includes("--remote")) fail("the deploy script must apply migrations with --remote");
  const pending = migrations.filter((file) => !database.applied.includes(file));
  if (pending.length === 0) return print("✅ No migrations to apply!");
  database.applied.push(...pending);
  print(`Migrations to be applied:\n${pending.join("\n")}\n✅ Applied ${pending.length} migrations`);
}

/** As wrangler 4 deploys: the worker, and the D1 database provisioned by name; a consumer's missing queue fails. */
function deploy() {
  const missing = environment.queues.find((queue) => !state.queues.includes(queue));
  if (missing) fail(`Queue "${missing}" does not exist. To create it, run: wrangler queues create ${missing}`);
  state.workers[environment.worker] ??= { secrets: [] };
  state.databases[environment.database] ??= { applied: [] };
  print(`Uploaded ${environment.worker}\nDeployed ${environment.worker} triggers`);
}

function print(text) {
  process.stdout.write(`${text}\n`);
}

function fail(message) {
  process.stderr.write(`✘ [ERROR] ${message}\n`);
  save();
  process.exit(1);
}

function save() {
  writeFileSync(stateFile, JSON.stringify(state, null, 2));
}
