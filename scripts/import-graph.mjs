// `npm run lint:imports` (part of `npm run lint`): the structure drawn from imports. Reads every relative
// import, re-export and literal dynamic import (type-only ones too) of every source file of the repository
// (TypeScript and JavaScript: `src/`, `test/`, `bench/`, `scripts/`, `gateway/`, `console/`, `clients/`, the root's
// config files; not `node_modules`, `public/`, build outputs or declaration files), prints the graph's size per top
// folder and its import cycles anywhere, then, for the modules under `src/`, the edges that break the layering and
// the imports of a Durable Object's internals from outside its folder; exits 1 when there is any. Layers, lowest
// first: platform → db → domain → resources → routes/internal; nothing lower may import anything higher, and Durable
// Objects import neither the domain nor HTTP code. Run it on another checkout with `node scripts/import-graph.mjs <dir>`.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const root = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, ".."));

/** What counts as a source file, and what is never read: dependencies, built or served files, test output. */
const SOURCE = /\.(?:ts|tsx|mts|cts|js|mjs|cjs)$/;
const DECLARATION = /\.d\.[mc]?ts$/;
const SKIPPED = new Set(["public", "bench/results", "clients/typescript/dist", "coverage", "test-results"]);
/** The folders whose modules the layering and Durable Object checks apply to. */
const LAYERED = /^(?:src|durable-objects)\//;

/** Top folders a module of each layer must not import from. */
const FORBIDDEN = {
  "src/platform": ["src/db", "src/domain", "src/resources", "src/routes", "src/internal", "src/middleware"],
  "src/db": ["src/domain", "src/resources", "src/routes", "src/internal", "src/middleware", "src/durable-objects"],
  "src/domain": ["src/resources", "src/routes", "src/internal", "src/middleware"],
  "src/resources": ["src/routes", "src/internal", "src/middleware"],
  "src/durable-objects": ["src/domain", "src/resources", "src/routes", "src/internal", "src/middleware", "src/db"],
};

const files = walk(root).filter((file) => SOURCE.test(file) && !DECLARATION.test(file));
const graph = new Map(files.map((file) => [relative(file), imports(file).map(relative)]));
const edges = [...graph.values()].reduce((sum, targets) => sum + targets.length, 0);
const cycles = stronglyConnected(graph).filter((component) => component.length > 1);
const layered = [...graph].filter(([from]) => LAYERED.test(from));
const broken = layered.flatMap(([from, targets]) =>
  targets.filter((to) => forbidden(from, to)).map((to) => `${from} → ${to}`),
);

const internals = layered.flatMap(([from, targets]) =>
  targets.filter((to) => reachesInside(from, to)).map((to) => `${from} → ${to}`),
);

const perFolder = new Map();
for (const file of graph.keys()) {
  const folder = file.includes("/") ? file.slice(0, file.indexOf("/")) : ".";
  perFolder.set(folder, (perFolder.get(folder) ?? 0) + 1);
}
const folders = [...perFolder].sort((a, b) => b[1] - a[1]).map(([folder, count]) => `${folder} ${count}`);
console.log(`${graph.size} modules (${folders.join(", ")}), ${edges} imports`);
console.log(`import cycles: ${cycles.length}`);
for (const cycle of cycles) console.log(`  ${cycle.join(" ⇄ ")}`);
console.log(`under src/: imports of a Durable Object's internals from outside its folder: ${internals.length}`);
for (const edge of internals) console.log(`  ${edge}`);
console.log(`under src/: layering broken: ${broken.length}`);
for (const edge of broken) console.log(`  ${edge}`);
if (cycles.length > 0 || broken.length > 0 || internals.length > 0) process.exit(1);

/** Every file under `dir`, but for dependencies, hidden folders and what `SKIPPED` names. */
function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (!entry.isDirectory()) return entry.isFile() ? [full] : [];
    const skipped = entry.name === "node_modules" || entry.name.startsWith(".") || SKIPPED.has(relative(full));
    return skipped ? [] : walk(full);
  });
}

function relative(file) {
  return path.relative(root, file).split(path.sep).join("/");
}

/**
 * The local source modules a file imports (for its effects too), re-exports from or imports dynamically with a
 * literal path: statements at the start of a line, so that code quoted in a string or a comment does not count.
 */
function imports(file) {
  const text = readFileSync(file, "utf8");
  const patterns = [
    /^\s*(?:import|export)\b[^;]*?\bfrom\s*["'](\.[^"']+)["']/gms,
    /^\s*import\s*["'](\.[^"']+)["']/gm,
    /^[^/*\n]*?\bimport\(\s*["'](\.[^"']+)["']\s*\)/gm,
  ];
  const specifiers = new Set(patterns.flatMap((pattern) => [...text.matchAll(pattern)].map((m) => m[1])));
  return [...specifiers].map((specifier) => resolve(path.dirname(file), specifier)).filter(Boolean);
}

/**
 * The source file a relative specifier names: as written (`./x.ts`, `./x.mjs`), TypeScript's `.js` for `.ts`, without
 * its extension, or a folder's index. Null for anything else (JSON, assets, a missing file).
 */
function resolve(dir, specifier) {
  const base = path.resolve(dir, specifier.replace(/[?#].*$/, ""));
  const extensions = [".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs"];
  const candidates = [
    base,
    ...(/\.[mc]?js$/.test(base) ? [base.replace(/js$/, "ts"), base.replace(/\.js$/, ".tsx")] : []),
    ...extensions.map((extension) => `${base}${extension}`),
    ...extensions.map((extension) => path.join(base, `index${extension}`)),
  ];
  return candidates.find((file) => SOURCE.test(file) && existsSync(file) && statSync(file).isFile()) ?? null;
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
