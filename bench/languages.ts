/**
 * Other languages through `pulumi package add`, with the real language hosts (issue #30): `npm run bench:languages`.
 * Not part of CI or jest: the Go module proxy does not serve pulumi-language-nodejs/-python/-go nor
 * pulumi-resource-command, so they exist only where scripts/pulumi-toolchain.sh built them from local clones
 * (NT_PULUMI_SOURCE, NT_COMMAND_SOURCE). This fails loudly when one is missing; it never falls back to a stand-in.
 *
 * For each language of LANGS_PARTS (default python,go,yaml), on one lab host (tag "langs"), in a new project:
 *   `pulumi package add <a git clone of this checkout's HEAD>` (the CLI runs `npm install` in the clone through
 *   pulumi-language-nodejs, starts the package as a component provider to get its schema, generates the SDK and
 *   installs it: pip into the project's venv for Python, a replace directive for Go, `packages:` only for YAML), then
 *   `pulumi preview --diff`, `pulumi up --skip-preview`, the same `up` with nothing changed and `pulumi destroy`,
 *   checking each exit code, the host's /proc/sys values and file after each step, and the SSH sessions each step
 *   opened (counted on the host, testkit/cli logSessions). The engine starts the package from the `packages:` entry
 *   through pulumi-language-nodejs: no PULUMI_DEBUG_PROVIDERS, no Automation API inline server.
 * The part "jest" runs tests/cli/netTuning.test.ts and tests/cli/harness.test.ts with the real Node host
 * (NT_NODEJS_HOST) and the real command provider (NT_COMMAND_PROVIDER) and records the counts.
 *
 * Writes bench/results/languages.{json,md} (BENCH_OUT): what ran, the versions, wall time per step, pass/fail, and the
 * exact output of the Python preview. Parts not run this time keep their previous entry (with its date).
 * Exit status 1 when anything failed. Needs root (lab hosts) and the npm registry and PyPI (the clone's `npm install`,
 * the generated Python SDK's `parver`).
 */
import { spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { clearSessions, countKinds, logSessions, sessions } from "../testkit/cli";
import { LabHost, startLab } from "../testkit/lab";

const ROOT = path.resolve(__dirname, "..");
const OUT = path.resolve(process.env.BENCH_OUT ?? path.join(ROOT, "bench", "results"));
const PARTS = (process.env.LANGS_PARTS ?? "python,go,yaml").split(",").map((s) => s.trim()).filter(Boolean);
const KNOWN = ["python", "go", "yaml", "jest"];
const COMMAND_VERSION = "1.2.1";
const FILE_NAME = "90-nt-langs.conf";
/** per-namespace keys, each set to a value the lab's default is not */
/**
 * The sysctls every language declares: numbers, a list (tcp_rmem's three fields) and a string, the three members of
 * the schema's `oneOf` for a sysctl value (scripts/gen-schema.ts).
 */
const SYSCTLS: Record<string, number | string | number[]> = {
  "net.core.somaxconn": 8192,
  "net.ipv4.tcp_fin_timeout": 23,
  "net.ipv4.tcp_keepalive_time": 1800,
  "net.ipv4.tcp_rmem": [4096, 131072, 8388608],
  "net.ipv4.tcp_congestion_control": "reno",
};
/** A sysctl value as /proc/sys shows it (a list's fields separated by one space). */
const procText = (v: number | string | number[]): string => (Array.isArray(v) ? v.join(" ") : String(v));
const STEP_TIMEOUT_MS = 900_000;

interface Run {
  code: number;
  out: string;
  ms: number;
  argv: string;
}
interface Step {
  what: string;
  argv: string;
  code: number;
  ms: number;
  ok: boolean;
  /** SSH sessions the step opened on the host, by what they ran */
  sessions?: Record<string, number | undefined>;
  /** what failed (assertions), empty when ok */
  problems: string[];
}
interface LanguageResult {
  language: string;
  date: string;
  ok: boolean;
  host: string;
  versions: Record<string, string>;
  steps: Step[];
  /** the exact output of the preview (--diff) */
  previewOutput?: string;
  error?: string;
}
interface JestResult {
  date: string;
  ok: boolean;
  command: string;
  env: Record<string, string>;
  ms: number;
  files: { file: string; status: string; passed: number; failed: number; skipped: number; ms: number }[];
  tests: { total: number; passed: number; failed: number; skipped: number };
  failures: string[];
}
interface Results {
  machine: { cpus: number; kernel: string; node: string };
  toolchain: { dir: string; pulumi: string; stamp: string[] };
  package: { commit: string; dirty: boolean };
  languages: Record<string, LanguageResult>;
  jest?: JestResult;
}

function log(s: string): void {
  process.stderr.write(`[languages] ${s}\n`);
}

function sh(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): { code: number; out: string } {
  const r = spawnSync(cmd, args, { cwd: opts.cwd, env: opts.env, encoding: "utf8", timeout: opts.timeoutMs ?? 120_000 });
  return { code: r.status ?? 1, out: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? String(r.error) : ""}` };
}

/** Runs a command with a hard timeout (its process group is killed), output merged as the terminal would show it. */
function run(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; stdin?: string; timeoutMs?: number }): Promise<Run> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    let out = "";
    p.stdout.on("data", (d) => (out += d.toString()));
    p.stderr.on("data", (d) => (out += d.toString()));
    const timer = setTimeout(() => {
      out += `\n[languages] killed after ${opts.timeoutMs ?? STEP_TIMEOUT_MS} ms\n`;
      try {
        process.kill(-(p.pid as number), "SIGKILL");
      } catch {
        /* gone */
      }
    }, opts.timeoutMs ?? STEP_TIMEOUT_MS);
    p.stdin.end(opts.stdin ?? "");
    p.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), out, ms: Date.now() - t0, argv: [path.basename(cmd), ...args].join(" ") });
    });
  });
}

/** The toolchain with every piece this needs, or an error naming what is missing and how to build it. */
function toolchain(): { dir: string; bin: string; pulumi: string; provider: string; stamp: string[] } {
  const r = spawnSync("sh", [path.join(ROOT, "scripts", "pulumi-toolchain.sh")], { encoding: "utf8", timeout: 3_600_000 });
  if (r.status !== 0) throw new Error(`scripts/pulumi-toolchain.sh failed (exit ${r.status ?? r.signal}):\n${r.stderr}`);
  const dir = r.stdout.trim().split("\n").pop() as string;
  const bin = path.join(dir, "bin");
  const stamp = r.stderr.split("\n").filter((l) => l.startsWith("pulumi-toolchain: ")).map((l) => l.slice("pulumi-toolchain: ".length));
  const missing = ["pulumi-language-nodejs", "pulumi-language-python", "pulumi-language-go", "pulumi-language-yaml"].filter((h) => !fs.existsSync(path.join(bin, h)));
  const provider = process.env.NT_COMMAND_PROVIDER ? path.resolve(process.env.NT_COMMAND_PROVIDER) : path.join(dir, "src", "pulumi-resource-command");
  if (!fs.existsSync(provider)) missing.push(`pulumi-resource-command (${provider})`);
  if (missing.length) {
    throw new Error(
      `the real language hosts and command provider are needed, and these are missing from ${dir}: ${missing.join(", ")}.\n` +
        `Build them from local clones: NT_PULUMI_SOURCE=<clone of github.com/pulumi/pulumi> NT_COMMAND_SOURCE=<clone of ` +
        `github.com/pulumi/pulumi-command> sh scripts/pulumi-toolchain.sh (or NT_COMMAND_PROVIDER=<binary>). The toolchain says:\n${stamp.join("\n")}`,
    );
  }
  return { dir, bin, pulumi: path.join(bin, "pulumi"), provider, stamp };
}

async function hostValues(host: LabHost): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(SYSCTLS)) {
    const r = await host.exec(`cat /proc/sys/${k.replace(/\./g, "/")}`);
    if (r.code !== 0) throw new Error(`cannot read ${k} on the host: ${r.stderr}`);
    out[k] = r.stdout.trim().split(/\s+/).join(" ");
  }
  return out;
}
async function fileThere(host: LabHost): Promise<boolean> {
  return (await host.exec(`test -f /etc/sysctl.d/${FILE_NAME}`)).code === 0;
}

/** Equal JSON values, objects compared without regard to key order (outputs come back with sorted keys). */
const same = (a: unknown, b: unknown): boolean => JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
const sorted = (v: unknown): unknown =>
  v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : 1)).map(([k, x]) => [k, sorted(x)])) : v;

const YAML_PROGRAM = (name: string) => `name: ${name}
runtime: yaml
description: NetTuning from YAML through pulumi package add (bench/languages.ts)
config:
  host: { type: string }
  port: { type: integer }
  privateKey: { type: string, secret: true }
  fileName: { type: string }
resources:
  web:
    type: net-tuning:index:NetTuning
    properties:
      connection:
        host: \${host}
        port: \${port}
        user: root
        privateKey: \${privateKey}
      fileName: \${fileName}
      sysctls:
${Object.entries(SYSCTLS)
  .map(([k, v]) => `        ${k}: ${JSON.stringify(v)}`)
  .join("\n")}
outputs:
  applied: \${web.applied}
  previous: \${web.previous}
`;

/** Lays out the project of `lang` in `dir` before `pulumi package add` (the program proper for Go comes after it). */
function layout(lang: string, dir: string, tc: { dir: string }): void {
  const src = path.join(__dirname, "languages");
  if (lang === "python") {
    fs.writeFileSync(path.join(dir, "Pulumi.yaml"), "name: ntlangspy\nruntime:\n  name: python\n  options:\n    toolchain: pip\n    virtualenv: venv\n");
    fs.writeFileSync(path.join(dir, "requirements.txt"), "pulumi>=3.248.0,<4.0.0\n");
    fs.copyFileSync(path.join(src, "python", "__main__.py"), path.join(dir, "__main__.py"));
    // the project's venv sees the toolchain venv's pulumi (PyPI, the CLI's version) through a .pth file: nothing of
    // pulumi is downloaded again, and the generated SDK goes into this venv, not the toolchain's
    const r = sh("python3", ["-m", "venv", path.join(dir, "venv")]);
    if (r.code !== 0) throw new Error(`python3 -m venv failed: ${r.out}`);
    const site = sh(path.join(tc.dir, "python", "bin", "python"), ["-c", "import site; print(site.getsitepackages()[0])"]).out.trim();
    const mine = sh(path.join(dir, "venv", "bin", "python"), ["-c", "import site; print(site.getsitepackages()[0])"]).out.trim();
    fs.writeFileSync(path.join(mine, "nt-toolchain.pth"), `${site}\n`);
  } else if (lang === "go") {
    fs.writeFileSync(path.join(dir, "Pulumi.yaml"), "name: ntlangsgo\nruntime: go\n");
    fs.copyFileSync(path.join(src, "go", "go.mod.in"), path.join(dir, "go.mod"));
    fs.writeFileSync(path.join(dir, "main.go"), 'package main\n\nimport "github.com/pulumi/pulumi/sdk/v3/go/pulumi"\n\nfunc main() { pulumi.Run(func(*pulumi.Context) error { return nil }) }\n');
  } else if (lang === "yaml") {
    fs.writeFileSync(path.join(dir, "Pulumi.yaml"), YAML_PROGRAM("ntlangsyaml"));
  } else throw new Error(`unknown language ${lang}`);
}

async function runLanguage(lang: string, host: LabHost, tc: ReturnType<typeof toolchain>, clone: string, home: string): Promise<LanguageResult> {
  const res: LanguageResult = { language: lang, date: new Date().toISOString(), ok: false, host: `${host.name} (${host.address})`, versions: {}, steps: [] };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `nt-langs-${lang}-`));
  fs.mkdirSync(path.join(dir, "state"));
  const env: NodeJS.ProcessEnv = {
    ...process.env, // NET_TUNING_KNOWN_HOSTS from startLab reaches the component provider
    PATH: `${tc.bin}:${process.env.PATH ?? ""}`,
    PULUMI_HOME: home,
    PULUMI_BACKEND_URL: `file://${path.join(dir, "state")}`,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_DISABLE_REGISTRY_RESOLVE: "true",
    PULUMI_CONFIG_PASSPHRASE: "net-tuning-langs-bench",
    GOTOOLCHAIN: "local",
    GOFLAGS: "-mod=mod",
    NO_COLOR: "1",
  };
  const pulumi = (args: string[], stdin?: string) => run(tc.pulumi, [...args, "--color", "never"], { cwd: dir, env, stdin });
  const must = async (args: string[], stdin?: string) => {
    const r = await pulumi(args, stdin);
    if (r.code !== 0) throw new Error(`${r.argv} exited ${r.code}:\n${r.out}`);
    return r;
  };
  let applied = false;
  try {
    layout(lang, dir, tc);
    const c = host.connection("root");
    await must(["stack", "init", "test", "--non-interactive"]);
    for (const [k, v] of Object.entries({ host: c.host, port: String(c.port), sysctls: JSON.stringify(SYSCTLS), fileName: FILE_NAME })) await must(["config", "set", k, "--plaintext"], v);
    await must(["config", "set", "privateKey", "--secret"], c.privateKey);
    const declared = Object.fromEntries(Object.entries(SYSCTLS).map(([k, v]) => [k, procText(v)]));
    const originals = await hostValues(host);
    for (const k of Object.keys(SYSCTLS)) if (originals[k] === declared[k]) throw new Error(`${k} is already ${declared[k]} on the host: pick another value`);

    const step = async (what: string, args: string[], check: (r: Run, p: string[]) => Promise<void>): Promise<Run> => {
      await clearSessions(host);
      log(`${lang}: ${what}: pulumi ${args.join(" ")}`);
      const r = await pulumi(args);
      const problems: string[] = [];
      if (r.code !== 0) problems.push(`exit ${r.code}`);
      const s = countKinds(await sessions(host));
      await check(r, problems).catch((e) => problems.push(String(e)));
      res.steps.push({ what, argv: r.argv, code: r.code, ms: r.ms, ok: problems.length === 0, sessions: s, problems });
      log(`${lang}: ${what}: exit ${r.code}, ${(r.ms / 1000).toFixed(1)} s, sessions ${JSON.stringify(s)}${problems.length ? `, FAILED: ${problems.join("; ")}` : ""}`);
      if (problems.length) log(`${lang}: ${what}: output:\n${r.out.slice(-4000)}`);
      return r;
    };
    const expectHost = async (p: string[], want: Record<string, string>, file: boolean, label: string) => {
      const got = await hostValues(host);
      if (!same(got, want)) p.push(`host values ${label}: ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
      if ((await fileThere(host)) !== file) p.push(`/etc/sysctl.d/${FILE_NAME} ${file ? "missing" : "still there"} ${label}`);
    };
    const expectSessions = async (p: string[], want: Record<string, number>) => {
      const got = countKinds(await sessions(host));
      if (!same(got, want)) p.push(`sessions ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    };

    await step("package add", ["package", "add", clone, "--non-interactive"], async (r, p) => {
      if (!/Added package net-tuning/.test(r.out)) p.push(`no "Added package net-tuning" in the output`);
      await expectSessions(p, {});
    });
    if (lang === "go") fs.copyFileSync(path.join(__dirname, "languages", "go", "main.go"), path.join(dir, "main.go"));

    const pv = await step("preview --diff", ["preview", "--diff", "--non-interactive"], async (r, p) => {
      if (!r.out.includes("+ net-tuning:index:NetTuning: (create)")) p.push(`no "+ net-tuning:index:NetTuning: (create)" in the preview`);
      for (const k of Object.keys(SYSCTLS)) if (!r.out.includes(`${k}: ${originals[k]} → ${declared[k]}`)) p.push(`no "${k}: ${originals[k]} → ${declared[k]}" in the preview`);
      await expectHost(p, originals, false, "after the preview");
      await expectSessions(p, { "live-read": 1 });
    });
    res.previewOutput = pv.out;

    applied = true;
    await step("up", ["up", "--yes", "--skip-preview", "--non-interactive"], async (r, p) => {
      await expectHost(p, declared, true, "after up");
      await expectSessions(p, { "live-read": 1, sftp: 1, apply: 1 });
      const o = await must(["stack", "output", "--json", "--show-secrets"]);
      const outs = JSON.parse(o.out) as { applied?: unknown; previous?: unknown };
      if (!same(outs.applied, declared)) p.push(`output applied ${JSON.stringify(outs.applied)}, want ${JSON.stringify(declared)}`);
      if (!same(outs.previous, originals)) p.push(`output previous ${JSON.stringify(outs.previous)}, want ${JSON.stringify(originals)}`);
    });

    await step("up, nothing changed", ["up", "--yes", "--skip-preview", "--non-interactive"], async (r, p) => {
      const summary = r.out.slice(r.out.lastIndexOf("Resources:"));
      if (!/\d+ unchanged/.test(summary) || /\b(created|updated|deleted|replaced)\b/.test(summary)) p.push(`the summary is not all unchanged: ${summary.split("\n").slice(0, 6).join(" | ")}`);
      await expectHost(p, declared, true, "after the unchanged up");
      await expectSessions(p, { "live-read": 1 });
    });

    await step("destroy", ["destroy", "--yes", "--skip-preview", "--non-interactive"], async (r, p) => {
      await expectHost(p, originals, false, "after destroy");
      await expectSessions(p, { restore: 1 });
    });
    applied = !res.steps[res.steps.length - 1].ok;

    res.versions = versions(lang, dir, tc, env);
    res.ok = res.steps.every((s) => s.ok) && res.steps.length === 5;
  } catch (e) {
    res.error = e instanceof Error ? e.message : String(e);
    log(`${lang}: ${res.error}`);
  } finally {
    if (applied) {
      const d = await pulumi(["destroy", "--yes", "--skip-preview", "--non-interactive"]);
      log(`${lang}: clean-up destroy exited ${d.code}`);
    }
    if (res.ok) fs.rmSync(dir, { recursive: true, force: true });
    else log(`${lang}: the project is kept in ${dir}`);
  }
  return res;
}

function versions(lang: string, dir: string, tc: { dir: string }, env: NodeJS.ProcessEnv): Record<string, string> {
  const v: Record<string, string> = {};
  if (lang === "python") {
    const py = path.join(dir, "venv", "bin", "python");
    v.python = sh(py, ["--version"]).out.trim();
    v["pulumi (PyPI)"] = sh(py, ["-c", "import importlib.metadata as m; print(m.version('pulumi'))"]).out.trim();
    v.pulumi_net_tuning = sh(py, ["-c", "import importlib.metadata as m; print(m.version('pulumi_net_tuning'))"]).out.trim();
  } else if (lang === "go") {
    v.go = sh("go", ["version"]).out.trim();
    v["github.com/pulumi/pulumi/sdk/v3"] = sh("go", ["list", "-m", "-f", "{{.Version}}", "github.com/pulumi/pulumi/sdk/v3"], { cwd: dir, env }).out.trim();
    v["SDK module"] = sh("go", ["list", "-m", "-f", "{{.Path}} => {{.Replace}}", "example.com/pulumi-net-tuning/sdk/go"], { cwd: dir, env }).out.trim().replace(dir, ".");
  } else if (lang === "yaml") {
    const y = fs.readFileSync(path.join(dir, "Pulumi.yaml"), "utf8");
    v["Pulumi.yaml packages"] = (/packages:\n((?: .*\n)+)/.exec(y)?.[1] ?? "(none)").trim().replace(/\/tmp\/nt-langs-pkg-[^/\s]+\/net-tuning/g, "<clone>");
    v["sdks/"] = sh("find", ["sdks", "-type", "f"], { cwd: dir }).out.trim().split("\n").join(", ");
  }
  void tc;
  return v;
}

/** tests/cli/netTuning.test.ts and harness.test.ts with the real Node host and the real command provider. */
async function runJest(tc: ReturnType<typeof toolchain>): Promise<JestResult> {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "nt-langs-jest-")), "jest.json");
  const env = { NT_NODEJS_HOST: path.join(tc.bin, "pulumi-language-nodejs"), NT_COMMAND_PROVIDER: tc.provider };
  const args = ["jest", "--selectProjects", "cli", "--testPathPattern", "tests/cli/(netTuning|harness)\\.test\\.ts$", "--json", `--outputFile=${out}`];
  log(`jest: ${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(" ")} npx ${args.join(" ")}`);
  const r = await run(path.join(ROOT, "node_modules", ".bin", "jest"), args.slice(1), { cwd: ROOT, env: { ...process.env, ...env }, timeoutMs: 3_600_000 });
  const res: JestResult = {
    date: new Date().toISOString(),
    ok: false,
    command: `npx ${args.slice(0, -2).join(" ")}`,
    env,
    ms: r.ms,
    files: [],
    tests: { total: 0, passed: 0, failed: 0, skipped: 0 },
    failures: [],
  };
  if (!fs.existsSync(out)) {
    res.failures.push(`jest wrote no results (exit ${r.code}):\n${r.out.slice(-3000)}`);
    return res;
  }
  type JestJson = {
    numTotalTests: number;
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    testResults: { name: string; status: string; startTime: number; endTime: number; message: string; assertionResults: { status: string; fullName: string }[] }[];
  };
  const j = JSON.parse(fs.readFileSync(out, "utf8")) as JestJson;
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
  res.tests = { total: j.numTotalTests, passed: j.numPassedTests, failed: j.numFailedTests, skipped: j.numPendingTests };
  for (const f of j.testResults) {
    const n = (s: string) => f.assertionResults.filter((a) => a.status === s).length;
    res.files.push({ file: path.relative(ROOT, f.name), status: f.status, passed: n("passed"), failed: n("failed"), skipped: n("pending") + n("skipped") + n("todo"), ms: f.endTime - f.startTime });
    if (f.status !== "passed") res.failures.push(`${path.relative(ROOT, f.name)}: ${f.message.slice(0, 3000)}`);
    // the tests name their provider (testkit/cli providerLabel): a stand-in run must not count
    const standin = f.assertionResults.filter((a) => !a.fullName.includes(`pulumi-resource-command v${COMMAND_VERSION}`));
    if (standin.length) res.failures.push(`${path.relative(ROOT, f.name)}: ${standin.length} tests do not name pulumi-resource-command v${COMMAND_VERSION}: ${standin[0].fullName}`);
  }
  res.ok = r.code === 0 && res.failures.length === 0 && res.files.length === 2 && res.tests.failed === 0 && res.tests.skipped === 0 && res.tests.total > 0;
  return res;
}

function render(r: Results): string {
  const L: string[] = [];
  L.push("# Other languages through `pulumi package add`, with the real language hosts", "");
  L.push("Generated by `npm run bench:languages` (bench/languages.ts); not in CI: the language hosts and the command provider exist");
  L.push("only where `scripts/pulumi-toolchain.sh` built them from local clones (`NT_PULUMI_SOURCE`, `NT_COMMAND_SOURCE`).", "");
  L.push(`Machine: ${r.machine.cpus} CPUs, kernel ${r.machine.kernel}, Node ${r.machine.node}. Package: a git clone of commit \`${r.package.commit.slice(0, 12)}\`${r.package.dirty ? " (the checkout had uncommitted changes, not in the clone)" : ""}.`, "");
  L.push(`Toolchain (\`${r.toolchain.dir.replace(os.homedir(), "~")}\`), \`pulumi ${r.toolchain.pulumi}\`, as scripts/pulumi-toolchain.sh reports it:`, "");
  L.push("```", ...r.toolchain.stamp, "```", "");
  L.push("Each language is a new project on the same lab host; the package is one clone for the run, so the first `package add`");
  L.push("includes the clone's `npm install` (with its `prepare`, the `tsc` build) and the later ones find it up to date.", "");
  for (const lang of KNOWN.filter((l) => r.languages[l])) {
    const x = r.languages[lang];
    L.push(`## ${lang}: ${x.ok ? "passed" : "FAILED"} (${x.date.slice(0, 16).replace("T", " ")} UTC, lab host ${x.host})`, "");
    if (Object.keys(x.versions).length) L.push(Object.entries(x.versions).map(([k, v]) => `${k}: \`${v.replace(/\n/g, " ")}\``).join("; ") + ".", "");
    if (x.error) L.push(`Error: \`${x.error.split("\n")[0]}\``, "");
    L.push("| step | command | exit | wall (s) | SSH sessions on the host | result |", "|---|---|---|---|---|---|");
    for (const s of x.steps) {
      const sess = Object.entries(s.sessions ?? {}).map(([k, v]) => `${k} ${v}`).join(", ") || "none";
      L.push(`| ${s.what} | \`${s.argv.replace(/ --color never$/, "").replace(/\/tmp\/[^ ]+/g, "<clone>")}\` | ${s.code} | ${(s.ms / 1000).toFixed(1)} | ${sess} | ${s.ok ? "ok" : `**failed**: ${s.problems.join("; ").replace(/\|/g, "\\|")}`} |`);
    }
    L.push("");
  }
  if (r.jest) {
    const j = r.jest;
    L.push(`## tests/cli with the real pulumi-language-nodejs and pulumi-resource-command: ${j.ok ? "passed" : "FAILED"} (${j.date.slice(0, 16).replace("T", " ")} UTC)`, "");
    L.push("```", `${Object.entries(j.env).map(([k, v]) => `${k}=${v.replace(os.homedir(), "~")}`).join(" ")} ${j.command}`, "```", "");
    L.push(`${j.tests.passed} of ${j.tests.total} tests passed, ${j.tests.failed} failed, ${j.tests.skipped} skipped; ${(j.ms / 1000).toFixed(0)} s wall.`, "");
    L.push("| file | status | passed | failed | skipped | time (s) |", "|---|---|---|---|---|---|");
    for (const f of j.files) L.push(`| ${f.file} | ${f.status} | ${f.passed} | ${f.failed} | ${f.skipped} | ${(f.ms / 1000).toFixed(0)} |`);
    L.push("");
    for (const f of j.failures) L.push("```", f.split("\n").slice(0, 40).join("\n"), "```", "");
  }
  const py = r.languages.python ?? Object.values(r.languages)[0];
  if (py?.previewOutput) {
    L.push(`## The output of \`pulumi preview --diff\` (${py.language}, pulumi ${r.toolchain.pulumi})`, "");
    L.push("```", py.previewOutput.replace(/\/tmp\/nt-langs-pkg-[^/\s]+/g, "<dir>").replace(/\/tmp\/nt-langs-[^/\s]+/g, "<project>").trimEnd(), "```", "");
  }
  return L.join("\n");
}

async function main(): Promise<void> {
  const unknown = PARTS.filter((p) => !KNOWN.includes(p));
  if (unknown.length || !PARTS.length) throw new Error(`LANGS_PARTS: unknown ${unknown.join(", ") || "(empty)"}; known: ${KNOWN.join(", ")}`);
  const tc = toolchain();
  const pulumiVersion = sh(tc.pulumi, ["version"]).out.trim();
  const jsonFile = path.join(OUT, "languages.json");
  const prev: Partial<Results> = fs.existsSync(jsonFile) ? (JSON.parse(fs.readFileSync(jsonFile, "utf8")) as Results) : {};
  const dirty = sh("git", ["-C", ROOT, "status", "--porcelain", "--", ".", ":!bench/results"]).out.trim() !== "";
  const results: Results = {
    machine: { cpus: os.cpus().length, kernel: os.release(), node: process.version },
    toolchain: { dir: tc.dir, pulumi: pulumiVersion, stamp: tc.stamp },
    package: { commit: sh("git", ["-C", ROOT, "rev-parse", "HEAD"]).out.trim(), dirty },
    languages: { ...(prev.languages ?? {}) },
    jest: prev.jest,
  };
  const langs = PARTS.filter((p) => p !== "jest");
  if (langs.length) {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "nt-langs-home-"));
    const inst = sh(tc.pulumi, ["plugin", "install", "resource", "command", COMMAND_VERSION, "--file", tc.provider], { env: { ...process.env, PULUMI_HOME: home, PULUMI_SKIP_UPDATE_CHECK: "true" } });
    if (inst.code !== 0) throw new Error(`pulumi plugin install resource command ${COMMAND_VERSION} --file ${tc.provider} failed: ${inst.out}`);
    const clone = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "nt-langs-pkg-")), "net-tuning");
    const cl = sh("git", ["clone", "-q", ROOT, clone]);
    if (cl.code !== 0) throw new Error(`git clone ${ROOT} failed: ${cl.out}`);
    const lab = await startLab({ hosts: 1, tag: "langs" });
    try {
      const host = lab.hosts[0];
      await logSessions(host);
      for (const lang of langs) results.languages[lang] = await runLanguage(lang, host, tc, clone, home);
    } finally {
      await lab.stop();
      fs.rmSync(path.dirname(clone), { recursive: true, force: true });
      fs.rmSync(home, { recursive: true, force: true });
    }
  }
  if (PARTS.includes("jest")) results.jest = await runJest(tc);
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(jsonFile, JSON.stringify(results, null, 2) + "\n");
  fs.writeFileSync(path.join(OUT, "languages.md"), render(results));
  const failed = [...langs.map((l) => results.languages[l]).filter((x) => !x.ok).map((x) => x.language), ...(PARTS.includes("jest") && !results.jest?.ok ? ["jest"] : [])];
  log(`wrote ${path.relative(ROOT, jsonFile)} and languages.md; ${failed.length ? `FAILED: ${failed.join(", ")}` : "all passed"}`);
  if (failed.length) process.exitCode = 1;
}

main().catch((e) => {
  log(`FAILED: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
});
