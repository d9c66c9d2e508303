/**
 * Rendering of a NicQueues resource: validated request → the host program's stdin (pure, deterministic).
 * Host-dependent values ("max" rings, "all" CPU masks, IRQ numbers, the boot script and unit) are resolved on the
 * host in preflight, before anything changes; stdin shows exactly what was asked, one setting per line.
 */
import { origLines, planHeader } from "../planText";
import { Owner } from "../owner";
import type { NicPreset } from "../sizing/nic";
import { HOST_PREFIX, NIC_GROUP_SPECS, NicGroup, settingByArg, settingsOf } from "./spec";
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
  const groups: [NicGroup, Record<string, number | boolean | string>][] = [
    ["channels", r.channels],
    ["rings", r.rings],
    ["features", r.features],
    ["coalesce", r.coalesce],
  ];
  for (const [g, values] of groups) {
    section(NIC_GROUP_SPECS[g].planTitle, Object.keys(values).length);
    for (const [k, v] of inApplyOrder(g, values)) set(`${HOST_PREFIX[g]}${k}`, typeof v === "boolean" ? onOff(v) : String(v));
  }
  if (r.txQueueLength !== undefined) {
    lines.push(`# ${NIC_GROUP_SPECS.link.planTitle}`);
    set(settingByArg("link", "txQueueLength")!.ethtool, String(r.txQueueLength));
  }
  if (r.rps) {
    lines.push(`# ${NIC_GROUP_SPECS.rps.planTitle}`);
    const cpus = r.rps.cpus === "all" ? "all" : [...r.rps.cpus].sort((a, b) => a - b).join(",");
    lines.push(`@rps-cpus ${cpus}`);
    settings[`${iface}/rps.rx-*`] = cpus;
    if (r.rps.flowEntriesPerQueue !== undefined) {
      lines.push(`@rps-flow-cnt ${r.rps.flowEntriesPerQueue}`);
      settings[`${iface}/rfs.rx-*`] = String(r.rps.flowEntriesPerQueue);
    }
    if (r.rps.onlyWhenQueuesBelowCpus) lines.push("@rps-only-below-cpus 1");
    if (r.rps.sockFlowEntries !== undefined) set(settingByArg("rps", "sockFlowEntries")!.ethtool, String(r.rps.sockFlowEntries));
  }
  if (r.irqAffinity) {
    lines.push(`# ${NIC_GROUP_SPECS.irq.planTitle}`);
    const cpus = r.irqAffinity.cpus === "spread" ? "spread" : r.irqAffinity.cpus.join(",");
    lines.push(`@irq-cpus ${cpus}`);
    settings[`${iface}/irq.*`] = cpus;
  }
  const warnings = [...r.warnings];
  return { request: r, settings, stdin: lines.join("\n") + "\n", warnings, persistence: r.persistence };
}

/** Keys in the order the host applies them (the spec's group order: channels first), so a restore follows it too. */
const KEY_RANK = [HOST_PREFIX.channels, HOST_PREFIX.rings, HOST_PREFIX.features, HOST_PREFIX.coalesce, "txqueuelen", "net.core.", "rps.", "rfs.", "irq."] as string[];
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
export function renderNicRestoreStdin(owner: Owner, iface: string, previous: Record<string, string>, restoreOnDelete: boolean): string {
  const lines = [...planHeader("nic", owner), `@interface ${iface}`, `@restore ${restoreOnDelete ? 1 : 0}`];
  lines.push(...origLines(previous, Object.keys(previous).sort(byApplyOrder), ORIG_KEY, ORIG_VALUE));
  return lines.join("\n") + "\n";
}
