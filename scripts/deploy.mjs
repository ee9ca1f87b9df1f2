// `npm run deploy [-- --env staging]`: deploys the worker to the Cloudflare account wrangler is logged in to
// (`npx wrangler login`, or CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID), creating what is missing first.
//
//   1. secrets: each required one missing is named with the command that sets it, and the run stops there,
//      before anything is changed; optional ones missing are named with the feature they leave off
//   2. settings of wrangler.toml still at the example values are named, with what they leave off
//   3. queues: each one the configuration names (producers, consumers, dead letters) is created if missing
//   4. D1 migrations are applied remotely before the deploy, or, on the very first deploy, right after it (the
//      deploy is what creates the database: wrangler provisions D1 and R2 by the names in wrangler.toml)
//   5. `wrangler deploy`
//
// A second run creates nothing: every step looks before it acts. docs/deploy.md explains every setting.
import { parseArgs } from "node:util";
import { unstable_readConfig } from "wrangler";
import { isPlaceholder, OWN_SETTINGS, SECRETS } from "./lib/deploy-settings.mjs";
import { root, runWrangler } from "./lib/wrangler-cli.mjs";

const { values: options } = parseArgs({ options: { env: { type: "string", default: "" } } });
const environment = options.env;
const label = environment || "production";
// The top level is production; `--env=` targets it explicitly (wrangler warns otherwise, staging being defined).
const envArgs = environment ? ["--env", environment] : ["--env="];
const config = readConfig();

const database = config.d1_databases[0];
const queues = [
  ...new Set([
    ...config.queues.producers.map((producer) => producer.queue),
    ...config.queues.consumers.flatMap((consumer) => [consumer.queue, consumer.dead_letter_queue ?? []].flat()),
  ]),
];

console.log(`Deploying ${config.name} (${label}) from wrangler.toml\n`);
checkSecrets();
checkSettings();
ensureQueues();
const databaseExisted = databaseExists();
if (databaseExisted) applyMigrations();
step("Deploy", () => wrangler(["deploy", ...envArgs]));
if (!databaseExisted) applyMigrations();
console.log(`\nDeployed ${config.name} (${label}).`);

/** wrangler.toml as wrangler reads it for this environment; an environment it does not define stops the run. */
function readConfig() {
  try {
    return unstable_readConfig({ config: `${root}/wrangler.toml`, env: environment || undefined }, {});
  } catch (error) {
    stop(error.message);
  }
}

function checkSecrets() {
  console.log("Secrets");
  const present = new Set(secretNames());
  const missing = SECRETS.filter((secret) => !present.has(secret.name));
  for (const secret of SECRETS) {
    if (present.has(secret.name)) console.log(`  ✓ ${secret.name}`);
  }
  for (const secret of missing.filter((secret) => !secret.required)) {
    console.log(`  - ${secret.name} not set (optional): ${secret.purpose}`);
  }
  const required = missing.filter((secret) => secret.required);
  if (required.length === 0) return console.log("");
  for (const secret of required) {
    const put = `npx wrangler secret put ${secret.name}${environment ? ` --env ${environment}` : ""}`;
    console.log(`  ✗ ${secret.name} missing: ${secret.purpose}`);
    console.log(`      value: ${secret.value}`);
    console.log(`      set it: ${secret.generate ? `${secret.generate} | ${put}` : put}`);
  }
  const count = required.length === 1 ? "the missing secret" : `the ${required.length} missing secrets`;
  stop(`set ${count} above, then run \`npm run deploy${environment ? ` -- --env ${environment}` : ""}\` again.`);
}

/** The secrets the deployed worker has; none when it has never been deployed. */
function secretNames() {
  // The environment names the worker (`--name` beside `--env` would append the environment's name once more).
  const listed = wrangler(["secret", "list", "--format", "json", ...envArgs], true);
  if (listed.ok) return jsonIn(listed.stdout).map((secret) => secret.name);
  if (/Worker ".*" (\(env: .*\) )?not found/.test(listed.output)) return [];
  fail("wrangler secret list", listed);
}

function checkSettings() {
  const placeholders = OWN_SETTINGS.filter((setting) => isPlaceholder(config.vars[setting.name]));
  if (placeholders.length === 0) return;
  console.log("Settings (wrangler.toml vars) still at their example values: the deploy goes on without them");
  for (const setting of placeholders) {
    console.log(`  ! ${setting.name} = ${JSON.stringify(config.vars[setting.name])}: ${setting.effect}`);
  }
  console.log("");
}

function ensureQueues() {
  console.log("Queues");
  for (const queue of queues) {
    if (queueExists(queue)) {
      console.log(`  ✓ ${queue}`);
      continue;
    }
    const created = wrangler(["queues", "create", queue], true);
    // Another run (or a person) may have created it since the look: then it exists, and that is what counts.
    if (!created.ok && !queueExists(queue)) fail(`wrangler queues create ${queue}`, created);
    console.log(created.ok ? `  + ${queue} created` : `  ✓ ${queue} (created meanwhile)`);
  }
  console.log("");
}

function queueExists(queue) {
  const info = wrangler(["queues", "info", queue], true);
  // The API looks queues up by name prefix: the answer must be the queue itself.
  if (info.ok) return info.stdout.split("\n").some((line) => line.trim() === `Queue Name: ${queue}`);
  if (info.output.includes(`Queue "${queue}" does not exist`)) return false;
  fail(`wrangler queues info ${queue}`, info);
}

function databaseExists() {
  const listed = wrangler(["d1", "list", "--json"], true);
  if (!listed.ok) fail("wrangler d1 list", listed);
  return jsonIn(listed.stdout).some((db) => db.name === database.database_name);
}

function applyMigrations() {
  const when = databaseExisted ? "before the deploy" : "on the database the deploy created";
  step(`D1 migrations (${database.database_name}, ${when})`, () =>
    wrangler(["d1", "migrations", "apply", database.database_name, "--remote", ...envArgs]),
  );
}

function step(title, run) {
  console.log(`${title}`);
  const result = run();
  if (!result.ok) stop(`${title} failed (wrangler's message is above).`);
  console.log("");
}

/** The JSON array a command printed, whatever notice wrangler printed around it. */
function jsonIn(stdout) {
  return JSON.parse(stdout.slice(stdout.indexOf("["), stdout.lastIndexOf("]") + 1));
}

function wrangler(args, capture = false) {
  return runWrangler(args, { capture });
}

function fail(command, result) {
  console.error(result.output.trim());
  stop(`\`${command}\` failed (its message is above): is wrangler logged in to the right account?`);
}

function stop(message) {
  console.error(`\nStopped: ${message}`);
  process.exit(1);
}
