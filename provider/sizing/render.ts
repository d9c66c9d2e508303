/**
 * Text forms of profiles and NIC presets for previews and the CLI (pure, deterministic).
 */
import { NicPreset } from "./nic";
import { SysctlProfile, formatSysctlValue } from "./profile";

/**
 * The profile's sysctls as sysctl.d lines `key = value`, keys sorted, multi-value keys space-separated.
 * @returns one line per key, without trailing newline characters.
 */
export function sysctlLines(profile: SysctlProfile): string[] {
  return Object.keys(profile.sysctls)
    .sort()
    .map((key) => `${key} = ${formatSysctlValue(profile.sysctls[key])}`);
}

/**
 * A complete sysctl.d file for the profile: a `#` comment naming it, then {@link sysctlLines}, ending in a newline.
 */
export function renderSysctlFile(profile: SysctlProfile): string {
  return [`# net-tuning profile: ${profile.name}`, ...sysctlLines(profile)].join("\n") + "\n";
}

const onOff = (b: boolean): string => (b ? "on" : "off");

/**
 * NicQueues settings as lines in ethtool/ip terms, e.g. `rings: rx max, tx max`, `features: gro on, lro off`;
 * one line per set field, in the order rings, features, coalesce, txqueuelen, rps.
 */
export function nicLines(preset: NicPreset): string[] {
  const lines: string[] = [];
  if (preset.rings) {
    const parts = (["rx", "tx"] as const).filter((k) => preset.rings?.[k] !== undefined).map((k) => `${k} ${preset.rings?.[k]}`);
    lines.push(`rings: ${parts.join(", ")}`);
  }
  if (preset.features) {
    const f = preset.features;
    lines.push(`features: ${Object.keys(f).sort().map((k) => `${k} ${onOff(f[k])}`).join(", ")}`);
  }
  if (preset.coalesce) {
    const c = preset.coalesce;
    const parts: string[] = [];
    if (c.adaptiveRx !== undefined) parts.push(`adaptive-rx ${onOff(c.adaptiveRx)}`);
    if (c.adaptiveTx !== undefined) parts.push(`adaptive-tx ${onOff(c.adaptiveTx)}`);
    if (c.rxUsecs !== undefined) parts.push(`rx-usecs ${c.rxUsecs}`);
    if (c.txUsecs !== undefined) parts.push(`tx-usecs ${c.txUsecs}`);
    if (c.rxFrames !== undefined) parts.push(`rx-frames ${c.rxFrames}`);
    lines.push(`coalesce: ${parts.join(", ")}`);
  }
  if (preset.txQueueLength !== undefined) lines.push(`txqueuelen: ${preset.txQueueLength}`);
  if (preset.rps) {
    const r = preset.rps;
    const parts = [`cpus ${r.cpus === "all" ? "all" : r.cpus.join(",")}`];
    if (r.flowEntriesPerQueue !== undefined) parts.push(`rps_flow_cnt ${r.flowEntriesPerQueue} per rx queue`);
    if (r.sockFlowEntries !== undefined) parts.push(`rps_sock_flow_entries ${r.sockFlowEntries}`);
    if (r.onlyWhenQueuesBelowCpus) parts.push("only when rx queues < CPUs");
    lines.push(`rps: ${parts.join(", ")}`);
  }
  return lines;
}
