/**
 * docs/reference.md is what scripts/gen-reference.ts renders from the code's declarations today: an argument, output,
 * catalogue key, profile or CLI option added or re-documented without `npm run gen:reference` fails here.
 * Also: the page names every declaration it is generated from, and the user docs point at it.
 */
import * as fs from "fs";
import * as path from "path";
import { classOutputs, cliHelps, interfaceMembers, REFERENCE, renderReference, stale } from "../../scripts/gen-reference";
import { CATALOGUE, REJECTED_KEYS } from "../../provider/sysctl/catalogue";
import { NIC_ARGS_BEGIN, NIC_ARGS_END, renderNicArgs } from "../../scripts/gen-spec";
import { USAGE } from "../../bin/net-tuning";
import { nicPresets } from "../../provider/sizing/nic";

const REPO = path.resolve(__dirname, "../..");
const read = (f: string) => fs.readFileSync(path.join(REPO, f), "utf8");

test("docs/reference.md is up to date (npm run gen:reference)", () => {
  const committed = read(REFERENCE);
  const fresh = renderReference();
  if (committed !== fresh) {
    // name the first differing line, so the failure says what moved
    const a = committed.split("\n");
    const b = fresh.split("\n");
    const i = a.findIndex((l, k) => l !== b[k]);
    throw new Error(`${REFERENCE} is stale at line ${i + 1}:\n  committed: ${a[i]}\n  generated: ${b[i]}\nrun npm run gen:reference`);
  }
  expect(stale()).toBe(false);
});

test("a change of a declaration changes the page (the check can fail)", () => {
  const fresh = renderReference();
  const members = interfaceMembers("components/netTuning.ts", "NetTuningArgs");
  expect(members.length).toBeGreaterThanOrEqual(12);
  // the page holds each argument's own JSDoc text: editing one sentence of it makes the committed page differ
  const adopt = members.find((m) => m.name === "adopt")!;
  expect(fresh).toContain(adopt.doc.slice(0, 60));
  expect(fresh.replace(adopt.doc.slice(0, 60), "x")).not.toBe(fresh);
});

test("every NetTuning and NicQueues argument and output is on the page", () => {
  const page = read(REFERENCE);
  const nt = page.slice(page.indexOf("## NetTuning"), page.indexOf("## NicQueues"));
  const nq = page.slice(page.indexOf("## NicQueues"), page.indexOf("## Profile and preset specs"));
  for (const m of interfaceMembers("components/netTuning.ts", "NetTuningArgs")) expect(nt).toContain(`| \`${m.name}\` |`);
  for (const o of classOutputs("components/netTuning.ts", "NetTuning")) expect(nt).toContain(`| \`${o.name}\` |`);
  for (const m of [...interfaceMembers("components/nicQueues.ts", "NicQueuesArgs"), ...interfaceMembers("components/nicArgs.generated.ts", "NicSettingsArgs")]) {
    expect(nq).toContain(`| \`${m.name}\` |`);
  }
  for (const o of classOutputs("components/nicQueues.ts", "NicQueues")) expect(nq).toContain(`| \`${o.name}\` |`);
  expect(classOutputs("components/netTuning.ts", "NetTuning").map((o) => o.name)).toEqual(
    expect.arrayContaining(["applied", "previous", "filePath", "fileContent", "warnings", "acknowledged", "live", "drift"]),
  );
});

test("every catalogue key, refused key, profile, preset and CLI option is on the page", () => {
  const page = read(REFERENCE);
  expect(Object.keys(CATALOGUE).length).toBeGreaterThan(50);
  for (const k of Object.keys(CATALOGUE)) expect(page).toContain(`### \`${k}\``);
  for (const k of Object.keys(REJECTED_KEYS)) expect(page).toContain(`| \`${k}\` |`);
  for (const p of ["longFatFlows", "manySmallFlows", "webServer", "database", "proxyGateway", "nvmeTcpLatency", "nvmeTcpThroughput"]) {
    expect(page).toContain(`### \`${p}\``);
  }
  for (const p of Object.keys(nicPresets)) expect(page).toContain(`### \`nicPresets.${p}()\``);
  const options = USAGE.match(/^ {2}(-\w, )?--[a-z]+/gm) ?? [];
  expect(options.length).toBeGreaterThanOrEqual(10);
  for (const line of USAGE.trimEnd().split("\n")) expect(page).toContain(line);
  // every command the top help refers to has its own help on the page
  const helps = cliHelps();
  expect(helps[0].text).toBe(USAGE);
  for (const m of USAGE.matchAll(/net-tuning (\w+) --help/g)) {
    const h = helps.find((x) => x.argv[0] === m[1]);
    expect([m[1], h !== undefined && h.text.length > 0]).toEqual([m[1], true]);
    expect(page).toContain(`\`net-tuning ${m[1]} --help\` prints:`);
    for (const line of h!.text.trimEnd().split("\n")) expect(page).toContain(line);
  }
});

test("the NicQueues table is gen-spec's: gen-spec's rendering of the page changes nothing", () => {
  const page = read(REFERENCE);
  expect(renderNicArgs(page)).toBe(page);
  expect(page.indexOf(NIC_ARGS_BEGIN)).toBeLessThan(page.indexOf(NIC_ARGS_END));
});

test("the user docs cite public sources, not internal notes, and link the reference", () => {
  const docs = ["README.md", ...fs.readdirSync(path.join(REPO, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
  for (const f of docs) {
    const text = read(f);
    expect([f, /DOMAIN\.md|\/work\/shared/.test(text)]).toEqual([f, false]);
    expect([f, /\bthe article\b/i.test(text)]).toEqual([f, false]);
  }
  const readme = read("README.md");
  for (const d of ["docs/getting-started.md", "docs/reference.md", "docs/operations.md", "docs/internals.md", "docs/real-cli.md", "docs/api-landing.md"]) {
    expect([d, readme.includes(`(${d})`)]).toEqual([d, true]);
  }
});

test("relative links between the docs point at files and headings that exist", () => {
  const files = ["README.md", ...fs.readdirSync(path.join(REPO, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
  const slug = (h: string) =>
    h
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, "")
      .replace(/ /g, "-");
  const anchors = (f: string) => new Set(read(f).split("\n").filter((l) => /^#{1,6} /.test(l)).map((l) => slug(l.replace(/^#+ /, ""))));
  const broken: string[] = [];
  for (const f of files) {
    for (const m of read(f).matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1];
      if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
      const [file, anchor] = target.split("#");
      const resolved = file ? path.normalize(path.join(path.dirname(f), file)) : f;
      if (!fs.existsSync(path.join(REPO, resolved))) {
        broken.push(`${f}: ${target} (no file)`);
        continue;
      }
      if (anchor && resolved.endsWith(".md") && !anchors(resolved).has(anchor)) broken.push(`${f}: ${target} (no heading)`);
    }
  }
  expect(broken).toEqual([]);
});

/**
 * Every recipe the docs give is checked. A TypeScript block (```ts / ```typescript) that imports or constructs a
 * component is a whole program: it
 * type-checks against the package (strict, `net-tuning` resolved to this repository's index.ts) and runs under
 * Pulumi mocks (testkit/harness capture) with every config key it reads set, registering its resources without an
 * error. A Python, Go or YAML program block starts with a comment `from <path>` and must be a verbatim excerpt of that
 * file, which other tests run (tests/package/schema.test.ts, tests/cli/*.test.ts).
 */
describe("docs recipes", () => {
  const DOCS = ["README.md", ...fs.readdirSync(path.join(REPO, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
  interface Block {
    file: string;
    line: number;
    lang: string;
    code: string;
  }
  const blocks: Block[] = DOCS.flatMap((file) => {
    const out: Block[] = [];
    const lines = read(file).split("\n");
    for (let i = 0; i < lines.length; i++) {
      const open = /^```(\w+)\s*$/.exec(lines[i]);
      if (!open) continue;
      const end = lines.findIndex((l, k) => k > i && l === "```");
      out.push({ file, line: i + 1, lang: open[1], code: lines.slice(i + 1, end).join("\n") + "\n" });
      i = end;
    }
    return out;
  });
  // a TypeScript block is a recipe when it is a program: it imports or constructs a component (a type sketch such as
  // docs/audit.md's JSON schema is not)
  const ts = blocks.filter((b) => (b.lang === "ts" || b.lang === "typescript") && /^import |new (NetTuning|NicQueues)\(/m.test(b.code));
  const others = blocks.filter((b) => ["python", "go", "yaml", "js", "javascript", "csharp", "cs"].includes(b.lang));

  test("the docs hold TypeScript recipes (README, getting started, API landing)", () => {
    expect(ts.map((b) => b.file)).toEqual(expect.arrayContaining(["README.md", "docs/getting-started.md", "docs/api-landing.md"]));
    expect(ts.length).toBeGreaterThanOrEqual(4);
  });

  test("every TypeScript recipe type-checks against the package (strict)", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const tsc = require("typescript") as typeof import("typescript");
    const virtual = new Map(ts.map((b, i) => [path.join(REPO, ".recipes", `recipe${i}.ts`), b]));
    const options: import("typescript").CompilerOptions = {
      strict: true,
      noEmit: true,
      target: tsc.ScriptTarget.ES2022,
      module: tsc.ModuleKind.CommonJS,
      moduleResolution: tsc.ModuleResolutionKind.Node10,
      baseUrl: REPO,
      paths: { "net-tuning": ["index.ts"] },
      types: ["node"],
      skipLibCheck: true,
    };
    const host = tsc.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (f, lang, onError) => (virtual.has(f) ? tsc.createSourceFile(f, virtual.get(f)!.code, lang) : getSourceFile(f, lang, onError));
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (f) => virtual.has(f) || fileExists(f);
    const program = tsc.createProgram([...virtual.keys()], options, host);
    const problems = tsc
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file && virtual.has(d.file.fileName))
      .map((d) => {
        const b = virtual.get(d.file!.fileName)!;
        const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
        return `${b.file}:${b.line + 1 + line}: ${tsc.flattenDiagnosticMessageText(d.messageText, "\n")}`;
      });
    expect(problems).toEqual([]);
  }, 120_000);

  test("every TypeScript recipe runs under mocks and registers its resources without an error", async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const tsc = require("typescript") as typeof import("typescript");
    const { capture } = await import("../../testkit/harness");
    const warn = console.warn;
    console.warn = () => undefined;
    try {
      for (const b of ts) {
        const js = tsc.transpileModule(b.code, { compilerOptions: { module: tsc.ModuleKind.CommonJS, target: tsc.ScriptTarget.ES2022 } }).outputText;
        const found = [...b.code.matchAll(/\.(require|get)(Secret)?(Number|Object|Boolean)?(?:<[^>]*>)?\("(\w+)"\)/g)];
        const keys = found.map((m) => m[4]);
        const objects = new Set(found.filter((m) => m[3] === "Object").map((m) => m[4]));
        const project = "recipe";
        const value = (k: string) => (/key/i.test(k) ? "-----BEGIN OPENSSH PRIVATE KEY-----\nRECIPE\n" : k === "host" ? "203.0.113.10" : objects.has(k) ? '["203.0.113.21","203.0.113.22","203.0.113.23"]' : "ops");
        // (a rollout's `resume` is set only after a halt: absent, as in a first run)
        const config = Object.fromEntries(keys.filter((k) => k !== "resume").map((k) => [`${project}:${k}`, value(k)]));
        const req = (id: string): unknown => require(id === "net-tuning" ? path.join(REPO, "index") : id);
        const program = async () => {
          const mod: { exports: Record<string, unknown> } = { exports: {} };
          // eslint-disable-next-line @typescript-eslint/no-implied-eval
          new Function("exports", "require", "module", js)(mod.exports, req, mod);
          return { ...mod.exports };
        };
        const c = await capture(program, { project, stack: "dev", preview: true, config, secretConfigKeys: keys.filter((k) => /key/i.test(k)).map((k) => `${project}:${k}`) });
        const components = c.resources.filter((r) => r.type.startsWith("net-tuning:index:")).map((r) => r.name);
        expect([`${b.file}:${b.line}`, c.error ? String(c.error) : undefined]).toEqual([`${b.file}:${b.line}`, undefined]);
        expect([`${b.file}:${b.line}`, components.length > 0]).toEqual([`${b.file}:${b.line}`, true]);
        // every component the recipe declares reached the engine with its children (an -apply Command each)
        for (const n of components) expect(c.resources.map((r) => r.name)).toContain(`${n}-apply`);
      }
    } finally {
      console.warn = warn;
    }
  }, 120_000);

  test("every Python, Go and YAML program block is a verbatim excerpt of a file that other tests run", () => {
    const programs = others.filter((b) => b.lang !== "yaml" || /net-tuning:index:/.test(b.code));
    expect(programs.map((b) => b.lang)).toEqual(expect.arrayContaining(["python", "go", "yaml"]));
    for (const b of programs) {
      const first = b.code.split("\n")[0];
      const m = /^(?:#|\/\/) from (\S+)$/.exec(first);
      expect([`${b.file}:${b.line}`, first, !!m]).toEqual([`${b.file}:${b.line}`, first, true]);
      const source = read(m![1]);
      const excerpt = b.code.slice(first.length + 1);
      expect([`${b.file}:${b.line}`, source.includes(excerpt)]).toEqual([`${b.file}:${b.line}`, true]);
    }
  });
});
