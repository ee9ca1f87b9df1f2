// `npm run lint:imports` (part of `npm run lint`): the structure drawn from imports. Reads every relative
// import and re-export (type-only ones too) of the TypeScript under `src/`, prints the graph's size, its import
// cycles and the edges that break the layering, and exits 1 when there is any of either. Layers, lowest first:
// platform → db → domain → resources → routes/internal; nothing lower may import anything higher, and Durable
// Objects import neither the domain nor HTTP code. Run it on another checkout with `node scripts/import-graph.mjs <dir>`.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const root = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, ".."));
const sources = ["src", "durable-objects"].map((dir) => path.join(root, dir)).filter(existsSync);

/** Top folders a module of each layer must not import from. */
const FORBIDDEN = {
  "src/platform": ["src/db", "src/domain", "src/resources", "src/routes", "src/internal", "src/middleware"],
  "src/db": ["src/domain", "src/resources", "src/routes", "src/internal", "src/middleware", "src/durable-objects"],
  "src/domain": ["src/resources", "src/routes", "src/internal", "src/middleware"],
  "src/resources": ["src/routes", "src/internal", "src/middleware"],
  "src/durable-objects": ["src/domain", "src/resources", "src/routes", "src/internal", "src/middleware", "src/db"],
};

const files = sources.flatMap(walk).filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"));
const graph = new Map(files.map((file) => [relative(file), imports(file).map(relative)]));
const edges = [...graph.values()].reduce((sum, targets) => sum + targets.length, 0);
const cycles = stronglyConnected(graph).filter((component) => component.length > 1);
const broken = [...graph].flatMap(([from, targets]) =>
  targets.filter((to) => forbidden(from, to)).map((to) => `${from} → ${to}`),
);

const internals = [...graph].flatMap(([from, targets]) =>
  targets.filter((to) => reachesInside(from, to)).map((to) => `${from} → ${to}`),
);

console.log(`${graph.size} modules, ${edges} imports`);
console.log(`imports of a Durable Object's internals from outside its folder: ${internals.length}`);
console.log(`import cycles: ${cycles.length}`);
for (const cycle of cycles) console.log(`  ${cycle.join(" ⇄ ")}`);
console.log(`layering broken: ${broken.length}`);
for (const edge of broken) console.log(`  ${edge}`);
if (cycles.length > 0 || broken.length > 0 || internals.length > 0) process.exit(1);

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? walk(full) : [full];
  });
}

function relative(file) {
  return path.relative(root, file).split(path.sep).join("/");
}

/** The local modules a file imports or re-exports from. */
function imports(file) {
  const text = readFileSync(file, "utf8");
  const specifiers = [...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.[^"]+)"/gms)].map((m) => m[1]);
  return specifiers.map((specifier) => resolve(path.dirname(file), specifier)).filter(Boolean);
}

function resolve(dir, specifier) {
  const base = path.resolve(dir, specifier);
  for (const candidate of [base, `${base}.ts`, path.join(base, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile() && candidate.endsWith(".ts")) return candidate;
  }
  return null;
}

/** An import of a Durable Object module other than its door (`index.ts`) or `contract.ts`, from outside its folder. */
function reachesInside(from, to) {
  const object = to.match(/^(?:src\/)?durable-objects\/(?:([^/]+)\/)?([^/]+)$/);
  if (!object || ["index.ts", "contract.ts"].includes(object[2])) return false;
  const folder = object[1] ? to.slice(0, to.lastIndexOf("/") + 1) : to.slice(0, to.indexOf("/", 4) + 1);
  return !from.startsWith(object[1] ? folder : to.replace(/[^/]+$/, "")) && object[1] !== "shared";
}

function forbidden(from, to) {
  const layer = Object.keys(FORBIDDEN).find((prefix) => from.startsWith(`${prefix}/`));
  return layer !== undefined && FORBIDDEN[layer].some((prefix) => to.startsWith(`${prefix}/`));
}

/** Tarjan's strongly connected components: every cycle lies inside one. */
function stronglyConnected(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  let next = 0;
  const visit = (node) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node), low.get(target)));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node), index.get(target)));
    }
    if (low.get(node) === index.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      components.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return components;
}
