/**
 * The package as a user installs it: from the `npm pack` tarball, from a directory (symlink, and --install-links),
 * and from a git URL (prepare builds dist). Each install compiles a consumer program with the tsconfig of Pulumi's
 * TypeScript template (strict, no skipLibCheck, no esModuleInterop) and runs it under setMocks: the child Commands'
 * inputs, the @pulumi/pulumi copies that loaded, and a bad input's message are checked.
 * Needs the npm registry or a warm npm cache (installs use --prefer-offline); every step has a timeout.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { freshClone, npm, REPO, run } from "./freshClone";

const FIXTURE = path.join(__dirname, "fixtures/consumer");
const PULUMI = "@pulumi/pulumi@3.248.0";
const COMMAND = "@pulumi/command@1.2.1";
const TOOLS = ["@types/node@20", `typescript@${require("typescript/package.json").version}`];

let tmp = "";
let tarball = "";

/** A consumer project: the fixture program and Pulumi's template tsconfig, with `specs` installed. */
function consumer(name: string, specs: string[], flags: string[] = []): string {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: `consumer-${name}`, version: "1.0.0", private: true }));
  fs.copyFileSync(path.join(FIXTURE, "index.ts.txt"), path.join(dir, "index.ts"));
  fs.copyFileSync(path.join(FIXTURE, "tsconfig.json.txt"), path.join(dir, "tsconfig.json"));
  npm(dir, ["install", ...flags, ...specs]);
  return dir;
}

interface Result {
  registered: Record<string, Record<string, unknown>>;
  copies: string[];
  bad: string;
}
/** Compiles the consumer with its tsconfig (no output = no error) and runs it in both modes. */
function compileAndRun(dir: string, node = process.execPath): { spec: Result; helper: Result } {
  expect(run(node, [path.join(dir, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], { cwd: dir, timeout: 120_000 })).toBe("");
  const once = (mode: string): Result =>
    JSON.parse(run(node, ["bin/index.js"], { cwd: dir, timeout: 60_000, env: { ...process.env, MODE: mode } }).trim().split("\n").pop()!);
  return { spec: once("spec"), helper: once("helper") };
}

/** What every install must give: the same plan from specs and helpers, the checks, one SDK copy (unless told). */
function expectWorkingProgram(r: { spec: Result; helper: Result }, dir: string, copies = 1): void {
  expect(r.spec.registered).toEqual(r.helper.registered);
  const apply = r.spec.registered["gw-apply"];
  expect(apply.stdin).toContain("\nnet.ipv4.tcp_rmem = 4096 ");
  expect(apply.stdin).toContain("\nnet.core.somaxconn = 8192\n");
  // become "sudo": the way to root is the stdin's (provider/host/programs.ts sudoLine), not the command's
  expect(String(apply.stdin)).toContain("\np=sudo\\ -n;");
  expect(String(apply.create)).not.toContain("sudo");
  expect(r.spec.registered["gw-eth0-apply"].stdin).toContain("@set ring.rx max\n");
  expect(r.spec.bad).toMatch(/^NicQueues "bad": 2 invalid inputs:\n {2}- become "doas" is not supported: use "sudo".*\n {2}- rings\.rx must be an integer from 1 to 1048576/);
  // The component registers in its constructor before validating; its children never do.
  expect(Object.keys(r.spec.registered).filter((n) => n.startsWith("bad-"))).toEqual([]);
  expect(r.spec.copies).toHaveLength(copies);
  expect(r.spec.copies[0]).toBe(path.join(dir, "node_modules/@pulumi/pulumi/index.js"));
}

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "net-tuning-pkg-"));
  // `npm pack` runs prepare (the build), as `npm publish` does.
  const out = npm(REPO, ["pack", "--pack-destination", tmp, "--json"], 300_000);
  tarball = path.join(tmp, JSON.parse(out.slice(out.indexOf("[")))[0].filename);
}, 320_000);
afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe("npm pack tarball", () => {
  test("holds dist (with the host programs), LICENSE and README, and no sources, tests or maps", () => {
    const files = run("tar", ["tzf", tarball], { cwd: tmp, timeout: 30_000 }).split("\n").filter(Boolean);
    expect(files).toEqual(expect.arrayContaining(["package/LICENSE", "package/README.md", "package/package.json", "package/dist/index.js", "package/dist/index.d.ts", "package/schema.json", "package/dist/components/plugin.js"]));
    expect(files.some((f) => f.startsWith("package/dist/provider/host/sh/"))).toBe(true);
    expect(files.filter((f) => !f.startsWith("package/dist/") && !["package/LICENSE", "package/README.md", "package/package.json", "package/schema.json"].includes(f))).toEqual([]);
    expect(files.filter((f) => /\.map$|\/tests?\/|testkit|\.test\./.test(f))).toEqual([]);
    const pj = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8"));
    expect(pj.dependencies["@pulumi/pulumi"]).toBeUndefined();
    expect(pj.peerDependencies).toEqual({ "@pulumi/pulumi": "^3.248.0", "@pulumi/command": "^1.2.1" });
    expect(pj.scripts.prepare).toBe("npm run build");
    expect(fs.readFileSync(path.join(REPO, "LICENSE"), "utf8")).toMatch(/Apache License\s+Version 2\.0, January 2004/);
  });

  test("the declarations a user compiles against (dist/index.d.ts and every .d.ts it reaches) have no `any`", () => {
    const dir = path.join(tmp, "unpacked");
    fs.mkdirSync(dir, { recursive: true });
    run("tar", ["xzf", tarball, "-C", dir], { cwd: tmp, timeout: 30_000 });
    const seen = new Set<string>();
    const hits: string[] = [];
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = fs.readFileSync(file, "utf8");
      // declarations without comments and string literal types (a JSDoc or a usage text may say "any")
      const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "").replace(/"(?:[^"\\\n]|\\.)*"/g, '""');
      code.split("\n").forEach((l, i) => /\bany\b/.test(l) && hits.push(`${path.relative(dir, file)}:${i + 1}: ${l.trim()}`));
      for (const m of text.matchAll(/from "(\.{1,2}\/[^"]+)"/g)) visit(path.resolve(path.dirname(file), `${m[1]}.d.ts`));
    };
    visit(path.join(dir, "package/dist/index.d.ts"));
    expect(seen.size).toBeGreaterThan(10);
    expect(hits).toEqual([]);
    // package.json: `main` is the plugin entry run-plugin loads, `exports` what a program's import of the package gets
    const pj = JSON.parse(fs.readFileSync(path.join(dir, "package/package.json"), "utf8"));
    expect([pj.main, pj.types, pj.exports["."]]).toEqual(["dist/components/plugin.js", "dist/index.d.ts", { types: "./dist/index.d.ts", default: "./dist/index.js" }]);
  });

  test("installed from the tarball: compiles under Pulumi's template tsconfig and runs", () => {
    const dir = consumer("tarball", [tarball, PULUMI, COMMAND, ...TOOLS]);
    expectWorkingProgram(compileAndRun(dir), dir);
  }, 400_000);

  test("top of the peer range: Node 22 and the current @pulumi/pulumi and @pulumi/command from the registry", () => {
    // Current @pulumi/pulumi needs Node >=22: a Node 22 build comes from the npm registry (node-<platform>-<arch>).
    const nodePkg = `node-${process.platform}-${process.arch}`;
    const dir = consumer("latest", [tarball, "@pulumi/pulumi@latest", "@pulumi/command@latest", `${nodePkg}@22`, ...TOOLS]);
    const node22 = path.join(dir, "node_modules", nodePkg, "bin/node");
    expect(run(node22, ["--version"], { cwd: dir, timeout: 30_000 })).toMatch(/^v22\./);
    const sdk = JSON.parse(fs.readFileSync(path.join(dir, "node_modules/@pulumi/pulumi/package.json"), "utf8"));
    expect(Number(sdk.version.split(".")[1])).toBeGreaterThan(248);
    expectWorkingProgram(compileAndRun(dir, node22), dir);
  }, 400_000);
});

describe("from a directory and from git", () => {
  let clone = "";
  beforeAll(() => {
    clone = freshClone(path.join(tmp, "clone"));
  }, 120_000);

  test("npm install <git url>: prepare builds dist, the program runs", () => {
    const dir = consumer("git", [`git+file://${clone}`, PULUMI, COMMAND, ...TOOLS]);
    expect(fs.existsSync(path.join(dir, "node_modules/net-tuning/dist/index.js"))).toBe(true);
    expect(fs.lstatSync(path.join(dir, "node_modules/net-tuning")).isSymbolicLink()).toBe(false);
    expectWorkingProgram(compileAndRun(dir), dir);
  }, 600_000);

  test("npm install <path>: a symlink; --install-links gives a copy that loads one @pulumi/pulumi", () => {
    npm(clone, ["install"], 600_000); // the clone's own install runs its prepare (dist) and brings its dev copy of the SDK
    expect(fs.existsSync(path.join(clone, "dist/index.js"))).toBe(true);
    const linked = consumer("link", [clone, PULUMI, COMMAND, ...TOOLS]);
    expect(fs.lstatSync(path.join(linked, "node_modules/net-tuning")).isSymbolicLink()).toBe(true);
    const viaLink = compileAndRun(linked);
    // Node resolves a symlinked package's imports from its real path: the clone's dev copy of the SDK loads too.
    expect(viaLink.spec.copies.sort()).toEqual([path.join(clone, "node_modules/@pulumi/pulumi/index.js"), path.join(linked, "node_modules/@pulumi/pulumi/index.js")].sort());
    const copied = consumer("install-links", [clone, PULUMI, COMMAND, ...TOOLS], ["--install-links"]);
    expect(fs.lstatSync(path.join(copied, "node_modules/net-tuning")).isSymbolicLink()).toBe(false);
    const viaCopy = compileAndRun(copied);
    expectWorkingProgram(viaCopy, copied);
    expect(viaLink.spec.registered).toEqual(viaCopy.spec.registered);
  }, 900_000);
});
