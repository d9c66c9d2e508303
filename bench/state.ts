/**
 * 4. State size per host: NetTuning (the 40 bench keys) + NicQueues (features, txqueuelen, RPS, rc.local) created on
 * one lab host through the harness, as root and with become "sudo" (ed25519 keys), counting the inputs plus outputs
 * of every child as the checkpoint stores them (JSON), the components' own inputs and outputs included.
 * Breakdown per child and field: connection, commands (create/update/delete), plan (apply stdin), report (apply
 * stdout/stderr), originals (restore stdin before "@program", or before "@gzip-base64" when compressed), program (restore stdin from
 * "@program", or the gzip|base64 rest: the originals are then compressed with the program), engine
 * (CopyToRemote source asset + remotePath), other (remaining small inputs), component.
 */
import { NetTuning } from "../components/netTuning";
import { NicQueues } from "../components/nicQueues";
import { Stack, StateEntry } from "../testkit/harness";
import type { LabHost, Who } from "../testkit/lab";
import { NIC_ARGS } from "./hostcost";
import { FILE_NAME, netTuningSysctls } from "./keys";

export type StateField = "connection" | "commands" | "plan" | "report" | "originals" | "program" | "engine" | "other";
export const STATE_FIELDS: StateField[] = ["connection", "commands", "plan", "report", "originals", "program", "engine", "other"];

export interface StateChild {
  name: string;
  type: string;
  /** bytes in the checkpoint (inputs + outputs) per field */
  fields: Record<StateField, number>;
  totalBytes: number;
}
export interface StateSize {
  resource: string;
  who: Who;
  children: StateChild[];
  componentBytes: number;
  /** plain JSON (secrets as their plain value) */
  totalBytes: number;
  /** the same with every `connection` stored as Pulumi stores a secret (passphrase/service ciphertext) */
  checkpointBytes: number;
  /** The largest string input of any child: its child, field and bytes. */
  largestInput: { child: string; field: string; bytes: number };
}
export interface HostState {
  who: Who;
  /**
   * "confirm off": both resources without a confirmed apply (NicQueues `confirm: { timeoutSeconds: 0 }`), the figure the
   * 40 KiB budget is about; "default": NicQueues' default, which confirms its feature change (the -restore child's create).
   */
  variant: "confirm off" | "default";
  resources: StateSize[];
  totalBytes: number;
  checkpointBytes: number;
}

/**
 * A secret value in a checkpoint: {"4dabf18193072939515e22adb298388d":"1b47061264138c4ac30d75fd1eb44270",
 * "ciphertext":"v1:<base64 12-byte nonce>:<base64 of AES-256-GCM(JSON) + 16-byte tag>"} (pulumi/pulumi
 * sdk/go/common/resource/config crypter; the service backend's ciphertext is of the same order).
 */
export function secretBytes(plainJsonBytes: number): number {
  const b64 = (n: number) => 4 * Math.ceil(n / 3);
  const wrapper = '{"4dabf18193072939515e22adb298388d":"1b47061264138c4ac30d75fd1eb44270","ciphertext":""}'.length;
  return wrapper + "v1:".length + b64(12) + 1 + b64(plainJsonBytes + 16);
}

const json = (v: unknown) => (v === undefined ? 0 : Buffer.byteLength(JSON.stringify(v)));

function fieldOf(key: string, value: unknown, where: "in" | "out"): Partial<Record<StateField, number>> {
  const b = json(value) + json(key) + 1; // "key":value,
  if (key === "connection") return { connection: b };
  if (key === "create" || key === "update" || key === "delete") return { commands: b };
  if (key === "stdout" || key === "stderr") return { report: b };
  if (key === "source" || key === "remotePath") return { engine: b };
  if (key === "stdin" && typeof value === "string" && value.startsWith("@restore ")) {
    // a restore stdin: its plain lines before the gzip|base64 stream (or before "@program") count as originals, the
    // rest as program
    const p = value.indexOf("\n@program\n");
    const i = p >= 0 ? p : value.indexOf("\n");
    const origs = json(value.slice(0, i + 1));
    return { originals: origs, program: b - origs };
  }
  if (key === "stdin") return where === "in" || where === "out" ? { plan: b } : {};
  return { other: b };
}

export function childState(e: StateEntry): StateChild {
  const fields = Object.fromEntries(STATE_FIELDS.map((f) => [f, 0])) as Record<StateField, number>;
  for (const [bag, where] of [[e.inputs, "in"], [e.outputs, "out"]] as const) {
    for (const [k, v] of Object.entries(bag)) {
      if (v === undefined) continue;
      for (const [f, n] of Object.entries(fieldOf(k, v, where))) fields[f as StateField] += n ?? 0;
    }
  }
  // restore: "originals" of a restore stdin is what the plan is for an apply
  return { name: e.name, type: e.type, fields, totalBytes: json(e.inputs) + json(e.outputs) };
}

export function stateSize(resource: string, who: Who, entries: StateEntry[], registeredOutputs?: Record<string, unknown>): StateSize {
  const comp = entries.find((e) => e.name === resource && !e.custom);
  if (!comp) throw new Error(`no component ${resource} in state`);
  const kids = entries.filter((e) => e.parent === comp.urn);
  const children = kids.map(childState);
  let largestInput = { child: "", field: "", bytes: 0 };
  for (const e of kids) {
    for (const [k, v] of Object.entries(e.inputs)) {
      if (typeof v === "string" && Buffer.byteLength(v) > largestInput.bytes) largestInput = { child: e.name, field: k, bytes: Buffer.byteLength(v) };
    }
  }
  // a component's checkpoint entry holds its registered outputs (registerOutputs), not its inputs
  const componentBytes = json(registeredOutputs ?? comp.outputs);
  const totalBytes = componentBytes + children.reduce((a, c) => a + c.totalBytes, 0);
  // every child stores its connection twice (inputs, outputs), as a secret
  const conn = kids.reduce((a, e) => a + json(e.inputs.connection) + json(e.outputs.connection), 0);
  const connSecret = kids.reduce((a, e) => a + secretBytes(json(e.inputs.connection)) + secretBytes(json(e.outputs.connection)), 0);
  return { resource, who, children, componentBytes, totalBytes, checkpointBytes: totalBytes - conn + connSecret, largestInput };
}

/**
 * The resources of the stack that belong to no component (the engine deliveries, shared by the resources of a stack on
 * one address: components/delivery.ts) as one pseudo-resource "host".
 */
export function sharedSize(who: Who, entries: StateEntry[]): StateSize {
  const stack = entries.find((e) => e.type === "pulumi:pulumi:Stack");
  const kids = entries.filter((e) => e.custom && (e.parent === "" || e.parent === stack?.urn));
  const children = kids.map(childState);
  let largestInput = { child: "", field: "", bytes: 0 };
  for (const e of kids) {
    for (const [k, v] of Object.entries(e.inputs)) {
      if (typeof v === "string" && Buffer.byteLength(v) > largestInput.bytes) largestInput = { child: e.name, field: k, bytes: Buffer.byteLength(v) };
    }
  }
  const totalBytes = children.reduce((a, c) => a + c.totalBytes, 0);
  const conn = kids.reduce((a, e) => a + json(e.inputs.connection) + json(e.outputs.connection), 0);
  const connSecret = kids.reduce((a, e) => a + secretBytes(json(e.inputs.connection)) + secretBytes(json(e.outputs.connection)), 0);
  return { resource: "host", who, children, componentBytes: 0, totalBytes, checkpointBytes: totalBytes - conn + connSecret, largestInput };
}

/** Creates NetTuning (40 keys) + NicQueues on `host` as `who`, measures, destroys. */
export async function stateBench(host: LabHost, who: Who, log: (s: string) => void, variant: HostState["variant"] = "confirm off"): Promise<HostState> {
  const become = who === "sudo" ? ("sudo" as const) : undefined;
  const stack = new Stack({ project: "bench", stack: `state-${who}${variant === "default" ? "-default" : ""}` });
  const confirm = variant === "confirm off" ? { confirm: { timeoutSeconds: 0 } } : {};
  const r = await stack.up(() => {
    new NetTuning("tuning", { connection: host.connection(who), become, sysctls: netTuningSysctls(), fileName: FILE_NAME });
    new NicQueues("queues", { ...NIC_ARGS(host), connection: host.connection(who), become, ...confirm });
  });
  if (!r.ok) throw new Error(`state bench (${who}): up failed: ${r.error}`);
  const entries = stack.resources();
  // BENCH_STATE_DUMP=dir: the child entries as stored (for reading the breakdown)
  if (process.env.BENCH_STATE_DUMP) {
    require("fs").mkdirSync(process.env.BENCH_STATE_DUMP, { recursive: true });
    require("fs").writeFileSync(`${process.env.BENCH_STATE_DUMP}/state-${who}-${variant.replace(" ", "-")}.json`, JSON.stringify({ entries, outputs: r.resources.filter((x) => !x.custom).map((x) => ({ name: x.name, outputs: x.outputs })) }, null, 2));
  }
  const outs = (n: string) => r.resources.find((x) => x.name === n && !x.custom)?.outputs;
  const resources = [stateSize("tuning", who, entries, outs("tuning")), stateSize("queues", who, entries, outs("queues")), sharedSize(who, entries)];
  const d = await stack.destroy();
  if (!d.ok) throw new Error(`state bench (${who}): destroy failed: ${d.error}`);
  const totalBytes = resources.reduce((a, s) => a + s.totalBytes, 0);
  const checkpointBytes = resources.reduce((a, s) => a + s.checkpointBytes, 0);
  log(`state per host (${who}, ${variant}): ${resources.map((s) => `${s.resource} ${(s.totalBytes / 1024).toFixed(1)} KiB`).join(" + ")} = ${(totalBytes / 1024).toFixed(1)} KiB plain, ${(checkpointBytes / 1024).toFixed(1)} KiB with the connection encrypted; largest string input ${Math.max(...resources.map((s) => s.largestInput.bytes))} B`);
  return { who, variant, resources, totalBytes, checkpointBytes };
}
