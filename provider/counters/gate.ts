/**
 * The verify gate (issue #34, the first feature of "safe rollout"): the `verify` argument of NetTuning and NicQueues,
 * its names, its checks at preview, the plan lines the host reads, and the host's answer.
 *
 * The host reads every named value before the first change, right after the change and after `soakSeconds`, inside
 * the apply's one SSH session, compares, and rolls the change back when a limit is exceeded (the engine's
 * rollback, before anything is persisted): `nt_gate_*` in provider/host/sh/runtime.sh, the reader in
 * provider/host/sh/counters.sh (generated from ./sources.ts). Pure: no I/O, no Pulumi.
 */
import { COUNTER_CATALOGUE, counterDoc, type CounterDoc } from "../audit/counters";
import { KERNEL_FIELDS } from "./kernelFields";
import { NETSTAT_GROUPS, SNMP_GROUPS, sourcesOf } from "./sources";
import type { HostKind } from "../kinds";

/** Soak bounds, seconds. 1: a gate that waits no time reads nothing the change caused. 900: the apply holds the host's
 * lock for the soak (other resources' applies on the host wait for it: the soak extends their 60 s lock wait), and the
 * SSH session stays silent meanwhile; a quarter of an hour keeps an `up` from hanging on a host for longer. */
export const SOAK_MIN = 1;
export const SOAK_MAX = 900;

/** The gate's argument, as plain values (the component's `VerifyArgs` with its inputs resolved). */
export interface VerifySpec {
  soakSeconds: number;
  maxIncrease?: Record<string, number>;
  maxLevel?: Record<string, number>;
}

/** What the resource gates: NetTuning (no interface: ethtool names carry one) or NicQueues (its interface). */
export interface GateTarget {
  kind: HostKind;
  /** NicQueues' interface: `ethtool.<stat>` reads it. */
  iface?: string;
}

/** Constants of /proc/net/snmp (configuration, not measurements): no gate on them. */
const CONSTANTS = new Set(["Ip.Forwarding", "Ip.DefaultTTL", "Tcp.RtoAlgorithm", "Tcp.RtoMin", "Tcp.RtoMax", "Tcp.MaxConn"]);
/** Gauges: a level now (limited by maxLevel). Every other name is a counter (limited by maxIncrease). */
const GAUGES = new Set(["Tcp.CurrEstab", "sockets.timeWait", "conntrack.count", "conntrack.max", "conntrack.fill"]);
const STAT = /^[A-Za-z0-9_.:-]{1,64}$/;
const IFACE = /^[A-Za-z0-9_:@-]{1,15}$/; // no "." inside a gate name (the name's separator)

/** A gate name's class, the name the host reads, or why it is refused. */
export type GateName = { kind: "counter" | "gauge"; host: string } | { problem: string };

function closest(name: string, candidates: readonly string[]): string[] {
  const d = (a: string, b: string): number => {
    const m: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
    for (let j = 1; j <= b.length; j++) m[0][j] = j;
    for (let i = 1; i <= a.length; i++) for (let j = 1; j <= b.length; j++) m[i][j] = Math.min(m[i - 1][j] + 1, m[i][j - 1] + 1, m[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    return m[a.length][b.length];
  };
  const lower = name.toLowerCase();
  return candidates
    .map((c) => [c, d(lower, c.toLowerCase())] as const)
    .filter(([c, n]) => n <= 3 || c.toLowerCase().includes(lower.slice(lower.indexOf(".") + 1)))
    .sort((a, b) => a[1] - b[1])
    .slice(0, 3)
    .map(([c]) => c);
}

/** Every name the gate accepts for a resource kind, except the driver-defined ethtool statistics (any name of their form). */
export function gateNames(): string[] {
  const out: string[] = [];
  for (const [g, fields] of Object.entries(KERNEL_FIELDS)) for (const f of fields) if (!CONSTANTS.has(`${g}.${f}`)) out.push(`${g}.${f}`);
  out.push("softnet.processed", "softnet.dropped", "softnet.time_squeeze", "sockets.timeWait", "conntrack.count", "conntrack.max", "conntrack.fill");
  return out;
}

/** Classifies one name of `maxIncrease` / `maxLevel` for a resource. */
export function gateName(name: string, t: GateTarget): GateName {
  if (name.startsWith("ethtool.")) {
    const rest = name.slice("ethtool.".length);
    if (t.kind === "nic") {
      if (t.iface?.includes(".")) return { problem: `"${name}": the interface "${t.iface}" has a "." in its name, which the gate's names use as separator: its ethtool statistics cannot be gated (gate on a kernel counter instead)` };
      if (!STAT.test(rest)) return { problem: `"${name}" is not an ethtool statistic name: write ethtool.<statistic> as \`ethtool -S ${t.iface ?? "<interface>"}\` prints it (blanks as "_"), e.g. "ethtool.rx_missed_errors"` };
      return { kind: "counter", host: `ethtool.${t.iface}.${rest}` };
    }
    const dot = rest.indexOf(".");
    const iface = dot < 0 ? "" : rest.slice(0, dot);
    const stat = dot < 0 ? "" : rest.slice(dot + 1);
    if (!IFACE.test(iface) || !STAT.test(stat)) {
      return { problem: `"${name}" is not ethtool.<interface>.<statistic>: a NetTuning names the interface, e.g. "ethtool.eth0.rx_missed_errors" (an interface name with a "." cannot be named here: gate a NicQueues of it on "ethtool.<statistic>")` };
    }
    return { kind: "counter", host: name };
  }
  const [group] = name.split(".", 1);
  const field = name.slice(group.length + 1);
  const known = gateNames();
  if (CONSTANTS.has(name)) return { problem: `"${name}" is a setting of the kernel, not a measurement: it does not change with traffic; gate on a counter such as "Tcp.RetransSegs"` };
  const ok = known.includes(name) || (group === "IcmpMsg" && /^(In|Out)Type\d{1,3}$/.test(field));
  if (!ok) {
    const near = closest(name, known);
    const groups = [...NETSTAT_GROUPS, ...SNMP_GROUPS].join(", ");
    return {
      problem:
        `"${name}" is not a counter the gate knows` +
        (near.length ? `: did you mean ${near.map((n) => `"${n}"`).join(" or ")}?` : "") +
        ` Names are the kernel's own: <group>.<field> of /proc/net/netstat or /proc/net/snmp (groups ${groups}), softnet.dropped, softnet.time_squeeze, softnet.processed, sockets.timeWait, conntrack.fill, conntrack.count, ${"ethtool."}… (docs/safe-rollout.md lists them)`,
    };
  }
  if (sourcesOf(name).length === 0) return { problem: `"${name}" has no source on the host (a bug: report it)` };
  return { kind: GAUGES.has(name) ? "gauge" : "counter", host: name };
}

/** A limit as the plan writes it: a plain decimal (no exponent), at most 15 significant digits. */
function limitText(n: number): string | undefined {
  if (typeof n !== "number" || !Number.isFinite(n) || n < 0) return undefined;
  const s = String(n);
  return /^\d{1,15}(\.\d{1,9})?$/.test(s) ? s : undefined;
}

/** The checked gate: one entry per name, in the plan's order (maxIncrease then maxLevel, each by name). */
export interface GateLine {
  /** The name as the user wrote it. */
  name: string;
  /** The name the host reads (NicQueues: `ethtool.<interface>.<stat>`). */
  host: string;
  kind: "counter" | "gauge";
  limit: string;
}
export interface Gate {
  soakSeconds: number;
  lines: GateLine[];
}

/**
 * Checks `verify` (undefined = no gate: nothing to check, no plan line). Every problem names the key and the fix; a
 * counter under maxLevel and a gauge under maxIncrease are refused. Returns the gate or the problems.
 */
export function checkVerify(v: unknown, t: GateTarget): { gate?: Gate; problems: string[] } {
  if (v === undefined || v === null) return { problems: [] };
  const problems: string[] = [];
  if (typeof v !== "object" || Array.isArray(v)) return { problems: [`verify must be an object { soakSeconds, maxIncrease?, maxLevel? }, e.g. { soakSeconds: 30, maxIncrease: { "TcpExt.ListenOverflows": 0 } }`] };
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!["soakSeconds", "maxIncrease", "maxLevel"].includes(k)) problems.push(`verify.${k} is not an argument of verify: use soakSeconds, maxIncrease and maxLevel`);
  const soak = o.soakSeconds;
  if (typeof soak !== "number" || !Number.isInteger(soak) || soak < SOAK_MIN || soak > SOAK_MAX) {
    problems.push(`verify.soakSeconds ${JSON.stringify(soak) ?? "undefined"} must be a whole number of seconds from ${SOAK_MIN} to ${SOAK_MAX}: how long the host waits after the change before it reads the counters again (the host's lock is held meanwhile)`);
  }
  const lines: GateLine[] = [];
  for (const [arg, want] of [["maxIncrease", "counter"], ["maxLevel", "gauge"]] as const) {
    const m = o[arg];
    if (m === undefined || m === null) continue;
    if (typeof m !== "object" || Array.isArray(m)) {
      problems.push(`verify.${arg} must be a map of counter name to limit, e.g. { "TcpExt.ListenOverflows": 0 }`);
      continue;
    }
    for (const name of Object.keys(m).sort()) {
      const c = gateName(name, t);
      if ("problem" in c) {
        problems.push(`verify.${arg}: ${c.problem}`);
        continue;
      }
      if (c.kind !== want) {
        problems.push(
          want === "counter"
            ? `verify.maxIncrease: "${name}" is a gauge (a level now, not a count that only rises): limit it under verify.maxLevel`
            : `verify.maxLevel: "${name}" is a counter (it only rises, so its level says nothing about the change): limit its rise under verify.maxIncrease`,
        );
        continue;
      }
      const limit = limitText((m as Record<string, unknown>)[name] as number);
      if (limit === undefined) {
        problems.push(`verify.${arg}["${name}"] = ${JSON.stringify((m as Record<string, unknown>)[name])} must be a number ≥ 0 (plain decimal, e.g. ${want === "counter" ? "0 or 100" : name === "conntrack.fill" ? "0.8" : "5000"})`);
      } else if (name === "conntrack.fill" && Number(limit) > 1) {
        problems.push(`verify.maxLevel["conntrack.fill"] = ${limit} is a fraction of nf_conntrack_max: use a value from 0 to 1 (e.g. 0.8)`);
      } else if (want === "counter" && !Number.isInteger(Number(limit))) {
        problems.push(`verify.maxIncrease["${name}"] = ${limit} must be a whole number: counters rise by whole counts`);
      } else lines.push({ name, host: c.host, kind: c.kind, limit });
    }
  }
  if (problems.length === 0 && lines.length === 0) problems.push(`verify has no limit: name at least one counter in verify.maxIncrease (e.g. { "TcpExt.ListenOverflows": 0 }) or gauge in verify.maxLevel (e.g. { "conntrack.fill": 0.8 })`);
  return problems.length ? { problems } : { gate: { soakSeconds: soak as number, lines }, problems };
}

/** The plan's lines of a gate (none without one: a plan without `verify` is byte for byte what it was before). */
export function gateDirectives(g: Gate | undefined): string[] {
  if (!g) return [];
  return [`@verify-soak ${g.soakSeconds}`, ...g.lines.map((l) => `@verify-max-${l.kind === "counter" ? "increase" : "level"} ${l.host} ${l.limit}`)];
}

/** One gated name's readings on the host (the `verification` output of NetTuning and NicQueues). */
export interface VerificationReading {
  /** The name as given in `verify`. */
  name: string;
  /** `"counter"` (limited by its rise) or `"gauge"` (limited by its level). */
  kind: string;
  /** Read before the first change. */
  before: number;
  /** Read right after the change (a NIC counter the change reset is measured from here). */
  afterChange: number;
  /** Read after the soak (absent when the apply changed nothing and did not soak). */
  after?: number;
  /** The limit from `verify`. */
  limit: number;
  /** A counter's rise over the soak, or a gauge's after − before (absent without a soak). */
  change?: number;
  /** Whether the limit was exceeded (never true in a successful apply: that one failed and rolled back). */
  exceeded: boolean;
}

/** The gate's outcome in the last successful apply. */
export interface Verification {
  /** `"pass"`, or `"skipped"` when the apply changed nothing on the host (nothing to soak). */
  verdict: string;
  /** Seconds soaked. */
  soakSeconds: number;
  /** Every reading, name by name. */
  readings: VerificationReading[];
}

/**
 * The report's `verify` lines (`verify<TAB>soak<TAB>N`, `verify<TAB>verdict<TAB>pass|skipped`,
 * `verify<TAB>r<TAB>name<TAB>class<TAB>before<TAB>post<TAB>after<TAB>limit<TAB>change<TAB>ok|exceeded`) as the output;
 * `nic`: a NicQueues' report, whose ethtool names (all of its own interface) are shown as the user wrote them.
 */
export function gateResult(lines: string[] | undefined, nic = false): Verification | undefined {
  if (!lines || lines.length === 0) return undefined;
  const res: Verification = { verdict: "", soakSeconds: 0, readings: [] };
  const n = (s: string | undefined) => (s === undefined || s === "" || s === "-" ? undefined : Number(s));
  for (const l of lines) {
    const f = l.split("\t");
    if (f[0] === "soak") res.soakSeconds = Number(f[1]);
    else if (f[0] === "verdict") res.verdict = f[1];
    else if (f[0] === "r") {
      const name = nic ? f[1].replace(/^ethtool\.[^.]+\./, "ethtool.") : f[1];
      res.readings.push({ name, kind: f[2] === "level" ? "gauge" : "counter", before: n(f[3]) ?? NaN, afterChange: n(f[4]) ?? NaN, after: n(f[5]), limit: Number(f[6]), change: n(f[7]), exceeded: f[8] === "exceeded" });
    }
  }
  return res;
}

/** The documented names (the audit's catalogue), for docs/safe-rollout.md. */
export function gateDocs(): (CounterDoc & { gate: string })[] {
  return COUNTER_CATALOGUE.map((d) => ({
    ...d,
    gate: d.name.startsWith("ethtool.<iface>.") ? `NicQueues: ethtool.${d.name.slice("ethtool.<iface>.".length)}*; NetTuning: ${d.name}*` : d.kind === "gauge" ? "maxLevel" : "maxIncrease",
  }));
}
export { counterDoc };

/** The markers of the generated name table in docs/safe-rollout.md (scripts/gen-spec.ts). */
export const GATE_DOC_BEGIN = "<!-- gate-names: generated by scripts/gen-spec.ts from provider/audit/counters.ts and provider/counters; do not edit -->";
export const GATE_DOC_END = "<!-- /gate-names -->";

/** The table of the documented names (what a rise means, where it is read, its public source) and the other names taken. */
export function renderGateDocTable(): string {
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  const rows = gateDocs().map((d) => `| \`${d.name}\` | ${d.kind} (${d.gate}) | ${esc(d.source)} | ${esc(d.meaning)} | ${esc(d.reference)} |`);
  const groups = Object.entries(KERNEL_FIELDS).map(([g, f]) => `\`${g}\` (${f.filter((x) => !CONSTANTS.has(`${g}.${x}`)).length})`);
  return [
    "| name | kind (limit under) | read from | a rise (or a high level) means | public source |",
    "|---|---|---|---|---|",
    ...rows,
    "| `conntrack.count` | gauge (maxLevel) | /proc/sys/net/netfilter/nf_conntrack_count | connections tracked now | Documentation/networking/nf_conntrack-sysctl.rst |",
    "| `Tcp.CurrEstab` | gauge (maxLevel) | /proc/net/snmp | TCP connections ESTABLISHED or CLOSE_WAIT now | RFC 4022 tcpCurrEstab |",
    "",
    `Every other field of /proc/net/netstat and /proc/net/snmp is taken too, as \`<group>.<field>\` (a counter): ${groups.join(", ")} fields as Linux 6.18 prints them (provider/counters/kernelFields.ts), and \`IcmpMsg.InType<N>\` / \`IcmpMsg.OutType<N>\`; not the constants ${[...CONSTANTS].map((c) => `\`${c}\``).join(", ")}. The kernel documents them in Documentation/networking/snmp_counter.rst. Ethtool statistics are the driver's own names (\`ethtool -S\`, blanks as \`_\`): any name of that form is taken at preview and the host refuses, before any change, one its driver does not print, listing the close names it has.`,
  ].join("\n");
}
