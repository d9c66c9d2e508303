/**
 * Programs and host helpers of the real-CLI suite (tests/cli). The program is one plain JavaScript file that builds the
 * resources named in the stack config `resources` (JSON: { name: { kind: "sysctl" | "nic", args } }), so a test changes
 * what is declared with `pulumi config set`, as a user changes a program, and no TypeScript compile runs per program.
 */
import { spawn } from "child_process";
import * as fs from "fs";
import * as path from "path";
import type { LabHost, Who } from "../../testkit/lab";
import { CliProject, pulumiHome, toolchain } from "../../testkit/cli";

export const PROGRAM = `"use strict";
const pulumi = require("@pulumi/pulumi");
const { NetTuning, NicQueues } = require("net-tuning");
const cfg = new pulumi.Config();
// "labEngine" in the config: deliver the lab's build of the engine, with this fault-injection overlay (testkit/labEngine.ts)
if (cfg.get("labEngine")) {
  const path = require("path");
  const e = require(path.join(path.dirname(require.resolve("net-tuning")), "provider", "host", "engine"));
  e.useEngine(e.assembleEngine(undefined, undefined, require("fs").readFileSync(cfg.get("labEngine"), "utf8")));
}
const connection = {
  host: cfg.require("host"),
  port: cfg.requireNumber("port"),
  user: cfg.require("user"),
  privateKey: cfg.requireSecret("privateKey"),
  ...(cfg.getObject("dial") || {}), // dialErrorLimit / perDialTimeout when a test sets them
};
const out = {};
for (const [name, r] of Object.entries(JSON.parse(cfg.require("resources")))) {
  const args = { connection, ...r.args };
  // "outputs" / "secrets" in the config: those arguments (or one entry of one, "sysctls.KEY") arrive through an
  // Output (known only once resolved) / as a Pulumi secret
  for (const [how, wrap] of [["outputs", pulumi.output], ["secrets", pulumi.secret]]) {
    for (const [k, v] of Object.entries(r[how] || {})) {
      const [a, b] = k.split(/\\.(.*)/);
      if (!b) args[a] = wrap(v);
      else args[a] = { ...(args[a] || {}), [b]: wrap(v) };
    }
  }
  const res = r.kind === "nic" ? new NicQueues(name, args) : new NetTuning(name, args);
  out[name] = { applied: res.applied, previous: res.previous };
  if (r.args.verify) out[name].verification = res.verification;
}
module.exports = out;
`;

export interface Declared {
  kind: "sysctl" | "nic";
  args: Record<string, unknown>;
  /** arguments (or "sysctls.<key>": one entry) passed as pulumi.output(value) */
  outputs?: Record<string, unknown>;
  /** arguments (or "sysctls.<key>": one entry) passed as pulumi.secret(value) */
  secrets?: Record<string, unknown>;
}

/** A project of {@link PROGRAM} on `host` as `who`, with `resources` declared; `init()` done. */
export async function projectOn(host: LabHost, name: string, who: Who, resources: Record<string, Declared>, port?: number): Promise<CliProject> {
  const c = host.connection(who);
  const p = new CliProject({
    name,
    program: PROGRAM,
    config: { host: c.host, port: String(port ?? c.port), user: c.user, resources: JSON.stringify(resources) },
    secrets: { privateKey: c.privateKey },
  });
  await p.init();
  return p;
}

export async function declare(p: CliProject, resources: Record<string, Declared>): Promise<void> {
  await p.setConfig("resources", JSON.stringify(resources));
}

/** The current value of every key, as the kernel reads it back (whitespace collapsed). */
export async function values(host: LabHost, keys: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const k of keys) {
    const r = await host.exec(`cat /proc/sys/${k.replace(/\./g, "/")}`);
    if (r.code !== 0) throw new Error(`cannot read ${k}: ${r.stderr}`);
    out[k] = r.stdout.trim().split(/\s+/).join(" ");
  }
  return out;
}

export async function fileOf(host: LabHost, path: string): Promise<string | null> {
  const r = await host.exec(`cat ${path}`);
  return r.code === 0 ? r.stdout : null;
}

/**
 * Runs an Automation API program of another language (tests/cli/python/program.py, tests/cli/go/main.go) for one
 * operation (`preview`, `up`, `destroy`) against `host` as root, in `dir` (its file:// backend under dir/state), with the
 * suite's PULUMI_HOME and `env` (PULUMI_DEBUG_PROVIDERS for the component provider). The program prints the CLI's output
 * and a last "RESULT {json}" line.
 */
export function inlineProgram(command: string[], host: LabHost, env: NodeJS.ProcessEnv, dir: string, op: string, sysctls: Record<string, unknown>): Promise<{ code: number; out: string; result: Record<string, unknown> }> {
  const tc = toolchain();
  const c = host.connection("root");
  const keyFile = path.join(dir, "key");
  fs.mkdirSync(path.join(dir, "state"), { recursive: true });
  fs.writeFileSync(keyFile, c.privateKey, { mode: 0o600 });
  return new Promise((resolve) => {
    const p = spawn(command[0], [...command.slice(1), op], {
      cwd: dir,
      env: {
        ...process.env,
        ...env,
        PULUMI_HOME: pulumiHome(),
        NT_PULUMI_ROOT: tc.dir,
        NT_PY_DIR: dir,
        NT_GO_DIR: dir,
        PULUMI_BACKEND_URL: `file://${path.join(dir, "state")}`,
        PULUMI_CONFIG_PASSPHRASE: "net-tuning-cli-suite",
        PULUMI_SKIP_UPDATE_CHECK: "true",
        PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
        NT_HOST: c.host,
        NT_PORT: String(c.port),
        NT_KEY_FILE: keyFile,
        NT_SYSCTLS: JSON.stringify(sysctls),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    p.stdout.on("data", (d) => (out += d.toString()));
    p.stderr.on("data", (d) => (out += d.toString()));
    p.on("close", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("RESULT "));
      resolve({ code: code ?? 1, out, result: line ? (JSON.parse(line.slice(7)) as Record<string, unknown>) : {} });
    });
  });
}

/**
 * The lifecycle the Python and Go programs both run on `host` (`run(op)` runs one operation of the program): preview
 * (the create, the settings as live → declared, one read-only session, nothing changed), up (the values, the outputs,
 * a live read, the engine copy, the apply), an unchanged up (the live read only) and destroy (the originals, one
 * restore session). `sysctls`: the declared values, as numbers.
 */
export async function otherLanguageLifecycle(
  host: LabHost,
  sysctls: Record<string, number>,
  run: (op: string) => Promise<{ code: number; out: string; result: Record<string, unknown> }>,
  sessionsOf: () => Promise<Record<string, number | undefined>>,
): Promise<void> {
  const keys = Object.keys(sysctls);
  const declared = Object.fromEntries(Object.entries(sysctls).map(([k, v]) => [k, String(v)]));
  const originals = await values(host, keys);

  const pv = await run("preview");
  expect([pv.code, pv.out.slice(-3000)]).toEqual([0, expect.any(String)]);
  expect(pv.out).toContain("+ net-tuning:index:NetTuning: (create)");
  for (const k of keys) if (originals[k] !== declared[k]) expect(pv.out).toContain(`${k}: ${originals[k]} → ${declared[k]}`);
  expect(await values(host, keys)).toEqual(originals);
  expect(await sessionsOf()).toEqual({ "live-read": 1 });

  const up = await run("up");
  expect([up.code, up.out.slice(-3000)]).toEqual([0, expect.any(String)]);
  expect(await values(host, keys)).toEqual(declared);
  expect(up.result.applied).toEqual(declared);
  expect(up.result.previous).toEqual(originals);
  expect(await sessionsOf()).toEqual({ "live-read": 1, sftp: 1, apply: 1 });

  expect((await run("up")).code).toBe(0);
  expect(await sessionsOf()).toEqual({ "live-read": 1 });

  const d = await run("destroy");
  expect([d.code, d.out.slice(-3000)]).toEqual([0, expect.any(String)]);
  expect(await values(host, keys)).toEqual(originals);
  expect(await sessionsOf()).toEqual({ restore: 1 });
}
