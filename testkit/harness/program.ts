/**
 * Program evaluation: runs a Pulumi program function once, under the SDK's mock monitor, in a fresh
 * per-run runtime store, and reports every RegisterResource request with the options the engine would
 * see (which `setMocks`' `newResource` callback does not get).
 *
 * Re-running programs in one process: each evaluation runs inside
 * `@pulumi/pulumi/runtime/state.withLocalStorage`, which gives it a new AsyncLocalStorage-scoped store
 * (settings, monitor, stack resource, config, leak candidates, feature flags). This is the mechanism the
 * Automation API's LanguageServer uses to run inline programs repeatedly in one process; inside it we
 * call `setMocks` (which writes into that store) and `runInPulumiStack`, then wait for all RPCs.
 * Nothing is reset globally, so several evaluations may even run at once. The harness and the program
 * must share the same `@pulumi/pulumi` module instance (true inside one jest test file; do not wrap
 * programs in `jest.isolateModules`).
 *
 * Capture of options: `setMocks` installs a `MockMonitor`; we wrap its `registerResource` and
 * `registerResourceOutputs` so that the raw protobuf request (parent, dependencies,
 * propertyDependencies, deleteBeforeReplace, replaceOnChanges, ignoreChanges,
 * additionalSecretOutputs, retainOnDelete, protect, provider, version) is recorded; `newResource` is invoked
 * synchronously by `registerResource`, so the request is handed over without ambiguity. Explicit
 * `dependsOn` (which the request merges into `dependencies`) is additionally captured through a stack
 * transformation (`registerStackTransformation`).
 */
import { createHash } from "crypto";
import * as fs from "fs";
import * as pulumi from "@pulumi/pulumi";
// Deep imports: internal but stable modules of @pulumi/pulumi 3.x (used by its own automation API).
// eslint-disable-next-line @typescript-eslint/no-var-requires
const stateMod = require("@pulumi/pulumi/runtime/state") as { withLocalStorage<T>(cb: () => Promise<T>): Promise<T> };
// eslint-disable-next-line @typescript-eslint/no-var-requires
const settingsMod = require("@pulumi/pulumi/runtime/settings") as {
  getMonitor(): unknown;
  waitForRPCs(): Promise<void>;
};
// eslint-disable-next-line @typescript-eslint/no-var-requires
const stackMod = require("@pulumi/pulumi/runtime/stack") as { runInPulumiStack(init: () => Promise<unknown>): Promise<unknown> };
// eslint-disable-next-line @typescript-eslint/no-var-requires
const rpcMod = require("@pulumi/pulumi/runtime/rpc") as {
  deserializeProperties(s: unknown, keepUnknowns?: boolean): Record<string, unknown>;
  specialSigKey: string;
  specialSecretSig: string;
  specialAssetSig: string;
  unknownValue: string;
};
// eslint-disable-next-line @typescript-eslint/no-var-requires
const configMod = require("@pulumi/pulumi/runtime/config") as { setAllConfig(c: Record<string, string>, secretKeys?: string[]): void };

/** Marker replacing unknown (computed during preview) values in recorded inputs/outputs. */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

export type PulumiProgram = () => unknown | Promise<unknown>;

export interface ResourceOptionsSeen {
  deleteBeforeReplace: boolean;
  replaceOnChanges: string[];
  ignoreChanges: string[];
  additionalSecretOutputs: string[];
  retainOnDelete: boolean;
  protect: boolean;
  provider: string;
  /** The provider plugin version the resource asks for ("" for none). */
  version: string;
  /** Explicit `dependsOn` URNs (from the stack transformation). */
  dependsOn: string[];
}

/** What the engine receives for one resource registration. */
export interface RegisteredResource {
  urn: string;
  type: string;
  name: string;
  custom: boolean;
  /** Parent URN ("" for the root stack). */
  parent: string;
  /** Resolved inputs, secrets unwrapped, unknowns replaced by UNKNOWN. */
  inputs: Record<string, unknown>;
  /** Top-level input names whose values were secret. */
  secretInputs: string[];
  /** Inputs as deserialized by the mock monitor (secret wrappers, unknown objects kept). */
  rawInputs: Record<string, unknown>;
  /** All dependencies sent to the engine (explicit dependsOn + input-derived). */
  dependencies: string[];
  propertyDependencies: Record<string, string[]>;
  options: ResourceOptionsSeen;
  /** Outputs returned to the program (custom), or registered with registerOutputs (components). */
  outputs?: Record<string, unknown>;
}

export interface RegisterReply {
  id: string;
  /** Output state as returned by a Mocks.newResource implementation (secret wrappers allowed). */
  state: Record<string, unknown>;
}

/** Decides each registration. May return a promise that never settles to halt the program (engine stop). */
export type RegisterHandler = (r: RegisteredResource) => Promise<RegisterReply>;

export interface EvaluateOptions {
  project: string;
  stack: string;
  preview: boolean;
  config?: Record<string, string>;
  secretConfigKeys?: string[];
  /** Settles when the caller wants to stop waiting for the program (after a failed step). */
  halt?: Promise<void>;
  /** Called for harness bugs detected while evaluating (the registration is then never answered). */
  onHarnessError?: (e: Error) => void;
}

export interface Evaluation {
  resources: RegisteredResource[];
  /** Stack outputs (the program's return value, resolved); undefined when halted or failed. */
  outputs: Record<string, unknown> | undefined;
  programError?: Error;
  halted: boolean;
}

function isSecretWrapper(v: unknown): v is { value: unknown } {
  return typeof v === "object" && v !== null && (v as Record<string, unknown>)[rpcMod.specialSigKey] === rpcMod.specialSecretSig;
}

/** Unwrap secrets and replace unknowns by UNKNOWN, producing plain JSON-like data. */
export function plain(v: unknown): unknown {
  if (pulumi.isUnknown(v)) return UNKNOWN;
  if (isSecretWrapper(v)) return plain(v.value);
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v === "object" && v !== null) {
    if (pulumi.Resource.isInstance(v)) return `<resource>`;
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) o[k] = plain(x);
    return o;
  }
  return v;
}

/**
 * An asset input as the checkpoint stores it: signature, `hash` (sha256 of the content, hex, as the engine computes
 * it) and `path`/`text`/`uri`. The engine compares assets by hash only (sdk/go/common/resource/asset Asset.Equals).
 */
export interface AssetRecord { [sig: string]: unknown; hash: string; path?: string }
export function isAsset(v: unknown): v is AssetRecord {
  return typeof v === "object" && v !== null && (v as Record<string, unknown>)[rpcMod.specialSigKey] === rpcMod.specialAssetSig;
}
const fileHashes = new Map<string, { mtimeMs: number; size: number; hash: string }>();
function fileHash(p: string): string {
  const st = fs.statSync(p);
  const c = fileHashes.get(p);
  if (c && c.mtimeMs === st.mtimeMs && c.size === st.size) return c.hash;
  const hash = createHash("sha256").update(fs.readFileSync(p)).digest("hex");
  fileHashes.set(p, { mtimeMs: st.mtimeMs, size: st.size, hash });
  return hash;
}
function assetRecord(v: Record<string, unknown>): AssetRecord {
  const out: AssetRecord = { [rpcMod.specialSigKey]: rpcMod.specialAssetSig, hash: "" };
  if (typeof v.path === "string") {
    out.hash = fileHash(v.path);
    out.path = v.path;
  } else if (typeof v.text === "string") {
    out.hash = createHash("sha256").update(v.text).digest("hex");
    out.text = v.text;
  } else {
    throw new Error("harness: only FileAsset and StringAsset inputs are modelled");
  }
  return out;
}

export function secret(value: unknown): Record<string, unknown> {
  return { [rpcMod.specialSigKey]: rpcMod.specialSecretSig, value };
}

interface ProtoMap { forEach(cb: (v: { getUrnsList(): string[] }, k: string) => void): void }
interface RegisterRequestProto {
  getType(): string;
  getName(): string;
  getParent(): string;
  getCustom(): boolean;
  getDependenciesList(): string[];
  getPropertydependenciesMap(): ProtoMap;
  getDeletebeforereplace(): boolean;
  getReplaceonchangesList(): string[];
  getIgnorechangesList(): string[];
  getAdditionalsecretoutputsList(): string[];
  getRetainondelete?(): boolean;
  getProtect?(): boolean;
  getProvider(): string;
  getVersion(): string;
}
interface MockMonitorLike {
  newUrn(parent: string, type: string, name: string): string;
  registerResource(req: RegisterRequestProto, cb: unknown): unknown;
  registerResourceOutputs(req: { getUrn(): string; getOutputs(): unknown }, cb: unknown): unknown;
}

/** Evaluate `program` once. Never throws for program errors (returned as programError). */
export async function evaluate(program: PulumiProgram, opts: EvaluateOptions, handler: RegisterHandler): Promise<Evaluation> {
  return stateMod.withLocalStorage(async () => {
    const resources: RegisteredResource[] = [];
    const byUrn = new Map<string, RegisteredResource>();
    const errors: Error[] = [];
    const explicitDeps: Array<{ resource: pulumi.Resource; deps: pulumi.Resource[] }> = [];
    let pending: RegisteredResource | undefined;
    /** `type::name` of the registrations an input of which rejected (see the stack transformation below). */
    const rejectedInput = new Set<string>();
    /** Those registrations as recorded: answered by newResource without the handler. */
    const failedRegistrations = new WeakSet<RegisteredResource>();

    await pulumi.runtime.setMocks(
      {
        newResource: (args: pulumi.runtime.MockResourceArgs) => {
          const r = pending;
          pending = undefined;
          if (!r || r.type !== args.type || r.name !== args.name) {
            const e = new Error(`harness bug: registration hand-over mismatch for ${args.type} ${args.name}`);
            if (opts.onHarnessError) {
              opts.onHarnessError(e);
              return new Promise<never>(() => undefined);
            }
            return Promise.reject(e);
          }
          if (failedRegistrations.has(r)) return Promise.resolve({ id: "", state: {} });
          return handler(r).then((reply) => {
            r.outputs = plain(reply.state) as Record<string, unknown>;
            return { id: reply.id, state: reply.state };
          });
        },
        call: (args: pulumi.runtime.MockCallArgs) => args.inputs,
      },
      opts.project,
      opts.stack,
      opts.preview,
    );
    if (opts.config) configMod.setAllConfig(opts.config, opts.secretConfigKeys ?? []);

    const monitor = settingsMod.getMonitor() as MockMonitorLike;
    // The mock's URNs differ from the engine's (it prefixes top-level types with pulumi:pulumi:Stack and
    // keeps only the parent's last type); use the engine's rule (resource.NewURN): the parent's full
    // qualified type + "$" + type, except under the root stack.
    monitor.newUrn = (parent: string, type: string, name: string): string => {
      let qualified = type;
      if (parent) {
        const parentQualified = parent.split("::")[2] ?? "";
        if (parentQualified && parentQualified !== "pulumi:pulumi:Stack") qualified = `${parentQualified}$${type}`;
      }
      return `urn:pulumi:${opts.stack}::${opts.project}::${qualified}::${name}`;
    };
    const origRegister = monitor.registerResource.bind(monitor);
    const origOutputs = monitor.registerResourceOutputs.bind(monitor);
    monitor.registerResource = (req: RegisterRequestProto, cb: unknown) => {
      const urn = monitor.newUrn(req.getParent(), req.getType(), req.getName());
      const raw = rpcMod.deserializeProperties((req as unknown as { getObject(): unknown }).getObject(), true);
      const pdeps: Record<string, string[]> = {};
      req.getPropertydependenciesMap().forEach((v, k) => { pdeps[k] = v.getUrnsList(); });
      const secretInputs = Object.keys(raw).filter((k) => isSecretWrapper(raw[k]));
      const inputs = plain(raw) as Record<string, unknown>;
      // assets: the deserialized FileAsset holds a Promise; record the wire form (sig + path) with its hash
      if (Object.values(raw).some((v) => pulumi.asset.Asset.isInstance(v))) {
        const wire = (req as unknown as { getObject(): { toJavaScript(): Record<string, unknown> } }).getObject().toJavaScript();
        for (const [k, v] of Object.entries(wire)) if (typeof v === "object" && v !== null && isAsset(v)) inputs[k] = assetRecord(v as Record<string, unknown>);
      }
      const rec: RegisteredResource = {
        urn,
        type: req.getType(),
        name: req.getName(),
        custom: req.getCustom(),
        parent: req.getParent(),
        inputs,
        secretInputs,
        rawInputs: raw,
        dependencies: req.getDependenciesList(),
        propertyDependencies: pdeps,
        options: {
          deleteBeforeReplace: req.getDeletebeforereplace(),
          replaceOnChanges: req.getReplaceonchangesList(),
          ignoreChanges: req.getIgnorechangesList(),
          additionalSecretOutputs: req.getAdditionalsecretoutputsList(),
          retainOnDelete: req.getRetainondelete ? req.getRetainondelete() : false,
          protect: req.getProtect ? req.getProtect() : false,
          provider: req.getProvider(),
          version: req.getVersion(),
          dependsOn: [],
        },
      };
      if (rejectedInput.has(`${rec.type}::${rec.name}`)) {
        failedRegistrations.add(rec); // the SDK would fail it before the engine: not a resource of the program
      } else {
        resources.push(rec);
        byUrn.set(urn, rec);
      }
      pending = rec; // consumed synchronously by newResource inside origRegister
      return origRegister(req, cb);
    };
    monitor.registerResourceOutputs = (req: { getUrn(): string; getOutputs(): unknown }, cb: unknown) => {
      const rec = byUrn.get(req.getUrn());
      if (rec && !rec.custom) {
        try {
          rec.outputs = plain(rpcMod.deserializeProperties(req.getOutputs(), true)) as Record<string, unknown>;
        } catch {
          /* outputs stay as they were */
        }
      }
      return origOutputs(req, cb);
    };

    const onUnhandled = (e: unknown) => { errors.push(e instanceof Error ? e : new Error(String(e))); };
    process.on("unhandledRejection", onUnhandled);
    let outputs: Record<string, unknown> | undefined;
    let halted = false;
    try {
      const run = (async () => {
        const out = await stackMod.runInPulumiStack(async () => {
          pulumi.runtime.registerStackTransformation((args) => {
            // An input given as a Promise that rejects: the SDK fails the registration while serializing it, before it
            // reaches the engine, and the language host fails the program with the error. Modelled so: the error is
            // recorded and the registration is answered here, never reaching the harness's engine (no step, no state),
            // and no rejection is left to the SDK, whose failed registration would reject promises of its own that
            // nothing handles (jest counts each against the test) and wait for a URN that never comes.
            let props: Record<string, unknown> | undefined;
            for (const [k, v] of Object.entries(args.props)) {
              if (!(v instanceof Promise)) continue;
              props ??= { ...args.props };
              props[k] = v.catch((e: unknown) => {
                errors.push(e instanceof Error ? e : new Error(String(e)));
                rejectedInput.add(`${args.type}::${args.name}`);
                return undefined;
              });
            }
            // an input that fails (a rejected Output) fails the registration, and with it the update, as the language
            // host's handler of unhandled rejections does (under jest that event does not reach this process object)
            void (pulumi.output(props ?? args.props) as unknown as { promise(): Promise<unknown> }).promise().catch((e: unknown) => {
              errors.push(e instanceof Error ? e : new Error(String(e)));
            });
            const d = args.opts.dependsOn;
            if (d !== undefined) {
              const list = (Array.isArray(d) ? d : [d]) as unknown[];
              const res = list.filter((x): x is pulumi.Resource => pulumi.Resource.isInstance(x));
              if (res.length) explicitDeps.push({ resource: args.resource, deps: res });
              // a dependency given as a Promise of a resource (a child registered once something settled)
              for (const x of list) {
                if (x instanceof Promise) {
                  void x.then((r) => {
                    if (pulumi.Resource.isInstance(r)) explicitDeps.push({ resource: args.resource, deps: [r] });
                  }, () => undefined);
                }
              }
            }
            return props ? { props, opts: args.opts } : undefined;
          });
          try {
            return await program();
          } catch (e) {
            // a throwing program fails the update; keep it from escaping as an unhandled rejection
            errors.push(e instanceof Error ? e : new Error(String(e)));
            return undefined;
          }
        });
        await settingsMod.waitForRPCs();
        return out;
      })();
      const haltP = opts.halt ? opts.halt.then(() => "halted" as const) : new Promise<never>(() => undefined);
      const winner = await Promise.race([run.then((o) => ({ o })), haltP]);
      if (winner === "halted") {
        halted = true;
        run.catch(() => undefined); // abandoned: the engine stopped, the program is never answered
      } else {
        await new Promise((res) => setImmediate(res)); // the failure of an input may be reported one turn later
        outputs = plain(winner.o) as Record<string, unknown>;
        // a resource whose registration failed never gets a URN: resolve dependsOn only for a program that ran through
        const deps = errors.length ? [] : explicitDeps;
        for (const e of deps) {
          const urn = await (e.resource.urn as unknown as { promise(): Promise<string> }).promise();
          const rec = byUrn.get(urn);
          if (rec) rec.options.dependsOn = [];
        }
        for (const e of deps) {
          const urn = await (e.resource.urn as unknown as { promise(): Promise<string> }).promise();
          const rec = byUrn.get(urn);
          if (rec) rec.options.dependsOn.push(...(await Promise.all(e.deps.map((r) => (r.urn as unknown as { promise(): Promise<string> }).promise()))));
        }
      }
    } catch (e) {
      errors.unshift(e instanceof Error ? e : new Error(String(e)));
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
    return { resources, outputs, programError: errors[0], halted };
  });
}
