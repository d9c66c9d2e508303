/**
 * Validation of NicQueues inputs (pure): schema, preset merge, feature aliases, cross-field checks.
 * Throws one InputError listing every problem; returns the normalised request and advice for preview.
 */
import { InputError } from "../errors";
import type { NicPreset } from "../sizing/nic";
import { canonicalFeature } from "./features";
import { COALESCE_PARAMS, CoalesceName, formatIssues, NicPersistence, nicSettingsSchema } from "./schema";

/** Plain NicQueues settings as the user declared them (before validation). */
export interface NicInput {
  interface: unknown;
  rings?: unknown;
  channels?: unknown;
  features?: unknown;
  coalesce?: unknown;
  txQueueLength?: unknown;
  rps?: unknown;
  irqAffinity?: unknown;
  persistence?: unknown;
  preset?: unknown;
}

/** The validated request: kernel/ethtool names, preset merged (explicit args win). */
export interface NicRequest {
  interface: string;
  /** ring name (rx, tx, rx-mini, rx-jumbo) → descriptors or "max". */
  rings: Record<string, number | "max">;
  /** channel name (combined, rx, tx, other) → queues. */
  channels: Record<string, number>;
  /** feature name as `ethtool -k` shows it → on. */
  features: Record<string, boolean>;
  /** `ethtool -C` parameter → number, or boolean for adaptive-rx/adaptive-tx. */
  coalesce: Record<string, number | boolean>;
  txQueueLength?: number;
  rps?: { cpus: "all" | number[]; flowEntriesPerQueue?: number; sockFlowEntries?: number; onlyWhenQueuesBelowCpus: boolean };
  irqAffinity?: { cpus: "spread" | number[] };
  persistence: NicPersistence;
  warnings: string[];
}

const RING_NAMES: Record<string, string> = { rx: "rx", tx: "tx", rxMini: "rx-mini", rxJumbo: "rx-jumbo" };

function isPow2(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}
function nextPow2(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

export function validateNic(input: NicInput, resource: string): NicRequest {
  const problems: string[] = [];
  let preset: NicPreset | undefined;
  if (input.preset !== undefined && input.preset !== null) {
    // A preset's settings get exactly the checks of the same arguments (ranges included); only its metadata differs.
    const p = input.preset as Record<string, unknown>;
    const meta = typeof p === "object" && p.kind === "net-tuning/nic-preset" && typeof p.name === "string" && p.name.length > 0;
    if (!meta) {
      const what = typeof p === "object" && p.kind !== "net-tuning/nic-preset" ? `preset.kind ${JSON.stringify(p.kind)} is not "net-tuning/nic-preset"` : "preset.name is missing";
      problems.push(`${what} (pass a preset from this package, e.g. nicPresets.throughput())`);
    } else {
      const { kind: _k, name: _n, rationale: _r, ...settings } = p;
      const parsed = nicSettingsSchema.safeParse({ interface: "eth0", ...settings });
      if (parsed.success) preset = p as unknown as NicPreset;
      else problems.push(...formatIssues(parsed.error.issues, `preset(${p.name})`));
    }
  }
  const raw = {
    interface: input.interface,
    rings: input.rings,
    channels: input.channels,
    features: input.features,
    coalesce: input.coalesce,
    txQueueLength: input.txQueueLength,
    rps: input.rps,
    irqAffinity: input.irqAffinity,
    persistence: input.persistence,
  };
  // Undefined members are absent: Pulumi resolves unset Inputs to undefined.
  for (const k of Object.keys(raw) as (keyof typeof raw)[]) if (raw[k] === undefined || raw[k] === null) delete raw[k];
  const parsed = nicSettingsSchema.safeParse(raw);
  if (!parsed.success) {
    problems.push(...formatIssues(parsed.error.issues));
    throw new InputError(resource, problems);
  }
  const s = parsed.data;
  const warnings: string[] = [];

  const rings: Record<string, number | "max"> = {};
  for (const [k, v] of Object.entries({ ...(preset?.rings ?? {}), ...(s.rings ?? {}) })) if (v !== undefined) rings[RING_NAMES[k]] = v;

  const channels: Record<string, number> = {};
  for (const [k, v] of Object.entries(s.channels ?? {})) if (v !== undefined) channels[k] = v;
  if (Object.keys(channels).length > 0 && Object.values(channels).every((v) => v === 0)) {
    problems.push("channels: every count is 0; a NIC needs at least one rx and one tx queue (e.g. { combined: 4 })");
  }

  const features: Record<string, boolean> = {};
  const origin: Record<string, string> = {};
  const addFeatures = (src: Record<string, boolean> | undefined, where: string, override: boolean) => {
    for (const [name, on] of Object.entries(src ?? {})) {
      const canon = canonicalFeature(name);
      if (!canon) {
        problems.push(`${where}.${name}: "${name}" is not a feature name: use an ethtool -K short name (gro, gso, tso, lro, rx, tx, sg, rxhash, ntuple, rxvlan, txvlan) or a name from \`ethtool -k\` (lowercase letters, digits, "-", "_")`);
        continue;
      }
      if (!override && canon in features && origin[canon] !== "preset" && features[canon] !== on) {
        problems.push(`${where}: "${origin[canon]}" and "${name}" are the same feature (${canon}) with different values; keep one`);
        continue;
      }
      features[canon] = on;
      origin[canon] = override ? "preset" : name;
    }
  };
  addFeatures(preset?.features, "preset.features", true);
  addFeatures(s.features, "features", false);

  const coalesce: Record<string, number | boolean> = {};
  for (const [k, v] of Object.entries({ ...(preset?.coalesce ?? {}), ...(s.coalesce ?? {}) })) {
    if (v !== undefined) coalesce[COALESCE_PARAMS[k as CoalesceName]] = v;
  }
  if ((coalesce["adaptive-rx"] === true && coalesce["rx-usecs"] !== undefined) || (coalesce["adaptive-tx"] === true && coalesce["tx-usecs"] !== undefined)) {
    warnings.push(`${resource}: coalesce sets adaptive coalescing on together with fixed usecs: with adaptive on, most drivers move rx-usecs/tx-usecs themselves`);
  }

  const txQueueLength = s.txQueueLength ?? preset?.txQueueLength;
  if (txQueueLength !== undefined && (txQueueLength < 1 || txQueueLength > 1000000)) {
    problems.push(`txQueueLength (from the preset) must be an integer from 1 to 1000000 (packets)`);
  }

  let rps: NicRequest["rps"];
  if (s.rps || preset?.rps) {
    const m = { ...(preset?.rps ?? {}), ...(s.rps ?? {}) } as NonNullable<typeof s.rps>;
    rps = {
      cpus: m.cpus,
      flowEntriesPerQueue: m.flowEntriesPerQueue,
      sockFlowEntries: m.sockFlowEntries,
      onlyWhenQueuesBelowCpus: m.onlyWhenQueuesBelowCpus ?? false,
    };
    for (const [what, n] of [
      ["rps.flowEntriesPerQueue", m.flowEntriesPerQueue],
      ["rps.sockFlowEntries", m.sockFlowEntries],
    ] as const) {
      if (n !== undefined && n > 0 && !isPow2(n)) warnings.push(`${resource}: ${what} ${n} is rounded up by the kernel to ${nextPow2(n)} (a power of two); write ${nextPow2(n)} to avoid surprise`);
    }
    if (m.flowEntriesPerQueue && m.sockFlowEntries === 0) {
      warnings.push(`${resource}: rps.flowEntriesPerQueue without rps.sockFlowEntries > 0 does not enable RFS (net.core.rps_sock_flow_entries is the global table)`);
    }
  }

  for (const name of ["generic-receive-offload", "tcp-segmentation-offload", "generic-segmentation-offload"]) {
    if (features[name] === false) {
      warnings.push(`${resource}: features turns ${name} off: this costs CPU per packet and usually worsens throughput and tail latency (the source article's "latency" change collapsed throughput); keep it on unless a measurement says otherwise`);
    }
  }
  if (features["large-receive-offload"] === true) {
    warnings.push(`${resource}: features turns large-receive-offload on: LRO merges frames irreversibly and breaks forwarding/bridging (routers, gateways, container hosts); prefer GRO`);
  }

  if (problems.length > 0) throw new InputError(resource, problems);
  if (
    Object.keys(rings).length + Object.keys(channels).length + Object.keys(features).length + Object.keys(coalesce).length === 0 &&
    txQueueLength === undefined &&
    rps === undefined &&
    s.irqAffinity === undefined
  ) {
    throw new InputError(resource, [
      "nothing to set: give at least one of rings, channels, features, coalesce, txQueueLength, rps, irqAffinity or preset (e.g. preset: nicPresets.throughput())",
    ]);
  }
  return {
    interface: s.interface,
    rings,
    channels,
    features,
    coalesce,
    txQueueLength,
    rps,
    irqAffinity: s.irqAffinity,
    persistence: s.persistence ?? "auto",
    warnings,
  };
}
