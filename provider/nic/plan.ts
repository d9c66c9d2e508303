/**
 * Rendering of a NicQueues resource: validated request → the host program's stdin (pure, deterministic).
 * Host-dependent values ("max" rings, "all" CPU masks, IRQ numbers, the boot script and unit) are resolved on the
 * host in preflight, before anything changes; stdin shows exactly what was asked, one setting per line.
 */
import { Owner } from "../owner";
import type { NicPreset } from "../sizing/nic";
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

const CHANNEL_ORDER = ["combined", "rx", "tx", "other"];
const RING_ORDER = ["rx", "rx-mini", "rx-jumbo", "tx"];

function sortedEntries<T>(o: Record<string, T>, order?: string[]): [string, T][] {
  const rank = (k: string) => (order ? order.indexOf(k) : -1);
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
    "@net-tuning v1",
    "@kind nic",
    `@owner ${input.owner.label}`,
    `@owner-id ${input.owner.id}`,
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
  section("channels (ethtool -L), applied first: they change the number of queues", Object.keys(r.channels).length);
  for (const [k, v] of sortedEntries(r.channels, CHANNEL_ORDER)) set(`channel.${k}`, String(v));
  section('rings (ethtool -G), descriptors; "max" = the driver\'s pre-set maximum', Object.keys(r.rings).length);
  for (const [k, v] of sortedEntries(r.rings, RING_ORDER)) set(`ring.${k}`, String(v));
  section("offload features (ethtool -K), by the name ethtool -k shows", Object.keys(r.features).length);
  for (const [k, v] of sortedEntries(r.features)) set(`feature.${k}`, onOff(v));
  section("interrupt coalescing (ethtool -C)", Object.keys(r.coalesce).length);
  for (const [k, v] of sortedEntries(r.coalesce)) set(`coalesce.${k}`, typeof v === "boolean" ? onOff(v) : String(v));
  if (r.txQueueLength !== undefined) {
    lines.push("# transmit queue length (ip link set dev IF txqueuelen N), packets");
    set("txqueuelen", String(r.txQueueLength));
  }
  if (r.rps) {
    lines.push("# RPS/RFS on every rx queue; the CPU mask is computed on the host from its possible CPUs");
    const cpus = r.rps.cpus === "all" ? "all" : [...r.rps.cpus].sort((a, b) => a - b).join(",");
    lines.push(`@rps-cpus ${cpus}`);
    settings[`${iface}/rps.rx-*`] = cpus;
    if (r.rps.flowEntriesPerQueue !== undefined) {
      lines.push(`@rps-flow-cnt ${r.rps.flowEntriesPerQueue}`);
      settings[`${iface}/rfs.rx-*`] = String(r.rps.flowEntriesPerQueue);
    }
    if (r.rps.onlyWhenQueuesBelowCpus) lines.push("@rps-only-below-cpus 1");
    if (r.rps.sockFlowEntries !== undefined) set("net.core.rps_sock_flow_entries", String(r.rps.sockFlowEntries));
  }
  if (r.irqAffinity) {
    lines.push('# IRQ affinity: the NIC\'s IRQs, one CPU each, round-robin over the CPUs ("spread" = every online CPU)');
    const cpus = r.irqAffinity.cpus === "spread" ? "spread" : r.irqAffinity.cpus.join(",");
    lines.push(`@irq-cpus ${cpus}`);
    settings[`${iface}/irq.*`] = cpus;
  }
  const warnings = [...r.warnings];
  return { request: r, settings, stdin: lines.join("\n") + "\n", warnings, persistence: r.persistence };
}

/** Keys in the order the host applies them (channels first), so a restore without the journal follows it too. */
const KEY_RANK = ["channel.", "ring.", "feature.", "coalesce.", "txqueuelen", "net.core.", "rps.", "rfs.", "irq."];
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
  const lines = ["@net-tuning v1", "@kind nic", `@owner ${owner.label}`, `@owner-id ${owner.id}`, `@interface ${iface}`, `@restore ${restoreOnDelete ? 1 : 0}`];
  for (const k of Object.keys(previous).sort(byApplyOrder)) {
    if (!ORIG_KEY.test(k) || !ORIG_VALUE.test(previous[k])) {
      throw new Error(`pulumi-net-tuning: refusing to store an unsafe original value for ${JSON.stringify(k)}`);
    }
    lines.push(`@orig ${k}\t${previous[k]}`);
  }
  return lines.join("\n") + "\n";
}
