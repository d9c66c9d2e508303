/**
 * Writes schema.json, the Pulumi package schema the component provider serves to Python, Go, C#, Java and YAML
 * programs (components/plugin.ts): `npm run gen` (after gen-spec, whose args interfaces it reads); `-- --check` exits 1
 * when the committed file differs (tests/package/schema.test.ts runs the same check).
 *
 * The schema is derived from the same declarations TypeScript users compile against: the args interfaces of NetTuning
 * and NicQueues (their JSDoc becomes each property's description) and the classes' public outputs, read by
 * @pulumi/pulumi's own schema analyzer (provider/experimental), which the Node.js language host would otherwise run
 * when the plugin starts. That analyzer refuses union types other than enums, so this generator extends it at one point,
 * a union type:
 *  - members that only TypeScript can pass ({@link TYPESCRIPT_ONLY}: the resolved profiles and presets the TypeScript
 *    helpers return) are left out; the declarative spec beside them is what other languages send;
 *  - a union of what is left becomes a schema `oneOf` of its members' types (a ring size `number | "max"`), which the SDK
 *    generators render as their languages' unions; except a union with a list among its members (a CPU list
 *    `"all" | number[]`, a sysctl value `number | string | number[]`), which stays `Any`: the Python SDK (3.248,
 *    pulumi/runtime/rpc.py `_get_list_element_type`) cannot serialize a list whose declared type is a Union, so the
 *    generated Python SDK would fail on `[4096, 131072, 6291456]` (seen with `npm run bench:languages`). The
 *    component checks those values itself, with the same messages in every language.
 * Everything else is the analyzer's, unchanged: the same types, names and tokens the inferred schema had.
 */
import * as fs from "fs";
import * as path from "path";
import type * as typescript from "typescript";
import { COMPONENTS } from "../components/provider";

const REPO = path.resolve(__dirname, "..");
export const SCHEMA_FILE = "schema.json";
/**
 * Interfaces that only a TypeScript program can pass (the values the sizing helpers and `nicPresets` return): in a union
 * beside the spec form, the schema gives only the spec form.
 */
const TYPESCRIPT_ONLY = new Set(["SysctlProfile", "NicPreset"]);

type Prop = Record<string, unknown>;

/** The package's provider name as run-plugin derives it from package.json `name` (scope dropped). */
export function providerName(pkg: { name: string }): string {
  return pkg.name.replace(/^@[^/]+\//, "").replace(/[^-a-zA-Z0-9_]/g, "-");
}

/** The schema of the package in `dir` (the repository, or a clone of it), as JSON text with a final newline. */
export function renderSchema(dir: string = REPO): string {
  const ts: typeof typescript = require("typescript");
  // the analyzer's analyzeType is private in its declarations: the class is taken untyped, with the shape used here
  const { Analyzer } = require("@pulumi/pulumi/provider/experimental/analyzer") as {
    Analyzer: new (dir: string, name: string, pkg: unknown, components: Set<string>) => {
      analyze(): { components: unknown; typeDefinitions: unknown; dependencies: unknown };
      analyzeType(context: Record<string, unknown>, type: typescript.Type, location: typescript.Node, optional?: boolean, docString?: string): Prop;
    };
  };
  const { generateSchema } = require("@pulumi/pulumi/provider/experimental/schema");
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  const name = providerName(pkg);

  /** The analyzer with union types (module doc). `analyzeType` is the analyzer's one entry for a property's type. */
  class UnionAnalyzer extends Analyzer {
    analyzeType(context: Record<string, unknown>, type: typescript.Type, location: typescript.Node, optional = false, docString?: string): Prop {
      // enums, booleans (`true | false`) and the Input/Output wrappers are the analyzer's own cases
      if (!type.isUnion() || isEnumLike(type) || isBoolean(type) || isWrapper(type)) return super.analyzeType(context, type, location, optional, docString);
      const members = type.types.filter((t) => (t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)) === 0);
      const isOptional = optional || members.length < type.types.length;
      const kept = members.filter((t) => !TYPESCRIPT_ONLY.has(String(t.getSymbol()?.escapedName ?? "")));
      if (kept.length === 1) return super.analyzeType(context, kept[0], location, isOptional, docString);
      let prop: Prop;
      if (kept.some((t) => checker().isArrayType(t))) prop = { $ref: "pulumi.json#/Any" }; // never plain, as the analyzer's Any
      else {
        const oneOf = mergeLiterals(kept).map((t) => {
          const p = super.analyzeType(context, t, location, false, undefined);
          delete p.plain;
          return p;
        });
        prop = { oneOf };
        if (context.inputOutput === 0 /* InputOutput.Neither: plain */) prop.plain = true;
      }
      if (isOptional) prop.optional = true;
      if (docString) prop.description = docString;
      return prop;
    }
  }
  /** A union the analyzer takes as an enum: string or number literals only. */
  function isEnumLike(t: typescript.UnionType): boolean {
    const defined = t.types.filter((m) => (m.flags & ts.TypeFlags.Undefined) === 0);
    return defined.every((m) => m.isStringLiteral()) || defined.every((m) => m.isNumberLiteral());
  }
  function isBoolean(t: typescript.UnionType): boolean {
    return t.types.every((m) => (m.flags & (ts.TypeFlags.BooleanLiteral | ts.TypeFlags.Undefined)) !== 0);
  }
  /** `Input<T>` (T | Promise<T> | OutputInstance<T>) and `Output<T>`: the analyzer unwraps them. */
  function isWrapper(t: typescript.UnionType): boolean {
    return t.types.some((m) => {
      const n = String(m.getSymbol()?.escapedName ?? m.aliasSymbol?.escapedName ?? "");
      return n === "Promise" || n === "OutputInstance" || n === "Output";
    });
  }
  /** A union's string literals (`"max"`, `"all"`) stand for the string type in `oneOf`: one string member. */
  function mergeLiterals(types: typescript.Type[]): typescript.Type[] {
    const out: typescript.Type[] = [];
    let str = false;
    for (const t of types) {
      if (t.isStringLiteral() || (t.flags & ts.TypeFlags.String) !== 0) {
        if (!str) out.push(checker().getStringType());
        str = true;
      } else if (t.isNumberLiteral()) out.push(checker().getNumberType());
      else out.push(t);
    }
    return out;
  }
  // the components the provider serves (components/provider.ts), by class name: tokens `net-tuning:index:<name>`
  const analyzer = new UnionAnalyzer(dir, name, pkg, new Set(Object.keys(COMPONENTS)));
  const checker = (): typescript.TypeChecker => (analyzer as unknown as { checker: typescript.TypeChecker }).checker;
  const r = analyzer.analyze();
  const schema = generateSchema(name, pkg.version, pkg.description, r.components, r.typeDefinitions, r.dependencies, undefined);
  return `${JSON.stringify(schema, null, 2)}\n`;
}

/** The committed file's difference from a fresh rendering: [] when up to date. */
export function schemaDrift(): string[] {
  const file = path.join(REPO, SCHEMA_FILE);
  const now = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
  return now === renderSchema() ? [] : [SCHEMA_FILE];
}

if (require.main === module) {
  if (process.argv.includes("--check")) {
    const d = schemaDrift();
    if (d.length > 0) {
      console.error(`out of date: ${d.join(", ")} (run npm run gen)`);
      process.exit(1);
    }
  } else {
    fs.writeFileSync(path.join(REPO, SCHEMA_FILE), renderSchema());
    console.log(`written: ${SCHEMA_FILE}`);
  }
}
