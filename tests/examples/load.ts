/**
 * Loads an example's `index.ts` as a fresh Pulumi program, the way the Pulumi Node.js runtime does: the module's
 * top-level code runs once per evaluation and its exports become the stack outputs (a default-exported function
 * is called and its result used instead).
 *
 * Why not `require`: a module runs only once per process (jest registry or Node's cache), but the harness evaluates
 * a program many times (preview, up, second up). Why not `jest.isolateModules`: it would load a second
 * `@pulumi/pulumi`, which the harness forbids. So the example is transpiled with TypeScript's `transpileModule`
 * and evaluated with a `require` that resolves relative imports from the example's directory and shares every
 * other module (`@pulumi/pulumi`, `@pulumi/command`) with the caller.
 *
 * The examples import the package by name (`from "net-tuning"`), as a copied project does after `npm install`; here
 * that name is this checkout's own index.ts (no build, one `@pulumi/pulumi`), in every runner that evaluates them
 * (jest's unit, lab and vm projects, and `npm run demo` under ts-node). tests/cli/examples.test.ts runs the same
 * files as projects with the package installed from its `npm pack` tarball.
 */
import * as fs from "fs";
import * as path from "path";
import * as ts from "typescript";
import type { PulumiProgram } from "../../testkit/harness";

export const EXAMPLES_DIR = path.resolve(__dirname, "../../examples");
/** The package's name (package.json) and, for the examples evaluated here, what it resolves to. */
export const PACKAGE_NAME = "net-tuning";
const PACKAGE_ROOT = path.resolve(__dirname, "../../index");

const compiled = new Map<string, string>();

function compile(file: string): string {
  let js = compiled.get(file);
  if (js === undefined) {
    const source = fs.readFileSync(file, "utf8");
    js = ts.transpileModule(source, {
      fileName: file,
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    }).outputText;
    compiled.set(file, js);
  }
  return js;
}

/** The Pulumi program of `examples/<name>/index.ts`. */
export function exampleProgram(name: string): PulumiProgram {
  const dir = path.join(EXAMPLES_DIR, name);
  const file = path.join(dir, "index.ts");
  if (!fs.existsSync(file)) throw new Error(`no example ${name} (${file})`);
  return async () => {
    const js = compile(file);
    const mod: { exports: Record<string, unknown> } = { exports: {} };
    const req = (id: string): unknown =>
      require(id === PACKAGE_NAME ? PACKAGE_ROOT : id.startsWith(".") ? path.resolve(dir, id) : id);
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    const fn = new Function("exports", "require", "module", "__filename", "__dirname", js) as (
      e: unknown, r: unknown, m: unknown, f: string, d: string) => void;
    fn(mod.exports, req, mod, file, dir);
    const exported = mod.exports as Record<string, unknown> & { default?: unknown };
    if (typeof exported.default === "function") return await (exported.default as () => unknown)();
    if (typeof (mod.exports as unknown) === "function") return await (mod.exports as unknown as () => unknown)();
    return { ...exported };
  };
}

/** Full config keys (`<project>:<key>`) for a plain key → value map; objects and arrays are JSON-encoded. */
export function configFor(project: string, values: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) continue;
    out[`${project}:${k}`] = typeof v === "string" ? v : JSON.stringify(v);
  }
  return out;
}
