/**
 * Lifecycle test harness: mirrors pulumi-command provider v1.2.1 remote.Command semantics
 * (provider/pkg/provider/remote/commandController.go, commandOutputs.go, connection.go) plus the
 * Pulumi engine's step rules, so that a Pulumi program can be `up`-ed and `destroy`-ed against real
 * SSH hosts without the Pulumi CLI or the command provider plugin (neither can be installed here).
 *
 * Rules implemented (provider):
 * - Create: `create` unset → no SSH session at all (id + outputs = inputs, stdout/stderr "").
 * - Update: runs `update`, else `create`, else nothing; Setenv uses the previous stdout/stderr;
 *   if nothing runs, stdout/stderr stay the previous ones.
 * - Delete: runs the `delete` stored in state with the stored connection/stdin/environment and the
 *   stored stdout/stderr for Setenv; nothing if unset.
 * - Each run: dial (retry: dialErrorLimit default 10, perDialTimeout default 15 s), one session,
 *   Setenv for every `environment` entry (refusal = error, command not run), then — when
 *   addPreviousOutputInEnv !== false — Setenv PULUMI_COMMAND_STDOUT/STDERR if the previous value is
 *   non-empty (refusal = the provider's warning, the command still runs); stdin only if non-empty,
 *   then EOF; stdout/stderr outputs have one trailing "\n" trimmed; a failure reads
 *   `<Process exited with status N>: running "<cmd>":\n<combined stdout+stderr>`.
 * Rules implemented (engine):
 * - Diff: deep compare of all inputs (after ignoreChanges) and of which inputs are secret (a value that only
 *   becomes a secret is an update, checked against the real engine); a change of `triggers` (the provider marks
 *   it replaceOnChanges; the SDK also sends `triggers[*]`) or of a `replaceOnChanges` path → replace,
 *   else update. `connection` is a secret input (the provider's schema): the engine sees it change as a
 *   whole, so a host change is an in-place update, `replaceOnChanges: ["connection"]` replaces, and a path
 *   inside it (`connection.host`) never does (replaceOnChange; checked against the real engine).
 * - ignoreChanges: ignored paths of the new inputs are reset to the old values before the diff and
 *   for the run (so state keeps e.g. the old `delete`/`stdin`).
 * - Replace: create-before-delete (new create now, the old one's delete after the program with its
 *   stored inputs); with deleteBeforeReplace the old delete runs first, then the create — preceded,
 *   as in the engine's calculateDependentReplacements, by the eager deletes (reverse dependency
 *   order) of not-yet-registered dependents that would themselves be replaced (for Commands: those
 *   whose `triggers`, or a property named in their own replaceOnChanges, take a value from the replaced resource).
 * - A failed create stores nothing; a failed update keeps the old state; after a failed step no new
 *   step starts, in-flight ones finish, the program is abandoned and no deletes run (default
 *   `pulumi up` without --continue-on-error).
 * - Resources no longer declared (and replaced old copies) are deleted after the program, in reverse
 *   dependency order (dependencies = request dependencies ∪ property dependencies ∪ parent);
 *   independent deletes run concurrently.
 * - Parallelism: `pulumi up --parallel` defaults to unbounded (2147483647) in current CLIs; the
 *   harness default is unbounded too (`parallel: Infinity`), configurable per Stack. Ordering between
 *   dependent resources comes from the SDK itself: it only registers a resource once its inputs,
 *   dependsOn and parent are resolved, i.e. once the mocked step of its dependencies completed.
 * - Preview (`stack.preview(program)`): no SSH; new/changed Commands get stdout/stderr unknown
 *   (pulumi-go-provider marks non-input outputs unknown when inputs change); state is untouched.
 * - URNs use the engine's rule (root stack type not included, full parent type chain), not the mock
 *   monitor's. State, ids and pending deletes live in the Stack object only (no checkpoint file).
 * - CopyToRemote (FileAsset source): create copies over SFTP as the SSH user (parents created, file written in
 *   place); the diff compares the asset by hash only (engine Asset.Equals: the local path is no part of it);
 *   `triggers`/replaceOnChanges replace; an update copies again only when the hash or `remotePath` changed; no
 *   delete. Its session counts in `sessions`; each copy is in `copies`.
 * - `up(program, { replace: [urn] })` = `pulumi up --replace urn`.
 * Not modelled: refresh, import, aliases, protect, custom timeouts, --target, continue-on-error,
 * provider resources, secrets in outputs beyond additionalSecretOutputs, the `logging` input (it only
 * affects provider logs), CopyToRemote of archives/directories, local.Command.
 * Other resource types (components, anything else) are recorded; outputs = inputs.
 * See ssh.ts for how Setenv refusal is observed (want-reply env requests via ssh2 internals).
 */
import { evaluate, PulumiProgram, RegisteredResource, RegisterReply, plain, secret } from "./program";
import { Connection, copyToRemote, defaultSshTuning, runCommand, RunOutcome, SshTuning } from "./ssh";
import { isAsset } from "./program";

export { evaluate, UNKNOWN, plain } from "./program";
export type { PulumiProgram, RegisteredResource, ResourceOptionsSeen } from "./program";
export { copyToRemote, runCommand, setenvMessage, goQuote, defaultSshTuning, PULUMI_COMMAND_STDOUT, PULUMI_COMMAND_STDERR } from "./ssh";
export type { Connection, RunOutcome, SshTuning } from "./ssh";

export const COMMAND_TYPE = "command:remote:Command";
export const COPY_TYPE = "command:remote:CopyToRemote";
export const STACK_TYPE = "pulumi:pulumi:Stack";

export type Op = "create" | "update" | "delete";

/**
 * The engine's "same": equal plain inputs and the same inputs secret. A value that only becomes (or stops being) a
 * secret is an update in the real engine, with the stand-in and with pulumi-resource-command v1.2.1 alike (a -restore
 * whose stdin turns secret when its plan gains a secret key: tests/cli/harness.test.ts found it).
 */
function sameInputs(old: StateEntry, inputs: Record<string, unknown>, secretInputs: string[]): boolean {
  return deepEqual(old.inputs, inputs) && JSON.stringify(old.secretInputs ?? []) === JSON.stringify([...secretInputs].sort());
}

export interface StateEntry {
  urn: string;
  type: string;
  name: string;
  id: string;
  custom: boolean;
  parent: string;
  /** Plain inputs (secrets unwrapped). */
  inputs: Record<string, unknown>;
  /** The top-level inputs that were secret, sorted (a change of secretness alone is an update: see {@link sameInputs}). */
  secretInputs?: string[];
  /** Plain outputs (inputs + stdout/stderr for Commands). */
  outputs: Record<string, unknown>;
  /** Outputs as handed to the SDK (secret wrappers kept). */
  rawOutputs: Record<string, unknown>;
  options: RegisteredResource["options"];
  /** URNs this resource depends on (dependencies ∪ property dependencies ∪ parent). */
  dependencies: string[];
  /** Per-input-property dependencies (used for delete-before-replace cascades). */
  propertyDependencies: Record<string, string[]>;
}

export interface RunRecord {
  urn: string;
  name: string;
  op: Op;
  /** "host:port" of the target (proxy not included). */
  host: string;
  cmd: string;
  stdin?: string;
  ok: boolean;
  exitCode: number | null;
  /** Provider outputs (one trailing newline trimmed) on success; raw text on failure. */
  stdout: string;
  stderr: string;
  error?: string;
  sessionOpened: boolean;
  /** TCP+SSH dial attempts made (retries included). */
  dials: number;
  env: RunOutcome["env"];
  startedAt: number;
  durationMs: number;
  /** Position in the stack's global run sequence. */
  seq: number;
}

/** One CopyToRemote copy (SFTP put) made by create or update. */
export interface CopyRecord {
  urn: string;
  name: string;
  op: "create" | "update";
  host: string;
  localPath: string;
  remotePath: string;
  ok: boolean;
  error?: string;
  sessionOpened: boolean;
  dials: number;
  startedAt: number;
  durationMs: number;
  seq: number;
}

export interface HarnessWarning {
  urn: string;
  op: Op;
  message: string;
}

export interface Failure {
  urn: string;
  op: Op | "program";
  message: string;
}

export interface SessionStats {
  total: number;
  byHost: Record<string, number>;
  byResource: Record<string, number>;
}

/** "delete-replaced": the deferred delete of the old copy of a create-before-delete replacement. */
export type StepKind = "create" | "update" | "replace" | "delete" | "delete-replaced" | "same";
export interface Step {
  urn: string;
  type: string;
  kind: StepKind;
  /** For replace: whether the old delete ran first. */
  deleteBeforeReplace?: boolean;
}

export interface UpResult {
  ok: boolean;
  /** Provider-style error text(s) of failed steps (or the program error), joined by "\n". */
  error?: string;
  failures: Failure[];
  preview: boolean;
  /** URNs of command:remote:Command resources per step kind (see `steps` for all types). */
  created: string[];
  updated: string[];
  replaced: string[];
  deleted: string[];
  unchanged: string[];
  steps: Step[];
  sessions: SessionStats;
  runs: RunRecord[];
  /** CopyToRemote copies (their sessions are counted in `sessions`; steps in `steps`). */
  copies: CopyRecord[];
  warnings: HarnessWarning[];
  /** Stack outputs (program return value), plain; undefined if the program did not finish. */
  outputs: Record<string, unknown> | undefined;
  /** Everything the program registered, in registration order. */
  resources: RegisteredResource[];
  durationMs: number;
}

export interface StackOptions {
  project?: string;
  stack?: string;
  /** Max concurrent resource operations (Pulumi `--parallel`); default Infinity (Pulumi's default: unbounded). */
  parallel?: number;
  config?: Record<string, string>;
  secretConfigKeys?: string[];
  ssh?: Partial<SshTuning>;
}

/** Capture a program's registrations under pure mocks (outputs = inputs, no state, no SSH). */
export async function capture(
  program: PulumiProgram,
  opts: {
    preview?: boolean; project?: string; stack?: string; config?: Record<string, string>; secretConfigKeys?: string[];
    /** Extra output properties of a custom resource (e.g. the stdout a host would print), merged over its inputs. */
    outputsOf?: (r: { name: string; type: string }) => Record<string, unknown> | undefined;
  } = {},
): Promise<{ resources: RegisteredResource[]; outputs: Record<string, unknown> | undefined; error?: Error }> {
  const ev = await evaluate(program, {
    project: opts.project ?? "net-tuning", stack: opts.stack ?? "test", preview: opts.preview ?? false,
    config: opts.config, secretConfigKeys: opts.secretConfigKeys,
  }, async (r) => ({ id: r.custom ? `${r.name}-id` : "", state: { ...r.rawInputs, ...(r.custom ? opts.outputsOf?.(r) : undefined) } }));
  return { resources: ev.resources, outputs: ev.outputs, error: ev.programError };
}

/**
 * What the engine receives for each resource of a program under mocks (capture), by resource name, in a form two
 * programs can be compared with (URNs and dependency URNs as names: both programs use the same names): type, parent,
 * inputs, the raw inputs with their secret wrappers at any depth, secret inputs, outputs, dependencies, property
 * dependencies and options (the provider version included).
 */
export async function registrationsByName(program: PulumiProgram, opts: Parameters<typeof capture>[1] = {}): Promise<Record<string, unknown>> {
  const r = await capture(program, opts);
  if (r.error) throw r.error;
  const name = (urn: string) => urn.slice(urn.lastIndexOf("::") + 2);
  const of = (x: RegisteredResource) => ({
    type: x.type,
    parent: name(x.parent),
    inputs: x.inputs,
    // as the mock monitor received them, secret wrappers at any depth included (JSON: the assets' internal promises dropped)
    rawInputs: JSON.parse(JSON.stringify(x.rawInputs)) as unknown,
    secretInputs: [...x.secretInputs].sort(),
    outputs: x.outputs,
    dependencies: x.dependencies.map(name).sort(),
    propertyDependencies: Object.fromEntries(Object.entries(x.propertyDependencies).sort().map(([k, v]) => [k, v.map(name).sort()])),
    options: { ...x.options, dependsOn: x.options.dependsOn.map(name).sort() },
  });
  return Object.fromEntries(r.resources.map((x) => [x.name, of(x)]));
}

function stableStringify(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableStringify).join(",")}]`;
  if (typeof v === "object" && v !== null) {
    return `{${Object.keys(v).sort().filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stableStringify((v as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}
export function deepEqual(a: unknown, b: unknown): boolean {
  return stableStringify(a) === stableStringify(b);
}

/** Parse a Pulumi property path ("a.b", "a[0]", "a[*]", "a[\"k\"]", "*") into segments. */
export function parsePath(path: string): string[] {
  const segs: string[] = [];
  const re = /([^.[\]]+)|\[(\*|\d+)\]|\["((?:[^"\\]|\\.)*)"\]/g;
  let m: RegExpExecArray | null;
  let guard = 0;
  while ((m = re.exec(path)) !== null && guard++ < 1000) segs.push(m[1] ?? m[2] ?? JSON.parse(`"${m[3]}"`));
  return segs;
}
function collectAt(v: unknown, segs: string[], prefix: string, out: Map<string, string>): void {
  if (segs.length === 0) { out.set(prefix, stableStringify(v)); return; }
  if (v === undefined || v === null || typeof v !== "object") { out.set(prefix + "/" + segs.join("/"), "<absent>"); return; }
  const [s, ...rest] = segs;
  if (s === "*") {
    for (const k of Object.keys(v as object)) collectAt((v as Record<string, unknown>)[k], rest, `${prefix}/${k}`, out);
    return;
  }
  collectAt((v as Record<string, unknown>)[s], rest, `${prefix}/${s}`, out);
}
/** Did the values selected by `path` change between two input bags? */
export function pathChanged(olds: Record<string, unknown>, news: Record<string, unknown>, path: string): boolean {
  const segs = parsePath(path);
  const a = new Map<string, string>();
  const b = new Map<string, string>();
  collectAt(olds, segs, "", a);
  collectAt(news, segs, "", b);
  if (a.size !== b.size) return true;
  for (const [k, v] of a) if (b.get(k) !== v) return true;
  return false;
}
/**
 * The provider's schema declares these inputs secret (pulumi-command: `connection` of Command and CopyToRemote), and
 * the engine diffs a secret as one value: its detailed diff names `connection`, never `connection.host`.
 */
const SECRET_INPUTS = new Set(["connection"]);
/**
 * Does a change of `path` replace, as the engine's applyReplaceOnChanges decides it: a replaceOnChanges path matches
 * a changed diff key at or below it, so a path inside a secret input matches nothing (`connection.host` never
 * replaces; `connection` does). Found by running the same programs under the real CLI (tests/cli/harness.test.ts).
 */
export function replaceOnChange(olds: Record<string, unknown>, news: Record<string, unknown>, path: string): boolean {
  const segs = parsePath(path);
  if (segs.length > 1 && SECRET_INPUTS.has(segs[0])) return false;
  return pathChanged(olds, news, path);
}
function applyIgnoreChanges(olds: Record<string, unknown>, news: Record<string, unknown>, paths: string[]): Record<string, unknown> {
  if (!paths.length) return news;
  const out = JSON.parse(JSON.stringify(news)) as Record<string, unknown>;
  for (const p of paths) {
    const segs = parsePath(p).filter((s) => s !== "*");
    if (!segs.length) continue;
    let src: unknown = olds;
    let dst: Record<string, unknown> = out;
    for (let i = 0; i < segs.length - 1; i++) {
      src = src && typeof src === "object" ? (src as Record<string, unknown>)[segs[i]] : undefined;
      if (typeof dst[segs[i]] !== "object" || dst[segs[i]] === null) dst[segs[i]] = {};
      dst = dst[segs[i]] as Record<string, unknown>;
    }
    const last = segs[segs.length - 1];
    const ov = src && typeof src === "object" ? (src as Record<string, unknown>)[last] : undefined;
    if (ov === undefined) delete dst[last];
    else dst[last] = JSON.parse(JSON.stringify(ov));
  }
  return out;
}

function depsOf(r: RegisteredResource): string[] {
  const s = new Set<string>(r.dependencies);
  for (const l of Object.values(r.propertyDependencies)) for (const u of l) s.add(u);
  if (r.parent) s.add(r.parent);
  s.delete(r.urn);
  return [...s];
}

function hostOf(c: Connection | undefined): string {
  if (!c) return "?";
  return `${c.host}:${c.port ?? 22}`;
}

class Semaphore {
  private active = 0;
  private queue: Array<() => void> = [];
  constructor(private readonly limit: number) {}
  async use<T>(f: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((r) => this.queue.push(r));
    this.active++;
    try { return await f(); } finally {
      this.active--;
      const n = this.queue.shift();
      if (n) n();
    }
  }
}

interface RunCtx {
  result: UpResult;
  failed: boolean;
  harnessError?: Error;
  /** Dependents deleted early by a delete-before-replace cascade (their next registration is a replace). */
  cascaded: Set<string>;
  haltResolve: () => void;
  inflight: Set<Promise<unknown>>;
  sem: Semaphore;
  /** URNs given to `--replace`. */
  forceReplace?: Set<string>;
}

/** A stack: state per URN, `up`, `preview`, `destroy`. One operation at a time. */
export class Stack {
  readonly project: string;
  readonly stack: string;
  readonly parallel: number;
  private readonly tuning: SshTuning;
  private readonly config?: Record<string, string>;
  private readonly secretConfigKeys?: string[];
  private state = new Map<string, StateEntry>();
  /** Old copies of replaced resources whose delete has not run yet (retried by the next up/destroy). */
  private pendingDeletes: StateEntry[] = [];
  private busy = false;
  private seq = 0;
  /** Every run of every operation, in order. */
  readonly history: RunRecord[] = [];

  constructor(opts: StackOptions = {}) {
    this.project = opts.project ?? "net-tuning";
    this.stack = opts.stack ?? "test";
    this.parallel = opts.parallel ?? Infinity;
    if (!(this.parallel >= 1)) throw new Error("harness: parallel must be >= 1");
    this.tuning = { ...defaultSshTuning, ...(opts.ssh ?? {}) };
    this.config = opts.config;
    this.secretConfigKeys = opts.secretConfigKeys;
  }

  /** Snapshot of the state (deep copies). */
  resources(): StateEntry[] {
    return [...this.state.values()].map((e) => JSON.parse(JSON.stringify(e)) as StateEntry);
  }
  get(urnOrName: string): StateEntry | undefined {
    const e = this.state.get(urnOrName) ?? [...this.state.values()].find((x) => x.name === urnOrName);
    return e ? (JSON.parse(JSON.stringify(e)) as StateEntry) : undefined;
  }
  pending(): StateEntry[] {
    return this.pendingDeletes.map((e) => JSON.parse(JSON.stringify(e)) as StateEntry);
  }

  /** `pulumi up`; `replace` = `pulumi up --replace <urn>...` (those resources are replaced even without a diff). */
  async up(program: PulumiProgram, opts: { config?: Record<string, string>; replace?: string[] } = {}): Promise<UpResult> {
    return this.operate(program, false, opts.config, opts.replace);
  }
  async preview(program: PulumiProgram, opts: { config?: Record<string, string> } = {}): Promise<UpResult> {
    return this.operate(program, true, opts.config);
  }

  async destroy(): Promise<UpResult> {
    this.enter();
    const t0 = Date.now();
    const ctx = this.newCtx(false);
    try {
      const all = [...this.state.values(), ...this.pendingDeletes];
      await this.deleteInOrder(ctx, all);
      return this.finish(ctx, t0);
    } finally {
      this.busy = false;
    }
  }

  private enter(): void {
    if (this.busy) throw new Error("harness: one operation at a time per Stack");
    this.busy = true;
  }

  private newCtx(preview: boolean): RunCtx {
    let haltResolve: () => void = () => undefined;
    const halt = new Promise<void>((r) => { haltResolve = r; });
    const ctx: RunCtx = {
      result: {
        ok: true, failures: [], preview, created: [], updated: [], replaced: [], deleted: [], unchanged: [], steps: [],
        sessions: { total: 0, byHost: {}, byResource: {} }, runs: [], copies: [], warnings: [], outputs: undefined, resources: [], durationMs: 0,
      },
      failed: false,
      cascaded: new Set(),
      haltResolve,
      inflight: new Set(),
      sem: new Semaphore(this.parallel),
    };
    (ctx as RunCtx & { halt: Promise<void> }).halt = halt;
    return ctx;
  }

  private finish(ctx: RunCtx, t0: number): UpResult {
    const r = ctx.result;
    r.ok = r.failures.length === 0;
    if (!r.ok) r.error = r.failures.map((f) => f.message).join("\n");
    r.durationMs = Date.now() - t0;
    return r;
  }

  private step(ctx: RunCtx, urn: string, type: string, kind: StepKind, dbr?: boolean): void {
    ctx.result.steps.push(dbr === undefined ? { urn, type, kind } : { urn, type, kind, deleteBeforeReplace: dbr });
    if (type !== COMMAND_TYPE) return;
    const list = { create: ctx.result.created, update: ctx.result.updated, replace: ctx.result.replaced, delete: ctx.result.deleted, same: ctx.result.unchanged, "delete-replaced": undefined }[kind];
    if (list) list.push(urn);
  }

  private fail(ctx: RunCtx, urn: string, op: Op | "program", message: string): void {
    ctx.result.failures.push({ urn, op, message });
    ctx.failed = true;
    ctx.haltResolve();
  }

  /** One provider run (create/update/delete command) with accounting. */
  private async exec(ctx: RunCtx, urn: string, name: string, op: Op, inputs: Record<string, unknown>, cmd: string,
    prev: { stdout: string; stderr: string }): Promise<RunOutcome> {
    const connection = inputs.connection as Connection;
    const stdin = typeof inputs.stdin === "string" ? inputs.stdin : undefined;
    const host = hostOf(connection);
    const startedAt = Date.now();
    const outcome = await ctx.sem.use(() => runCommand({
      connection,
      cmd,
      stdin,
      environment: inputs.environment as Record<string, string> | undefined,
      previousStdout: prev.stdout,
      previousStderr: prev.stderr,
      addPreviousOutputInEnv: inputs.addPreviousOutputInEnv as boolean | undefined,
    }, this.tuning, () => {
      const s = ctx.result.sessions;
      s.total++;
      s.byHost[host] = (s.byHost[host] ?? 0) + 1;
      s.byResource[urn] = (s.byResource[urn] ?? 0) + 1;
    }));
    const rec: RunRecord = {
      urn, name, op, host, cmd, stdin, ok: outcome.ok, exitCode: outcome.exitCode,
      stdout: outcome.ok ? outcome.stdout : outcome.rawStdout, stderr: outcome.ok ? outcome.stderr : outcome.rawStderr,
      error: outcome.error, sessionOpened: outcome.sessionOpened, dials: outcome.dials, env: outcome.env, startedAt, durationMs: outcome.durationMs, seq: this.seq++,
    };
    ctx.result.runs.push(rec);
    this.history.push(rec);
    for (const w of outcome.warnings) ctx.result.warnings.push({ urn, op, message: w });
    return outcome;
  }

  private track<T>(ctx: RunCtx, p: Promise<T>): Promise<T> {
    ctx.inflight.add(p);
    p.then(() => ctx.inflight.delete(p), () => ctx.inflight.delete(p));
    return p;
  }

  private entryFrom(r: RegisteredResource, id: string, rawOutputs: Record<string, unknown>): StateEntry {
    return {
      urn: r.urn, type: r.type, name: r.name, id, custom: r.custom, parent: r.parent,
      inputs: r.inputs, secretInputs: [...r.secretInputs].sort(), outputs: plain(rawOutputs) as Record<string, unknown>, rawOutputs,
      options: r.options, dependencies: depsOf(r), propertyDependencies: r.propertyDependencies,
    };
  }

  private commandOutputs(r: RegisteredResource, stdout: string | undefined, stderr: string | undefined): Record<string, unknown> {
    const o: Record<string, unknown> = { ...r.rawInputs };
    const put = (k: string, v: string | undefined) => {
      if (v === undefined) return; // unknown during preview
      o[k] = r.options.additionalSecretOutputs.includes(k) ? secret(v) : v;
    };
    put("stdout", stdout);
    put("stderr", stderr);
    return o;
  }

  private async operate(program: PulumiProgram, preview: boolean, config?: Record<string, string>, replace: string[] = []): Promise<UpResult> {
    this.enter();
    const t0 = Date.now();
    const ctx = this.newCtx(preview);
    ctx.forceReplace = new Set(replace);
    const halt = (ctx as RunCtx & { halt: Promise<void> }).halt;
    const never = new Promise<never>(() => undefined);
    const seen = new Set<string>();
    const newEntries = new Map<string, StateEntry>();
    const replacedOld: StateEntry[] = [];
    try {
      const handler = (r: RegisteredResource): Promise<RegisterReply> => {
        if (ctx.failed) return never; // the engine stopped: no new steps, program not answered
        if (seen.has(r.urn)) {
          this.fail(ctx, r.urn, "program", `Duplicate resource URN '${r.urn}'; try giving it a unique name`);
          return never;
        }
        seen.add(r.urn);
        const p = (r.type === COMMAND_TYPE ? this.onCommand(ctx, r, preview, newEntries, replacedOld, seen)
          : r.type === COPY_TYPE ? this.onCopy(ctx, r, preview, newEntries, replacedOld) : this.onOther(ctx, r, newEntries))
          .catch((e: unknown) => { onHarnessError(e instanceof Error ? e : new Error(String(e))); return null; });
        return this.track(ctx, p).then((reply) => (reply === null ? never : reply));
      };
      const onHarnessError = (e: Error) => {
        ctx.harnessError ??= e;
        ctx.failed = true;
        ctx.haltResolve();
      };
      const ev = await evaluate(program, {
        project: this.project, stack: this.stack, preview, config: { ...(this.config ?? {}), ...(config ?? {}) },
        secretConfigKeys: this.secretConfigKeys, halt, onHarnessError,
      }, handler);
      // let in-flight steps finish (the engine waits for them even after a failure)
      for (let i = 0; i < 10_000 && ctx.inflight.size > 0; i++) await Promise.allSettled([...ctx.inflight]);
      if (ctx.harnessError) throw ctx.harnessError;
      ctx.result.resources = ev.resources;
      ctx.result.outputs = ev.outputs;
      if (ev.programError && !ctx.failed) this.fail(ctx, "", "program", `program failed: ${ev.programError.message}`);
      if (preview) {
        if (!ctx.failed) {
          for (const e of [...this.state.values()]) if (!seen.has(e.urn)) this.step(ctx, e.urn, e.type, "delete");
        }
        return this.finish(ctx, t0);
      }
      // commit the new entries (failed steps stored nothing / kept the old entry)
      for (const [urn, e] of newEntries) this.state.set(urn, e);
      this.pendingDeletes.push(...replacedOld);
      if (!ctx.failed) {
        const gone = [...this.state.values()].filter((e) => !seen.has(e.urn));
        await this.deleteInOrder(ctx, [...gone, ...this.pendingDeletes]);
      }
      return this.finish(ctx, t0);
    } finally {
      this.busy = false;
    }
  }

  private async onOther(ctx: RunCtx, r: RegisteredResource, newEntries: Map<string, StateEntry>): Promise<RegisterReply> {
    const old = this.state.get(r.urn);
    const kind: StepKind = !old ? "create" : sameInputs(old, r.inputs, r.secretInputs) ? "same" : "update";
    const id = old?.id ?? (r.custom ? `${r.name}-${Math.random().toString(16).slice(2, 10)}` : "");
    const state = { ...r.rawInputs };
    newEntries.set(r.urn, this.entryFrom(r, id, state));
    if (r.type !== STACK_TYPE) this.step(ctx, r.urn, r.type, kind);
    return { id, state };
  }

  /** One SFTP copy with accounting (sessions, copies). */
  private async copy(ctx: RunCtx, r: RegisteredResource, op: "create" | "update"): Promise<boolean> {
    const connection = r.inputs.connection as Connection;
    const source = r.inputs.source;
    const remotePath = r.inputs.remotePath;
    if (!isAsset(source) || typeof source.path !== "string" || typeof remotePath !== "string") {
      throw new Error(`harness: ${r.urn}: only a FileAsset source with a string remotePath is modelled`);
    }
    const host = hostOf(connection);
    const startedAt = Date.now();
    const outcome = await ctx.sem.use(() => copyToRemote({ connection, localPath: source.path as string, remotePath }, this.tuning, () => {
      const s = ctx.result.sessions;
      s.total++;
      s.byHost[host] = (s.byHost[host] ?? 0) + 1;
      s.byResource[r.urn] = (s.byResource[r.urn] ?? 0) + 1;
    }));
    ctx.result.copies.push({
      urn: r.urn, name: r.name, op, host, localPath: source.path, remotePath, ok: outcome.ok, error: outcome.error,
      sessionOpened: outcome.sessionOpened, dials: outcome.dials, startedAt, durationMs: outcome.durationMs, seq: this.seq++,
    });
    if (!outcome.ok) this.fail(ctx, r.urn, op, outcome.error ?? "unknown error");
    return outcome.ok;
  }

  /**
   * command:remote:CopyToRemote (pulumi-command 1.2.1): create copies; the diff compares assets by hash only (the
   * engine's Asset.Equals), so a different local path of the same content is no change; `triggers` and
   * replaceOnChanges paths replace (create-before-delete unless deleteBeforeReplace); an update copies again only
   * when the source's hash or `remotePath` changed (a connection change alone copies nothing); delete does nothing.
   */
  private async onCopy(ctx: RunCtx, reg: RegisteredResource, preview: boolean, newEntries: Map<string, StateEntry>,
    replacedOld: StateEntry[]): Promise<RegisterReply | null> {
    const r = reg;
    const old = this.state.get(r.urn);
    const state = { ...r.rawInputs };
    const newId = () => `${r.name}-${Math.random().toString(16).slice(2, 10)}`;
    const byHash = (i: Record<string, unknown>) => {
      const src = i.source;
      return isAsset(src) ? { ...i, source: { hash: src.hash } } : i;
    };
    const create = async (): Promise<RegisterReply | null> => {
      const id = newId();
      if (!preview && !(await this.copy(ctx, r, "create"))) return null;
      if (!preview) newEntries.set(r.urn, { ...this.entryFrom(r, id, state), outputs: { ...r.inputs } });
      return { id, state };
    };
    if (!old) {
      const reply = await create();
      if (reply) this.step(ctx, r.urn, r.type, "create");
      return reply;
    }
    const forced = ctx.forceReplace?.has(r.urn) ?? false;
    if (!forced && sameInputs({ ...old, inputs: byHash(old.inputs) }, byHash(r.inputs), r.secretInputs)) {
      this.step(ctx, r.urn, r.type, "same");
      if (!preview) newEntries.set(r.urn, { ...old, options: r.options, dependencies: depsOf(r), propertyDependencies: r.propertyDependencies, parent: r.parent });
      return { id: old.id, state: old.rawOutputs };
    }
    const replace = forced || ["triggers", ...r.options.replaceOnChanges].some((p) => replaceOnChange(old.inputs, r.inputs, p));
    if (replace) {
      if (r.options.deleteBeforeReplace && !preview) this.state.delete(r.urn); // its delete does nothing
      const reply = await create();
      if (reply) {
        if (!r.options.deleteBeforeReplace && !preview) replacedOld.push(old);
        this.step(ctx, r.urn, r.type, "replace", r.options.deleteBeforeReplace);
      }
      return reply;
    }
    const src = (i: Record<string, unknown>) => (isAsset(i.source) ? i.source.hash : JSON.stringify(i.source));
    const recopy = src(old.inputs) !== src(r.inputs) || old.inputs.remotePath !== r.inputs.remotePath;
    if (!preview && recopy && !(await this.copy(ctx, r, "update"))) return null;
    if (!preview) newEntries.set(r.urn, { ...this.entryFrom(r, old.id, state), outputs: { ...r.inputs } });
    this.step(ctx, r.urn, r.type, "update");
    return { id: old.id, state };
  }

  /** Returns null when the step failed (caller halts the program). */
  private async onCommand(ctx: RunCtx, reg: RegisteredResource, preview: boolean, newEntries: Map<string, StateEntry>,
    replacedOld: StateEntry[], seen: Set<string>): Promise<RegisterReply | null> {
    let r = reg;
    const old = this.state.get(r.urn);
    let news = r.inputs;
    const newId = () => `${r.name}-${Math.random().toString(16).slice(2, 10)}`;

    const doCreate = async (): Promise<RegisterReply | null> => {
      const id = newId();
      if (preview) return { id, state: this.commandOutputs(r, undefined, undefined) };
      const create = news.create;
      if (typeof create !== "string") {
        const state = this.commandOutputs(r, "", "");
        newEntries.set(r.urn, this.entryFrom(r, id, state));
        return { id, state };
      }
      const out = await this.exec(ctx, r.urn, r.name, "create", news, create, { stdout: "", stderr: "" });
      if (!out.ok) { this.fail(ctx, r.urn, "create", out.error ?? "unknown error"); return null; }
      const state = this.commandOutputs(r, out.stdout, out.stderr);
      newEntries.set(r.urn, this.entryFrom(r, id, state));
      return { id, state };
    };

    if (!old) {
      const reply = await doCreate();
      if (reply) {
        if (ctx.cascaded.has(r.urn)) this.step(ctx, r.urn, r.type, "replace", true);
        else this.step(ctx, r.urn, r.type, "create");
      }
      return reply;
    }

    const compared = applyIgnoreChanges(old.inputs, news, r.options.ignoreChanges);
    if (r.options.ignoreChanges.length) {
      // the engine hands the provider the new inputs with ignored paths reset to the old values
      news = compared;
      r = { ...r, inputs: compared, rawInputs: Object.fromEntries(Object.entries(compared).map(([k, v]) => [k, r.secretInputs.includes(k) ? secret(v) : v])) };
    }
    const forced = ctx.forceReplace?.has(r.urn) ?? false;
    if (!forced && sameInputs(old, compared, r.secretInputs)) {
      this.step(ctx, r.urn, r.type, "same");
      if (!preview) newEntries.set(r.urn, { ...old, options: r.options, dependencies: depsOf(r), propertyDependencies: r.propertyDependencies, parent: r.parent });
      return { id: old.id, state: old.rawOutputs };
    }
    const replacePaths = ["triggers", ...r.options.replaceOnChanges];
    const replace = forced || replacePaths.some((p) => replaceOnChange(old.inputs, compared, p));
    if (replace) {
      const dbr = r.options.deleteBeforeReplace;
      let reply: RegisterReply | null;
      if (preview) {
        reply = await doCreate();
      } else if (dbr) {
        // engine: first delete (eagerly, reverse dependency order) the not-yet-registered dependents that the
        // provider would replace once the properties they take from this resource become unknown; for
        // command:remote:Command only `triggers` forces a replace.
        for (const dep of this.dbrDependents(old, seen).reverse()) {
          const okDep = await this.runDelete(ctx, dep);
          if (!okDep) return null;
          if (this.state.get(dep.urn) === dep) this.state.delete(dep.urn);
          ctx.cascaded.add(dep.urn);
          this.step(ctx, dep.urn, dep.type, "delete-replaced");
        }
        const ok = await this.runDelete(ctx, old);
        if (!ok) return null;
        this.state.delete(r.urn);
        reply = await doCreate();
      } else {
        reply = await doCreate();
        if (reply) replacedOld.push(old);
      }
      if (reply) this.step(ctx, r.urn, r.type, "replace", dbr);
      return reply;
    }
    // in-place update
    const prev = { stdout: String(old.outputs.stdout ?? ""), stderr: String(old.outputs.stderr ?? "") };
    if (preview) {
      this.step(ctx, r.urn, r.type, "update");
      return { id: old.id, state: this.commandOutputs(r, undefined, undefined) };
    }
    const cmd = typeof news.update === "string" ? news.update : typeof news.create === "string" ? news.create : undefined;
    let stdout = prev.stdout;
    let stderr = prev.stderr;
    if (cmd !== undefined) {
      const out = await this.exec(ctx, r.urn, r.name, "update", { ...news }, cmd, prev);
      if (!out.ok) { this.fail(ctx, r.urn, "update", out.error ?? "unknown error"); return null; }
      stdout = out.stdout;
      stderr = out.stderr;
    }
    const state = this.commandOutputs(r, stdout, stderr);
    newEntries.set(r.urn, this.entryFrom(r, old.id, state));
    this.step(ctx, r.urn, r.type, "update");
    return { id: old.id, state };
  }

  /**
   * Dependents of `root` (transitively, in dependency order) that a delete-before-replace of `root` forces to be
   * deleted first (engine: stepGenerator.calculateDependentReplacements): custom resources not yet registered in
   * this run whose provider diff would be a replace when the inputs taken from the replace set become unknown.
   * For command:remote:Command: a property dependency of `triggers` (the schema's replaceOnChanges field) or of a
   * property named by the dependent's own replaceOnChanges option (applyReplaceOnChanges in the engine).
   */
  private dbrDependents(root: StateEntry, registered: Set<string>): StateEntry[] {
    const replaceSet = new Set<string>([root.urn]);
    const out: StateEntry[] = [];
    const entries = [...this.state.values()];
    for (let changed = true, guard = 0; changed && guard < 1000; guard++) {
      changed = false;
      for (const e of entries) {
        if (replaceSet.has(e.urn) || registered.has(e.urn) || !e.custom || e.type !== COMMAND_TYPE) continue;
        // the engine marks every property that depends on the replace set unknown, asks the provider's diff (for a
        // Command: a replace only for `triggers`) and then applies the resource's replaceOnChanges option
        // (step_generator.go calculateDependentReplacements → applyReplaceOnChanges)
        // (a path inside a secret input matches nothing: replaceOnChange)
        const roc = e.options.replaceOnChanges.filter((p) => !(parsePath(p).length > 1 && SECRET_INPUTS.has(parsePath(p)[0])));
        const keys = new Set(["triggers", ...roc.map((p) => parsePath(p)[0] ?? p)]);
        if ([...keys].some((k) => (e.propertyDependencies[k] ?? []).some((u) => replaceSet.has(u)))) {
          replaceSet.add(e.urn);
          out.push(e);
          changed = true;
        }
      }
    }
    return out;
  }

  /** Delete one entry with its stored inputs. Returns false on failure. */
  private async runDelete(ctx: RunCtx, e: StateEntry): Promise<boolean> {
    if (e.type !== COMMAND_TYPE || e.options.retainOnDelete) return true;
    const del = e.inputs.delete;
    if (typeof del !== "string") return true;
    const out = await this.exec(ctx, e.urn, e.name, "delete", e.inputs, del,
      { stdout: String(e.outputs.stdout ?? ""), stderr: String(e.outputs.stderr ?? "") });
    if (!out.ok) { this.fail(ctx, e.urn, "delete", out.error ?? "unknown error"); return false; }
    return true;
  }

  /** Delete `entries` in reverse dependency order, concurrently where independent. */
  private async deleteInOrder(ctx: RunCtx, entries: StateEntry[]): Promise<void> {
    const remaining = new Set(entries);
    const running = new Map<StateEntry, Promise<void>>();
    const blocked = (e: StateEntry) => [...remaining].some((f) => f !== e && f.dependencies.includes(e.urn));
    for (let guard = 0; guard < 100_000 && (remaining.size > 0 || running.size > 0); guard++) {
      if (!ctx.failed) {
        for (const e of [...remaining]) {
          if (running.has(e) || blocked(e)) continue;
          running.set(e, (async () => {
            const ok = await this.runDelete(ctx, e);
            if (ok) {
              remaining.delete(e);
              if (this.state.get(e.urn) === e) this.state.delete(e.urn);
              const i = this.pendingDeletes.indexOf(e);
              if (i >= 0) this.pendingDeletes.splice(i, 1);
              if (e.type !== STACK_TYPE) this.step(ctx, e.urn, e.type, i >= 0 ? "delete-replaced" : "delete");
            }
          })().finally(() => running.delete(e)));
        }
      }
      if (running.size === 0) {
        if (ctx.failed) return;
        if (remaining.size > 0) throw new Error(`harness bug: dependency cycle among ${[...remaining].map((e) => e.urn).join(", ")}`);
        return;
      }
      await Promise.race(running.values());
    }
  }
}
