/**
 * The real-CLI tier: Pulumi projects run by the real `pulumi` CLI (built from the Go module proxy by
 * scripts/pulumi-toolchain.sh) against lab hosts. What is real and what is not, per piece:
 *   - the CLI and its engine (steps, diffs, replaces, checkpoint, the display a reviewer reads): the real v3.248.0 binary;
 *   - the program's language runtime: testkit/cli/langhost.js, reached with the CLI's `--client` flag (the Node SDK's
 *     LanguageServer, whose Run starts `@pulumi/pulumi/cmd/run` as pulumi-language-nodejs does), because
 *     pulumi-language-nodejs is not served; NT_NODEJS_HOST runs the real one instead;
 *   - the command provider: the real pulumi-resource-command when NT_COMMAND_PROVIDER names a binary of it, otherwise
 *     the stand-in plugin (testkit/cli/command-standin.ts: the harness's SSH code behind the provider's gRPC calls),
 *     started by the engine like any plugin. {@link providerLabel} says which one a run used; tests put it in their titles.
 * Each {@link CliProject} is a temporary directory with Pulumi.yaml, index.js (plain JavaScript that requires
 * `net-tuning` by name: node_modules/net-tuning links to this checkout, whose dist/ `npm ci` built) and a file://
 * backend. Nothing here touches ~/.pulumi: PULUMI_HOME is the suite's own.
 */
import { spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import type { LabHost } from "../lab";

const ROOT = path.resolve(__dirname, "..", "..");
const COMMAND_VERSION = "1.2.1";

export interface Toolchain {
  /** the cache directory of this CLI version (scripts/pulumi-toolchain.sh) */
  dir: string;
  pulumi: string;
  version: string;
}

let cachedToolchain: Toolchain | undefined;
/** Builds (or finds) the toolchain; throws with the script's own words when it cannot. */
export function toolchain(): Toolchain {
  if (cachedToolchain) return cachedToolchain;
  const r = spawnSync("sh", [path.join(ROOT, "scripts", "pulumi-toolchain.sh")], { encoding: "utf8", timeout: 60 * 60_000 });
  if (r.status !== 0) throw new Error(`scripts/pulumi-toolchain.sh failed (exit ${r.status ?? r.signal}):\n${r.stderr}`);
  const dir = r.stdout.trim().split("\n").pop() as string;
  const pulumi = path.join(dir, "bin", "pulumi");
  const version = spawnSync(pulumi, ["version"], { encoding: "utf8" }).stdout.trim();
  cachedToolchain = { dir, pulumi, version };
  return cachedToolchain;
}

/** Whether the toolchain is already built (nothing is built to find out). */
export function toolchainBuilt(): boolean {
  return spawnSync("sh", [path.join(ROOT, "scripts", "pulumi-toolchain.sh"), "--check"], { encoding: "utf8" }).status === 0;
}

/** The real plugin binary when NT_COMMAND_PROVIDER names one, else undefined (the stand-in is used). */
function realProvider(): string | undefined {
  const p = process.env.NT_COMMAND_PROVIDER;
  if (!p) return undefined;
  if (!fs.existsSync(p)) throw new Error(`NT_COMMAND_PROVIDER=${p}: no such file`);
  return path.resolve(p);
}

/**
 * The real pulumi-language-nodejs when NT_NODEJS_HOST names a binary of it (the CLI then starts it as for any
 * `runtime: nodejs` project), else undefined (testkit/cli/langhost.js serves the program through `--client`).
 */
function nodejsHost(): string | undefined {
  const p = process.env.NT_NODEJS_HOST;
  if (!p) return undefined;
  if (!fs.existsSync(p) || path.basename(p) !== "pulumi-language-nodejs") throw new Error(`NT_NODEJS_HOST=${p}: not a pulumi-language-nodejs binary`);
  return path.resolve(p);
}

/** Which language runtime serves the programs: the real pulumi-language-nodejs or testkit/cli/langhost.js. */
export function languageLabel(): string {
  return nodejsHost() ? "pulumi-language-nodejs" : "testkit/cli/langhost.js (--client; @pulumi/pulumi/cmd/run per run, as pulumi-language-nodejs starts it)";
}

/** Which command provider the engine runs: "pulumi-resource-command v1.2.1" or "stand-in for pulumi-resource-command". */
export function providerLabel(): string {
  return realProvider() ? `pulumi-resource-command v${COMMAND_VERSION}` : "stand-in for pulumi-resource-command";
}

let cachedHome: string | undefined;
/** The suite's PULUMI_HOME, with the command plugin (real or stand-in) installed as `resource command 1.2.1`. */
export function pulumiHome(): string {
  if (cachedHome) return cachedHome;
  const tc = toolchain();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "nt-cli-home-"));
  let file = realProvider();
  if (!file) {
    file = path.join(home, "pulumi-resource-command-standin");
    const tsNode = require.resolve("ts-node/register/transpile-only", { paths: [ROOT] });
    fs.writeFileSync(
      file,
      "#!/bin/sh\n# the real-CLI suite's stand-in for pulumi-resource-command (testkit/cli/command-standin.ts)\n" +
        `TS_NODE_PROJECT=${shq(path.join(ROOT, "tsconfig.dev.json"))} exec ${shq(process.execPath)} -r ${shq(tsNode)} ${shq(path.join(ROOT, "testkit", "cli", "command-standin.ts"))} "$@"\n`,
      { mode: 0o755 },
    );
  }
  const r = spawnSync(tc.pulumi, ["plugin", "install", "resource", "command", COMMAND_VERSION, "--file", file], {
    encoding: "utf8",
    env: { ...baseEnv(home) },
  });
  if (r.status !== 0) throw new Error(`pulumi plugin install resource command ${COMMAND_VERSION} failed: ${r.stderr}`);
  cachedHome = home;
  return home;
}

function shq(s: string): string {
  return `'${s.replace(/'/g, "'\\''")}'`;
}

function baseEnv(home: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PULUMI_HOME: home,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_DISABLE_REGISTRY_RESOLVE: "true",
    PULUMI_CONFIG_PASSPHRASE: "net-tuning-cli-suite",
    PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: "true",
    NO_COLOR: "1",
  };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
  /** the command line, for messages */
  argv: string[];
}

export interface CliProjectOptions {
  /** project name (Pulumi.yaml `name`) */
  name: string;
  /** index.js: plain JavaScript; `require("net-tuning")` and `require("@pulumi/pulumi")` resolve to this checkout's */
  program: string;
  /** stack config (`pulumi config set`), plain */
  config?: Record<string, string>;
  /** stack config set with --secret */
  secrets?: Record<string, string>;
  stack?: string;
  /**
   * Run the project's own program as Pulumi.yaml and package.json name it (testkit/cli/langhost.js --project), not
   * index.js: for a test that lays out the directory itself.
   */
  ownProgram?: boolean;
}

/** A Pulumi project in a temporary directory, run by the real CLI. Call {@link CliProject.init} first. */
export class CliProject {
  readonly dir: string;
  readonly stack: string;
  readonly home: string;
  private readonly tc: Toolchain;

  constructor(private readonly opts: CliProjectOptions) {
    this.tc = toolchain();
    this.home = pulumiHome();
    this.stack = opts.stack ?? "test";
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), `nt-cli-${opts.name}-`));
    fs.mkdirSync(path.join(this.dir, "state"));
    fs.mkdirSync(path.join(this.dir, "node_modules"));
    fs.symlinkSync(ROOT, path.join(this.dir, "node_modules", "net-tuning"));
    fs.symlinkSync(path.join(ROOT, "node_modules", "@pulumi"), path.join(this.dir, "node_modules", "@pulumi"));
    fs.writeFileSync(path.join(this.dir, "package.json"), JSON.stringify({ name: opts.name, main: "index.js", private: true }, null, 2));
    fs.writeFileSync(path.join(this.dir, "Pulumi.yaml"), `name: ${opts.name}\nruntime: nodejs\ndescription: net-tuning real-CLI suite\n`);
    this.setProgram(opts.program);
  }

  /**
   * Points the project's `net-tuning` at `dir`, a built copy of another version of the package (an upgrade test), or
   * back at this checkout. Each command runs the program in a new process, so the next one loads what the link names.
   */
  usePackage(dir: string = ROOT): void {
    const link = path.join(this.dir, "node_modules", "net-tuning");
    fs.rmSync(link, { force: true });
    fs.symlinkSync(dir, link);
  }

  setProgram(source: string): void {
    fs.writeFileSync(path.join(this.dir, "index.js"), source);
  }

  env(): NodeJS.ProcessEnv {
    return { ...baseEnv(this.home), PULUMI_BACKEND_URL: `file://${path.join(this.dir, "state")}` };
  }

  /** `pulumi stack init` and the config. */
  async init(): Promise<void> {
    await this.must(["stack", "init", this.stack]);
    for (const [k, v] of Object.entries(this.opts.config ?? {})) await this.setConfig(k, v);
    for (const [k, v] of Object.entries(this.opts.secrets ?? {})) await this.setConfig(k, v, true);
  }

  async setConfig(key: string, value: string, secret = false): Promise<void> {
    // the value on stdin (not argv): a private key starts with "-----"
    await this.must(["config", "set", key, ...(secret ? ["--secret"] : ["--plaintext"])], value);
  }

  /** Runs a `pulumi` command as it is (stack, config, export, or a program the CLI runs itself), with extra environment. */
  cli(args: string[], stdin?: string, timeoutMs = 120_000, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
    return this.spawnPulumi(args, stdin, timeoutMs, env);
  }

  private async must(args: string[], stdin?: string): Promise<CliResult> {
    const r = await this.cli(args, stdin);
    if (r.code !== 0) throw new Error(`pulumi ${args.join(" ")} failed (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
    return r;
  }

  /**
   * Runs a `pulumi` command that runs the program (preview, up, refresh, destroy with a program), with the program
   * served by testkit/cli/langhost.js for the length of the command.
   */
  async withProgram(args: string[], timeoutMs = 600_000, wrap: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
    const realHost = nodejsHost();
    if (realHost) return this.spawnPulumi(args, undefined, timeoutMs, { ...env, PATH: `${path.dirname(realHost)}:${process.env.PATH ?? ""}` }, wrap);
    const host = spawn(process.execPath, [path.join(__dirname, "langhost.js"), this.opts.ownProgram ? "--project" : path.join(this.dir, "index.js")], {
      cwd: this.dir,
      env: { ...this.env(), NODE_PATH: "" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let hostErr = "";
    host.stderr.on("data", (d) => (hostErr += d.toString()));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let out = "";
        const t = setTimeout(() => reject(new Error(`langhost did not start in 60 s: ${hostErr}`)), 60_000);
        host.stdout.on("data", (d) => {
          out += d.toString();
          const m = /port (\d+)/.exec(out);
          if (m) {
            clearTimeout(t);
            resolve(Number(m[1]));
          }
        });
        host.on("exit", (c) => reject(new Error(`langhost exited ${c}: ${hostErr}`)));
      });
      const r = await this.spawnPulumi([...args, `--client=127.0.0.1:${port}`], undefined, timeoutMs, env, wrap);
      if (hostErr.trim()) r.stderr += `\n[langhost] ${hostErr}`;
      return r;
    } finally {
      host.stdin.end();
      setTimeout(() => host.kill("SIGKILL"), 5_000).unref();
    }
  }

  preview(opts: { diff?: boolean; extra?: string[] } = {}): Promise<CliResult> {
    return this.withProgram(["preview", "--non-interactive", "--stack", this.stack, ...(opts.diff ? ["--diff"] : []), ...(opts.extra ?? [])]);
  }

  /** `pulumi up --yes` (with its preview, so the program runs twice) or, with skipPreview, `--skip-preview` (once). */
  up(opts: { skipPreview?: boolean; extra?: string[]; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
    return this.withProgram(["up", "--yes", "--non-interactive", "--stack", this.stack, ...(opts.skipPreview ? ["--skip-preview"] : []), ...(opts.extra ?? [])], 600_000, [], opts.env ?? {});
  }

  refresh(): Promise<CliResult> {
    return this.withProgram(["refresh", "--yes", "--non-interactive", "--skip-preview", "--stack", this.stack]);
  }

  destroy(): Promise<CliResult> {
    return this.withProgram(["destroy", "--yes", "--non-interactive", "--skip-preview", "--stack", this.stack]);
  }

  /** `pulumi stack export` as JSON (with --show-secrets when asked). */
  async export(showSecrets = false): Promise<{ text: string; json: StackExport }> {
    const r = await this.must(["stack", "export", "--stack", this.stack, ...(showSecrets ? ["--show-secrets"] : [])]);
    return { text: r.stdout, json: JSON.parse(r.stdout) as StackExport };
  }

  /** `pulumi stack output --json` */
  async outputs(showSecrets = false): Promise<Record<string, unknown>> {
    const r = await this.must(["stack", "output", "--json", "--stack", this.stack, ...(showSecrets ? ["--show-secrets"] : [])]);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  }

  /** Removes the stack's directory (after a destroy). */
  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** `wrap`: a command line to run `pulumi` under (e.g. GNU time), its program and arguments before pulumi's path. */
  private spawnPulumi(args: string[], stdin: string | undefined, timeoutMs: number, env: NodeJS.ProcessEnv = {}, wrap: string[] = []): Promise<CliResult> {
    const t0 = Date.now();
    const argv = [...args, "--color", "never"]; // a flag of the root command: every subcommand takes it
    return new Promise((resolve) => {
      const [cmd, ...pre] = [...wrap, this.tc.pulumi];
      const p = spawn(cmd, [...pre, ...argv], { cwd: this.dir, env: { ...this.env(), ...env }, stdio: ["pipe", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      p.stdout.on("data", (d) => (stdout += d.toString()));
      p.stderr.on("data", (d) => (stderr += d.toString()));
      const timer = setTimeout(() => p.kill("SIGKILL"), timeoutMs);
      p.stdin.end(stdin ?? "");
      p.on("close", (code, signal) => {
        clearTimeout(timer);
        resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr, ms: Date.now() - t0, argv: ["pulumi", ...argv] });
      });
    });
  }
}

export interface StackExport {
  version: number;
  deployment: {
    resources?: { urn: string; type: string; inputs?: Record<string, unknown>; outputs?: Record<string, unknown>; parent?: string; id?: string }[];
    pending_operations?: unknown[];
  };
}

/** A readable summary of a failed CLI run for an assertion message. */
export function explain(r: CliResult): string {
  return `${r.argv.join(" ")} exited ${r.code} after ${r.ms} ms\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

// ------------------------------------------------------------------------------------------------ sessions on the host

/** Where the session shell of {@link logSessions} writes its lines on the host. */
export const SESSION_LOG = "/var/log/nt-sessions";

/**
 * Makes the host log every SSH session by what it ran: root's and the sudo user's login shell become a wrapper that
 * appends "<user> <command, newlines as spaces>" to {@link SESSION_LOG} and then runs bash as
 * sshd would have (sshd runs `$SHELL -c COMMAND` for an exec request, `$SHELL -c /usr/lib/openssh/sftp-server` for
 * SFTP). The wrapper is the host's own: nothing on the client side counts.
 */
export async function logSessions(host: LabHost): Promise<void> {
  const wrapper = `#!/bin/sh
if [ "$1" = "-c" ]; then printf '%s %s\\n' "$(id -un)" "$(printf '%s' "$2" | tr '\\n' ' ')" >>${SESSION_LOG}; fi
exec /bin/bash "$@"
`;
  const r = await host.exec(
    `cat > /usr/local/sbin/nt-session-shell && chmod 0755 /usr/local/sbin/nt-session-shell && : > ${SESSION_LOG} && chmod 0666 ${SESSION_LOG} && ` +
      `sed -i -e 's#^\\(root:.*:\\)/bin/bash$#\\1/usr/local/sbin/nt-session-shell#' -e 's#^\\(ntsudo:.*:\\)/bin/bash$#\\1/usr/local/sbin/nt-session-shell#' /etc/passwd && ` +
      `grep -c nt-session-shell /etc/passwd`,
    { stdin: wrapper },
  );
  if (r.code !== 0 || r.stdout.trim() !== "2") throw new Error(`logSessions: cannot install the session shell: ${r.stderr}${r.stdout}`);
}

export type SessionKind = "live-read" | "apply" | "confirm" | "restore" | "sftp" | "other";
export interface Session {
  user: string;
  kind: SessionKind;
  command: string;
}

/** What a session ran, from its command line (provider/host/programs.ts and provider/live/read.ts build them). */
export function sessionKind(command: string): SessionKind {
  if (/sftp-server/.test(command)) return "sftp";
  if (/\/bin\/sh -s live live/.test(command)) return "live-read";
  if (/ net-tuning (sysctl|nic) apply-/.test(command)) return "apply";
  if (/ (sysctl|nic) confirm:/.test(command)) return "confirm";
  // as root the restore's bootstrap is the command; with become "sudo" the command reads it from stdin (RESTORE_SUDO_RUN)
  if (/net-tuning-in\.|restore stdin cut; nothing restored/.test(command)) return "restore";
  return "other";
}

/** The sessions logged since the last {@link clearSessions} (or {@link logSessions}). */
export async function sessions(host: LabHost): Promise<Session[]> {
  const r = await host.exec(`cat ${SESSION_LOG}`);
  if (r.code !== 0) throw new Error(`sessions: cannot read ${SESSION_LOG}: ${r.stderr}`);
  return r.stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const sp = l.indexOf(" ");
      const command = l.slice(sp + 1);
      return { user: l.slice(0, sp), command, kind: sessionKind(command) };
    });
}

export async function clearSessions(host: LabHost): Promise<void> {
  const r = await host.exec(`: > ${SESSION_LOG}`);
  if (r.code !== 0) throw new Error(`clearSessions: ${r.stderr}`);
}

/** Counts by kind, e.g. { "live-read": 2 }. */
export function countKinds(list: Session[]): Partial<Record<SessionKind, number>> {
  const c: Partial<Record<SessionKind, number>> = {};
  for (const s of list) c[s.kind] = (c[s.kind] ?? 0) + 1;
  return c;
}

// ------------------------------------------------------------------------------------------- the component provider

/**
 * This package served as a component provider for other languages, as pulumi-language-nodejs's RunPlugin starts it
 * (`node @pulumi/pulumi/cmd/run-plugin <package dir>`, which prints its port), for the engine to attach to with
 * PULUMI_DEBUG_PROVIDERS=net-tuning:<port> (pulumi-language-nodejs, which would start it, is not served by the Go module
 * proxy). One process serves every command until `stop()`, as an attached provider does.
 */
export async function startComponentPlugin(): Promise<{ port: number; env: NodeJS.ProcessEnv; stop(): void }> {
  // the environment as this test file sees it (jest gives each file a copy of process.env: a child spawned without
  // `env` gets the worker's), so NET_TUNING_KNOWN_HOSTS="" from startLab reaches the plugin: a stale 198.18.* line in
  // ~/.ssh/known_hosts must not refuse the lab hosts' reads
  const plugin = spawn(process.execPath, [require.resolve("@pulumi/pulumi/cmd/run-plugin", { paths: [ROOT] }), ROOT], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env } });
  const port = await new Promise<number>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("run-plugin printed no port in 60 s")), 60_000);
    plugin.stdout.once("data", (d) => {
      clearTimeout(t);
      resolve(Number(String(d).trim()));
    });
    plugin.on("exit", (c) => reject(new Error(`run-plugin exited ${c}`)));
  });
  return { port, env: { PULUMI_DEBUG_PROVIDERS: `net-tuning:${port}` }, stop: () => plugin.kill() };
}
