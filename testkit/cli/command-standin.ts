/**
 * A stand-in for the pulumi-resource-command 1.2.1 plugin, for the real-CLI suite on machines where the real plugin
 * cannot be built: the Go module proxy does not serve github.com/pulumi/pulumi-command/provider (it has no tags of its
 * own; scripts/pulumi-toolchain.sh names the refusal on every run). The real `pulumi` engine starts it as it would the
 * real plugin (installed as `resource command 1.2.1` into a PULUMI_HOME of the suite's own) and drives it through the
 * same gRPC calls: Check, Diff, Create, Update, Delete. Every SSH detail (dialing and its retries, Setenv of the
 * previous stdout/stderr, stdin, exit status and the error text, SFTP) is the lifecycle harness's (testkit/harness/ssh.ts),
 * which mirrors the real provider's remote package. The resource rules are the provider's own (v1.2.1, tag commit
 * 7f3eb6f3b77c, on pulumi-go-provider v1.3.0's `infer`):
 *   Check    the connection (and a proxy) gets infer's defaults (user "root", port 22, dialErrorLimit 10,
 *     perDialTimeout 15) and is made a secret, as are password, privateKey and privateKeyPassword inside it.
 *   Diff     infer's diff of the old inputs (DiffRequest.old_inputs) against the new: a detailed diff by property path
 *     (`create`, `triggers[0]`; a secret is one value: `connection`), the changed top-level keys, and a replace only for
 *     the path `triggers` itself (triggers added or removed; a changed element `triggers[0]` is an update: the schema's
 *     replaceOnChanges is looked up by the whole path).
 *   command:remote:Command  Create runs `create` when set (any string, "" too); Update runs `update`, else `create`
 *     (nothing when neither is set: stdout/stderr stay); Delete runs the `delete` stored in state with the stored
 *     connection, stdin and stdout/stderr. Outputs: the inputs, `stdout`, `stderr`. Ids: the name and 8 hex digits.
 *   command:remote:CopyToRemote  Create copies the FileAsset over SFTP; Update copies again only when the asset's hash
 *     or `remotePath` changed; Delete does nothing. Ids: 8 hex digits.
 *   A failed command, dial or copy is a plain error (the text the real one prints): nothing is stored for a failed
 *     Create, and a failed Update leaves the old inputs and outputs in state, so the next preview shows the same update
 *     again. v1.2.1 does not return partial state (ErrorResourceInitFailed): its `run` returns a plain error, which
 *     infer v1.3.0 passes on as one (only an infer.ResourceInitFailedError becomes an initialization failure).
 *   Logs     through the engine's Log service, as the provider's logger: each line of the command's stdout and stderr
 *     (as `logging` allows) as an ephemeral info status of the resource, a refused Setenv of the previous
 *     stdout/stderr as a warning and of an `environment` variable as an error, `Dial n/limit failed: retrying` as a
 *     status. The lines reach the engine after the command ended (the real one streams them).
 * Secrets in inputs stay secret in the outputs (the inputs are echoed with their secret markers). The SDK's provider
 * server cannot send a detailed diff, so its gRPC Diff handler is replaced here (see {@link diffHandler}).
 * How this was checked against the real provider built from a snapshot: testkit/cli/README.md. The tests that need
 * the real plugin run with NT_COMMAND_PROVIDER=/path/to/pulumi-resource-command instead (testkit/cli/index.ts).
 */
import { spawn } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { main, Provider } from "@pulumi/pulumi/provider";
import { Connection, copyToRemote, defaultSshTuning, RunOutcome, runCommand } from "../harness/ssh";

const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
const ASSET_SIG = "c44067f5952c0a294b673a41bacd8c17";
const ARCHIVE_SIG = "0def7320c3a5731c473e5ecbe6d01bc7";
const SIG = "4dabf18193072939515e22adb298388d";
const COMMAND = "command:remote:Command";
const COPY = "command:remote:CopyToRemote";
const LOCAL = "command:local:Command";

type Props = Record<string, unknown>;

/** The value with every secret marker taken off (what the provider acts on). */
function reveal(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reveal);
  if (v && typeof v === "object") {
    const o = v as Props;
    if (o[SIG] === SECRET_SIG) return reveal(o.value);
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, reveal(x)]));
  }
  return v;
}

const isSecret = (v: unknown): v is Props => !!v && typeof v === "object" && (v as Props)[SIG] === SECRET_SIG;
const secret = (v: unknown): unknown => (isSecret(v) ? v : { [SIG]: SECRET_SIG, value: v });
/** A plain object (not an array, a secret, an asset or another special value). */
const isObject = (v: unknown): v is Props => !!v && typeof v === "object" && !Array.isArray(v) && !(SIG in (v as Props));

function typeOf(urn: string): string {
  return urn.split("::")[2]?.split("$").pop() ?? "";
}

// ------------------------------------------------------------------------------------------------ engine log

// The SDK's gRPC runtime and generated messages (the ones its provider server uses).
const sdkDir = path.dirname(require.resolve("@pulumi/pulumi/package.json"));
// eslint-disable-next-line @typescript-eslint/no-require-imports
const grpc = require(require.resolve("@grpc/grpc-js", { paths: [sdkDir] })) as {
  Server: { prototype: { addService(s: unknown, impl: Record<string, unknown>): void } };
  credentials: { createInsecure(): unknown };
};
// eslint-disable-next-line @typescript-eslint/no-require-imports
const provproto = require("@pulumi/pulumi/proto/provider_pb");
// eslint-disable-next-line @typescript-eslint/no-require-imports
const engproto = require("@pulumi/pulumi/proto/engine_pb");
// eslint-disable-next-line @typescript-eslint/no-require-imports
const engrpc = require("@pulumi/pulumi/proto/engine_grpc_pb");
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parseArgs } = require("@pulumi/pulumi/provider/internals") as { parseArgs(a: string[]): { engineAddress: string } | undefined };

type Severity = "info" | "warning" | "error";
const engineAddress = parseArgs(process.argv.slice(2))?.engineAddress;
let engine: { log(req: unknown, cb: (err: unknown) => void): void } | undefined;

/** One message to the engine's Log service, as pulumi-go-provider's logger sends it (ephemeral = a status). */
function log(urn: string, severity: Severity, message: string, ephemeral: boolean): Promise<void> {
  if (!engineAddress) return Promise.resolve();
  engine ??= new engrpc.EngineClient(engineAddress, grpc.credentials.createInsecure());
  const req = new engproto.LogRequest();
  req.setSeverity({ info: engproto.LogSeverity.INFO, warning: engproto.LogSeverity.WARNING, error: engproto.LogSeverity.ERROR }[severity]);
  req.setMessage(message);
  req.setUrn(urn);
  req.setEphemeral(ephemeral);
  return new Promise((resolve) => engine?.log(req, () => resolve()));
}

/** bufio.Scanner's lines (ScanLines): split at \n, a trailing \r dropped, no empty last line after a final \n. */
function scanLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.map((l) => l.replace(/\r$/, ""));
}

/** The provider's log pipe: a command's stdout and/or stderr as its `logging` says (unset: both), line by line. */
async function logOutput(urn: string, logging: unknown, out: { both: string; stdout: string; stderr: string }): Promise<void> {
  const how = typeof logging === "string" ? logging : "stdoutAndStderr";
  const logged = how === "stdoutAndStderr" ? out.both : how === "stdout" ? out.stdout : how === "stderr" ? out.stderr : "";
  for (const line of scanLines(logged)) await log(urn, "info", line, true);
}

/** `Dial n/limit failed: retrying` for each failed dial that was retried (the direct connection only). */
async function logDials(urn: string, conn: Connection, dials: number): Promise<void> {
  if (conn.proxy) return; // several dials per run with a proxy: not told apart by the harness's counter
  const limit = conn.dialErrorLimit === -1 ? "inf" : String(conn.dialErrorLimit ?? 10);
  // each failed dial but a last one (the limit reached) is retried with this status
  for (let i = 1; i < dials; i++) await log(urn, "info", `Dial ${i}/${limit} failed: retrying`, true);
}

// ------------------------------------------------------------------------------------------------ operations

/**
 * A test's hold before a command's dial (tests/cli/confirm.test.ts: the network is cut between an apply and its
 * confirm): NT_STANDIN_HOLD="<name suffix of the URN>=<file>" waits while that file exists (at most 120 s). Only in
 * the stand-in: nothing on the host is faked, the command is only dialed later.
 */
async function holdBefore(urn: string): Promise<void> {
  const h = process.env.NT_STANDIN_HOLD;
  if (!h || !h.includes("=")) return;
  const [suffix, file] = [h.slice(0, h.indexOf("=")), h.slice(h.indexOf("=") + 1)];
  if (!urn.endsWith(suffix)) return;
  for (let i = 0; i < 1200 && fs.existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
}

async function run(urn: string, props: Props, cmd: string, prev: { stdout?: unknown; stderr?: unknown }): Promise<{ stdout: string; stderr: string }> {
  await holdBefore(urn);
  const p = reveal(props) as Props;
  const out: RunOutcome = await runCommand({
    connection: p.connection as Connection,
    cmd,
    stdin: typeof p.stdin === "string" ? p.stdin : undefined,
    environment: p.environment as Record<string, string> | undefined,
    previousStdout: typeof prev.stdout === "string" ? prev.stdout : "",
    previousStderr: typeof prev.stderr === "string" ? prev.stderr : "",
    addPreviousOutputInEnv: p.addPreviousOutputInEnv as boolean | undefined,
  }, defaultSshTuning);
  await logDials(urn, p.connection as Connection, out.dials);
  for (const e of out.errors) await log(urn, "error", e, false);
  for (const w of out.warnings) await log(urn, "warning", w, false);
  await logOutput(urn, p.logging, { both: out.combined, stdout: out.rawStdout, stderr: out.rawStderr });
  if (!out.ok) throw new Error(out.error ?? "command failed");
  return { stdout: out.stdout, stderr: out.stderr };
}

/**
 * A `command:local:Command` as pulumi-command v1.2.1 runs it (provider/pkg/provider/local/commandOutputs.go `run`): the
 * interpreter (default /bin/sh -c) with the command as its last argument, in the program's directory, the provider's
 * environment plus `environment` and (unless addPreviousOutputInEnv is false) the previous stdout/stderr when not
 * empty; the output logged line by line as `logging` says; a failure is `exit status N: running "<command>":` and the
 * output (stdout and stderr as they came); stdout and stderr stored with one trailing newline trimmed.
 */
async function runLocal(urn: string, props: Props, cmd: string, prev: { stdout?: unknown; stderr?: unknown }): Promise<{ stdout: string; stderr: string }> {
  const p = reveal(props) as Props;
  const interp = Array.isArray(p.interpreter) && p.interpreter.length > 0 ? (p.interpreter as string[]) : ["/bin/sh", "-c"];
  const env: NodeJS.ProcessEnv = { ...process.env, ...((p.environment as Record<string, string> | undefined) ?? {}) };
  if (p.addPreviousOutputInEnv !== false) {
    if (typeof prev.stdout === "string" && prev.stdout !== "") env.PULUMI_COMMAND_STDOUT = prev.stdout;
    if (typeof prev.stderr === "string" && prev.stderr !== "") env.PULUMI_COMMAND_STDERR = prev.stderr;
  }
  const out = await new Promise<{ code: number | null; stdout: string; stderr: string; both: string }>((resolve) => {
    const c = spawn(interp[0], [...interp.slice(1), cmd], { cwd: typeof p.dir === "string" ? p.dir : process.cwd(), env, stdio: [typeof p.stdin === "string" && p.stdin ? "pipe" : "ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let both = "";
    c.stdout!.on("data", (d) => ((stdout += d.toString()), (both += d.toString())));
    c.stderr!.on("data", (d) => ((stderr += d.toString()), (both += d.toString())));
    if (c.stdin && typeof p.stdin === "string") c.stdin.end(p.stdin);
    c.on("error", (e) => resolve({ code: 127, stdout, stderr: `${stderr}${e.message}`, both: `${both}${e.message}` }));
    c.on("close", (code) => resolve({ code, stdout, stderr, both }));
  });
  await logOutput(urn, p.logging, out);
  if (out.code !== 0) throw new Error(`exit status ${out.code}: running ${JSON.stringify(cmd)}:\n${out.both}`);
  return { stdout: out.stdout.replace(/\n$/, ""), stderr: out.stderr.replace(/\n$/, "") };
}

async function copy(urn: string, props: Props): Promise<void> {
  const p = reveal(props) as Props;
  const src = p.source as Props | undefined;
  if (!src || src[SIG] !== ASSET_SIG || typeof src.path !== "string") throw new Error("stand-in: CopyToRemote supports a FileAsset source only");
  const out = await copyToRemote({ connection: p.connection as Connection, localPath: src.path, remotePath: String(p.remotePath) }, defaultSshTuning);
  await logDials(urn, p.connection as Connection, out.dials);
  if (!out.ok) throw new Error(out.error ?? "copy failed");
}

/** infer's Check of a remote resource: the connection's (and proxy's) defaults, its secret fields, itself a secret. */
function checkConnection(c: unknown): unknown {
  const inner = isSecret(c) ? c.value : c;
  if (!isObject(inner)) return c === undefined ? c : secret(c); // unknown (a preview) or malformed: as it came
  const base = (o: Props): Props => {
    const r: Props = { ...o };
    const defaults: Props = { user: "root", port: 22, dialErrorLimit: 10, perDialTimeout: 15 };
    for (const [k, v] of Object.entries(defaults)) if (r[k] === undefined || r[k] === null) r[k] = v;
    for (const k of ["password", "privateKey", "privateKeyPassword"]) if (r[k] !== undefined && r[k] !== null) r[k] = secret(r[k]);
    return r;
  };
  const r = base(inner);
  if (isObject(r.proxy)) r.proxy = base(r.proxy);
  return secret(r);
}

/** 8 random hex digits, as resource.NewUniqueHex(prefix, 8, 0) appends them. */
const hex8 = (): string => crypto.randomBytes(4).toString("hex");

const hashOf = (p: Props): unknown => ((reveal(p) as Props).source as Props | undefined)?.hash;

const provider: Provider = {
  version: "1.2.1",
  async check(_urn, _olds, news) {
    return { inputs: "connection" in news ? { ...news, connection: checkConnection(news.connection) } : news };
  },
  // no diff here: diffHandler below answers the gRPC Diff itself (with the detailed diff)
  async create(urn, inputs) {
    if (typeOf(urn) === COPY) {
      await copy(urn, inputs);
      return { id: hex8(), outs: inputs };
    }
    if (typeOf(urn) !== COMMAND && typeOf(urn) !== LOCAL) throw new Error(`stand-in: unknown resource type ${typeOf(urn)}`);
    const id = `${urn.split("::").pop()}${hex8()}`;
    const create = (reveal(inputs) as Props).create;
    const runner = typeOf(urn) === LOCAL ? runLocal : run;
    const res = typeof create === "string" ? await runner(urn, inputs, create, {}) : { stdout: "", stderr: "" };
    return { id, outs: { ...inputs, ...res } };
  },
  async update(_id, urn, olds, news) {
    if (typeOf(urn) === COPY) {
      if (hashOf(olds) !== hashOf(news) || (reveal(olds) as Props).remotePath !== (reveal(news) as Props).remotePath) await copy(urn, news);
      return { outs: news };
    }
    const n = reveal(news) as Props;
    const cmd = typeof n.update === "string" ? n.update : typeof n.create === "string" ? n.create : undefined;
    const prev = { stdout: (reveal(olds) as Props).stdout, stderr: (reveal(olds) as Props).stderr };
    const runner = typeOf(urn) === LOCAL ? runLocal : run;
    const res = cmd === undefined ? { stdout: String(prev.stdout ?? ""), stderr: String(prev.stderr ?? "") } : await runner(urn, news, cmd, prev);
    return { outs: { ...news, ...res } };
  },
  async delete(_id, urn, props) {
    if (typeOf(urn) !== COMMAND && typeOf(urn) !== LOCAL) return;
    const p = reveal(props) as Props;
    if (typeof p.delete === "string") await (typeOf(urn) === LOCAL ? runLocal : run)(urn, props, p.delete, { stdout: p.stdout, stderr: p.stderr });
  },
};

// ------------------------------------------------------------------------------------------------ diff

/** resource.PropertyValue.DeepEquals on the SDK's JavaScript form: a secret equals only a secret of an equal value. */
function deepEquals(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEquals(x, b[i]));
  if (isSecret(a) || isSecret(b)) return isSecret(a) && isSecret(b) && deepEquals(a.value, b.value);
  const sigOf = (v: unknown): unknown => (v && typeof v === "object" ? (v as Props)[SIG] : undefined);
  if (sigOf(a) === ASSET_SIG || sigOf(a) === ARCHIVE_SIG) {
    const x = a as Props;
    const y = b as Props;
    return sigOf(b) === sigOf(a) && (x.hash !== undefined && y.hash !== undefined ? x.hash === y.hash : JSON.stringify(x) === JSON.stringify(y));
  }
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false;
    const ka = Object.keys(a).filter((k) => a[k] !== null && a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== null && b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => k in b && deepEquals(a[k], b[k]));
  }
  if (a && typeof a === "object") return JSON.stringify(a) === JSON.stringify(b); // resource references, outputs
  return a === b || (a == null && b == null);
}

type Kind = "ADD" | "DELETE" | "UPDATE";
/** path → [kind, the top-level key it is under] */
type Acc = Map<string, [Kind, string]>;
const has = (v: unknown): boolean => v !== null && v !== undefined;

/** resource.PropertyPath.String: a key needing quotes (anything but [A-Za-z0-9_]) as ["key"], an index as [i]. */
function pathString(p: (string | number)[]): string {
  return p
    .map((k, i) => (typeof k === "number" ? `[${k}]` : /^[A-Za-z0-9_]*$/.test(k) ? (i === 0 ? k : `.${k}`) : `["${k.replace(/"/g, '\\"')}"]`))
    .join("");
}

/** PropertyMap.Diff + plugin.NewDetailedDiffFromObjectDiff(diff, inputDiff=false): path → kind. */
function objectDiff(olds: Props, news: Props, prefix: (string | number)[], acc: Acc): void {
  for (const [k, o] of Object.entries(olds)) {
    const at = [...prefix, k];
    if (k in news) {
      const n = news[k];
      if (!valueDiffers(o, n)) continue;
      if (!has(o)) acc.set(pathString(at), ["ADD", String(at[0])]);
      else if (!has(n)) acc.set(pathString(at), ["DELETE", String(at[0])]);
      else valueDiff(o, n, at, acc);
    } else if (has(o)) acc.set(pathString(at), ["DELETE", String(at[0])]);
  }
  for (const [k, n] of Object.entries(news)) if (!(k in olds) && has(n)) acc.set(pathString([...prefix, k]), ["ADD", String([...prefix, k][0])]);
}

function valueDiffers(o: unknown, n: unknown): boolean {
  if (Array.isArray(o) && Array.isArray(n)) return !deepEquals(o, n);
  if (isObject(o) && isObject(n)) {
    const acc: Acc = new Map();
    objectDiff(o, n, [], acc);
    return acc.size > 0;
  }
  return !deepEquals(o, n);
}

function valueDiff(o: unknown, n: unknown, at: (string | number)[], acc: Acc): void {
  if (Array.isArray(o) && Array.isArray(n)) {
    for (let i = 0; i < Math.min(o.length, n.length); i++) if (valueDiffers(o[i], n[i])) valueDiff(o[i], n[i], [...at, i], acc);
    for (let i = o.length; i < n.length; i++) acc.set(pathString([...at, i]), ["ADD", String(at[0])]);
    for (let i = n.length; i < o.length; i++) acc.set(pathString([...at, i]), ["DELETE", String(at[0])]);
  } else if (isObject(o) && isObject(n)) objectDiff(o, n, at, acc);
  else acc.set(pathString(at), [o === null ? "ADD" : n === null ? "DELETE" : "UPDATE", String(at[0])]);
}

type DiffCall = {
  request: {
    getOlds(): { toJavaScript(): Props };
    getNews(): { toJavaScript(): Props };
    hasOldInputs(): boolean;
    getOldInputs(): { toJavaScript(): Props };
    getIgnorechangesList(): string[];
  };
};
/** The keys of the inputs (a state's other keys are outputs): for an engine that sends no old inputs. */
const INPUT_KEYS = ["triggers", "create", "update", "delete", "stdin", "logging", "connection", "environment", "addPreviousOutputInEnv", "source", "remotePath", "interpreter", "dir"];

/** infer's Diff (no CustomDiff): the detailed diff, the changed keys, a replace for the path `triggers` only. */
function diffHandler(call: DiffCall, callback: (err: unknown, resp?: unknown) => void): void {
  try {
    const req = call.request;
    const state = req.getOlds().toJavaScript();
    const olds = req.hasOldInputs() ? req.getOldInputs().toJavaScript() : Object.fromEntries(INPUT_KEYS.filter((k) => k in state).map((k) => [k, state[k]]));
    const news = { ...req.getNews().toJavaScript() };
    for (const k of req.getIgnorechangesList()) if (k in state) news[k] = state[k];
    for (const k of Object.keys(news)) if (k === "version" || k.startsWith("__")) delete news[k];
    const acc: Acc = new Map();
    objectDiff(olds, news, [], acc);
    const resp = new provproto.DiffResponse();
    const Kinds = provproto.PropertyDiff.Kind;
    const diffs = new Set<string>();
    const replaces = new Set<string>();
    const detailed = resp.getDetaileddiffMap();
    for (const [p, [kind, head]] of acc) {
      const replace = p === "triggers"; // the schema's replaceOnChanges, looked up by the whole path
      const d = new provproto.PropertyDiff();
      d.setKind(replace ? Kinds[`${kind}_REPLACE`] : Kinds[kind]);
      d.setInputdiff(false);
      detailed.set(p, d);
      diffs.add(head);
      if (replace) replaces.add(head);
    }
    resp.setChanges(acc.size ? provproto.DiffResponse.DiffChanges.DIFF_SOME : provproto.DiffResponse.DiffChanges.DIFF_NONE);
    resp.setHasdetaileddiff(true);
    resp.setDiffsList([...diffs].sort());
    if (replaces.size) resp.setReplacesList([...replaces].sort());
    callback(undefined, resp);
  } catch (e) {
    callback(e);
  }
}
const addService = grpc.Server.prototype.addService;
grpc.Server.prototype.addService = function (service: unknown, impl: Record<string, unknown>) {
  if (impl && typeof impl.diff === "function") impl.diff = diffHandler;
  return addService.call(this, service, impl);
};

main(provider, process.argv.slice(2)).catch((e: Error) => {
  process.stderr.write(`stand-in: ${e.stack ?? e.message}\n`);
  process.exit(1);
});
