// wrangler.toml's two environments, read as wrangler reads them: what a deploy of each would bind.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { unstable_readConfig } from "wrangler";
import { queueKind } from "../../src/queues/kinds.ts";
import { SECRETS } from "../lib/deploy-settings.mjs";

const root = path.join(import.meta.dirname, "..", "..");
const read = (env) => unstable_readConfig({ config: path.join(root, "wrangler.toml"), env }, {});
const production = read(undefined);
const staging = read("staging");

/** What the worker's code sees: binding and var names, per kind. */
function bindings(config) {
  return {
    d1: config.d1_databases.map((db) => db.binding),
    durableObjects: config.durable_objects.bindings.map((binding) => `${binding.name}:${binding.class_name}`),
    producers: config.queues.producers.map((producer) => producer.binding),
    consumers: config.queues.consumers.map((consumer) => queueKind(consumer.queue)),
    r2: config.r2_buckets.map((bucket) => bucket.binding),
    email: config.send_email.map((binding) => binding.name),
    vars: Object.keys(config.vars).toSorted(),
  };
}

/** The account-wide names of what each environment owns. */
function resources(config) {
  return [
    config.name,
    ...config.d1_databases.map((db) => db.database_name),
    ...config.r2_buckets.map((bucket) => bucket.bucket_name),
    ...config.queues.producers.map((producer) => producer.queue),
    ...config.queues.consumers.flatMap((consumer) => [consumer.queue, consumer.dead_letter_queue ?? []].flat()),
  ];
}

describe("wrangler.toml", () => {
  it("staging binds exactly what production binds (wrangler does not carry bindings into an environment)", () => {
    assert.deepEqual(bindings(staging), bindings(production));
    assert.deepEqual(staging.triggers, production.triggers);
    assert.deepEqual(staging.migrations, production.migrations);
    const settings = (config) => config.queues.consumers.map(({ queue, dead_letter_queue, ...rest }) => rest);
    assert.deepEqual(settings(staging), settings(production));
  });

  it("each environment owns its own worker, database, bucket and queues: no name is shared", () => {
    const shared = resources(staging).filter((name) => resources(production).includes(name));
    assert.deepEqual(shared, []);
  });

  it("every consumed queue's name ends in a role the worker dispatches on; producers feed consumed queues", () => {
    for (const config of [production, staging]) {
      const consumed = config.queues.consumers.map((consumer) => consumer.queue);
      for (const queue of consumed) assert.ok(queueKind(queue), queue);
      for (const producer of config.queues.producers) assert.ok(consumed.includes(producer.queue), producer.queue);
    }
  });

  it("holds no resource ids: D1 and R2 are provisioned by name", () => {
    for (const config of [production, staging]) {
      for (const db of config.d1_databases) assert.equal(db.database_id, undefined);
      for (const db of config.d1_databases) assert.ok(db.database_name);
      for (const bucket of config.r2_buckets) assert.ok(bucket.bucket_name);
    }
  });

  it("the secrets a deploy checks are the worker's, and local development has every required one", () => {
    const types = readFileSync(path.join(root, "worker-configuration.d.ts"), "utf8");
    const devVars = readFileSync(path.join(root, ".dev.vars.example"), "utf8");
    for (const secret of SECRETS) {
      assert.match(types, new RegExp(`\\b${secret.name}: string;`), secret.name);
      if (secret.required) assert.match(devVars, new RegExp(`^${secret.name}=`, "m"), secret.name);
      assert.equal(production.vars[secret.name], undefined, `${secret.name} is a secret, not a var`);
    }
  });
});
