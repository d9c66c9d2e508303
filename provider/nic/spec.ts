/**
 * The NIC spec: ONE table of every NicQueues setting — its group, argument name, ethtool/host name, value type, range,
 * unit, apply rank and documentation. Everything else is derived from it:
 *  - the zod schema (`schema.ts`) and so the validation of arguments, presets and profiles' `nic` parts alike;
 *  - the plain value types (`values.generated.ts`, for presets) and the Pulumi args interfaces
 *    (`components/nicArgs.generated.ts`), written by `npm run gen` (scripts/gen-spec.ts) and drift-checked by a test;
 *  - the plan lines and apply order (`plan.ts`);
 *  - the README NicQueues argument table (between the `nic-args` markers);
 *  - the host's name lists (`provider/host/sh/nicspec.sh`): setting names, value classes, minima and maxima, feature short names
 *    and the apply order, so the host validates without re-typing them.
 * Pure data; no I/O.
 */

/** The setting groups, in the order the host applies them (channels first: they change the rx queues RPS is set on). */
export const NIC_GROUPS = ["channels", "rings", "features", "coalesce", "link", "rps", "irq"] as const;
export type NicGroup = (typeof NIC_GROUPS)[number];

/**
 * A setting's value type. count: an integer in [min, max]; ring: a count or `"max"`; onOff: a boolean (on/off);
 * flag: a boolean that is not a host setting (a switch of the plan); cpus: a keyword or a list of CPU numbers.
 */
export type NicValueType = "count" | "ring" | "onOff" | "flag" | "cpus";

export interface NicSetting {
  group: NicGroup;
  /** The argument field (camelCase), e.g. `rxUsecs`. */
  arg: string;
  /** The name the tool or kernel uses, e.g. `rx-usecs` (ethtool -C), `rx-mini` (ethtool -G), `txqueuelen`. */
  ethtool: string;
  type: NicValueType;
  min?: number;
  max?: number;
  /** Unit, as messages and docs name it ("descriptors", "microseconds", …). */
  unit?: string;
  /** cpus: the keyword that stands for a host-computed set ("all", "spread"). */
  keyword?: string;
  /** Required within its group object. */
  required?: boolean;
  /** Position in the host's apply order within the group (lower first; equal ranks keep the table's order). */
  rank: number;
  /** One line of documentation (JSDoc and README). */
  doc: string;
  /** The default, in words, when not "none (left as it is)". */
  default?: string;
  /**
   * The key (prefix) of the setting in the host's journal, `previous` and the plan's settings when it is neither
   * `<group host>.<ethtool>` (keyed groups) nor `ethtool` itself: the per-queue/per-IRQ settings (`rps.rx-0`, `irq.24`).
   */
  journal?: string;
}

export const MAX_RING = 1048576;
export const MAX_CHANNELS = 4096;
export const MAX_TXQUEUELEN = 1000000;
export const MAX_CPU = 8191;
export const MAX_FLOW_CNT = 1048576;
/** 1 << 29: the kernel refuses more rps_sock_flow_entries. */
export const MAX_SOCK_FLOW = 536870912;
const U32 = 4294967295;

const ring = (arg: string, ethtool: string, rank: number, doc: string): NicSetting => ({
  group: "rings", arg, ethtool, type: "ring", min: 1, max: MAX_RING, unit: "descriptors", rank, doc,
});
const channel = (arg: string, rank: number, doc: string): NicSetting => ({
  group: "channels", arg, ethtool: arg, type: "count", min: 0, max: MAX_CHANNELS, unit: "queues", rank, doc,
});
const co = (arg: string, ethtool: string, unit: string, doc: string): NicSetting => ({
  group: "coalesce", arg, ethtool, type: "count", min: 0, max: U32, unit, rank: 0, doc,
});
const adaptive = (arg: string, ethtool: string, doc: string): NicSetting => ({ group: "coalesce", arg, ethtool, type: "onOff", rank: 0, doc });

/** Every NicQueues setting with a fixed name (features are keyed by the names `ethtool -k` shows: see FEATURE_SHORT_NAMES). */
export const NIC_SETTINGS: readonly NicSetting[] = [
  channel("combined", 0, "Combined rx/tx queues (what most NICs use)."),
  channel("rx", 1, "rx-only queues."),
  channel("tx", 2, "tx-only queues."),
  channel("other", 3, "Other (link/management) queues."),

  ring("rx", "rx", 0, "rx ring."),
  ring("rxMini", "rx-mini", 1, "rx-mini ring (few drivers)."),
  ring("rxJumbo", "rx-jumbo", 2, "rx-jumbo ring (few drivers)."),
  ring("tx", "tx", 3, "tx ring."),

  adaptive("adaptiveRx", "adaptive-rx", "Adaptive rx coalescing: the driver moves rx-usecs itself."),
  adaptive("adaptiveTx", "adaptive-tx", "Adaptive tx coalescing: the driver moves tx-usecs itself."),
  co("rxUsecs", "rx-usecs", "microseconds", "Delay of an rx interrupt after a packet."),
  co("rxFrames", "rx-frames", "frames", "Frames received before an rx interrupt."),
  co("rxUsecsIrq", "rx-usecs-irq", "microseconds", "rx-usecs while an interrupt is being serviced."),
  co("rxFramesIrq", "rx-frames-irq", "frames", "rx-frames while an interrupt is being serviced."),
  co("txUsecs", "tx-usecs", "microseconds", "Delay of a tx-completion interrupt after a packet."),
  co("txFrames", "tx-frames", "frames", "Frames sent before a tx-completion interrupt."),
  co("txUsecsIrq", "tx-usecs-irq", "microseconds", "tx-usecs while an interrupt is being serviced."),
  co("txFramesIrq", "tx-frames-irq", "frames", "tx-frames while an interrupt is being serviced."),
  co("statsBlockUsecs", "stats-block-usecs", "microseconds", "Interval of the statistics block update."),
  co("sampleInterval", "sample-interval", "seconds", "Sampling interval of adaptive coalescing."),
  co("pktRateLow", "pkt-rate-low", "packets per second", "Packet rate below which the *Low values apply."),
  co("pktRateHigh", "pkt-rate-high", "packets per second", "Packet rate above which the *High values apply."),
  co("rxUsecsLow", "rx-usecs-low", "microseconds", "rx-usecs below pktRateLow."),
  co("rxFramesLow", "rx-frames-low", "frames", "rx-frames below pktRateLow."),
  co("txUsecsLow", "tx-usecs-low", "microseconds", "tx-usecs below pktRateLow."),
  co("txFramesLow", "tx-frames-low", "frames", "tx-frames below pktRateLow."),
  co("rxUsecsHigh", "rx-usecs-high", "microseconds", "rx-usecs above pktRateHigh."),
  co("rxFramesHigh", "rx-frames-high", "frames", "rx-frames above pktRateHigh."),
  co("txUsecsHigh", "tx-usecs-high", "microseconds", "tx-usecs above pktRateHigh."),
  co("txFramesHigh", "tx-frames-high", "frames", "tx-frames above pktRateHigh."),

  {
    group: "link", arg: "txQueueLength", ethtool: "txqueuelen", type: "count", min: 1, max: MAX_TXQUEUELEN, unit: "packets", rank: 0,
    doc: "Transmit queue length (`ip link set dev IF txqueuelen N`); iproute2's -1 (UINT_MAX) is refused.",
  },

  {
    group: "rps", arg: "cpus", ethtool: "rps_cpus", type: "cpus", keyword: "all", min: 0, max: MAX_CPU, unit: "CPU number", required: true, rank: 0, journal: "rps.",
    doc: '`"all"` = every possible CPU of the host, or a list of CPU numbers; the hex mask is computed on the host (32-bit comma groups), a CPU the host lacks is refused.',
  },
  {
    group: "rps", arg: "flowEntriesPerQueue", ethtool: "rps_flow_cnt", type: "count", min: 0, max: MAX_FLOW_CNT, unit: "flow entries per rx queue", rank: 1, journal: "rfs.",
    doc: "`rps_flow_cnt` of every rx queue; the kernel rounds it up to a power of 2.",
  },
  {
    group: "rps", arg: "sockFlowEntries", ethtool: "net.core.rps_sock_flow_entries", type: "count", min: 0, max: MAX_SOCK_FLOW, unit: "flow entries", rank: 2,
    doc: "`net.core.rps_sock_flow_entries`, host-wide (refused inside a network namespace or container); rounded up to a power of 2.",
  },
  {
    group: "rps", arg: "onlyWhenQueuesBelowCpus", ethtool: "rps-only-below-cpus", type: "flag", rank: 3,
    doc: "Skip RPS (with a warning) when the NIC has as many rx queues as CPUs (hardware RSS first).", default: "false",
  },

  {
    group: "irq", arg: "cpus", ethtool: "smp_affinity", type: "cpus", keyword: "spread", min: 0, max: MAX_CPU, unit: "CPU number", required: true, rank: 0, journal: "irq.",
    doc: 'A list of CPU numbers (one CPU per IRQ, round-robin), or `"spread"` = over every online CPU.',
  },
];

/** The group objects of NicQueues' arguments: argument name, generated interface, docs (README and JSDoc). */
export interface NicGroupSpec {
  group: NicGroup;
  /** The NicQueues argument holding the group (`link` settings are top-level arguments). */
  arg?: string;
  /** Name of the generated interface (`NicRings` for args, `NicRingsValues` for plain values). */
  type?: string;
  /** The tool, for docs. */
  tool: string;
  /** The group's name on the host: key prefix of its plan settings (`channel.rx`) and of its want-file (`want.channel`). */
  host: string;
  /** The comment line above the group in the plan. */
  planTitle: string;
  /** The plan sets each of the group's values as `@set <host>.<name> <value>` (HOST_PREFIX); other groups have their own lines. */
  keyed?: boolean;
  doc: string;
}

export const NIC_GROUP_SPECS: Readonly<Record<NicGroup, NicGroupSpec>> = {
  channels: {
    group: "channels", host: "channel", keyed: true, arg: "channels", type: "NicChannels", tool: "ethtool -L",
    planTitle: "channels (ethtool -L), applied first (they change the queues)",
    doc: `Queue counts (\`ethtool -L\`), 0-${MAX_CHANNELS} each, within the driver's maximums from \`ethtool -l\`; applied before everything else, since they change the rx queues RPS is set on.`,
  },
  rings: {
    group: "rings", host: "ring", keyed: true, arg: "rings", type: "NicRings", tool: "ethtool -G",
    planTitle: 'rings (ethtool -G), descriptors; "max" = the driver\'s maximum',
    doc: `Ring buffer sizes (\`ethtool -G\`): each 1-${MAX_RING} descriptors or \`"max"\` (the driver's pre-set maximum from \`ethtool -g\`), within the driver's maximum (checked on the host before anything changes).`,
  },
  features: {
    group: "features", host: "feature", keyed: true, arg: "features", tool: "ethtool -K",
    planTitle: "offload features (ethtool -K)",
    doc: "Offload features (`ethtool -K`): `true` = on, `false` = off, by short name, the name `ethtool -k` shows or a kernel alias. A `[fixed]` feature cannot change.",
  },
  coalesce: {
    group: "coalesce", host: "coalesce", keyed: true, arg: "coalesce", type: "NicCoalesce", tool: "ethtool -C",
    planTitle: "interrupt coalescing (ethtool -C)",
    doc: "Interrupt coalescing (`ethtool -C`). Parameters or values the driver refuses are reported before anything changes (rx-usecs/tx-usecs: e1000e accepts 0, 1, 3, 4 or 10-10000, igb 0, 1, 3 or 10-10000).",
  },
  link: {
    group: "link", host: "txq", tool: "ip link",
    planTitle: "txqueuelen (ip link), packets",
    doc: "Link settings (`ip link`).",
  },
  rps: {
    group: "rps", host: "rps", arg: "rps", type: "NicRps", tool: "sysfs rps_cpus / rps_flow_cnt",
    planTitle: "RPS/RFS on every rx queue",
    doc: "Receive Packet/Flow Steering on every rx queue: the CPU mask (`rps_cpus`) is computed on the host from its possible CPUs; the kernel rounds both flow counts up to a power of 2.",
  },
  irq: {
    group: "irq", host: "irq", arg: "irqAffinity", type: "NicIrqAffinity", tool: "/proc/irq/N/smp_affinity",
    planTitle: 'IRQ affinity, one CPU per IRQ, round-robin ("spread" = every online CPU)',
    doc: "IRQ affinity of the NIC's IRQs (from /sys/class/net/IF/device/msi_irqs, else /proc/interrupts). An interface without IRQs of its own (veth, bridge, VLAN) is refused; a running irqbalance that has not banned the IRQs gives a warning. IRQ numbers can change across reboots and driver reloads.",
  },
};

/** `ethtool -K` short name → the name `ethtool -k` shows (the host passes the short name back to -K). */
export const FEATURE_SHORT_NAMES: Readonly<Record<string, string>> = {
  gro: "generic-receive-offload",
  gso: "generic-segmentation-offload",
  tso: "tcp-segmentation-offload",
  lro: "large-receive-offload",
  rx: "rx-checksumming",
  tx: "tx-checksumming",
  sg: "scatter-gather",
  rxhash: "receive-hashing",
  ntuple: "ntuple-filters",
  rxvlan: "rx-vlan-offload",
  txvlan: "tx-vlan-offload",
  ufo: "udp-fragmentation-offload",
};

/** The settings of one group, in apply order (rank, then the table's order). */
export function settingsOf(group: NicGroup): NicSetting[] {
  return NIC_SETTINGS.filter((s) => s.group === group).sort((a, b) => a.rank - b.rank);
}

/** The setting of a group by argument name. */
export function settingByArg(group: NicGroup, arg: string): NicSetting | undefined {
  return NIC_SETTINGS.find((s) => s.group === group && s.arg === arg);
}

/**
 * The NicQueues argument names of the settings, in the spec's group order: a group's object argument (`rings`), or
 * for a group without one (`link`) its settings' own top-level arguments (`txQueueLength`).
 */
export const NIC_SETTING_ARGS: readonly string[] = NIC_GROUPS.flatMap((g) => {
  const arg = NIC_GROUP_SPECS[g].arg;
  return arg !== undefined ? [arg] : settingsOf(g).map((s) => s.arg);
});

/** The host key prefix of a group's settings in the plan (`@set channel.rx 2`), or the key itself (link). */
export const HOST_PREFIX: Readonly<Partial<Record<NicGroup, string>>> = Object.fromEntries(
  NIC_GROUPS.filter((g) => NIC_GROUP_SPECS[g].keyed).map((g) => [g, `${NIC_GROUP_SPECS[g].host}.`]),
);

/**
 * The keys (or key prefixes) of the host's journal in the spec's apply order: a keyed group's prefix (`ring.`: its
 * keys sort by name within it), else each host setting's journal key (`txqueuelen`, `rps.`, `rfs.`,
 * `net.core.rps_sock_flow_entries`, `irq.`); flags (switches of the plan) have none.
 */
export const JOURNAL_KEY_ORDER: readonly string[] = NIC_GROUPS.flatMap((g) => {
  const prefix = HOST_PREFIX[g];
  if (prefix !== undefined) return [prefix];
  return settingsOf(g).filter((s) => s.type !== "flag").map((s) => s.journal ?? s.ethtool);
});

/** The range of a setting in words: "1-1048576 descriptors or \"max\"", "on/off", … (docs). */
export function rangeWords(s: NicSetting): string {
  const span = s.min !== undefined && s.max !== undefined ? `${s.min}-${s.max}` : "";
  switch (s.type) {
    case "ring": return `${span} ${s.unit} or "max"`;
    case "count": return `${span} ${s.unit}`;
    case "onOff": return "true (on) / false (off)";
    case "flag": return "true / false";
    case "cpus": return `"${s.keyword}" or a list of CPU numbers (${span})`;
  }
}

/**
 * How NicQueues settings survive a reboot: the values of the `persistence` argument, declared once. components/nicQueues.ts
 * re-exports this object and type as its public `Persistence` (the Pulumi schema analyzer reads the enum from this
 * `as const` object and its same-named type); the zod enum, the README row and the default derive from it.
 */
export const Persistence = {
  /** A oneshot systemd unit running the boot script, enabled. */
  Systemd: "systemd",
  /** A marked block in /etc/rc.d/rc.local or /etc/rc.local. */
  RcLocal: "rc.local",
  /** Not persisted (runtime only). */
  None: "none",
  /** systemd when /run/systemd/system exists, else rc.local (the default). */
  Auto: "auto",
} as const;
/** A value of {@link Persistence}. */
export type Persistence = (typeof Persistence)[keyof typeof Persistence];
export type NicPersistence = Persistence;
/** The persistence values, in the order messages and docs list them. */
export const NIC_PERSISTENCE_VALUES = Object.values(Persistence) as [Persistence, ...Persistence[]];
/** The persistence when none is given. */
export const NIC_PERSISTENCE_DEFAULT: Persistence = Persistence.Auto;

/**
 * Linux interface names as NicQueues accepts them: 1-INTERFACE_NAME_MAX characters from letters, digits and
 * INTERFACE_NAME_CHARS (also kept to characters safe in file and unit names). The regexp, the schema's message,
 * the JSDoc reference and the README row derive from these.
 */
export const INTERFACE_NAME_MAX = 15;
export const INTERFACE_NAME_CHARS = [".", "_", "-", "@", "+"] as const;
export const INTERFACE_NAME = new RegExp(`^[A-Za-z0-9${INTERFACE_NAME_CHARS.map((c) => (c === "-" ? "\\-" : c)).join("")}]{1,${INTERFACE_NAME_MAX}}$`);
/** The rule in words, each extra character formatted by `q` (`"."` in messages, `` `.` `` in Markdown). */
export function interfaceNameRule(q: (c: string) => string, sep = ", "): string {
  return `1-${INTERFACE_NAME_MAX} characters from letters, digits, ${INTERFACE_NAME_CHARS.map(q).join(sep)}`;
}
