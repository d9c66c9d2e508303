/**
 * A stand-in for the pulumi-resource-command 1.2.1 plugin, for the real-CLI suite on machines where the real plugin
 * cannot be built: the Go module proxy does not serve github.com/pulumi/pulumi-command/provider (it has no tags of its
 * own; scripts/pulumi-toolchain.sh names the refusal on every run). The real `pulumi` engine starts it as it would the
 * real plugin (installed as `resource command 1.2.1` into a PULUMI_HOME of the suite's own) and drives it through the
 * same gRPC calls: Check, Diff, Create, Update, Delete. Every SSH detail (dialing and its retries, Setenv of the
 * previous stdout/stderr, stdin, exit status and the error text, SFTP) is the lifecycle harness's (testkit/harness/ssh.ts),
 * which mirrors the real provider's remote package; the resource rules are the provider's own:
 *   command:remote:Command  Diff: a change of `triggers` replaces, any other input change updates. Create runs
 *     `create`; Update runs `update`, else `create` (nothing when neither is set: stdout/stderr stay); Delete runs the
 *     `delete` stored in state with the stored connection and stdin. Outputs: the inputs, `stdout`, `stderr`.
 *   command:remote:CopyToRemote  Create copies the FileAsset over SFTP; Update copies again only when the asset's hash
 *     or `remotePath` changed; Delete does nothing.
 * Secrets in inputs stay secret in the outputs (the inputs are echoed with their secret markers). Diff answers with
 * the changed top-level keys (DiffResponse.diffs), as the real provider's detailed diff names them, so that the engine
 * applies a resource's replaceOnChanges as it does with the real plugin; the SDK's provider server cannot send them,
 * so its gRPC diff handler is replaced here (see {@link diffHandler}). The tests that need
 * the real plugin run with NT_COMMAND_PROVIDER=/path/to/pulumi-resource-command instead (testkit/cli/index.ts).
 */
import * as path from "path";
import { main, Provider } from "@pulumi/pulumi/provider";
import { Connection, copyToRemote, defaultSshTuning, runCommand } from "../harness/ssh";

const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
const ASSET_SIG = "c44067f5952c0a294b673a41bacd8c17";
const SIG = "4dabf18193072939515e22adb298388d";
const COMMAND = "command:remote:Command";
const COPY = "command:remote:CopyToRemote";

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

function typeOf(urn: string): string {
  return urn.split("::")[2]?.split("$").pop() ?? "";
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(reveal(a)) === JSON.stringify(reveal(b));
}

async function run(props: Props, cmd: string, prev: { stdout?: unknown; stderr?: unknown }): Promise<{ stdout: string; stderr: string }> {
  const p = reveal(props) as Props;
  const out = await runCommand({
    connection: p.connection as Connection,
    cmd,
    stdin: typeof p.stdin === "string" ? p.stdin : undefined,
    environment: p.environment as Record<string, string> | undefined,
    previousStdout: typeof prev.stdout === "string" ? prev.stdout : "",
    previousStderr: typeof prev.stderr === "string" ? prev.stderr : "",
    addPreviousOutputInEnv: p.addPreviousOutputInEnv as boolean | undefined,
  }, defaultSshTuning);
  for (const w of out.warnings) process.stderr.write(`warning: ${w}\n`);
  if (!out.ok) throw new Error(out.error ?? "command failed");
  return { stdout: out.stdout, stderr: out.stderr };
}

async function copy(props: Props): Promise<void> {
  const p = reveal(props) as Props;
  const src = p.source as Props | undefined;
  if (!src || src[SIG] !== ASSET_SIG || typeof src.path !== "string") throw new Error("stand-in: CopyToRemote supports a FileAsset source only");
  const out = await copyToRemote({ connection: p.connection as Connection, localPath: src.path, remotePath: String(p.remotePath) }, defaultSshTuning);
  if (!out.ok) throw new Error(out.error ?? "copy failed");
}

/** The top-level input keys whose values differ (outputs left out), secrets compared by value. */
function changedKeys(olds: Props, news: Props): string[] {
  const keys = new Set([...Object.keys(olds), ...Object.keys(news)].filter((k) => k !== "stdout" && k !== "stderr"));
  return [...keys].filter((k) => !same(olds[k], news[k])).sort();
}

const hashOf = (p: Props): unknown => ((reveal(p) as Props).source as Props | undefined)?.hash;

const provider: Provider = {
  version: "1.2.1",
  async check(_urn, _olds, news) {
    return { inputs: news };
  },
  // no diff here: diffHandler below answers the gRPC Diff itself (with the changed keys)
  async create(urn, inputs) {
    const id = `${urn.split("::").pop()}-${Math.random().toString(16).slice(2, 10)}`;
    if (typeOf(urn) === COPY) {
      await copy(inputs);
      return { id, outs: inputs };
    }
    if (typeOf(urn) !== COMMAND) throw new Error(`stand-in: unknown resource type ${typeOf(urn)}`);
    const create = (reveal(inputs) as Props).create;
    const res = typeof create === "string" && create !== "" ? await run(inputs, create, {}) : { stdout: "", stderr: "" };
    return { id, outs: { ...inputs, ...res } };
  },
  async update(_id, urn, olds, news) {
    if (typeOf(urn) === COPY) {
      if (hashOf(olds) !== hashOf(news) || (reveal(olds) as Props).remotePath !== (reveal(news) as Props).remotePath) await copy(news);
      return { outs: news };
    }
    const n = reveal(news) as Props;
    const cmd = typeof n.update === "string" && n.update !== "" ? n.update : typeof n.create === "string" && n.create !== "" ? n.create : undefined;
    const prev = { stdout: (reveal(olds) as Props).stdout, stderr: (reveal(olds) as Props).stderr };
    const res = cmd === undefined ? { stdout: String(prev.stdout ?? ""), stderr: String(prev.stderr ?? "") } : await run(news, cmd, prev);
    return { outs: { ...news, ...res } };
  },
  async delete(_id, urn, props) {
    if (typeOf(urn) !== COMMAND) return;
    const del = (reveal(props) as Props).delete;
    if (typeof del === "string" && del !== "") await run(props, del, { stdout: (reveal(props) as Props).stdout, stderr: (reveal(props) as Props).stderr });
  },
};

// The SDK's gRPC runtime and generated messages (the ones its provider server uses).
const sdkDir = path.dirname(require.resolve("@pulumi/pulumi/package.json"));
// eslint-disable-next-line @typescript-eslint/no-require-imports
const grpc = require(require.resolve("@grpc/grpc-js", { paths: [sdkDir] })) as { Server: { prototype: { addService(s: unknown, impl: Record<string, unknown>): void } } };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const provproto = require("@pulumi/pulumi/proto/provider_pb");

type DiffCall = { request: { getOlds(): { toJavaScript(): Props }; getNews(): { toJavaScript(): Props } } };
/** Diff with the changed keys in the response (DiffResponse.diffs), which the SDK's server leaves empty. */
function diffHandler(call: DiffCall, callback: (err: unknown, resp?: unknown) => void): void {
  try {
    const changed = changedKeys(call.request.getOlds().toJavaScript(), call.request.getNews().toJavaScript());
    const resp = new provproto.DiffResponse();
    resp.setChanges(changed.length ? provproto.DiffResponse.DiffChanges.DIFF_SOME : provproto.DiffResponse.DiffChanges.DIFF_NONE);
    resp.setDiffsList(changed);
    const replaces = changed.filter((k) => k === "triggers");
    if (replaces.length) resp.setReplacesList(replaces);
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
