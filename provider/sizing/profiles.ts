/**
 * Sysctl profiles from three published tuning guides (a 10G cross-border gateway, a high-concurrency web service, NVMe/TCP storage), with their mistakes corrected:
 * Scenario A templates A/B sized from the BDP, Scenario B's web/database/proxy templates,
 * Scenario C's NVMe/TCP latency/throughput choices. Each returns a plain {@link SysctlProfile}.
 */
import { InputError } from "../errors";
import { KNOWN_CONGESTION_CONTROL } from "../sysctl/catalogue";
import { defaultBuffersPerConnection, memoryGuard, thresholdProblems } from "./guard";
import type { GuardAction } from "./spec";
import { NicPreset, lowLatency, throughput } from "./nic";
import { SysctlProfile, SysctlValue } from "./profile";
import {
  Bandwidth,
  ByteSize,
  KERNEL_INT_MAX,
  Rtt,
  formatBandwidth,
  formatBytes,
  formatBytesDecimal,
  formatRtt,
  nextPowerOfTwo,
  previousPowerOfTwo,
  tryBdp,
  tryParseBytes,
} from "./units";

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

/** Smallest TCP buffer max a profile writes (16 MiB): never below the kernel's defaults (6 MiB rmem, 4 MiB wmem). */
export const MIN_TCP_BUFFER_MAX = 16 * MiB;
/** Largest TCP buffer max a profile writes: 1 GiB, the largest power of two a kernel `int` holds. */
export const MAX_TCP_BUFFER_MAX = 1 * GiB;
/** tcp_rmem/tcp_wmem default for few long flows (template A): 16 MiB. */
export const LONG_FLOW_DEFAULT = 16 * MiB;
/** tcp_rmem/tcp_wmem default for many connections (template B), also net.core.rmem_default/wmem_default: 256 KiB. */
export const MANY_FLOWS_DEFAULT = 256 * KiB;
/** tcp_rmem/tcp_wmem min: 4096 bytes (one page), as in every template. */
export const TCP_BUFFER_MIN = 4096;
/** Memory of the web guide's host (64 GB), for which its tcp_mem values were written. */
const WEB_ARTICLE_MEMORY = 64 * GiB;

/** The values {@link GuardOptions.pacing} accepts: `"fq"` (net.core.default_qdisc = fq). */
export const PACING_QDISCS = ["fq"] as const;
/** A congestion-control name as the kernel takes it (TCP_CA_NAME_MAX is 16 with the NUL): the catalogue's pattern. */
const CONGESTION_NAME = /^[a-z0-9_]{1,15}$/;

/**
 * Options every profile accepts: the memory guard's inputs, and pacing and congestion control (ESnet's host-tuning
 * advice for long paths; never set unless given, so a profile's plan without them is unchanged).
 */
export interface GuardOptions {
  /** Concurrent TCP connections expected (positive integer). With `memory`, runs the memory guard; no guard without it. */
  concurrency?: number;
  /** Host memory: bytes, or a string such as `"64GiB"`. With `concurrency`, runs the memory guard. */
  memory?: ByteSize;
  /**
   * What a guard result at level `"error"` does: `"warn"` (default) only adds its message to `warnings`;
   * `"error"` throws an InputError. Levels `"warn"` always go to `warnings` only.
   */
  guard?: GuardAction;
  /** Guard ratio above which a warning is given. Defaults to 0.5. */
  warnAt?: number;
  /** Guard ratio at or above which the level is error. Defaults to 1.0. */
  errorAt?: number;
  /**
   * `"fq"`: sets net.core.default_qdisc = fq, the qdisc that paces each flow at the rate its congestion control
   * chooses (ESnet: fq pacing for long paths). Host-wide: a network namespace or container refuses it before any
   * change. Defaults to none (the key is not set).
   */
  pacing?: "fq";
  /**
   * Sets net.ipv4.tcp_congestion_control, e.g. `"bbr"` or `"htcp"` (ESnet: BBR or H-TCP for long paths): a name of
   * 1-15 characters a-z, 0-9 and _, as the kernel names its `tcp_<name>` modules (usual: reno, cubic, bbr, htcp, …).
   * The plan loads `tcp_<name>` (its `@module` line) and the host refuses, before any change, a name that is neither
   * in net.ipv4.tcp_available_congestion_control nor loadable; the live preview refuses it too. Defaults to none.
   */
  congestionControl?: string;
}

/** Options of {@link longFatFlows} and {@link manySmallFlows}. */
export interface FlowOptions extends GuardOptions {
  /** Link rate: bits/s as a number, or `"10Gbit"`, `"500Mbit"`, `"1.5Gbit/s"`, `"1Gbps"` (decimal prefixes). */
  bandwidth: Bandwidth;
  /** Round-trip time: seconds as a number, or `"40ms"`, `"800us"`, `"0.04s"`. */
  rtt: Rtt;
}

/** Options of {@link nvmeTcpThroughput}: bandwidth and rtt are optional (both or neither). */
export interface NvmeThroughputOptions extends GuardOptions {
  /** Link rate, to size tcp_wmem max from the BDP. Defaults to none: tcp_wmem max 16 MiB. */
  bandwidth?: Bandwidth;
  /** Round-trip time, to size tcp_wmem max from the BDP. Defaults to none. */
  rtt?: Rtt;
}

/** Buffer maxima sized from a BDP, by {@link windowFor}. */
export interface WindowSizing {
  /** The link rate in bits/s and the RTT in seconds, as parsed. */
  bitsPerSecond: number;
  /** See `bitsPerSecond`. */
  rttSeconds: number;
  /** Bandwidth-delay product in bytes. */
  bdpBytes: number;
  /** tcp_rmem/tcp_wmem max in bytes: the power of two ≥ 2 × BDP, at least {@link MIN_TCP_BUFFER_MAX}. */
  tcpMax: number;
  /** net.core.rmem_max/wmem_max in bytes: 2 × tcpMax (the gateway guide's ratio), at most 2^31 - 1. */
  coreMax: number;
}

interface Checked {
  problems: string[];
  concurrency?: number;
  memoryBytes?: number;
  pacing?: string;
  congestionControl?: string;
}

function checkGuardOptions(o: GuardOptions): Checked {
  const out: Checked = { problems: [] };
  if (o.concurrency !== undefined) {
    if (Number.isSafeInteger(o.concurrency) && o.concurrency > 0) out.concurrency = o.concurrency;
    else out.problems.push(`concurrency ${JSON.stringify(o.concurrency)}: must be a positive integer (concurrent connections)`);
  }
  if (o.memory !== undefined) {
    const m = tryParseBytes("memory", o.memory);
    if (m.ok) out.memoryBytes = m.value;
    else out.problems.push(m.problem);
  }
  if (o.guard !== undefined && o.guard !== "warn" && o.guard !== "error") {
    out.problems.push(`guard ${JSON.stringify(o.guard)}: use "warn" (default) or "error"`);
  }
  out.problems.push(...thresholdProblems(o.warnAt, o.errorAt));
  if (o.pacing !== undefined) {
    if ((PACING_QDISCS as readonly unknown[]).includes(o.pacing)) out.pacing = o.pacing;
    else out.problems.push(`pacing ${JSON.stringify(o.pacing)}: use ${PACING_QDISCS.map((q) => `"${q}"`).join(" or ")} (net.core.default_qdisc = fq), or leave it out`);
  }
  if (o.congestionControl !== undefined) {
    if (typeof o.congestionControl === "string" && CONGESTION_NAME.test(o.congestionControl)) out.congestionControl = o.congestionControl;
    else {
      out.problems.push(
        `congestionControl ${JSON.stringify(o.congestionControl)}: must be a congestion-control name of 1-15 characters a-z, 0-9 and _ ` +
          `(the kernel's tcp_<name> modules: ${KNOWN_CONGESTION_CONTROL.join(", ")}), e.g. "bbr" or "htcp"`,
      );
    }
  }
  return out;
}

/**
 * The pacing and congestion-control options on a built profile (given ones only: nothing is picked on the host's
 * behalf). They replace a value the profile chose itself (nvmeTcpLatency's bbr and fq), with the option's reason.
 */
function applyTransport(b: ProfileBuilder, checked: Checked): void {
  if (checked.pacing !== undefined) {
    b.set(
      "net.core.default_qdisc",
      checked.pacing,
      `pacing: "${checked.pacing}" (option): fq paces each flow at the rate its congestion control sets, so long fat flows do not burst into ` +
        "shallow switch buffers (ESnet's advice for long paths; BBR needs it before Linux 4.13); host-wide: a network namespace or container refuses it",
    );
    if (!b.warnings.includes(QDISC_WARNING)) b.warnings.push(QDISC_WARNING);
  }
  if (checked.congestionControl !== undefined) {
    const cc = checked.congestionControl;
    b.set(
      "net.ipv4.tcp_congestion_control",
      cc,
      `congestionControl: "${cc}" (option): the algorithm of new connections (ESnet recommends BBR or H-TCP for long paths; the kernel default is cubic); ` +
        `the host must have it in net.ipv4.tcp_available_congestion_control or load tcp_${cc} (the plan's @module line), else it refuses before any change`,
    );
  }
}

/** What a default_qdisc change does not do: existing interfaces keep their qdisc. */
const QDISC_WARNING =
  "net.core.default_qdisc applies to qdiscs created afterwards: existing interfaces keep theirs until `tc qdisc replace dev IFACE root fq` or a reboot";

/** The options shown in a profile's name: `pacing fq`, the congestion control. */
function transportText(checked: Checked): string[] {
  return [...(checked.pacing !== undefined ? [`pacing ${checked.pacing}`] : []), ...(checked.congestionControl !== undefined ? [checked.congestionControl] : [])];
}

/**
 * Sizes TCP and core buffer maxima from a BDP: `tcpMax` = the power of two ≥ 2 × BDP (the usable
 * window is about half the buffer), at least 16 MiB; `coreMax` = 2 × tcpMax, capped at 2^31 - 1.
 * 10 Gbit/s × 40 ms: BDP 50 000 000 → tcpMax 134217728 (128 MiB) → coreMax 268435456 (256 MiB), as in template A.
 * @returns the sizing, or problems (invalid inputs; a BDP above 512 MiB, which no kernel buffer can cover).
 */
export function tryWindowFor(args: { bandwidth: Bandwidth; rtt: Rtt }): { ok: true; value: WindowSizing } | { ok: false; problems: string[] } {
  const b = tryBdp(args);
  if (!b.ok) return b;
  const bdpBytes = b.value;
  if (2 * bdpBytes > MAX_TCP_BUFFER_MAX) {
    return {
      ok: false,
      problems: [
        `BDP ${bdpBytes} bytes (${formatBytes(bdpBytes)}) needs tcp_rmem max ≥ 2 × BDP = ${2 * bdpBytes} bytes, above the largest ` +
          `buffer a kernel int holds (${MAX_TCP_BUFFER_MAX} bytes as a power of two; limit ${KERNEL_INT_MAX}): ` +
          "one flow cannot fill this path; use several parallel flows and size for bandwidth / flows",
      ],
    };
  }
  const tcpMax = Math.max(MIN_TCP_BUFFER_MAX, nextPowerOfTwo(2 * bdpBytes));
  return {
    ok: true,
    value: { bitsPerSecond: b.bitsPerSecond, rttSeconds: b.seconds, bdpBytes, tcpMax, coreMax: Math.min(2 * tcpMax, KERNEL_INT_MAX) },
  };
}

/** {@link tryWindowFor} that throws InputError("windowFor", …). */
export function windowFor(args: { bandwidth: Bandwidth; rtt: Rtt }): WindowSizing {
  const r = tryWindowFor(args);
  if (!r.ok) throw new InputError("windowFor", r.problems);
  return r.value;
}

/** Collects sysctls and their reasons in order. */
class ProfileBuilder {
  readonly sysctls: Record<string, SysctlValue> = {};
  readonly rationale: Record<string, string> = {};
  readonly warnings: string[] = [];
  set(key: string, value: SysctlValue, why: string): this {
    this.sysctls[key] = value;
    this.rationale[key] = why;
    return this;
  }
}

/** Runs the memory guard (when concurrency and memory are known) and returns the finished profile. */
function finish(fn: string, name: string, b: ProfileBuilder, o: GuardOptions, checked: Checked, nic?: NicPreset): SysctlProfile {
  applyTransport(b, checked);
  const profile: SysctlProfile = { kind: "net-tuning/sysctl-profile", name, sysctls: b.sysctls, rationale: b.rationale, warnings: b.warnings };
  if (nic !== undefined) profile.nic = nic;
  const { concurrency, memoryBytes } = checked;
  if (concurrency !== undefined && memoryBytes !== undefined) {
    const g = memoryGuard({ profile, connections: concurrency, memoryBytes, warnAt: o.warnAt, errorAt: o.errorAt });
    if (g.level === "error" && o.guard === "error") throw new InputError(fn, [`memory guard: ${g.message}`]);
    if (g.level !== "ok") profile.warnings.push(`memory guard (${g.level}): ${g.message}`);
  } else if (concurrency !== undefined) {
    const { bytes, formula } = defaultBuffersPerConnection(profile);
    const worst = bytes * concurrency;
    profile.warnings.push(
      `memory guard not run: worst case = ${formula} × ${concurrency} connections = ${worst} bytes (${formatBytes(worst)}); pass memory to check it against the host`,
    );
  }
  return profile;
}

/** The inputs shown in a profile's name: `"10Gbit, 40ms, 2000 connections, 128GiB"`. */
function optionsText(parts: string[], o: GuardOptions, checked: Checked): string {
  const all = [...parts];
  if (checked.concurrency !== undefined) all.push(`${checked.concurrency} connections`);
  if (checked.memoryBytes !== undefined) all.push(typeof o.memory === "string" ? o.memory.trim() : formatBytes(checked.memoryBytes));
  all.push(...transportText(checked));
  return all.join(", ");
}

function flowProfile(fn: "longFatFlows" | "manySmallFlows", o: FlowOptions): SysctlProfile {
  const checked = checkGuardOptions(o);
  const problems = [...checked.problems];
  if (o.bandwidth === undefined) problems.push(`bandwidth is required (e.g. "10Gbit")`);
  if (o.rtt === undefined) problems.push(`rtt is required (e.g. "40ms")`);
  let w: WindowSizing | undefined;
  if (o.bandwidth !== undefined && o.rtt !== undefined) {
    const r = tryWindowFor(o);
    if (r.ok) w = r.value;
    else problems.push(...r.problems);
  }
  if (problems.length > 0 || w === undefined) throw new InputError(fn, problems);
  const { bdpBytes, tcpMax, coreMax } = w;
  const bw = formatBandwidth(w.bitsPerSecond);
  const rtt = formatRtt(w.rttSeconds);

  let tcpDefault: number;
  let defaultWhy: string;
  if (fn === "manySmallFlows") {
    tcpDefault = MANY_FLOWS_DEFAULT;
    defaultWhy = `default ${tcpDefault} (256 KiB, template B): many short flows, "max open, default cautious" so thousands of sockets do not pin memory; autotuning still grows a busy socket up to max`;
  } else if (checked.concurrency !== undefined && checked.memoryBytes !== undefined) {
    const warnAt = o.warnAt ?? 0.5;
    const budget = (checked.memoryBytes * warnAt) / (2 * checked.concurrency);
    const article = "(article: 4-16 MB for long flows, 256 KB-1 MB for many connections)";
    if (budget < MANY_FLOWS_DEFAULT) {
      tcpDefault = MANY_FLOWS_DEFAULT;
      defaultWhy = `default ${tcpDefault} (256 KiB), the floor: even this puts (rmem + wmem default) × ${checked.concurrency} connections above ${warnAt} × memory (see warnings) ${article}`;
    } else {
      tcpDefault = Math.min(LONG_FLOW_DEFAULT, previousPowerOfTwo(budget));
      defaultWhy =
        `default ${tcpDefault} (${formatBytes(tcpDefault)}): the largest power of two in 256 KiB-16 MiB with (rmem + wmem default) × ` +
        `${checked.concurrency} connections ≤ ${warnAt} × memory ${article}`;
    }
  } else {
    tcpDefault = LONG_FLOW_DEFAULT;
    defaultWhy = `default ${tcpDefault} (16 MiB, template A): few long flows, so windows start large and reach the BDP in fewer round trips`;
  }

  const bdpText = `BDP ${bdpBytes} bytes (${formatBytesDecimal(bdpBytes)} = ${bw} × ${rtt} / 8)`;
  const maxWhy =
    `min ${TCP_BUFFER_MIN}; max ${tcpMax} (${formatBytes(tcpMax)}) ≥ 2 × ${bdpText}: the usable window is about half the buffer, ` +
    `rounded up to a power of two as the article does (50 MB → 128 MiB), never below 16 MiB`;
  const b = new ProfileBuilder()
    .set("net.core.rmem_max", coreMax, `caps SO_RCVBUF for applications that size their own buffer: 2 × the tcp_rmem max, as the article does (256 MiB for 128 MiB); autotuning itself is bounded by tcp_rmem`)
    .set("net.core.wmem_max", coreMax, `caps SO_SNDBUF: 2 × the tcp_wmem max, as the article does`)
    .set("net.core.rmem_default", MANY_FLOWS_DEFAULT, `256 KiB for sockets that are not TCP (TCP starts from tcp_rmem's default): "max open, default cautious" (article)`)
    .set("net.core.wmem_default", MANY_FLOWS_DEFAULT, `256 KiB for sockets that are not TCP (TCP starts from tcp_wmem's default), as in the article`)
    .set("net.ipv4.tcp_rmem", [TCP_BUFFER_MIN, tcpDefault, tcpMax], `${maxWhy}; ${defaultWhy}`)
    .set("net.ipv4.tcp_wmem", [TCP_BUFFER_MIN, tcpDefault, tcpMax], `same sizing as tcp_rmem for the sending side: ${maxWhy}`)
    .set("net.core.netdev_max_backlog", 250000, "packets queued per CPU before the stack (kernel default 1000): the article saw softnet_stat drops at 10 Gbit/s")
    .set("net.core.somaxconn", 65535, "accept-queue ceiling for listen() backlogs (the 16-bit maximum before kernel 4.1); long-lived gateway connections arrive in bursts")
    .set("net.ipv4.tcp_max_syn_backlog", 262144, "half-open (SYN_RECV) queue for handshake bursts, the article's value")
    .set("net.ipv4.tcp_window_scaling", 1, "windows above 64 KiB need window scaling; on by default, written explicitly as the article does")
    .set("net.ipv4.tcp_sack", 1, "selective ACK recovers several losses per round trip on long paths; never 0 (disabling it hurts loss recovery)")
    .set("net.ipv4.tcp_timestamps", 1, "RTT measurement and PAWS protection, needed with large windows; on by default")
    .set("net.ipv4.tcp_mtu_probing", 1, "probe the path MTU only after a black hole is detected: safer across the Internet, where ICMP is filtered and jumbo MTU must not be used")
    .set("net.ipv4.ip_local_port_range", [10000, 65535], "55536 ephemeral ports for outgoing connections, above most listening services; low and high of different parity, as the kernel prefers")
    .set("net.ipv4.tcp_fin_timeout", 15, "frees orphaned FIN_WAIT_2 sockets sooner (article); it does not shorten TIME_WAIT, which stays 60 s");
  const name = `${fn}(${optionsText([bw, rtt], o, checked)})`;
  return finish(fn, name, b, o, checked, throughput());
}

/**
 * Scenario A, template A: few long, fat flows (cross-border gateway, 10G, 20-60 ms RTT).
 * tcp_rmem/tcp_wmem = 4096 / 16 MiB / power of two ≥ 2 × BDP (≥ 16 MiB); net.core.rmem_max/wmem_max = 2 × that;
 * plus the gateway guide's queue, handshake, TCP-option and port settings. With `concurrency` and `memory`,
 * the 16 MiB default is lowered (to at least 256 KiB) until the worst case fits `warnAt` × memory.
 * Suggests the {@link throughput} NIC preset.
 * `longFatFlows({ bandwidth: "10Gbit", rtt: "40ms" })` reproduces the gateway guide's template A exactly.
 * @throws InputError("longFatFlows", …) listing every invalid option, or the memory guard's error with `guard: "error"`.
 */
export function longFatFlows(options: FlowOptions): SysctlProfile {
  return flowProfile("longFatFlows", options ?? ({} as FlowOptions));
}

/**
 * Scenario A, template B: many, short flows. As {@link longFatFlows} but tcp_rmem/tcp_wmem default 262144
 * (256 KiB): `manySmallFlows({ bandwidth: "10Gbit", rtt: "40ms" })` gives `4096 262144 134217728`.
 * @throws InputError("manySmallFlows", …) listing every invalid option, or the memory guard's error with `guard: "error"`.
 */
export function manySmallFlows(options: FlowOptions): SysctlProfile {
  return flowProfile("manySmallFlows", options ?? ({} as FlowOptions));
}

function fileMaxWarning(): string {
  return (
    "fs.file-max is not set: the article's 1000000 would lower systemd's boot-time default (LONG_MAX); " +
    "raise the per-process limit instead (LimitNOFILE=1048576 in the service's unit, or nofile in /etc/security/limits.conf)"
  );
}

function guardOnly(fn: string, options: GuardOptions | undefined): { o: GuardOptions; checked: Checked } {
  const o = options ?? {};
  const checked = checkGuardOptions(o);
  if (checked.problems.length > 0) throw new InputError(fn, checked.problems);
  return { o, checked };
}

/**
 * Scenario B, high-concurrency web service (Nginx, Tomcat): the web guide's tuned settings (backlogs,
 * TIME_WAIT handling, conntrack, buffers 4096 87380/65536 16777216, tcp_mem 786432 1048576 1572864 pages)
 * plus its web template's keepalive 600/60/3. fs.file-max is not set (see warnings).
 * With `memory`, tcp_mem is scaled from the web guide's 64 GB host to that memory. Defaults to no options.
 * @throws InputError("webServer", …) listing every invalid option, or the memory guard's error with `guard: "error"`.
 */
export function webServer(options?: GuardOptions): SysctlProfile {
  const { o, checked } = guardOnly("webServer", options);
  const scale = checked.memoryBytes === undefined ? 1 : checked.memoryBytes / WEB_ARTICLE_MEMORY;
  const tcpMem = [786432, 1048576, 1572864].map((pages) => Math.max(1, Math.round(pages * scale)));
  const tcpMemWhy =
    checked.memoryBytes === undefined
      ? "pages (4 KiB): pressure thresholds 3 / 4 / 6 GiB for all TCP buffers, the article's values for its 64 GB host; pass memory to scale them"
      : `pages (4 KiB): the article's 3 / 4 / 6 GiB for a 64 GB host, scaled to ${formatBytes(checked.memoryBytes)} (${formatBytes(tcpMem[2] * 4096)} max)`;
  const b = new ProfileBuilder()
    .set("net.core.somaxconn", 65535, "accept-queue ceiling: the article's service dropped connections at the old default 128; also raise the server's own backlog (nginx: listen ... backlog=65535, else 511)")
    .set("net.ipv4.tcp_max_syn_backlog", 65535, "SYN queue: 1024 overflowed under the article's load")
    .set("net.netfilter.nf_conntrack_max", 1000000, "connection-tracking entries (only when nf_conntrack is loaded): a full table drops new connections")
    .set("net.ipv4.tcp_max_tw_buckets", 200000, "TIME_WAIT sockets kept before they are destroyed early (the article saw 34,500 TIME_WAIT)")
    .set("net.ipv4.tcp_tw_reuse", 1, "reuse TIME_WAIT ports for connections this host opens (e.g. to upstreams); it does nothing for accepted connections; never tcp_tw_recycle (removed in 4.12, broke clients behind NAT)")
    .set("net.ipv4.tcp_syncookies", 1, "answer SYN floods without the SYN queue")
    .set("net.ipv4.tcp_fin_timeout", 30, "frees orphaned FIN_WAIT_2 sockets sooner; it does not shorten TIME_WAIT, which stays 60 s")
    .set("net.ipv4.tcp_keepalive_time", 600, "first keepalive probe after 10 idle minutes instead of 2 hours (web template), so dead clients release their sockets")
    .set("net.ipv4.tcp_keepalive_intvl", 60, "60 s between keepalive probes (web template)")
    .set("net.ipv4.tcp_keepalive_probes", 3, "a dead peer is dropped after 3 unanswered probes (web template)")
    .set("net.ipv4.tcp_rmem", [4096, 87380, 16777216], "the article's values: a modest default for many connections (85 KiB, below today's kernel default 128 KiB), max 16 MiB")
    .set("net.ipv4.tcp_wmem", [4096, 65536, 16777216], "the article's values: 64 KiB default, max 16 MiB")
    .set("net.ipv4.tcp_mem", tcpMem, tcpMemWhy)
    .set("net.core.rmem_max", 16777216, "caps SO_RCVBUF at the TCP max (16 MiB), as in the article")
    .set("net.core.wmem_max", 16777216, "caps SO_SNDBUF at the TCP max (16 MiB), as in the article");
  b.warnings.push(fileMaxWarning());
  return finish("webServer", `webServer(${optionsText([], o, checked)})`, b, o, checked);
}

/**
 * Scenario B, database server (MySQL, PostgreSQL): swappiness 10, dirty ratios 10/5, fs.aio-max-nr 1048576,
 * somaxconn and tcp_max_syn_backlog 4096. fs.file-max is not set (see warnings). Defaults to no options.
 * @throws InputError("database", …) listing every invalid option, or the memory guard's error with `guard: "error"`.
 */
export function database(options?: GuardOptions): SysctlProfile {
  const { o, checked } = guardOnly("database", options);
  const b = new ProfileBuilder()
    .set("vm.swappiness", 10, "prefer dropping page cache over swapping out the database's memory (default 60)")
    .set("vm.dirty_ratio", 10, "writers are throttled once dirty pages reach 10 % of memory, so writeback comes in smaller bursts")
    .set("vm.dirty_background_ratio", 5, "background writeback starts at 5 % dirty memory")
    .set("fs.aio-max-nr", 1048576, "native asynchronous I/O requests (e.g. InnoDB) need more than the default 65536")
    .set("net.core.somaxconn", 4096, "databases have fewer, steadier connections; 4096 is the default since kernel 5.4 and raises older kernels' 128")
    .set("net.ipv4.tcp_max_syn_backlog", 4096, "SYN queue matching somaxconn (database template)");
  b.warnings.push(fileMaxWarning());
  return finish("database", `database(${optionsText([], o, checked)})`, b, o, checked);
}

/**
 * Scenario B, reverse proxy / API gateway: large backlogs, ephemeral ports 1024-65535, TIME_WAIT reuse,
 * nf_conntrack_max 2000000 and established-connection conntrack timeout 1200 s. Defaults to no options.
 * @throws InputError("proxyGateway", …) listing every invalid option, or the memory guard's error with `guard: "error"`.
 */
export function proxyGateway(options?: GuardOptions): SysctlProfile {
  const { o, checked } = guardOnly("proxyGateway", options);
  const b = new ProfileBuilder()
    .set("net.core.somaxconn", 65535, "accept-queue ceiling for client bursts (proxy template)")
    .set("net.ipv4.tcp_max_syn_backlog", 65535, "SYN queue for client bursts (proxy template)")
    .set("net.ipv4.ip_local_port_range", [1024, 65535], "a proxy opens an upstream connection per client: 64512 ephemeral ports (proxy template); list local services' ports in net.ipv4.ip_local_reserved_ports, as 1024-9999 is now in the range")
    .set("net.ipv4.tcp_tw_reuse", 1, "reuse TIME_WAIT ports for new upstream connections, a proxy's usual limit (outgoing connections only)")
    .set("net.netfilter.nf_conntrack_max", 2000000, "client and upstream connections each take a conntrack entry (only when nf_conntrack is loaded); each costs a few hundred bytes of kernel memory")
    .set("net.netfilter.nf_conntrack_tcp_timeout_established", 1200, "forget idle established connections after 20 min instead of 5 days, so dead flows do not fill the table; keepalives of long-lived connections must stay below it");
  return finish("proxyGateway", `proxyGateway(${optionsText([], o, checked)})`, b, o, checked);
}

/**
 * Scenario C, NVMe/TCP latency (4k random read): tcp_autocorking 0, BBR with the fq qdisc.
 * Suggests the {@link lowLatency} NIC preset. Not set although the NVMe/TCP guide recommends them (see warnings):
 * tcp_nodelay, tcp_notsent_lowat=0, tcp_sack=0. Defaults to no options.
 * @throws InputError("nvmeTcpLatency", …) listing every invalid option, or the memory guard's error with `guard: "error"`.
 */
export function nvmeTcpLatency(options?: GuardOptions): SysctlProfile {
  const { o, checked } = guardOnly("nvmeTcpLatency", options);
  const b = new ProfileBuilder()
    .set("net.ipv4.tcp_autocorking", 0, "send small NVMe/TCP PDUs at once instead of holding them to merge: the article measured 4k random reads at 450 -> 320 us average, jitter ±80 -> ±15 us, +10 % IOPS, for a little more CPU (kernel ≥ 3.14)")
    .set("net.ipv4.tcp_congestion_control", "bbr", "BBR, as the article pairs with autocorking off for NVMe/TCP: it keeps queues short (module tcp_bbr, kernel ≥ 4.9; must be in tcp_available_congestion_control)")
    .set("net.core.default_qdisc", "fq", "fq paces BBR's sends (required for BBR before 4.13)");
  b.warnings.push(
    QDISC_WARNING,
    "not set although the article recommends them: tcp_nodelay=1 (no such sysctl: TCP_NODELAY is per socket, and the kernel's nvme-tcp sets it), " +
      "tcp_notsent_lowat=0 (makes a socket never writable: a 2 MB send stalled), tcp_sack=0 (disables selective ACK and hurts loss recovery)",
  );
  return finish("nvmeTcpLatency", `nvmeTcpLatency(${optionsText([], o, checked)})`, b, o, checked, lowLatency());
}

/**
 * Scenario C, NVMe/TCP throughput (1M sequential write): tcp_autocorking 1 and larger send buffers:
 * tcp_wmem 4096 262144 MAX with MAX = 16 MiB, or the BDP sizing of {@link longFatFlows} when `bandwidth`
 * and `rtt` are given; net.core.wmem_max = 2 × MAX; net.core.wmem_default 262144 (the NVMe/TCP guide).
 * Suggests the {@link throughput} NIC preset. Not set although the NVMe/TCP guide recommends them (see warnings):
 * tcp_init_cwnd, tcp_cwnd_clamp, tcp_sack=0. Defaults to no options.
 * @throws InputError("nvmeTcpThroughput", …) listing every invalid option, or the memory guard's error with `guard: "error"`.
 */
export function nvmeTcpThroughput(options?: NvmeThroughputOptions): SysctlProfile {
  const o = options ?? {};
  const checked = checkGuardOptions(o);
  const problems = [...checked.problems];
  let tcpMax = MIN_TCP_BUFFER_MAX;
  let sized = "max 16 MiB (4x the kernel default 4 MiB; pass bandwidth and rtt to size it from the BDP)";
  const link: string[] = [];
  if ((o.bandwidth === undefined) !== (o.rtt === undefined)) {
    problems.push("bandwidth and rtt go together: pass both (to size tcp_wmem from the BDP) or neither");
  } else if (o.bandwidth !== undefined && o.rtt !== undefined) {
    const w = tryWindowFor({ bandwidth: o.bandwidth, rtt: o.rtt });
    if (!w.ok) problems.push(...w.problems);
    else {
      tcpMax = w.value.tcpMax;
      link.push(formatBandwidth(w.value.bitsPerSecond), formatRtt(w.value.rttSeconds));
      sized = `max ${tcpMax} (${formatBytes(tcpMax)}) ≥ 2 × BDP ${w.value.bdpBytes} bytes, rounded up to a power of two`;
    }
  }
  if (problems.length > 0) throw new InputError("nvmeTcpThroughput", problems);
  const coreMax = Math.min(2 * tcpMax, KERNEL_INT_MAX);
  const b = new ProfileBuilder()
    .set("net.ipv4.tcp_autocorking", 1, "merge small writes into full segments for large sequential I/O: the article measured 1M sequential writes at 8.5 -> 9.2 GB/s (+8 %) with it on")
    .set("net.ipv4.tcp_wmem", [TCP_BUFFER_MIN, MANY_FLOWS_DEFAULT, tcpMax], `larger send buffers (article): TCP sockets, nvme-tcp's included, start from tcp_wmem's default (256 KiB here, kernel 16 KiB) and autotune up to its ${sized}`)
    .set("net.core.wmem_max", coreMax, "caps SO_SNDBUF: 2 × the tcp_wmem max (the article's 4 MB would be below the TCP max)")
    .set("net.core.wmem_default", MANY_FLOWS_DEFAULT, "256 KiB, the article's value, for sockets that are not TCP");
  b.warnings.push(
    "not set although the article recommends them: tcp_init_cwnd / tcp_cwnd_clamp (no such sysctls: use the route attributes `initcwnd N` / `cwnd N lock` of `ip route`), " +
      "tcp_sack=0 (disables selective ACK and hurts loss recovery)",
  );
  return finish("nvmeTcpThroughput", `nvmeTcpThroughput(${optionsText(link, o, checked)})`, b, o, checked, throughput());
}
