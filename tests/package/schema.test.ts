/**
 * The schema the component provider serves, inferred in-process by @pulumi/pulumi's analyzer exactly as GetSchema
 * does (fast; the gRPC test checks the same over the wire from a fresh clone), and the Python and YAML examples
 * checked against it: YAML parsed by a YAML parser, every resource type, property and nested field known to the
 * schema; Python compiled by `python3 -m py_compile` and its keyword arguments known to the schema.
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";

const REPO = path.resolve(__dirname, "../..");
const { Analyzer } = require("@pulumi/pulumi/provider/experimental/analyzer");
const { generateSchema } = require("@pulumi/pulumi/provider/experimental/schema");

let schema: any;
beforeAll(() => {
  const pj = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8"));
  // run-plugin derives the provider name from package.json "name" (scope dropped, other characters → "-").
  const providerName = pj.name.replace(/^@[^/]+\//, "").replace(/[^-a-zA-Z0-9_]/g, "-");
  const a = new Analyzer(REPO, providerName, pj, new Set(["NetTuning", "NicQueues"]));
  const r = a.analyze();
  schema = generateSchema(providerName, pj.version, pj.description, r.components, r.typeDefinitions, r.dependencies, undefined);
}, 120_000);

const ref = (p: any): any => (p?.$ref?.startsWith("#/types/") ? schema.types[p.$ref.slice("#/types/".length)] : undefined);

test("provider name = package name = the type tokens' package (no URN change for existing stacks)", () => {
  expect(schema.name).toBe("net-tuning");
  expect(Object.keys(schema.resources).sort()).toEqual(["net-tuning:index:NetTuning", "net-tuning:index:NicQueues"]);
  const src = (f: string) => fs.readFileSync(path.join(REPO, "components", f), "utf8");
  expect(src("netTuning.ts")).toContain('super("net-tuning:index:NetTuning"');
  expect(src("nicQueues.ts")).toContain('super("net-tuning:index:NicQueues"');
});

test("nested argument types are named object types and enums, not Any", () => {
  const nq = schema.resources["net-tuning:index:NicQueues"].inputProperties;
  for (const k of ["rings", "channels", "coalesce", "rps", "irqAffinity", "preset", "connection"]) expect([k, ref(nq[k])?.type]).toEqual([k, "object"]);
  expect(ref(nq.persistence).enum).toHaveLength(4);
  expect(nq.features).toMatchObject({ type: "object", additionalProperties: { type: "boolean" } });
  expect(nq.txQueueLength.type).toBe("number");
});

/** Checks a YAML/JSON value against a schema property: object fields known (recursively), enums' values valid. */
function unknownFields(value: unknown, prop: any, where: string): string[] {
  const t = ref(prop);
  if (t?.enum) return t.enum.some((e: any) => e.value === value) || /^\$\{/.test(String(value)) ? [] : [`${where}: ${JSON.stringify(value)} not in enum`];
  if (t?.type === "object" && value && typeof value === "object") {
    return Object.entries(value).flatMap(([k, v]) => (t.properties[k] ? unknownFields(v, t.properties[k], `${where}.${k}`) : [`${where}.${k}: unknown field`]));
  }
  return [];
}

test("examples/yaml-quickstart parses and uses only the schema's types and property names", () => {
  const doc = parse(fs.readFileSync(path.join(REPO, "examples/yaml-quickstart/Pulumi.yaml"), "utf8"));
  expect(doc.runtime).toBe("yaml");
  expect(Object.keys(doc.packages)).toEqual(["net-tuning"]);
  const resources = Object.entries<any>(doc.resources);
  expect(resources.map(([, r]) => r.type).sort()).toEqual(["net-tuning:index:NetTuning", "net-tuning:index:NicQueues"]);
  const problems: string[] = [];
  for (const [name, r] of resources) {
    const res = schema.resources[r.type];
    for (const req of res.requiredInputs) if (!(req in r.properties)) problems.push(`${name}: required ${req} missing`);
    for (const [k, v] of Object.entries(r.properties)) {
      if (!res.inputProperties[k]) problems.push(`${name}.${k}: not an input`);
      else problems.push(...unknownFields(v, res.inputProperties[k], `${name}.${k}`));
    }
  }
  for (const [k, v] of Object.entries<string>(doc.outputs)) {
    const m = /^\$\{([\w-]+)\.(\w+)\}$/.exec(v);
    const type = m && doc.resources[m[1]]?.type;
    if (!m || !type || !schema.resources[type].properties[m[2]]) problems.push(`outputs.${k}: ${v} is not an output of the schema`);
  }
  expect(problems).toEqual([]);
  // The sysctl values are numbers and lists, as the component receives them from YAML.
  expect(doc.resources.quickstart.properties.sysctls["net.ipv4.tcp_rmem"]).toEqual([4096, 131072, 16777216]);
});

test("examples/python-web-fleet compiles and passes only the schema's arguments (snake_case)", () => {
  const file = path.join(REPO, "examples/python-web-fleet/__main__.py");
  execFileSync("python3", ["-m", "py_compile", file], { timeout: 60_000, env: { ...process.env, PYTHONPYCACHEPREFIX: "/tmp/net-tuning-pycache" } });
  const py = fs.readFileSync(file, "utf8");
  const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  const call = /net_tuning\.NetTuning\(([\s\S]*?)\n {4}\)/.exec(py);
  expect(call).not.toBeNull();
  const kwargs = [...call![1].matchAll(/^\s{8}(\w+)=/gm)].map((m) => m[1]);
  const inputs = Object.keys(schema.resources["net-tuning:index:NetTuning"].inputProperties).map(snake);
  expect(kwargs.length).toBeGreaterThanOrEqual(3);
  expect(kwargs.filter((k) => !inputs.includes(k))).toEqual([]);
  const connKeys = [...py.matchAll(/connection=\{([^}]*)\}/g)].flatMap((m) => [...m[1].matchAll(/"(\w+)":/g)].map((k) => k[1]));
  const connProps = Object.keys(schema.types["net-tuning:index:ConnectionArgs"].properties).map(snake);
  expect(connKeys.filter((k) => !connProps.includes(k))).toEqual([]);
  expect(py).toMatch(/profile = \{"name": "webServer"\}/);
  expect(schema.types["net-tuning:index:Become"].enum.map((e: any) => e.name)).toContain("Sudo"); // → Become.SUDO in Python
});
