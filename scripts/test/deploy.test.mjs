// `npm run deploy` against a stand-in for wrangler (fake-wrangler.mjs): what it creates, in what order, and where it
// stops. The real wrangler is used only for the last test, which checks that every command line the script runs is
// one wrangler 4 accepts.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import { unstable_readConfig } from "wrangler";
import { wranglerBin } from "../lib/wrangler-cli.mjs";

const root = path.join(import.meta.dirname, "..", "..");
const execFileAsync = promisify(execFile);
const REQUIRED = ["ADMIN_TOKEN", "GATEWAY_TOKEN", "SEALING_KEY", "PASSWORD_PEPPER"];
const scratch = mkdtempSync(path.join(tmpdir(), "deploy-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

function environment(env) {
  const config = unstable_readConfig({ config: path.join(root, "wrangler.toml"), env }, {});
  const consumers = config.queues.consumers.flatMap((consumer) => [consumer.queue, consumer.dead_letter_queue ?? []]);
  const queues = [...new Set([...config.queues.producers.map((producer) => producer.queue), ...consumers.flat()])];
  return { worker: config.name, database: config.d1_databases[0].database_name, queues };
}
const production = environment(undefined);
const staging = environment("staging");

/** An account as the fake keeps it: `workers` (name → secrets), `queues`, `databases` (name → applied files). */
function account(state = {}) {
  const file = path.join(mkdtempSync(path.join(scratch, "account-")), "state.json");
  const initial = { workers: {}, queues: [], databases: {}, calls: [], ...state };
  writeFileSync(file, JSON.stringify({ environments: { "": production, staging }, ...initial }));
  return file;
}

function deploy(stateFile, ...args) {
  const result = spawnSync(process.execPath, [path.join(root, "scripts", "deploy.mjs"), ...args], {
    cwd: root,
    encoding: "utf8",
    env: {
      ...process.env,
      WRANGLER_BIN: path.join(import.meta.dirname, "fake-wrangler.mjs"),
      FAKE_WRANGLER_STATE: stateFile,
    },
  });
  return { ...result, state: JSON.parse(readFileSync(stateFile, "utf8")) };
}

const commands = (state) => state.calls.map((call) => call.filter((arg) => !arg.startsWith("--")).join(" "));
const changes = (state) =>
  commands(state).filter((command) => /^(queues create|deploy|d1 migrations apply)/.test(command));
const withSecrets = (worker, secrets = REQUIRED) => ({ workers: { [worker]: { secrets } } });

describe("npm run deploy", () => {
  it("on an account without the worker, stops before changing anything, naming each required secret and its command", () => {
    const run = deploy(account());
    assert.equal(run.status, 1);
    for (const name of REQUIRED) assert.match(run.stdout, new RegExp(`✗ ${name} missing`));
    assert.match(run.stdout, /set it: npx wrangler secret put ADMIN_TOKEN\n/);
    assert.match(run.stdout, /set it: npx wrangler secret put GATEWAY_TOKEN\n/);
    assert.match(run.stdout, /set it: openssl rand -base64 32 \| npx wrangler secret put SEALING_KEY\n/);
    assert.match(
      run.stdout,
      /set it: echo "1:\$\(openssl rand -base64 32\)" \| npx wrangler secret put PASSWORD_PEPPER\n/,
    );
    assert.match(run.stderr, /Stopped: set the 4 missing secrets above, then run `npm run deploy` again/);
    assert.deepEqual(changes(run.state), []);
  });

  it("with the secrets set, the first run creates every queue, deploys, then migrates the database the deploy made", () => {
    const run = deploy(account(withSecrets(production.worker)));
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(run.state.queues.toSorted(), production.queues.toSorted());
    assert.deepEqual(changes(run.state), [
      ...production.queues.map((queue) => `queues create ${queue}`),
      "deploy",
      `d1 migrations apply ${production.database}`,
    ]);
    const migrations = run.state.databases[production.database].applied;
    assert.ok(migrations.length > 0 && migrations.every((file) => file.endsWith(".sql")));
    // Optional secrets and example settings are named, and do not stop the deploy.
    assert.match(run.stdout, /- AWS_ACCESS_KEY_ID not set \(optional\)/);
    assert.match(run.stdout, /! API_ORIGIN = "https:\/\/api\.proxy-api\.example\.com": links in report mails/);
    assert.match(run.stdout, /Deployed proxy-account-api \(production\)/);
  });

  it("a second run creates nothing: it migrates (nothing pending) before it deploys", () => {
    const stateFile = account(withSecrets(production.worker));
    const first = deploy(stateFile);
    assert.equal(first.status, 0, first.stderr);
    const callsBefore = first.state.calls.length;
    const second = deploy(stateFile);
    assert.equal(second.status, 0, second.stderr);
    assert.deepEqual(second.state.queues, first.state.queues);
    assert.deepEqual(second.state.databases, first.state.databases);
    const secondChanges = changes({ calls: second.state.calls.slice(callsBefore) });
    assert.deepEqual(secondChanges, [`d1 migrations apply ${production.database}`, "deploy"]);
    assert.match(second.stdout, /No migrations to apply!/);
    assert.doesNotMatch(second.stdout, /created/);
  });

  it("staging: its own worker, queues and database; a missing secret alone stops it, with the --env command", () => {
    const stateFile = account(withSecrets(staging.worker, ["ADMIN_TOKEN", "SEALING_KEY", "PASSWORD_PEPPER"]));
    const stopped = deploy(stateFile, "--env", "staging");
    assert.equal(stopped.status, 1);
    assert.match(stopped.stdout, /set it: npx wrangler secret put GATEWAY_TOKEN --env staging\n/);
    assert.doesNotMatch(stopped.stdout, /secret put (ADMIN_TOKEN|SEALING_KEY|PASSWORD_PEPPER)/);
    assert.match(stopped.stderr, /set the missing secret above, then run `npm run deploy -- --env staging` again/);
    assert.deepEqual(changes(stopped.state), []);

    const state = JSON.parse(readFileSync(stateFile, "utf8"));
    state.workers[staging.worker].secrets.push("GATEWAY_TOKEN");
    writeFileSync(stateFile, JSON.stringify(state));
    const run = deploy(stateFile, "--env", "staging");
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(run.state.queues.toSorted(), staging.queues.toSorted());
    assert.ok(run.state.databases[staging.database]);
    assert.equal(run.state.databases[production.database], undefined);
    const perWorker = run.state.calls.filter((call) =>
      ["deploy", "secret", "migrations"].includes(call[0] === "d1" ? call[1] : call[0]),
    );
    for (const call of perWorker) {
      assert.ok(call.join(" ").includes("--env staging"), call.join(" "));
    }
  });

  it("a queue lookup that answers another queue (the API matches name prefixes) does not count as the queue", () => {
    const deadLetters = production.queues.find((queue) => queue.endsWith("-usage-dead-letters"));
    const run = deploy(account({ ...withSecrets(production.worker), queues: [deadLetters] }));
    assert.equal(run.status, 0, run.stderr);
    assert.ok(commands(run.state).includes(`queues create ${deadLetters.replace("-dead-letters", "")}`));
    assert.ok(!commands(run.state).includes(`queues create ${deadLetters}`));
  });

  it("a queue another run creates between the look and the create counts as there; an unknown --env stops at once", () => {
    const usage = production.queues[0];
    const run = deploy(account({ ...withSecrets(production.worker), appearing: [usage] }));
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`✓ ${usage} \\(created meanwhile\\)`));
    assert.equal(run.state.queues.filter((queue) => queue === usage).length, 1);

    const typo = deploy(account(withSecrets(production.worker)), "--env", "prodution");
    assert.equal(typo.status, 1);
    assert.match(typo.stderr, /No environment found in configuration with name "prodution"/);
    assert.deepEqual(typo.state.calls, []);
  });

  it("a wrangler that cannot reach the account stops the run with wrangler's message, not as missing secrets", () => {
    const run = deploy(account({ unauthenticated: true }));
    assert.equal(run.status, 1);
    assert.match(run.stderr, /CLOUDFLARE_API_TOKEN/);
    assert.match(run.stderr, /`wrangler secret list` failed/);
    assert.doesNotMatch(run.stdout, /secret put/);
    assert.deepEqual(changes(run.state), []);
  });

  it("every command line it runs is one the real wrangler 4 accepts (its --help lists each flag used)", async () => {
    const first = deploy(account(withSecrets(production.worker)));
    const second = deploy(account(withSecrets(staging.worker)), "--env", "staging");
    const known = ["secret list", "queues info", "queues create", "d1 list", "d1 migrations apply", "deploy"];
    const shapes = new Map(known.map((command) => [command, new Set()]));
    for (const call of [...first.state.calls, ...second.state.calls]) {
      const command = known.find((shape) => call.join(" ").startsWith(shape));
      assert.ok(command, `an unexpected command: wrangler ${call.join(" ")}`);
      for (const arg of call.filter((word) => word.startsWith("--"))) shapes.get(command).add(arg.split("=")[0]);
    }
    // The real wrangler, each command's --help at once (each start of wrangler takes seconds).
    const helps = await Promise.all(
      [...shapes.keys()].map((command) =>
        execFileAsync(process.execPath, [wranglerBin, ...command.split(" "), "--help"]),
      ),
    );
    [...shapes].forEach(([command, flags], index) => {
      for (const flag of flags)
        assert.match(helps[index].stdout, new RegExp(`${flag}\\b`), `wrangler ${command} ${flag}`);
    });
  });
});
