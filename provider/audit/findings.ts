/**
 * What the audit concludes from a host's facts (issue #33): each catalogue key against the declaration or the
 * kernel's default, and findings with reasons, from the same rules the components use (validateSysctls' catalogue
 * rules and warnings, the sizing's BDP and memory guard), plus the audit's own (a removed key still present, drift,
 * boot-order overrides, counters that rose, irqbalance). Identical advice for many hosts is one line naming them
 * ({@link groupFindings}). Pure: no I/O, no Pulumi.
 */
import { InputError } from "../errors";
import { SysctlProfile, memoryGuard, tryBdp, formatBytes } from "../sizing";
import { sameValue } from "../sysctl/readback";
import { SysctlInputError, validateSysctls } from "../sysctl/validate";
import { lookup, REJECTED_KEYS } from "../sysctl/catalogue";
import { HostFacts } from "./program";
import { ESNET } from "../sizing/esnet";

export type FindingLevel = "error" | "warning" | "info";

export interface Finding {
  level: FindingLevel;
  /** Which rule: "validator", "bdp", "memory", "removed-key", "drift", "boot-override", "counter", "irqbalance", "declared", "reachability". */
  rule: string;
  /** The sysctl key, NIC or counter the finding is about, when there is one. */
  subject?: string;
  /** One line, host-independent where the facts are the same (so identical advice groups across hosts). */
  message: string;
}

/** One catalogue key on one host. */
export interface SettingRow {
  key: string;
  /** Value now (whitespace collapsed); undefined when missing or unreadable. */
  value?: string;
  state: "value" | "missing" | "unreadable";
  declared?: string;
  /** The kernel's default for this kernel version, when the audit knows it. */
  kernelDefault?: string;
  /**
   * declared-match / declared-differs: against the stack's declaration; default / non-default: against the known
   * kernel default; default-unknown: no declaration and no known default.
   */
  status: "declared-match" | "declared-differs" | "default" | "non-default" | "default-unknown" | "missing" | "unreadable";
  /** ESnet's published value for a 10G / 100G host (see {@link ESNET}), when it names this key. */
  esnet10g?: string;
  esnet100g?: string;
}

/** ESnet's values, declared once in provider/sizing/esnet.ts (the docs' profile table reads them too). */
export { ESNET, ESNET_SOURCE } from "../sizing/esnet";

/** Kernel version "6.1.0-18-amd64" → [6, 1]. */
export function kernelVersion(release: string): [number, number] | undefined {
  const m = /^(\d+)\.(\d+)/.exec(release);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}
function atLeast(v: [number, number] | undefined, major: number, minor: number): boolean {
  return v !== undefined && (v[0] > major || (v[0] === major && v[1] >= minor));
}

/**
 * Kernel defaults the audit knows, by kernel version (Documentation/networking/ip-sysctl.rst and the commits named);
 * values that depend on memory (tcp_mem, tcp_max_syn_backlog, tcp_max_tw_buckets, tcp_*mem maxima on small hosts)
 * are not listed: "default unknown".
 */
export function kernelDefault(key: string, kernel: string): string | undefined {
  const v = kernelVersion(kernel);
  if (v === undefined) return undefined;
  switch (key) {
    case "net.core.somaxconn": return atLeast(v, 5, 4) ? "4096" : "128"; // 19f92a030ca6 (5.4)
    case "net.ipv4.tcp_fin_timeout": return "60";
    case "net.ipv4.tcp_keepalive_time": return "7200";
    case "net.ipv4.tcp_keepalive_intvl": return "75";
    case "net.ipv4.tcp_keepalive_probes": return "9";
    case "net.ipv4.tcp_sack": return "1";
    case "net.ipv4.tcp_timestamps": return "1";
    case "net.ipv4.tcp_window_scaling": return "1";
    case "net.ipv4.tcp_mtu_probing": return "0";
    case "net.ipv4.tcp_slow_start_after_idle": return "1";
    case "net.ipv4.tcp_syncookies": return "1";
    case "net.ipv4.tcp_no_metrics_save": return "0";
    case "net.ipv4.tcp_fastopen": return "1";
    case "net.ipv4.ip_local_port_range": return "32768 60999";
    case "net.ipv4.tcp_tw_reuse": return atLeast(v, 4, 19) ? "2" : "0";
    case "net.ipv4.tcp_notsent_lowat": return "4294967295";
    case "net.ipv4.tcp_adv_win_scale": return atLeast(v, 4, 19) ? "1" : "2";
    case "net.core.netdev_max_backlog": return "1000";
    case "net.core.netdev_budget": return "300";
    default: return undefined;
  }
}

/** The sysctl rows of a host: every catalogue key read, against `declared` (the stack's values) or the kernel default. */
export function settingRows(facts: HostFacts, declared: Record<string, string> = {}): SettingRow[] {
  const keys = new Set([...Object.keys(facts.sysctls), ...facts.missing, ...facts.unreadable, ...Object.keys(declared)]);
  const rows: SettingRow[] = [];
  for (const key of [...keys].sort()) {
    if (REJECTED_KEYS[key]) continue; // reported as a finding when present
    const value = facts.sysctls[key];
    const row: SettingRow = { key, state: value !== undefined ? "value" : facts.unreadable.includes(key) ? "unreadable" : "missing", status: "default-unknown" };
    if (value !== undefined) row.value = value;
    const d = kernelDefault(key, facts.kernel);
    if (d !== undefined) row.kernelDefault = d;
    if (declared[key] !== undefined) row.declared = declared[key];
    const e = ESNET[key];
    if (e?.g10) row.esnet10g = e.g10;
    if (e?.g100) row.esnet100g = e.g100;
    if (value === undefined) row.status = row.state === "unreadable" ? "unreadable" : "missing";
    else if (row.declared !== undefined) row.status = sameValue(key, value, row.declared) ? "declared-match" : "declared-differs";
    else if (d !== undefined) row.status = sameValue(key, value, d) ? "default" : "non-default";
    rows.push(row);
  }
  return rows;
}

/** Options of the recommendations that need the user's figures. */
export interface AdviceOptions {
  bandwidth?: string;
  rtt?: string;
  /** Concurrent TCP connections expected (memory warning). */
  concurrency?: number;
  /** Counter values of an earlier read of this host (e.g. the previous audit's JSON): a rise is a finding. */
  before?: Record<string, number>;
}

function nums(v: string | undefined): number[] | undefined {
  if (v === undefined) return undefined;
  const n = v.split(" ").map(Number);
  return n.every(Number.isFinite) ? n : undefined;
}

/** The validator words messages for a declaration ("… given in the same input"); here the input is the host's values. */
function onHost(message: string): string {
  return message.replace(/ given in the same input/g, " on this host").replace(/ in the same input/g, " on this host");
}

/** Validator problems (error rules, ranges, order) and warnings for the host's values, as `validateSysctls` words them. */
function validatorFindings(values: Record<string, string>): Finding[] {
  const out: Finding[] = [];
  let input: Record<string, string> = { ...values };
  for (let round = 0; round < 4; round++) {
    try {
      const r = validateSysctls(input, "host");
      for (const a of r.advice) out.push({ level: "warning", rule: "validator", subject: a.key, message: onHost(a.text) });
      return out;
    } catch (e) {
      if (!(e instanceof SysctlInputError)) {
        // (not an object of keys: the host's values always are)
        if (e instanceof InputError) return [...out, ...e.problems.map((p) => ({ level: "error" as const, rule: "validator", message: onHost(p) }))];
        throw e;
      }
      const drop = new Set<string>();
      for (const p of e.keyProblems) {
        out.push({ level: "error", rule: "validator", subject: p.key, message: onHost(p.text) });
        drop.add(p.key);
      }
      if (drop.size === 0) return out;
      input = Object.fromEntries(Object.entries(input).filter(([k]) => !drop.has(k)));
    }
  }
  return out;
}

/** Findings for one host. */
export function hostFindings(facts: HostFacts, rows: SettingRow[], opts: AdviceOptions = {}): Finding[] {
  const out: Finding[] = [];
  const v = facts.sysctls;

  // what the components' validator says about these values (catalogue keys only: the host's own, not a declaration)
  const known: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) if (lookup(k) && !lookup(k)?.readOnly && !REJECTED_KEYS[k]) known[k] = val;
  // a warning about a key the host keeps at the kernel's default is not advice for this host (nobody set it)
  const atDefault = new Set(rows.filter((r) => r.status === "default").map((r) => r.key));
  out.push(...validatorFindings(known).filter((f) => f.level === "error" || f.subject === undefined || !atDefault.has(f.subject)));

  if (v["net.ipv4.tcp_tw_recycle"] !== undefined) {
    const r = REJECTED_KEYS["net.ipv4.tcp_tw_recycle"];
    out.push({ level: v["net.ipv4.tcp_tw_recycle"] === "0" ? "warning" : "error", rule: "removed-key", subject: "net.ipv4.tcp_tw_recycle", message: `net.ipv4.tcp_tw_recycle = ${v["net.ipv4.tcp_tw_recycle"]} is still present on kernel ${facts.kernel}: ${r.reason}. Fix: ${r.fix}` });
  }

  for (const row of rows) {
    if (row.status === "declared-differs") out.push({ level: "error", rule: "declared", subject: row.key, message: `${row.key} = ${row.value} on the host, declared ${row.declared}` });
  }

  if (opts.bandwidth !== undefined && opts.rtt !== undefined) {
    const b = tryBdp({ bandwidth: opts.bandwidth, rtt: opts.rtt });
    if (b.ok) {
      const need = 2 * b.value;
      for (const key of ["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"]) {
        const max = nums(v[key])?.[2];
        if (max !== undefined && max < need) {
          out.push({ level: "warning", rule: "bdp", subject: key, message: `${key} max ${max} (${formatBytes(max)}) < 2 × BDP = ${need} bytes (${opts.bandwidth} × ${opts.rtt} / 8 = ${b.value}): one flow cannot fill the path; raise the max to at least ${need} (and net.core.${key.endsWith("rmem") ? "r" : "w"}mem_max for applications that set SO_${key.endsWith("rmem") ? "RCV" : "SND"}BUF)` });
        }
      }
    }
  }

  if (opts.concurrency !== undefined && facts.memTotalBytes !== undefined) {
    const rmem = nums(v["net.ipv4.tcp_rmem"]);
    const wmem = nums(v["net.ipv4.tcp_wmem"]);
    const tcpMem = nums(v["net.ipv4.tcp_mem"]);
    const profile: SysctlProfile = { kind: "net-tuning/sysctl-profile", name: "host now", sysctls: {}, rationale: {}, warnings: [] };
    if (rmem?.length === 3) profile.sysctls["net.ipv4.tcp_rmem"] = rmem;
    if (wmem?.length === 3) profile.sysctls["net.ipv4.tcp_wmem"] = wmem;
    if (tcpMem?.length === 3) profile.sysctls["net.ipv4.tcp_mem"] = tcpMem;
    const g = memoryGuard({ profile, connections: opts.concurrency, memoryBytes: facts.memTotalBytes });
    if (g.level !== "ok") out.push({ level: g.level === "error" ? "error" : "warning", rule: "memory", subject: "net.ipv4.tcp_mem", message: `memory guard (${g.level}): ${g.message}` });
  }

  for (const r of facts.records) {
    if (r.state === "unreadable") out.push({ level: "info", rule: "drift", subject: r.ownerId, message: `the record of the last apply of ${r.ownerId} is not readable by this user: drift is not checked` });
    for (const d of r.drift) {
      out.push({ level: "warning", rule: "drift", subject: d.key, message: d.applied === "content of the last apply" ? `drift since the last apply of ${r.owner || r.ownerId}: ${d.key} ${d.live}` : `drift since the last apply of ${r.owner || r.ownerId}: ${d.key} = ${d.live} (last applied ${d.applied})` });
    }
  }

  for (const o of bootOverrides(facts)) {
    out.push({ level: "warning", rule: "boot-override", subject: o.key, message: `${o.key}: ${o.earlier.path} sets ${o.earlier.value}, overridden at boot by ${o.later.path} which sets ${o.later.value}` });
  }
  for (const o of bootVersusNow(facts)) {
    out.push({ level: "info", rule: "boot-override", subject: o.key, message: `${o.key} = ${o.now} now, but the boot files set ${o.boot} (${o.path}): the next boot changes it` });
  }

  const c = facts.counters;
  if (opts.before) {
    for (const [name, level] of [["TcpExt.ListenOverflows", "warning"], ["TcpExt.ListenDrops", "warning"], ["softnet.dropped", "warning"], ["softnet.time_squeeze", "info"], ["Udp.RcvbufErrors", "warning"], ["Udp.SndbufErrors", "warning"]] as const) {
      const before = opts.before[name];
      if (before !== undefined && c[name] !== undefined && c[name] > before) out.push({ level, rule: "counter", subject: name, message: `${name} rose by ${c[name] - before} since the previous read` });
    }
  } else {
    for (const name of ["TcpExt.ListenOverflows", "softnet.dropped", "Udp.RcvbufErrors", "Udp.SndbufErrors"]) {
      if ((c[name] ?? 0) > 0) out.push({ level: "info", rule: "counter", subject: name, message: `${name} = ${c[name]} since boot (compare two reads to see whether it still rises)` });
    }
  }
  for (const [k, val] of Object.entries(c)) {
    if (/^ethtool\.[^.]+\.(rx_no_buffer|rx_missed)/.test(k) && val > 0) out.push({ level: "info", rule: "counter", subject: k, message: `${k} = ${val} since the driver loaded: the NIC dropped frames (larger RX rings, more queues)` });
  }
  if ((c["conntrack.fill"] ?? 0) >= 0.8) out.push({ level: "warning", rule: "counter", subject: "conntrack.fill", message: `conntrack table ${Math.round((c["conntrack.fill"] ?? 0) * 100)}% full (${c["conntrack.count"]} of ${c["conntrack.max"]}): at 100% new flows are dropped; raise net.netfilter.nf_conntrack_max` });

  // irqbalance moves IRQs a NicQueues pinned (irq group) unless it bans them
  const pinned = facts.records.some((r) => r.kind === "nic" && Object.keys(r.section?.record?.values ?? {}).some((k) => /\/irq\./.test(k)));
  if (pinned && facts.irqbalance.running && !facts.irqbalance.config.some((l) => /BANNED|--banirq|banscript/.test(l))) {
    out.push({ level: "warning", rule: "irqbalance", message: "irqbalance is running and bans no IRQ, while a NicQueues pinned IRQ affinities: irqbalance moves them back (ban the NIC's IRQs, e.g. IRQBALANCE_ARGS=--banirq=N, or stop irqbalance)" });
  }
  return out;
}

/** Keys two boot files set to different values: the later file (in the boot's order) wins. */
export function bootOverrides(facts: HostFacts): { key: string; earlier: { path: string; value: string }; later: { path: string; value: string } }[] {
  const first = new Map<string, { path: string; value: string }>();
  const out: { key: string; earlier: { path: string; value: string }; later: { path: string; value: string } }[] = [];
  // the boot applies files in name order across directories, /etc/sysctl.conf last
  const files = facts.bootFiles.filter((f) => f.state === "read");
  const ordered = [...files.filter((f) => f.path !== "/etc/sysctl.conf")].sort((a, b) => (base(a.path) < base(b.path) ? -1 : base(a.path) > base(b.path) ? 1 : 0));
  const conf = files.find((f) => f.path === "/etc/sysctl.conf");
  if (conf) ordered.push(conf);
  for (const f of ordered) {
    for (const [key, value] of Object.entries(f.sets)) {
      const prev = first.get(key);
      if (prev && !sameValue(key, prev.value, value) && prev.path !== f.path) out.push({ key, earlier: prev, later: { path: f.path, value } });
      first.set(key, { path: f.path, value });
    }
  }
  return out;
}

function base(p: string): string {
  return p.slice(p.lastIndexOf("/") + 1);
}

/** Keys whose value now differs from what the boot files set last (a hand change since boot, or a file not yet applied). */
export function bootVersusNow(facts: HostFacts): { key: string; now: string; boot: string; path: string }[] {
  const last = new Map<string, { path: string; value: string }>();
  const files = facts.bootFiles.filter((f) => f.state === "read");
  const ordered = files.filter((f) => f.path !== "/etc/sysctl.conf").sort((a, b) => (base(a.path) < base(b.path) ? -1 : 1));
  const conf = files.find((f) => f.path === "/etc/sysctl.conf");
  if (conf) ordered.push(conf);
  for (const f of ordered) for (const [key, value] of Object.entries(f.sets)) last.set(key, { path: f.path, value });
  const out: { key: string; now: string; boot: string; path: string }[] = [];
  for (const [key, b] of last) {
    const now = facts.sysctls[key];
    if (now !== undefined && !sameValue(key, now, b.value)) out.push({ key, now, boot: b.value, path: b.path });
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : 1));
}

/** One advice for every host it applies to. */
export interface GroupedFinding extends Finding {
  hosts: string[];
}

/** Identical findings (level, rule, subject, message) of many hosts → one entry naming the hosts, worst level first. */
export function groupFindings(perHost: { host: string; findings: Finding[] }[]): GroupedFinding[] {
  const map = new Map<string, GroupedFinding>();
  for (const { host, findings } of perHost) {
    for (const f of findings) {
      const id = JSON.stringify([f.level, f.rule, f.subject ?? "", f.message]);
      const g = map.get(id);
      if (g) { if (!g.hosts.includes(host)) g.hosts.push(host); } else map.set(id, { ...f, hosts: [host] });
    }
  }
  const rank = { error: 0, warning: 1, info: 2 } as const;
  return [...map.values()].sort((a, b) => rank[a.level] - rank[b.level] || b.hosts.length - a.hosts.length || (a.message < b.message ? -1 : 1));
}
