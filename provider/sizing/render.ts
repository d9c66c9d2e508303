/**
 * Text forms of profiles and NIC presets for previews and the CLI (pure, deterministic).
 */
import { NicPreset } from "./nic";
import { FEATURE_SHORT_NAMES, NIC_GROUP_SPECS, NIC_GROUPS, settingByArg, settingsOf } from "../nic/spec";
import { validateNic } from "../nic/validate";
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
 * NicQueues settings as lines in ethtool/ip terms, e.g. `rings: rx max, tx max`, `features: gro on, lro off`: the
 * preset goes through the NicQueues validation (so it shows what a NicQueues with it would apply, preset merge and
 * feature aliases included), then one line per set group in the spec's group order (channels, rings, features,
 * coalesce, txqueuelen, rps, irqAffinity), fixed-name settings in the spec's apply order by their ethtool names.
 */
export function nicLines(preset: NicPreset): string[] {
  const r = validateNic({ interface: "lo", preset }, `NIC preset "${preset.name}"`);
  const shortOf = new Map(Object.entries(FEATURE_SHORT_NAMES).map(([short, long]) => [long, short]));
  const value = (v: unknown) => (typeof v === "boolean" ? onOff(v) : String(v));
  const fixed = (g: "channels" | "rings" | "coalesce", o: Record<string, unknown>) =>
    settingsOf(g).filter((st) => o[st.ethtool] !== undefined).map((st) => `${st.ethtool} ${value(o[st.ethtool])}`);
  const lines: string[] = [];
  for (const g of NIC_GROUPS) {
    const label = NIC_GROUP_SPECS[g].arg;
    let parts: string[] = [];
    if (g === "channels" || g === "rings" || g === "coalesce") parts = fixed(g, r[g]);
    else if (g === "features") parts = Object.entries(r.features).map(([k, on]) => `${shortOf.get(k) ?? k} ${onOff(on)}`).sort();
    else if (g === "link") {
      if (r.txQueueLength !== undefined) lines.push(`${settingByArg("link", "txQueueLength")!.ethtool}: ${r.txQueueLength}`);
    } else if (g === "rps" && r.rps) {
      const p = r.rps;
      parts = [`cpus ${p.cpus === "all" ? "all" : p.cpus.join(",")}`];
      if (p.flowEntriesPerQueue !== undefined) parts.push(`rps_flow_cnt ${p.flowEntriesPerQueue} per rx queue`);
      if (p.sockFlowEntries !== undefined) parts.push(`rps_sock_flow_entries ${p.sockFlowEntries}`);
      if (p.onlyWhenQueuesBelowCpus) parts.push("only when rx queues < CPUs");
    } else if (g === "irq" && r.irqAffinity) {
      parts = [`cpus ${r.irqAffinity.cpus === "spread" ? "spread" : r.irqAffinity.cpus.join(",")}`];
    }
    if (parts.length > 0 && label) lines.push(`${label}: ${parts.join(", ")}`);
  }
  return lines;
}
