/**
 * Code that runs in the collection's scripts, as the text a script holds: the functions of `./functions.ts` as
 * declarations, added to each script that calls them, and the scenario's `before` expressions. Both are read from
 * the functions themselves (`String(fn)`), so they are type-checked and linted like the rest, and need no build step.
 */
import { SCRIPT_FUNCTIONS } from "./functions";

export type { Shape } from "./functions";
export type { Postman } from "./sandbox";
export type ScriptFunctions = typeof SCRIPT_FUNCTIONS;

/**
 * The sandbox's libraries that the functions use, each loaded by a function of its name. These few lines are text:
 * a `require` in code would be taken by the Worker's bundler for one of its own, and resolved.
 */
const LIBRARIES: Record<string, string> = { cryptoJs: "crypto-js" };

/** `statements`, then the definitions of the functions they call, and of those these call in turn. */
export function withDefinitions(statements: string[]): string[] {
  const available = definitions();
  const called = new Set<string>();
  const unread = [statements.join("\n")];
  while (unread.length > 0) {
    const text = unread.pop()!;
    for (const [name, { call, source }] of available) {
      if (called.has(name) || !call.test(text)) continue;
      called.add(name);
      unread.push(source);
    }
  }
  const sources = [...available].filter(([name]) => called.has(name)).map(([, { source }]) => source);
  return [...statements, ...sources.flatMap((source) => source.split("\n"))];
}

/**
 * The text of a `before` expression (`() => …`): its arrow's body. What it uses of the sandbox is declared where it
 * is written, not imported or taken as a parameter: a bundler may rename those, never a global.
 */
export function expressionSource(expression: () => unknown): string {
  const source = sourceOf(expression);
  const head = /^\(\)\s*=>\s*(?!\{)/.exec(source);
  if (!head) throw new Error(`Postman script: a before expression must be \`() => <expression>\`: ${source}`);
  return source.slice(head[0].length);
}

interface Definition {
  /** Matches a call of the function. */
  call: RegExp;
  source: string;
}

let definitionsByName: Map<string, Definition> | undefined;

/** Every definition a script may need, by the name it is called by: read from the bundle once. */
function definitions(): Map<string, Definition> {
  if (!definitionsByName) {
    const sources: Record<string, string> = {
      ...Object.fromEntries(
        Object.entries(SCRIPT_FUNCTIONS).map(([name, method]) => [name, declaration(name, method)]),
      ),
      ...Object.fromEntries(
        Object.entries(LIBRARIES).map(([name, library]) => [
          name,
          `function ${name}() {\n  return require(${JSON.stringify(library)});\n}`,
        ]),
      ),
    };
    definitionsByName = new Map(
      Object.entries(sources).map(([name, source]) => [name, { call: new RegExp(`\\b${name}\\(`), source }]),
    );
  }
  return definitionsByName;
}

/**
 * A method's source is `name(…) { … }`, indented as in its object: `function` before it and that indentation off
 * make it a declaration, hoisted, so that it can follow the statements that call it.
 */
function declaration(name: string, method: (...args: never[]) => unknown): string {
  const source = sourceOf(method);
  if (!source.startsWith(`${name}(`) || source.includes("__name(")) {
    throw new Error(`Postman script function ${name} was changed by the bundler (see functions.ts): ${source}`);
  }
  const lines = source.split("\n");
  const indent = /^\s*/.exec(lines.at(-1)!)![0];
  return `function ${lines.map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line)).join("\n")}`;
}

/** A function's source as the bundle holds it, without the annotations it adds for minifiers (`new Date()` is pure). */
function sourceOf(fn: (...args: never[]) => unknown): string {
  return String(fn).replaceAll("/* @__PURE__ */ ", "");
}
