/**
 * Rendering of a NicQueues resource: validated request → the host program's stdin (pure, deterministic).
 * Host-dependent values ("max" rings, "all" CPU masks, IRQ numbers, the boot script and unit) are resolved on the
 * host in preflight, before anything changes; stdin shows exactly what was asked, one setting per line.
 */
import { origLines, planHeader } from "../planText";
import { Owner } from "../owner";
import type { LiveNicChecks } from "../live/read";
import type { NicPreset } from "../sizing/nic";
import { FEATURE_SHORT_NAMES, HOST_PREFIX, JOURNAL_KEY_ORDER, NIC_GROUPS, NIC_GROUP_SPECS, NicGroup, settingByArg, settingsOf } from "./spec";
import { NicInput, NicRequest, validateNic } from "./validate";

/** Plain (resolved) inputs of a NicQueues resource. */
export interface NicPlanInput extends NicInput {
  owner: Owner;
  /** Resource name, for messages. */
  name: string;
  preset?: NicPreset;
}

export interface NicPlan {
  request: NicRequest;
  /** setting key (as in the host's journal) → requested value ("max" / CPU lists resolved on the host). */
  settings: Record<string, string>;
  /** The apply program's stdin. */
  stdin: string;
  /** Advice for `pulumi.log.warn` at preview. */
  warnings: string[];
  /** Where the settings are persisted: "systemd", "rc.local", "none" or "auto" (decided on the host). */
  persistence: string;
  /**
   * What the live read checks of the RPS, IRQ and persistence declarations, as the plan's lines give them, and the
   * owner's label (provider/live/read.ts LiveNicChecks).
   */
  readChecks: LiveNicChecks & { sockFlow: boolean; persistence: string; label: string };
}

/** A group's entries in the spec's apply order (features, which have no fixed names, by name). */
function inApplyOrder<T>(group: NicGroup, o: Record<string, T>): [string, T][] {
  const order = settingsOf(group).map((s) => s.ethtool);
  const rank = (k: string) => order.indexOf(k);
  return Object.entries(o).sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}
const onOff = (b: boolean) => (b ? "on" : "off");

/** Validates and renders a NicQueues resource. Identical inputs give identical text. */
export function planNic(input: NicPlanInput): NicPlan {
  const resource = `NicQueues "${input.name}"`;
  const r = validateNic(input, resource);
  const iface = r.interface;
  const settings: Record<string, string> = {};
  const lines = [
    ...planHeader("nic", input.owner),
    `@interface ${iface}`,
    `@persistence ${r.persistence}`,
  ];
  const set = (key: string, value: string) => {
    lines.push(`@set ${key} ${value}`);
    settings[key.startsWith("net.core.") ? key : `${iface}/${key}`] = value;
  };
  const section = (title: string, n: number) => {
    if (n > 0) lines.push(`# ${title}`);
  };
  // The keyed groups (channels, rings, features, coalesce), in the spec's order; NicRequest holds each by group name.
  const keyed = NIC_GROUPS.filter((g) => HOST_PREFIX[g] !== undefined) as ("channels" | "rings" | "features" | "coalesce")[];
  for (const g of keyed) {
    const values: Record<string, number | boolean | string> = r[g];
    section(NIC_GROUP_SPECS[g].planTitle, Object.keys(values).length);
    for (const [k, v] of inApplyOrder(g, values)) set(`${HOST_PREFIX[g]}${k}`, typeof v === "boolean" ? onOff(v) : String(v));
  }
  if (r.txQueueLength !== undefined) {
    lines.push(`# ${NIC_GROUP_SPECS.link.planTitle}`);
    set(settingByArg("link", "txQueueLength")!.ethtool, String(r.txQueueLength));
  }
  const readChecks: NicPlan["readChecks"] = { sockFlow: r.rps?.sockFlowEntries !== undefined, persistence: r.persistence, label: input.owner.label };
  if (r.rps) {
    lines.push(`# ${NIC_GROUP_SPECS.rps.planTitle}`);
    // a string is the spec's keyword ("all"), passed on for the host to compute (the schema admits no other string)
    const cpus = typeof r.rps.cpus === "string" ? r.rps.cpus : [...r.rps.cpus].sort((a, b) => a - b).join(",");
    lines.push(`@rps-cpus ${cpus}`);
    readChecks.rpsCpus = cpus;
    settings[`${iface}/${settingByArg("rps", "cpus")!.journal}rx-*`] = cpus;
    if (r.rps.flowEntriesPerQueue !== undefined) {
      lines.push(`@rps-flow-cnt ${r.rps.flowEntriesPerQueue}`);
      settings[`${iface}/${settingByArg("rps", "flowEntriesPerQueue")!.journal}rx-*`] = String(r.rps.flowEntriesPerQueue);
    }
    if (r.rps.onlyWhenQueuesBelowCpus) {
      lines.push("@rps-only-below-cpus 1");
      readChecks.rpsOnlyBelow = true;
    }
    if (r.rps.sockFlowEntries !== undefined) set(settingByArg("rps", "sockFlowEntries")!.ethtool, String(r.rps.sockFlowEntries));
  }
  if (r.irqAffinity) {
    lines.push(`# ${NIC_GROUP_SPECS.irq.planTitle}`);
    const cpus = typeof r.irqAffinity.cpus === "string" ? r.irqAffinity.cpus : r.irqAffinity.cpus.join(","); // the keyword ("spread")
    lines.push(`@irq-cpus ${cpus}`);
    readChecks.irqCpus = cpus;
    settings[`${iface}/${settingByArg("irq", "cpus")!.journal}*`] = cpus;
  }
  const warnings = [...r.warnings];
  return { request: r, settings, stdin: lines.join("\n") + "\n", warnings, persistence: r.persistence, readChecks };
}

/** The host-wide key of the rps group (`net.core.rps_sock_flow_entries`). */
const SOCK_FLOW = settingByArg("rps", "sockFlowEntries")!.ethtool;
/**
 * The restore plan's key order: the spec's apply order (JOURNAL_KEY_ORDER: channels first), with ONE documented
 * exception: the host-wide net.core key comes before the rps group's per-queue keys (`rps.`, `rfs.`), not after them
 * as its rank in the spec says. That is the order restore plans already stored in Pulumi state were written in;
 * following the spec's rank would reorder their lines, so every existing resource with rps.sockFlowEntries would
 * see a -restore update. The host applies the restore by key, so the order of these lines has no other effect.
 */
const KEY_RANK: readonly string[] = (() => {
  const order = JOURNAL_KEY_ORDER.filter((k) => k !== SOCK_FLOW);
  const firstRps = order.indexOf(settingByArg("rps", "cpus")!.journal!);
  return [...order.slice(0, firstRps), SOCK_FLOW, ...order.slice(firstRps)];
})();
function rank(key: string): number {
  const sub = key.startsWith("net.core.") ? key : key.slice(key.indexOf("/") + 1);
  const i = KEY_RANK.findIndex((p) => sub.startsWith(p));
  return i < 0 ? KEY_RANK.length : i;
}
function byApplyOrder(a: string, b: string): number {
  return rank(a) - rank(b) || a.localeCompare(b, "en", { numeric: true });
}

const ORIG_KEY = /^[A-Za-z0-9._@+/-]+$/;
const ORIG_VALUE = /^[A-Za-z0-9 ,._:-]*$/;

/** The restore program's stdin: originals from Pulumi state, so a delete works without the host's journal. */
/** The name `ethtool -k` shows → the `ethtool -K` short name, where they differ (FEATURE_SHORT_NAMES reversed). */
const LONG_TO_SHORT: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(FEATURE_SHORT_NAMES).map(([short, long]) => [long, short]));

export function renderNicRestoreStdin(owner: Owner, iface: string, previous: Record<string, string>, restoreOnDelete: boolean): string {
  const lines = [...planHeader("nic", owner), `@interface ${iface}`, `@restore ${restoreOnDelete ? 1 : 0}`];
  // the ethtool -K names of the features among the originals (the fallback restore carries no table of them)
  const args = Object.keys(previous)
    .map((k) => /\/feature\.(.+)$/.exec(k)?.[1])
    .flatMap((f) => (f && LONG_TO_SHORT[f] ? [`${f}=${LONG_TO_SHORT[f]}`] : []));
  if (args.length) lines.push(`@feature-args ${[...new Set(args)].sort().join(" ")}`);
  lines.push(...origLines(previous, Object.keys(previous).sort(byApplyOrder), ORIG_KEY, ORIG_VALUE));
  return lines.join("\n") + "\n";
}
