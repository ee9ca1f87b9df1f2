// `npm run config:shards`: writes the usage shard queues' blocks into wrangler.toml (production and staging) and
// their bindings into worker-configuration.d.ts, from one shard count. TOML cannot loop, and 16 shards are 32 blocks
// an environment. `--check` (part of `npm run lint`) writes nothing and fails when either file is stale.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/** The accounts' usage shards (docs/scale.md): each a queue whose consumer calls each account's store once a window. */
const USAGE_SHARDS = 16;

const root = path.join(import.meta.dirname, "..");
const check = process.argv.includes("--check");
const BEGIN = "# BEGIN usage shards: written by `npm run config:shards` (scripts/config-shards.mjs holds the count).";
const END = "# END usage shards";

const shards = Array.from({ length: USAGE_SHARDS }, (_, shard) => shard);

/** One environment's shard queues: `table` is its TOML table prefix, `prefix` its queue names'. */
function shardBlocks(table, prefix) {
  const block = (shard) =>
    [
      `[[${table}queues.producers]]`,
      `binding = "USAGE_ACCOUNTS_${shard}"`,
      `queue = "${prefix}-usage-accounts-${shard}"`,
      "",
      `[[${table}queues.consumers]]`,
      `queue = "${prefix}-usage-accounts-${shard}"`,
      "max_batch_size = 100",
      "max_batch_timeout = 55",
      "max_retries = 10",
      `dead_letter_queue = "${prefix}-usage-dead-letters"`,
      "",
    ].join("\n");
  return `${BEGIN} Do not edit.\n${shards.map(block).join("\n")}${END}\n`;
}

/** `text` with its marked regions replaced, in order, by `regions`. */
function rewriteRegions(text, regions) {
  let index = 0;
  const marked = new RegExp(`${literally(BEGIN)}[^\\n]*\\n[\\s\\S]*?${literally(END)}\\n`, "g");
  const rewritten = text.replace(marked, () => regions[index++] ?? "");
  if (index !== regions.length) throw new Error(`expected ${regions.length} marked regions, found ${index}`);
  return rewritten;
}

function literally(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The bindings in worker-configuration.d.ts: one line a shard, where the shard lines stand. */
function rewriteTypes(text) {
  const lines = shards.map((shard) => `\tUSAGE_ACCOUNTS_${shard}: Queue;`).join("\n");
  return text.replace(/(?:\tUSAGE_ACCOUNTS_\d+: Queue;\n)+/, `${lines}\n`);
}

const files = [
  {
    file: "wrangler.toml",
    rewrite: (text) =>
      rewriteRegions(text, [
        shardBlocks("", "proxy-account-api"),
        shardBlocks("env.staging.", "proxy-account-api-staging"),
      ]),
  },
  { file: "worker-configuration.d.ts", rewrite: rewriteTypes },
];

let stale = 0;
for (const { file, rewrite } of files) {
  const full = path.join(root, file);
  const text = readFileSync(full, "utf8");
  const written = rewrite(text);
  if (written === text) continue;
  stale++;
  if (check) console.error(`${file} is stale: run \`npm run config:shards\``);
  else writeFileSync(full, written);
}
if (check && stale > 0) process.exit(1);
if (!check) console.log(`usage shards: ${USAGE_SHARDS}, ${stale} file(s) written`);
