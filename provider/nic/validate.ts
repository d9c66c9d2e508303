/**
 * Validation of NicQueues inputs (pure): schema, preset merge, feature aliases, cross-field checks, all from the NIC
 * spec (`spec.ts`). Throws one InputError listing every problem; returns the normalised request and advice for preview.
 */
import { InputError, Problem, problemAt } from "../errors";
import type { NicPreset } from "../sizing/nic";
import type { NicIrqAffinityValues, NicRpsValues, NicSettingsValues } from "./values.generated";
import { kernelPow2 } from "../sysctl/readback";
import { canonicalFeature, FEATURE_SHORT_NAMES } from "./features";
import { issueProblems, NicPersistence, nicPresetSchema, nicSettingsSchema, requiredAfterMerge } from "./schema";
import { NIC_GROUPS, NIC_GROUP_SPECS, NIC_PERSISTENCE_DEFAULT, NIC_SETTING_ARGS, NicGroup, settingByArg, settingsOf } from "./spec";

/** The argument names of the settings: the keys of the plain value type generated from the spec (values.generated.ts). */
type SettingArg = keyof NicSettingsValues;
/** Plain NicQueues settings as the user declared them (before validation). */
export type NicInput = {
  interface: unknown;
  persistence?: unknown;
  preset?: unknown;
  /** `preset` was given and refused (its problems are reported): "nothing to set" is not one more. */
  presetRefused?: boolean;
} & { [K in SettingArg]?: unknown };

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
  /** cpus: the spec's keyword (a host-computed set) or CPU numbers; the types are generated from the spec. */
  rps?: { cpus: NicRpsValues["cpus"]; flowEntriesPerQueue?: number; sockFlowEntries?: number; onlyWhenQueuesBelowCpus: boolean };
  irqAffinity?: { cpus: NicIrqAffinityValues["cpus"] };
  persistence: NicPersistence;
  warnings: string[];
}

/** The setting arguments, from the spec (NIC_SETTING_ARGS). */
const SETTING_ARGS = NIC_SETTING_ARGS as readonly SettingArg[];

/** A group's merged values keyed by the spec's host name (`rx-usecs`, `rx-mini`). */
function byHostName<T>(group: "rings" | "channels" | "coalesce", merged: object | undefined): Record<string, T> {
  const out: Record<string, T> = {};
  const m = (merged ?? {}) as Record<string, T | undefined>;
  for (const s of settingsOf(group)) if (m[s.arg] !== undefined) out[s.ethtool] = m[s.arg] as T;
  return out;
}

/**
 * Every group of the spec merged the same way: an argument given replaces the preset's value as a whole (issue #32
 * item 12). A group object (`rings`, `rps`, `coalesce`, `irqAffinity`, …) given explicitly is the whole group: none of
 * the preset's fields of that group is carried over (`rps: { cpus: "all" }` with the throughput preset has no
 * `onlyWhenQueuesBelowCpus`, no flow entries); a group not given is the preset's. Top-level settings (`link`) go by
 * value. Features follow the same rule below (an explicit `features` map replaces the preset's map), where their
 * aliases are also resolved.
 */
function mergePreset(preset: NicSettingsValues | undefined, args: NicSettingsValues): NicSettingsValues {
  const p = (preset ?? {}) as Record<string, unknown>;
  const a = args as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const g of NIC_GROUPS) {
    if (g === "features") continue;
    const arg = NIC_GROUP_SPECS[g].arg;
    if (arg !== undefined) {
      const v = a[arg] !== undefined ? a[arg] : p[arg];
      if (v !== undefined) out[arg] = { ...(v as object) };
    } else {
      for (const st of settingsOf(g)) {
        const v = a[st.arg] !== undefined ? a[st.arg] : p[st.arg];
        if (v !== undefined) out[st.arg] = v;
      }
    }
  }
  return out as NicSettingsValues;
}

export function validateNic(input: NicInput, resource: string): NicRequest {
  const problems: Problem[] = [];
  let preset: NicPreset | undefined;
  if (input.preset !== undefined && input.preset !== null) {
    // A preset gets exactly the checks of the same arguments (one schema: ranges included); only its metadata differs.
    const p = input.preset as Record<string, unknown>;
    const isObject = typeof p === "object" && !Array.isArray(p);
    if (!isObject || p.kind !== "net-tuning/nic-preset" || typeof p.name !== "string" || p.name.length === 0) {
      const what = isObject && p.kind !== "net-tuning/nic-preset" ? `preset.kind ${JSON.stringify(p.kind)} is not "net-tuning/nic-preset"` : "preset.name is missing";
      problems.push(problemAt("preset", `${what} (pass a preset from this package, e.g. nicPresets.throughput())`));
    } else {
      const parsed = nicPresetSchema.safeParse(p);
      if (parsed.success) preset = parsed.data as NicPreset;
      else problems.push(...issueProblems(parsed.error.issues, `preset(${p.name})`).map((x) => problemAt("preset", x.message)));
    }
  }
  const raw: Record<string, unknown> = { interface: input.interface, persistence: input.persistence };
  for (const k of SETTING_ARGS) raw[k] = input[k];
  // Undefined members are absent: Pulumi resolves unset Inputs to undefined.
  for (const k of Object.keys(raw)) if (raw[k] === undefined || raw[k] === null) delete raw[k];
  const parsed = nicSettingsSchema.safeParse(raw);
  if (!parsed.success) {
    problems.push(...issueProblems(parsed.error.issues));
    throw new InputError(resource, problems);
  }
  // The schema and the plain value types are both built from the spec (schema.ts, values.generated.ts).
  const s = parsed.data as { interface: string; persistence?: NicPersistence } & NicSettingsValues;
  const warnings: string[] = [];
  const m = mergePreset(preset, s);
  problems.push(...requiredAfterMerge(m as Record<string, unknown>));

  const rings = byHostName<number | "max">("rings", m.rings);
  const channels = byHostName<number>("channels", m.channels);
  if (Object.keys(channels).length > 0 && Object.values(channels).every((v) => v === 0)) {
    problems.push(problemAt("channels", "channels: every count is 0; a NIC needs at least one rx and one tx queue (e.g. { combined: 4 })"));
  }

  const features: Record<string, boolean> = {};
  const origin: Record<string, string> = {};
  const addFeatures = (src: Record<string, boolean> | undefined, where: string, override: boolean) => {
    for (const [name, on] of Object.entries(src ?? {})) {
      const canon = canonicalFeature(name);
      if (!canon) {
        problems.push(problemAt(`${where}.${name}`, `${where}.${name}: "${name}" is not a feature name: use an ethtool -K short name (${Object.keys(FEATURE_SHORT_NAMES).join(", ")}) or a name from \`ethtool -k\` (lowercase letters, digits, "-", "_")`));
        continue;
      }
      if (!override && canon in features && origin[canon] !== "preset" && features[canon] !== on) {
        problems.push(problemAt(where, `${where}: "${origin[canon]}" and "${name}" are the same feature (${canon}) with different values; keep one`));
        continue;
      }
      features[canon] = on;
      origin[canon] = override ? "preset" : name;
    }
  };
  // an explicit features map replaces the preset's (as every group object does: mergePreset)
  if (s.features !== undefined) addFeatures(s.features, "features", false);
  else addFeatures(preset?.features, "preset.features", true);

  const coalesce = byHostName<number | boolean>("coalesce", m.coalesce);
  if ((coalesce["adaptive-rx"] === true && coalesce["rx-usecs"] !== undefined) || (coalesce["adaptive-tx"] === true && coalesce["tx-usecs"] !== undefined)) {
    warnings.push(`${resource}: coalesce sets adaptive coalescing on together with fixed usecs: with adaptive on, most drivers move rx-usecs/tx-usecs themselves`);
  }

  const txQueueLength = m.txQueueLength;

  let rps: NicRequest["rps"];
  if (m.rps) {
    const r = m.rps;
    rps = {
      cpus: r.cpus,
      flowEntriesPerQueue: r.flowEntriesPerQueue,
      sockFlowEntries: r.sockFlowEntries,
      onlyWhenQueuesBelowCpus: r.onlyWhenQueuesBelowCpus ?? false,
    };
    for (const arg of ["flowEntriesPerQueue", "sockFlowEntries"] as const) {
      const n = r[arg];
      const what = `${NIC_GROUP_SPECS.rps.arg}.${settingByArg("rps", arg)?.arg}`;
      if (n !== undefined && n > 0 && kernelPow2(n) !== n) warnings.push(`${resource}: ${what} ${n} is rounded up by the kernel to ${kernelPow2(n)} (a power of two); write ${kernelPow2(n)} to avoid surprise`);
    }
    if (r.flowEntriesPerQueue && r.sockFlowEntries === 0) {
      warnings.push(`${resource}: rps.flowEntriesPerQueue without rps.sockFlowEntries > 0 does not enable RFS (net.core.rps_sock_flow_entries is the global table)`);
    }
  }

  for (const name of ["generic-receive-offload", "tcp-segmentation-offload", "generic-segmentation-offload"]) {
    if (features[name] === false) {
      warnings.push(`${resource}: features turns ${name} off: this costs CPU per packet and usually worsens throughput and tail latency (the gateway guide's "latency" change collapsed throughput); keep it on unless a measurement says otherwise`);
    }
  }
  if (features["large-receive-offload"] === true) {
    warnings.push(`${resource}: features turns large-receive-offload on: LRO merges frames irreversibly and breaks forwarding/bridging (routers, gateways, container hosts); prefer GRO`);
  }

  if (problems.length > 0) throw new InputError(resource, problems);
  // Nothing to set when every group of the spec is empty: a keyed group's map has no entry, another group's
  // argument (or, for `link`, each of its settings) is absent.
  const keyedMaps: Partial<Record<NicGroup, object>> = { rings, channels, features, coalesce };
  const mm = m as Record<string, unknown>;
  const empty = NIC_GROUPS.every((g) => {
    const map = keyedMaps[g];
    if (map !== undefined) return Object.keys(map).length === 0;
    const arg = NIC_GROUP_SPECS[g].arg;
    return arg !== undefined ? mm[arg] === undefined : settingsOf(g).every((st) => mm[st.arg] === undefined);
  });
  if (empty && !input.presetRefused) {
    throw new InputError(resource, [
      problemAt("", `nothing to set: give at least one of ${SETTING_ARGS.join(", ")} or preset (e.g. preset: nicPresets.throughput())`),
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
    irqAffinity: m.irqAffinity as NicRequest["irqAffinity"],
    persistence: s.persistence ?? NIC_PERSISTENCE_DEFAULT,
    warnings,
  };
}
