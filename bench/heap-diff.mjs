// What grew between two heap snapshots of the worker (`npm run soak -- --heap-snapshots <dir>` takes them): live
// objects grouped by kind and constructor, with their count and own size in each, the largest growth first.
//
//   node bench/heap-diff.mjs <first.heapsnapshot> <last.heapsnapshot> [--top 30]
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: "string", default: "30" } },
});
if (positionals.length !== 2) throw new Error("usage: node bench/heap-diff.mjs <first> <last> [--top N]");
const [first, last] = positionals.map(groups);
const rows = [...new Set([...first.keys(), ...last.keys()])]
  .map((key) => {
    const a = first.get(key) ?? { count: 0, bytes: 0 };
    const b = last.get(key) ?? { count: 0, bytes: 0 };
    return { key, count: b.count - a.count, bytes: b.bytes - a.bytes, lastBytes: b.bytes };
  })
  .sort((x, y) => y.bytes - x.bytes)
  .slice(0, Number(values.top));
const total = (map) => [...map.values()].reduce((n, g) => n + g.bytes, 0);
console.log(`heap: ${kb(total(first))} KB → ${kb(total(last))} KB`);
console.log("growth (KB)  objects  now (KB)  kind: constructor or name");
for (const row of rows) {
  console.log(
    `${kb(row.bytes).padStart(11)} ${String(row.count).padStart(8)} ${kb(row.lastBytes).padStart(9)}  ${row.key}`,
  );
}

/** A snapshot's nodes grouped by kind and name: count and own bytes. */
function groups(file) {
  const snapshot = JSON.parse(readFileSync(file, "utf8"));
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((field) => fields.indexOf(field));
  const byKey = new Map();
  const { nodes, strings } = snapshot;
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt]];
    const name = type === "string" || type === "concatenated string" ? "" : strings[nodes[i + nameAt]].slice(0, 80);
    const key = `${type}: ${name}`;
    const group = byKey.get(key) ?? { count: 0, bytes: 0 };
    group.count++;
    group.bytes += nodes[i + sizeAt];
    byKey.set(key, group);
  }
  return byKey;
}

function kb(bytes) {
  return (bytes / 1024).toFixed(1);
}
