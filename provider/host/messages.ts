/**
 * Refusals that both the host preflight (at `pulumi up`) and the live read (at preview, `components/live.ts`) give,
 * written once: the preview says what `up` would say, word for word. The host's copies are generated from here into
 * `provider/host/sh/nicspec.sh` and `sysctlspec.sh` (`npm run gen`, scripts/gen-spec.ts; drift-checked by
 * tests/unit/genSpec.test.ts) as sh functions that set one variable: the same function of the same arguments.
 * Pure: no I/O.
 */
import { Problem, problemAt } from "../errors";

/** A message with named parts; `sh` renders it as a sh function of positional parameters (the parts, in order). */
export interface HostMessage<P extends string> {
  /** The generated sh function and the variable it sets. */
  sh: { fn: string; variable: string; doc: string };
  parts: readonly P[];
  text(a: Record<P, string>): string;
}

function message<P extends string>(sh: HostMessage<P>["sh"], parts: readonly P[], text: (a: Record<P, string>) => string): HostMessage<P> {
  return { sh, parts, text };
}

// ------------------------------------------------------------------------------------------- NIC limits (ethtool)

/** The NicQueues groups the host checks against the driver's pre-set maximums (`ethtool -g` / `-l`), by host name. */
export const NIC_LIMIT_GROUPS = {
  channel: { arg: "channels", option: "-l", what: "channels", acceptsMax: false },
  ring: { arg: "rings", option: "-g", what: "ring parameters", acceptsMax: true },
} as const;
export type NicLimitGroup = keyof typeof NIC_LIMIT_GROUPS;

/** The tail of the "exceeds" message for a group that accepts `"max"`. */
export const OR_MAX = ' or "max"';

/** A declared ring or channel count above the driver's pre-set maximum. */
export const LIMIT_EXCEEDED = message(
  { fn: "nn_msg_exceeds", variable: "NN_MSG", doc: "SETTING VALUE IF MAX DRIVER OPTION OR-MAX" },
  ["setting", "value", "iface", "max", "driver", "option", "orMax"] as const,
  (a) => `${a.setting} ${a.value} exceeds ${a.iface} maximum ${a.max} (driver ${a.driver}, ethtool ${a.option} ${a.iface}); use at most ${a.max}${a.orMax}`,
);

/** A ring or channel the driver does not report (absent, `n/a`, or a maximum and current value of 0). */
export const LIMIT_FIELD_UNSUPPORTED = message(
  { fn: "nn_msg_nofield", variable: "NN_MSG", doc: "SETTING IF DRIVER OPTION NAME WHAT" },
  ["setting", "iface", "driver", "option", "name", "what"] as const,
  (a) => `${a.setting} is not supported by ${a.iface} (driver ${a.driver}: ethtool ${a.option} shows no ${a.name} ${a.what}); remove it`,
);

/** The driver answers `ethtool -g` / `-l` with an error (a veth has no ring parameters). */
export const LIMIT_GROUP_UNSUPPORTED = message(
  { fn: "nn_msg_nogroup", variable: "NN_MSG", doc: "ARG IF DRIVER WHAT OPTION SAID" },
  ["arg", "iface", "driver", "what", "option", "said"] as const,
  (a) => `${a.arg} cannot be changed: ${a.iface} (driver ${a.driver}) does not support ${a.what} (ethtool ${a.option} ${a.iface} says: ${a.said}); remove ${a.arg}`,
);

/** One maximum found on the host for a declared ring or channel (`max<TAB>key<TAB>value` of the live read). */
export interface NicLimitFacts {
  /** `cur` and `max` as ethtool shows them ("n/a" and "" included), the driver as `ethtool -i` names it. */
  cur: string;
  max: string;
  driver: string;
}

/**
 * The preflight's verdict on one declared ring or channel (nic.sh `nn_check_limits`): its refusal, or undefined when
 * the value is within the maximum ("max" always is). `setting` is the argument path (`rings.rx`), `name` the ethtool
 * name (`rx`).
 */
export function nicLimitRefusal(group: NicLimitGroup, setting: string, name: string, iface: string, declared: string, f: NicLimitFacts): string | undefined {
  const g = NIC_LIMIT_GROUPS[group];
  const none = (v: string) => v === "" || v === "n/a";
  if (none(f.max) || none(f.cur) || (f.max === "0" && f.cur === "0")) {
    return LIMIT_FIELD_UNSUPPORTED.text({ setting, iface, driver: f.driver, option: g.option, name, what: g.what });
  }
  if (declared === "max" || !/^\d+$/.test(declared) || !/^\d+$/.test(f.max) || Number(declared) <= Number(f.max)) return undefined;
  return LIMIT_EXCEEDED.text({ setting, value: declared, iface, max: f.max, driver: f.driver, option: g.option, orMax: g.acceptsMax ? OR_MAX : "" });
}

// ------------------------------------------------------------------------------------ NIC features (ethtool -k)

/** `ethtool -k` fails on the interface: no feature can be checked. */
export const FEATURES_UNREADABLE = message(
  { fn: "nn_msg_features_unreadable", variable: "NN_MSG", doc: "IF SAID" },
  ["iface", "said"] as const,
  (a) => `features cannot be read on ${a.iface} (ethtool -k ${a.iface} says: ${a.said})`,
);

/** A declared feature `ethtool -k` does not list for this interface. */
export const FEATURE_ABSENT = message(
  { fn: "nn_msg_feature_absent", variable: "NN_MSG", doc: "NAME IF DRIVER" },
  ["name", "iface", "driver"] as const,
  (a) => `features: ${a.name} does not exist on ${a.iface} (driver ${a.driver}; ethtool -k ${a.iface} lists the features); check the name`,
);

/** A declared feature that is `[fixed]` at the other value. */
export const FEATURE_FIXED = message(
  { fn: "nn_msg_feature_fixed", variable: "NN_MSG", doc: "NAME CURRENT IF DRIVER WANTED" },
  ["name", "cur", "iface", "driver", "want"] as const,
  (a) => `features: ${a.name} is [fixed] ${a.cur} on ${a.iface} (driver ${a.driver}): it cannot be turned ${a.want}; remove it`,
);

// ------------------------------------------------------------------------------- NIC coalescing (ethtool -c)

/** `ethtool -c` fails on the interface (a veth has no interrupt coalescing). */
export const COALESCE_UNSUPPORTED = message(
  { fn: "nn_msg_coalesce_none", variable: "NN_MSG", doc: "IF DRIVER SAID" },
  ["iface", "driver", "said"] as const,
  (a) => `coalesce: interrupt coalescing is not supported by ${a.iface} (driver ${a.driver}; ethtool -c ${a.iface} says: ${a.said}); remove coalesce`,
);

/** A declared coalescing parameter `ethtool -c` shows as "n/a" or not at all ("absent"). */
export const COALESCE_FIELD_UNSUPPORTED = message(
  { fn: "nn_msg_coalesce_nofield", variable: "NN_MSG", doc: "SETTING NAME IF DRIVER SHOWN" },
  ["setting", "name", "iface", "driver", "shown"] as const,
  (a) => `${a.setting} (${a.name}) is not supported by ${a.iface} (driver ${a.driver}; ethtool -c ${a.iface} shows it as ${a.shown}); remove it`,
);

/** A declared value a driver is known to refuse (the kernel's e1000_set_coalesce / igb_set_coalesce). */
export const COALESCE_DRIVER_REFUSES = message(
  { fn: "nn_msg_coalesce_range", variable: "NN_MSG", doc: "SETTING VALUE DRIVER IF ACCEPTS" },
  ["setting", "value", "driver", "iface", "accepts"] as const,
  (a) => `${a.setting} ${a.value} is refused by the ${a.driver} driver of ${a.iface}: it accepts ${a.accepts}; use 10 or more`,
);

/**
 * Known driver ranges, so the change fails before anything changes rather than half-way: the values of `params` the
 * driver refuses (inclusive ranges, `hi` undefined = no upper end) and what it accepts. e1000e refuses 2, 5-9 and
 * > 10000 (verified on the VM tier's e1000e); igb refuses 2, 4-9 and > 10000. 0 = off, 1 and 3 = dynamic modes,
 * e1000e's 4 = simplified dynamic.
 */
export const COALESCE_DRIVER_RANGES: Readonly<Record<string, { params: readonly string[]; refused: readonly (readonly [number, number?])[]; accepts: string }>> = {
  e1000e: { params: ["rx-usecs", "tx-usecs"], refused: [[2, 2], [5, 9], [10001]], accepts: "0, 1, 3, 4 (0 off, 1, 3 and 4 dynamic modes) or 10-10000 microseconds" },
  igb: { params: ["rx-usecs", "tx-usecs"], refused: [[2, 2], [4, 9], [10001]], accepts: "0, 1, 3 (0 off, 1 and 3 dynamic modes) or 10-10000 microseconds" },
};

/** What `driver` accepts when it refuses `value` for the coalescing parameter `name`, else undefined. */
export function coalesceDriverRefuses(driver: string, name: string, value: string): string | undefined {
  const r = COALESCE_DRIVER_RANGES[driver];
  if (!r || !r.params.includes(name) || !/^\d+$/.test(value)) return undefined;
  const v = Number(value);
  return r.refused.some(([lo, hi]) => v >= lo && (hi === undefined || v <= hi)) ? r.accepts : undefined;
}

/** The argument name of an ethtool name as the host writes it (nic.sh nn_camel: "rx-usecs" → "rxUsecs"). */
export function camel(name: string): string {
  return name.split("-").map((p, i) => (i === 0 ? p : p.charAt(0).toUpperCase() + p.slice(1))).join("");
}

// ---------------------------------------------------------------------------- NIC interface and ethtool present

/** The declared interface does not exist (nic.sh kind_preflight: the only refusal then). `list`: the host's interfaces, space-separated. */
export const IFACE_MISSING = message(
  { fn: "nn_msg_no_iface", variable: "NN_MSG", doc: "IF HOST INTERFACES" },
  ["iface", "host", "list"] as const,
  (a) => `interface ${a.iface} does not exist on ${a.host} (interfaces: ${a.list}): check the name`,
);

/** The host has no ethtool (nic.sh kind_preflight, for an interface that exists). */
export const ETHTOOL_MISSING = message(
  { fn: "nn_msg_no_ethtool", variable: "NN_MSG", doc: "HOST" },
  ["host"] as const,
  (a) => `ethtool is not installed on ${a.host}: install the ethtool package`,
);

// ----------------------------------------------------- RPS and IRQ affinity (nic.sh nn_rps_refusals, nn_irq_refusals)
// The live read gives these in the host's own words (a "refuse" line of the read: provider/live/read.ts).

/** rps.sockFlowEntries where net.core.rps_sock_flow_entries does not exist (a network namespace, a container) or is read-only. */
export const SOCK_FLOW_ABSENT = message(
  { fn: "nn_msg_sockflow", variable: "NN_MSG", doc: "(no arguments)" },
  [] as const,
  () => "rps.sockFlowEntries: net.core.rps_sock_flow_entries does not exist or is read-only here: it is host-wide and absent inside a network namespace or container; set it on the host, or remove sockFlowEntries",
);

/** rps on an interface without rps_cpus files. */
export const RPS_NO_FILES = message(
  { fn: "nn_msg_rps_nofiles", variable: "NN_MSG", doc: "IF" },
  ["iface"] as const,
  (a) => `rps: ${a.iface} has no rps_cpus files (kernel built without CONFIG_RPS?); remove rps`,
);

/** rps.cpus naming CPUs the host does not have. */
export const RPS_CPUS_ABSENT = message(
  { fn: "nn_msg_rps_cpus", variable: "NN_MSG", doc: "CPUS HOST POSSIBLE" },
  ["cpus", "host", "possible"] as const,
  (a) => `rps.cpus: CPU(s) ${a.cpus} do not exist on ${a.host} (possible CPUs: ${a.possible}); use CPUs in that range or "all"`,
);

/** irqAffinity on an interface that has no IRQs of its own. */
export const IRQ_NONE = message(
  { fn: "nn_msg_irq_none", variable: "NN_MSG", doc: "IF DRIVER SYS" },
  ["iface", "driver", "sys"] as const,
  (a) =>
    `irqAffinity: ${a.iface} (driver ${a.driver}) has no IRQs of its own (a virtual interface such as veth, bridge or a VLAN has none; its MSI IRQs are in ${a.sys}/${a.iface}/device/msi_irqs on real NICs); remove irqAffinity or set it on the physical NIC`,
);

/** irqAffinity.cpus naming CPUs that are not online. */
export const IRQ_CPUS_OFFLINE = message(
  { fn: "nn_msg_irq_cpus", variable: "NN_MSG", doc: "CPUS HOST ONLINE" },
  ["cpus", "host", "online"] as const,
  (a) => `irqAffinity.cpus: CPU(s) ${a.cpus} are not online on ${a.host} (online CPUs: ${a.online})`,
);

// ------------------------------------------------------------- NicQueues persistence (nic.sh nn_persist_refusals)

/** With persistence "systemd": the unit or boot script exists and has no owner line of this resource. */
export const PERSIST_NOT_OURS = message(
  { fn: "nn_msg_persist_other", variable: "NN_MSG", doc: "FILE OWNER" },
  ["file", "owner"] as const,
  (a) => `persistence: ${a.file} exists and was not written by this resource (${a.owner}): move it away or use persistence "rc.local"/"none"`,
);

/** rc.local holds another resource's block for the same interface. */
export const RC_OTHER_BLOCK = message(
  { fn: "nn_msg_rc_other", variable: "NN_MSG", doc: "RCLOCAL IF LINE" },
  ["rclocal", "iface", "line"] as const,
  (a) => `persistence: ${a.rclocal} already holds a block for ${a.iface} of another resource ('${a.line}'): one NicQueues per interface`,
);

/** rc.local has this resource's BEGIN line without its END line. */
export const RC_NO_END = message(
  { fn: "nn_msg_rc_noend", variable: "NN_MSG", doc: "RCLOCAL BEGIN" },
  ["rclocal", "begin"] as const,
  (a) => `persistence: ${a.rclocal} has '${a.begin}' without its END line: repair the file by hand`,
);

/** With persistence "rc.local": rc.local exists and is not a regular file. */
export const RC_NOT_FILE = message(
  { fn: "nn_msg_rc_notfile", variable: "NN_MSG", doc: "RCLOCAL" },
  ["rclocal"] as const,
  (a) => `persistence: ${a.rclocal} is not a regular file`,
);

// ------------------------------------------------------------------------------- a NicQueues resource's read

/** What the live read found for a NicQueues resource's ethtool groups (provider/live/read.ts LiveSection). */
export interface NicReadFacts {
  values: Record<string, string>;
  maxima: Record<string, string>;
  drivers: Record<string, string>;
  unsupported: Record<string, string>;
  shown: Record<string, string>;
  absent: string[];
  /** The declared interface is missing (`no-interface<TAB>IF<TAB>interfaces` of the read: its name and the host's interfaces). */
  noInterface?: { iface: string; list: string };
  /** The interface exists and the host has no ethtool (`no-ethtool` of the read). */
  noEthtool?: boolean;
  /** Facts of the host (`host<TAB>name<TAB>value`): `hostname` as the engine names it (runtime.sh NT_HOSTNAME). */
  host?: Record<string, string>;
}

/** The host groups the preflight checks, in its order (nic.sh kind_preflight). */
const PREFLIGHT_GROUPS = ["channel", "ring", "feature", "coalesce"] as const;

/**
 * The host preflight's refusals of a NicQueues resource's declared rings, channels, features and coalescing, in its
 * order and words (nic.sh nn_check_limits, nn_check_features, nn_check_coalesce), from what the live read found;
 * `declared`: key (`IF/ring.rx`) → value, in the plan's order. Only what the read saw: a key of a group the read did
 * not report on (an older read, an interface that does not exist, no ethtool) is left to the host.
 */
export function nicRefusals(declared: Record<string, string>, f: NicReadFacts): Problem[] {
  const hostname = f.host?.hostname ?? "?";
  // a missing interface is the preflight's only refusal (it checks nothing else then)
  if (f.noInterface) return [problemAt("interface", IFACE_MISSING.text({ iface: f.noInterface.iface, host: hostname, list: f.noInterface.list }))];
  const out: Problem[] = f.noEthtool ? [problemAt("", ETHTOOL_MISSING.text({ host: hostname }))] : [];
  const driver = (iface: string) => f.drivers[iface] ?? "unknown";
  for (const group of PREFLIGHT_GROUPS) {
    const said = new Set<string>();
    for (const key of Object.keys(declared)) {
      const m = /^([^/]+)\/([a-z]+)\.(.+)$/.exec(key);
      if (!m || m[2] !== group) continue;
      const [, iface, , name] = m;
      const want = declared[key];
      const failed = f.unsupported[`${iface}/${group}`];
      if (failed !== undefined) {
        // the group's one refusal (the preflight checks no key of it)
        if (said.has(iface)) continue;
        said.add(iface);
        if (group === "feature") out.push(problemAt("features", FEATURES_UNREADABLE.text({ iface, said: failed })));
        else if (group === "coalesce") out.push(problemAt("coalesce", COALESCE_UNSUPPORTED.text({ iface, driver: driver(iface), said: failed })));
        else {
          const g = NIC_LIMIT_GROUPS[group];
          out.push(problemAt(g.arg, LIMIT_GROUP_UNSUPPORTED.text({ arg: g.arg, iface, driver: driver(iface), what: g.what, option: g.option, said: failed })));
        }
        continue;
      }
      if (group === "channel" || group === "ring") {
        if (f.maxima[key] === undefined) continue;
        const arg = `${NIC_LIMIT_GROUPS[group].arg}.${camel(name)}`;
        const r = nicLimitRefusal(group, arg, name, iface, want, { cur: f.values[key] ?? "", max: f.maxima[key], driver: driver(iface) });
        if (r) out.push(problemAt(arg, r));
      } else if (group === "feature") {
        if (f.absent.includes(key)) out.push(problemAt("features", FEATURE_ABSENT.text({ name, iface, driver: driver(iface) })));
        const fixed = /^(on|off) \[fixed\]$/.exec(f.shown[key] ?? "");
        if (fixed && fixed[1] !== want) out.push(problemAt("features", FEATURE_FIXED.text({ name, cur: fixed[1], iface, driver: driver(iface), want })));
      } else {
        const setting = `coalesce.${camel(name)}`;
        const shown = f.absent.includes(key) ? "absent" : f.shown[key] === "n/a" ? "n/a" : undefined;
        if (shown) {
          out.push(problemAt(setting, COALESCE_FIELD_UNSUPPORTED.text({ setting, name, iface, driver: driver(iface), shown })));
          continue;
        }
        const accepts = f.shown[key] !== undefined ? coalesceDriverRefuses(driver(iface), name, want) : undefined;
        if (accepts) out.push(problemAt(setting, COALESCE_DRIVER_REFUSES.text({ setting, value: want, driver: driver(iface), iface, accepts })));
      }
    }
  }
  return out;
}

// ------------------------------------------------------------------------------------------ sysctl keys absent

/** Added to the kernel version when the host is a network namespace other than the initial one. */
export const CHILD_NETNS_NOTE = ", inside a network namespace other than the host's: host-wide keys are absent here";
/** Added when a missing key is host-wide (the catalogue's scope "host"): where to set it instead. */
export const HOST_WIDE_FIX =
  "; a host-wide key exists only in the host's initial network namespace: this host is probably a container or network namespace, so set it on the real host (the init namespace)";

/** Declared sysctl keys the kernel does not have (no /proc/sys file). `keys`: "KEY (hint); KEY…" ({@link absentItem}). */
export const KEYS_ABSENT = message(
  { fn: "nts_msg_absent", variable: "NTS_MSG", doc: "KERNEL NETNS-NOTE KEYS FIX" },
  ["kernel", "netns", "keys", "fix"] as const,
  (a) => `these keys do not exist on this kernel (${a.kernel}${a.netns}): ${a.keys} — check the spelling, the kernel version, or load the module that provides them${a.fix}`,
);

/** One key of {@link KEYS_ABSENT}: the key and why it may be absent (`absenceHint` of the catalogue), if anything. */
export function absentItem(key: string, hint: string): string {
  return hint ? `${key} (${hint})` : key;
}
/** The separator of {@link absentItem}s. */
export const ABSENT_SEPARATOR = "; ";

/**
 * The whole refusal of absent keys as the host gives it. `hints`: key → absenceHint; `hostWide`: whether a key is
 * host-wide; `kernel`: `uname -r` of the host; `childNetns`: the host is not the initial network namespace.
 */
export function keysAbsentRefusal(keys: string[], hint: (k: string) => string, hostWide: (k: string) => boolean, kernel: string, childNetns: boolean): string {
  return KEYS_ABSENT.text({
    kernel,
    netns: childNetns ? CHILD_NETNS_NOTE : "",
    keys: keys.map((k) => absentItem(k, hint(k))).join(ABSENT_SEPARATOR),
    fix: keys.some(hostWide) ? HOST_WIDE_FIX : "",
  });
}

// ------------------------------------------------------------------------------------ boot order (sysctl.d)

/**
 * The refusal (bootOverride "error") of a boot-order override: the host's finding ("KEY = V is overridden at boot by
 * FILE:N which sets W", sysctl.sh nts_boot_conflicts, the one rule the preflight and the live read run) and its fix.
 */
export const BOOT_OVERRIDDEN = message(
  { fn: "nts_msg_boot", variable: "NTS_MSG", doc: "FINDING" },
  ["finding"] as const,
  (a) => `${a.finding}: remove that line, adopt that file (NetTuning adopt), or set bootOverride to "warn" to accept it`,
);
/** The refusal of a fileName that masks a same-named file in a later directory (sysctl.sh nts_boot_mask's finding). */
export const BOOT_MASKS = message(
  { fn: "nts_msg_boot_mask", variable: "NTS_MSG", doc: "FINDING" },
  ["finding"] as const,
  (a) => `${a.finding}: choose another fileName, or set bootOverride to "warn" to accept it`,
);

/** The planned sysctl.d file is a symlink (a user's link, dangling or not: replacing it would lose it). */
export const SYSCTL_FILE_LINK = message(
  { fn: "nts_msg_file_link", variable: "NTS_MSG", doc: "FILE TARGET OWNER" },
  ["file", "target", "owner"] as const,
  (a) => `${a.file} is a symlink (to ${a.target}), not a file written by this resource (${a.owner}): choose another fileName, or move that link away first`,
);

/** The planned sysctl.d file exists without this resource's owner line. */
export const SYSCTL_FILE_OTHER = message(
  { fn: "nts_msg_file_other", variable: "NTS_MSG", doc: "FILE OWNER" },
  ["file", "owner"] as const,
  (a) => `${a.file} exists and was not written by this resource (${a.owner}): choose another fileName, or move that file away first`,
);

/** The preflight's refusal (bootOverride "error") of one finding of the boot-order check, as the host gives it. */
export function bootRefusal(kind: "mask" | "override", finding: string): string {
  return (kind === "mask" ? BOOT_MASKS : BOOT_OVERRIDDEN).text({ finding });
}

// ------------------------------------------------------------------------------------------- kernel modules

/**
 * A kernel module the requested settings need (the plan's `@module` lines: net.netfilter.* → nf_conntrack, a
 * congestion control → tcp_<name>) that is not loaded and cannot be: the apply's `modprobe M` failed, or at preview
 * the live read's dry run (`modprobe -D M`, which loads nothing) did. `said`: modprobe's own words on one line.
 */
export const MODULE_UNLOADABLE = message(
  { fn: "nts_msg_module", variable: "NTS_MSG", doc: "MODULE SAID" },
  ["module", "said"] as const,
  (a) => `kernel module ${a.module} (needed by the requested settings) could not be loaded: ${a.said}; install it or remove the setting that needs it`,
);

// ------------------------------------------------------------------------------------- congestion control

/**
 * A declared net.ipv4.tcp_congestion_control the kernel does not offer: not in tcp_available_congestion_control, and
 * its module tcp_<name> not loaded by the apply (the plan's `@module` line: modprobe failed) or, at preview, not
 * among the modules the host has (`loadable`: the tcp_*.ko* of /lib/modules/$(uname -r), "none" when there are none).
 */
export const CC_UNAVAILABLE = message(
  { fn: "nts_msg_cc", variable: "NTS_MSG", doc: "NAME AVAILABLE LOADABLE" },
  ["name", "available", "loadable"] as const,
  (a) =>
    `net.ipv4.tcp_congestion_control = ${a.name} is not available on this kernel (net.ipv4.tcp_available_congestion_control: ${a.available}; ` +
    `modules it could load: ${a.loadable}) and module tcp_${a.name} cannot be loaded: pick one of the available, or install tcp_${a.name} (BBR needs Linux 4.9+)`,
);

/** Available, but a network namespace other than the initial one may only pick an allowed algorithm (EPERM). */
export const CC_NOT_ALLOWED = message(
  { fn: "nts_msg_cc_allowed", variable: "NTS_MSG", doc: "NAME ALLOWED" },
  ["name", "allowed"] as const,
  (a) =>
    `net.ipv4.tcp_congestion_control = ${a.name} is available but not allowed inside this network namespace (net.ipv4.tcp_allowed_congestion_control: ${a.allowed}): ` +
    "add it to tcp_allowed_congestion_control on the host, or pick an allowed one",
);

/** What the live read found for a declared tcp_congestion_control (`host<TAB>cc-…` lines of sysctl.sh nts_live_cc). */
export interface CongestionFacts {
  available: string;
  allowed: string;
  /** Names of the tcp_<name> modules the host could load, space-separated ("" when none). */
  modules: string;
  /** "1": not the initial network namespace. */
  netns: string;
}

/**
 * The preflight's verdict on a declared congestion control (sysctl.sh kind_preflight), from the live read: its
 * refusal, or undefined. A name not available now but among the host's modules is left to the apply, which loads it.
 */
export function congestionRefusal(name: string, f: CongestionFacts): string | undefined {
  const words = (s: string) => s.split(/\s+/).filter(Boolean);
  if (!words(f.available).includes(name)) {
    if (words(f.modules).includes(name)) return undefined;
    return CC_UNAVAILABLE.text({ name, available: f.available, loadable: f.modules.trim() || "none" });
  }
  if (f.netns === "1" && !words(f.allowed).includes(name)) return CC_NOT_ALLOWED.text({ name, allowed: f.allowed });
  return undefined;
}

// ------------------------------------------------------------------------------------------------ sh rendering

/** Double-quoted sh text of `s`, with `\u0000N\u0000` markers turned into `${N}`. */
function shDouble(s: string): string {
  return `"${s.replace(/[\\"$`]/g, (c) => `\\${c}`).replace(/\u0000(\d+)\u0000/g, (_, n) => `\${${n}}`)}"`;
}

/** A sh word (single-quoted) for a constant. */
function shSingle(s: string): string {
  if (s.includes("'")) throw new Error(`messages: no single quote in a sh constant: ${s}`);
  return `'${s}'`;
}

/** The sh function of a message: `fn PART…` sets its variable to the text with the arguments in place. */
export function renderShMessage<P extends string>(m: HostMessage<P>): string[] {
  if (m.parts.length > 9) throw new Error(`${m.sh.fn}: more than 9 parts`);
  const marks = Object.fromEntries(m.parts.map((p, i) => [p, `\u0000${i + 1}\u0000`])) as Record<P, string>;
  return [`# ${m.sh.fn} ${m.sh.doc}: ${m.sh.variable} = the message (provider/host/messages.ts)`, `${m.sh.fn}() { ${m.sh.variable}=${shDouble(m.text(marks))}; }`];
}

/** The NIC kind's messages and limit groups, for nicspec.sh. */
export function renderNicMessagesSh(): string[] {
  const lines = [
    "# nn_limit_group GROUP (channel, ring): NN_LG_ARG (argument), NN_LG_OPT (ethtool option that reads the limits),",
    "# NN_LG_WHAT (what the option shows), NN_LG_ORMAX (the tail of the exceeds message); 1 for another group.",
    "nn_limit_group() {",
    '  case "$1" in',
  ];
  for (const [host, g] of Object.entries(NIC_LIMIT_GROUPS)) {
    lines.push(`    ${host}) NN_LG_ARG=${g.arg}; NN_LG_OPT=${g.option}; NN_LG_WHAT=${shSingle(g.what)}; NN_LG_ORMAX=${g.acceptsMax ? shSingle(OR_MAX) : "''"} ;;`);
  }
  lines.push("    *) return 1 ;;", "  esac", "}", "");
  const all = [IFACE_MISSING, ETHTOOL_MISSING, LIMIT_EXCEEDED, LIMIT_FIELD_UNSUPPORTED, LIMIT_GROUP_UNSUPPORTED, FEATURES_UNREADABLE, FEATURE_ABSENT, FEATURE_FIXED, COALESCE_UNSUPPORTED, COALESCE_FIELD_UNSUPPORTED, COALESCE_DRIVER_REFUSES, SOCK_FLOW_ABSENT, RPS_NO_FILES, RPS_CPUS_ABSENT, IRQ_NONE, IRQ_CPUS_OFFLINE, PERSIST_NOT_OURS, RC_OTHER_BLOCK, RC_NO_END, RC_NOT_FILE];
  for (const m of all) lines.push(...renderShMessage(m as HostMessage<string>), "");
  lines.push(
    "# nn_coalesce_range DRIVER NAME VALUE: NN_ACCEPTS = what DRIVER accepts when it refuses VALUE (a number) for the",
    "# coalescing parameter NAME, else empty (provider/host/messages.ts COALESCE_DRIVER_RANGES).",
    "nn_coalesce_range() {",
    "  NN_ACCEPTS=''",
    '  case "$1:$2" in',
  );
  for (const [drv, r] of Object.entries(COALESCE_DRIVER_RANGES)) {
    const test = r.refused.map(([lo, hi]) => (hi === undefined ? `[ "$3" -ge ${lo} ]` : lo === hi ? `[ "$3" -eq ${lo} ]` : `{ [ "$3" -ge ${lo} ] && [ "$3" -le ${hi} ]; }`)).join(" || ");
    lines.push(`    ${r.params.map((p) => `${drv}:${p}`).join("|")})`, `      if ${test}; then NN_ACCEPTS=${shSingle(r.accepts)}; fi ;;`);
  }
  lines.push("  esac", "}", "");
  return lines;
}

/** The sysctl kind's messages, for sysctlspec.sh. */
export function renderSysctlMessagesSh(): string[] {
  return [
    ...renderShMessage(KEYS_ABSENT as HostMessage<string>),
    ...renderShMessage(MODULE_UNLOADABLE as HostMessage<string>),
    ...renderShMessage(CC_UNAVAILABLE as HostMessage<string>),
    ...renderShMessage(CC_NOT_ALLOWED as HostMessage<string>),
    ...renderShMessage(BOOT_OVERRIDDEN as HostMessage<string>),
    ...renderShMessage(BOOT_MASKS as HostMessage<string>),
    ...renderShMessage(SYSCTL_FILE_LINK as HostMessage<string>),
    ...renderShMessage(SYSCTL_FILE_OTHER as HostMessage<string>),
    "# nts_msg_item KEY HINT: NTS_ITEM = one key of nts_msg_absent's list",
    `nts_msg_item() { if [ -n "$2" ]; then NTS_ITEM=${shDouble(absentItem("\u00001\u0000", "\u00002\u0000"))}; else NTS_ITEM=${shDouble(absentItem("\u00001\u0000", ""))}; fi; }`,
    `NTS_MSG_SEP=${shSingle(ABSENT_SEPARATOR)}`,
    `NTS_MSG_NETNS=${shDouble(CHILD_NETNS_NOTE)}`,
    `NTS_MSG_HOSTWIDE=${shDouble(HOST_WIDE_FIX)}`,
    "",
  ];
}
