/**
 * The sysctl key catalogue: what we know about the keys this product is usually asked to set.
 *
 * Pure data, used at `pulumi preview` (no host access) by `validate.ts` for type/range/arity/order
 * checks and warnings, and by the host layer for scope (netns/host), `since`, `module` and `readback`.
 * A key that is not in the catalogue is still allowed if it is well-formed and its value is safe; the
 * host preflight then checks that it exists. Keys that do not exist at all but that popular articles
 * tell people to set are listed separately in {@link REJECTED_KEYS} and refused at preview.
 *
 * Ranges: `min`/`max` are what we accept. Where the kernel accepts more (unbounded ints accept
 * negatives, byte booleans accept 0-255) we accept only the documented / sensible range.
 * `proc_dointvec_jiffies` keys (seconds) are bounded by INT_MAX / HZ with HZ <= 1000, i.e. 2147483.
 *
 * Facts are from the kernel source and Documentation/networking/ip-sysctl.rst.
 */

export interface CatalogueEntry {
  /** Dotted key, e.g. "net.ipv4.tcp_rmem". */
  key: string;
  /**
   * int: one integer; bool: one integer with a small documented set (0/1, or e.g. 0-2 for tcp_tw_reuse);
   * multi: `arity` integers separated by whitespace; string: a name (or names) matching `pattern`.
   */
  type: "int" | "bool" | "multi" | "string";
  /** int/bool: accepted range (inclusive). */
  min?: number;
  max?: number;
  /** Exact upper bound as decimal text when it exceeds 2^53 (fs.file-max: LONG_MAX). Overrides `max`. */
  maxDecimal?: string;
  /** multi: number of values (3 for tcp_rmem/tcp_wmem/tcp_mem, 2 for ip_local_port_range). */
  arity?: number;
  /** multi: require v0 <= v1 <= v2 (min <= default <= max). The kernel does NOT check. */
  ordered?: boolean;
  /** multi: accepted range of each value. */
  elementMin?: number;
  elementMax?: number;
  /** Why the accepted range is narrower than the type's, appended to the out-of-range message. */
  rangeWhy?: string;
  /** "bytes", "pages", "packets", "connections", "seconds", "us", "percent", ... */
  unit?: string;
  /** host: absent or read-only inside a container/netns; netns: per network namespace. */
  scope: "netns" | "host";
  /** Kernel version that introduced the key (only when later than 3.10, the oldest supported host, or notable). */
  since?: string;
  /**
   * Module that provides the key (net.netfilter.* → "nf_conntrack"), or that a value needs: `{ perValue: "tcp_{value}",
   * builtin }` names the module of each value except the built-in ones (tcp_congestion_control = bbr → tcp_bbr).
   */
  module?: string | { perValue: string; builtin: readonly string[] };
  /**
   * How the value reads back when it is not the text written (see provider/sysctl/readback.ts): pow2 = rounded up
   * to a power of two; msJiffies = milliseconds kept in jiffies, rounded up to the next jiffy. Multi-value keys
   * compare by whitespace-separated words without saying so.
   */
  readback?: "pow2" | "msJiffies";
  /** The key cannot be written (e.g. tcp_available_congestion_control): refused at preview, with why and the fix. */
  readOnly?: { why: string; fix: string };
  /** string: the whole (whitespace-collapsed) value must match. */
  pattern?: RegExp;
  /** string: what `pattern` accepts, in words (messages and docs); default: a name or a list of names. */
  form?: string;
  /** string: the usual names; another well-formed name only produces a warning. */
  known?: readonly string[];
  /**
   * Another key for the same kernel variable (net.nf_conntrack_max ↔ net.netfilter.nf_conntrack_max). Aliases are one
   * setting: `variableOf` / `otherNames` (provider/sysctl/catalogue.ts) give a key's variable and its other names.
   */
  aliasOf?: string;
  /** Keys without an entry of their own that name this entry's variable (net.ipv4.conf.all.forwarding ↔ ip_forward). */
  aliases?: readonly string[];
  /** One line: what it does, units, default on modern kernels. */
  description: string;
  /**
   * Pitfall text: why a value is a problem. `validateSysctls` puts it into the message of every rule of this entry
   * that fires (after the rule's `fact`, unless the rule says `advice: false`); it is also documentation.
   */
  advice?: string;
  /** When the advice (or another fact) applies: checked by the generic engine in validate.ts. */
  rules?: readonly SysctlRule[];
  /** A valid value, shown in fixes ("give e.g. …"). */
  example?: string;
  /** multi: the names of the values in order messages (default min, default, max). */
  names?: readonly string[];
  /**
   * The value is a secret (a key, not a setting): written to a sysctl.d file of mode 0600, never printed in a warning,
   * error or report line, recorded on the host as its sha256 only, and stored in Pulumi state as a secret.
   */
  secret?: boolean;
}

/** Another key's value in the same input (`index`: which value of a multi-value key; default 0). */
export interface KeyRef {
  key: string;
  index?: number;
}

/**
 * The condition of a rule, on the key's integer value (`index` picks one of a multi-value key's values) or its words.
 * A {@link KeyRef} operand compares with another key of the same input; the rule is skipped when that key is absent.
 */
export type RuleCondition =
  | { op: "eq" | "lt" | "gt" | "gte"; than: number | string | KeyRef; index?: number; nonZeroRef?: boolean }
  | { op: "always" }
  | { op: "notPow2" }
  | { op: "notMultipleOf"; of: number }
  | { op: "bitsOutside"; mask: number }
  | { op: "unknownName" }
  | { op: "sameParity" };

/**
 * One rule of a catalogue entry. The message is `KEY = VALUE <fact>: <advice>. Fix: <fix>.`; `fact` and `fix` may
 * use {n} (the compared value), {ref} (the other key's value), {refKey}, {pow2}, {wrap16}, {mib}, {gib10k}, {hex},
 * {unknown}, {first}, {known}, {low}, {high}, {parityFix}, {half}, {up20}.
 */
export interface SysctlRule {
  when: RuleCondition;
  /** error: refused at preview (before the range check); default: an advisory warning (can be acknowledged). */
  level?: "error";
  /** The triggering fact, before the advice. */
  fact?: string;
  /** false: the advice is not about this rule (the fact says it all). */
  advice?: false;
  /** Only when this key is NOT in the same input. */
  unlessSet?: string;
  /** Only when this key has this value in the same input. */
  with?: { key: string; eq: number };
  fix: string;
}

/** Largest value of a C int. */
export const INT_MAX = 2147483647;
/** Largest value of a C unsigned int. */
export const UINT_MAX = 4294967295;
/** Largest value of a C long on 64-bit Linux, as text (it does not fit a JS number exactly). */
export const LONG_MAX = "9223372036854775807";
/** proc_dointvec_jiffies: seconds × HZ must fit an int; HZ is at most 1000. */
const JIFFIES_SECONDS_MAX = 2147483;
/** The kernel's own lower bounds for socket buffer sysctls on 64-bit (SOCK_MIN_RCVBUF / SOCK_MIN_SNDBUF). */
const MIN_RCVBUF = 2304;
const MIN_SNDBUF = 4608;

/** Names the kernel ships as congestion-control modules (tcp_<name>.ko or built in). */
export const KNOWN_CONGESTION_CONTROL = [
  "reno", "cubic", "bbr", "bic", "htcp", "dctcp", "vegas", "veno", "westwood", "illinois", "hybla",
  "scalable", "lp", "yeah", "nv", "cdg", "highspeed",
] as const;

/** Qdiscs that make sense as net.core.default_qdisc. */
export const KNOWN_DEFAULT_QDISCS = [
  "pfifo_fast", "fq", "fq_codel", "fq_pie", "cake", "sfq", "codel", "pie", "pfifo", "bfifo", "pfifo_head_drop", "noqueue",
] as const;

/** The advice of every milliseconds-in-jiffies key: its read-back is rounded to the next jiffy. */
const JIFFIES_ADVICE =
  "the kernel keeps this value in jiffies (1/HZ s), so it reads back rounded up to the next jiffy: a step of 1 ms at HZ=1000, 4 ms at HZ=250, 10 ms at HZ=100 (250 reads back 252 at HZ=250); multiples of 20 ms are exact at every HZ. The sysctl.d file keeps the declared value, `applied` shows the value read back";

/** A value given to every new socket of 16 MiB or more ("max open, default cautious"). */
function bigDefaultRule(index: number, fix: string): SysctlRule {
  return {
    when: { op: "gte", than: 16 * 1024 * 1024, index },
    fact: "gives every new socket a default buffer of {mib}: 10,000 connections × {mib} ≈ {gib10k} GiB of potential buffer memory",
    fix,
  };
}
function defaultBufferRules(key: string, max: string): SysctlRule[] {
  return [
    bigDefaultRule(0, "keep the default at 256 KiB-1 MiB (e.g. 262144) and raise only the maximum"),
    { when: { op: "gt", than: { key: max } }, advice: false, fact: "is above {refKey} = {ref} in the same input", fix: `make ${key} <= ${max}` },
  ];
}
const PAGES_RULE: SysctlRule = { when: { op: "gt", than: 268435456, index: 2 }, fact: "has a high mark of {n} pages, more than 1 TiB: it looks like bytes", fix: 'divide byte values by 4096, e.g. "786432 1048576 1572864" (3/4/6 GiB)', };
const BUSY_POLL_RULE: SysctlRule = { when: { op: "gt", than: 100 }, fact: "is more than twice the documented starting point", fix: "start at 50 and measure; 0 turns busy polling off", };
const UNKNOWN_CC_RULE: SysctlRule = { when: { op: "unknownName" }, fact: "{unknown} is not a usual congestion-control algorithm: the kernel will try to load module tcp_{first} and fail with ENOENT if it does not exist", fix: "check the spelling (known: {known})", };
const JIFFIES_RULE: SysctlRule = { when: { op: "notMultipleOf", of: 20 }, fact: "is not a multiple of 20 ms", fix: "nothing, if the rounding is fine (the value read back is not drift); for a value that reads back as written at every HZ use a multiple of 20, e.g. {up20}", };

const NAME = /^[a-z0-9_]{1,15}$/; // TCP_CA_NAME_MAX and IFNAMSIZ are 16 including the NUL
const NAME_LIST = /^[a-z0-9_]{1,15}( [a-z0-9_]{1,15})*$/;

const ENTRIES: CatalogueEntry[] = [
  // ---------------------------------------------------------------- net.core
  {
    key: "net.core.rmem_max", type: "int", min: MIN_RCVBUF, max: INT_MAX, unit: "bytes", scope: "host",
    description: "Upper bound for SO_RCVBUF set with setsockopt(); does not bound TCP receive auto-tuning (tcp_rmem[2] does). Default 212992.",
    advice: "rmem_max only caps setsockopt(SO_RCVBUF): auto-tuned TCP sockets are bounded by net.ipv4.tcp_rmem[2] instead, but applications that set SO_RCVBUF themselves are capped by it and lose auto-tuning",
    rules: [{ when: { op: "lt", than: { key: "net.ipv4.tcp_rmem", index: 2 } }, fact: "is below the {refKey} max {ref} given in the same input", fix: "if such applications need large buffers raise net.core.rmem_max to at least {ref}" }],
  },
  {
    key: "net.core.wmem_max", type: "int", min: MIN_SNDBUF, max: INT_MAX, unit: "bytes", scope: "host",
    description: "Upper bound for SO_SNDBUF set with setsockopt(); does not bound TCP send auto-tuning (tcp_wmem[2] does). Default 212992.",
    advice: "wmem_max only caps setsockopt(SO_SNDBUF): auto-tuned TCP sockets are bounded by net.ipv4.tcp_wmem[2] instead, but applications that set SO_SNDBUF themselves are capped by it and lose auto-tuning",
    rules: [{ when: { op: "lt", than: { key: "net.ipv4.tcp_wmem", index: 2 } }, fact: "is below the {refKey} max {ref} given in the same input", fix: "if such applications need large buffers raise net.core.wmem_max to at least {ref}" }],
  },
  {
    key: "net.core.rmem_default", type: "int", min: MIN_RCVBUF, max: INT_MAX, unit: "bytes", scope: "host",
    description: "Initial receive buffer of non-TCP sockets (TCP uses tcp_rmem[1]). Default 212992.",
    advice: "every new socket starts with this buffer: keep defaults modest (256 KiB-1 MiB) and raise only the maxima (\"max open, default cautious\")",
    rules: defaultBufferRules("net.core.rmem_default", "net.core.rmem_max"),
  },
  {
    key: "net.core.wmem_default", type: "int", min: MIN_SNDBUF, max: INT_MAX, unit: "bytes", scope: "host",
    description: "Initial send buffer of non-TCP sockets (TCP uses tcp_wmem[1]). Default 212992.",
    advice: "every new socket starts with this buffer: keep defaults modest (256 KiB-1 MiB) and raise only the maxima (\"max open, default cautious\")",
    rules: defaultBufferRules("net.core.wmem_default", "net.core.wmem_max"),
  },
  {
    key: "net.core.netdev_max_backlog", type: "int", min: 1, max: INT_MAX, unit: "packets", scope: "host",
    description: "Per-CPU input queue length for packets received faster than the stack processes them (drops show in /proc/net/softnet_stat column 2). Default 1000.",
  },
  {
    key: "net.core.somaxconn", type: "int", min: 1, max: INT_MAX, unit: "connections", scope: "netns",
    description: "Upper bound for the listen() backlog (accept queue) of every socket. Default 4096 since 5.4 (128 before).",
    advice: "before Linux 4.1 the accept backlog was 16 bits (CentOS 7 runs 3.10), so values above 65535 wrap around; applications must also ask for a large backlog in listen() (e.g. nginx \"listen ... backlog=\")",
    rules: [{ when: { op: "gt", than: 65535 }, fact: "wraps to {wrap16} on pre-4.1 kernels", fix: "use at most 65535 on pre-4.1 kernels; also raise the backlog the application passes to listen() (e.g. nginx \"listen 80 backlog=65535\")" }],
  },
  {
    key: "net.core.rps_sock_flow_entries", type: "int", min: 0, max: 536870912, unit: "entries", scope: "host", readback: "pow2",
    description: "Size of the global RFS socket flow table (0 disables RFS); rounded up to a power of two. Default 0.",
    advice: "the kernel rounds the table size up to a power of two, so that is the value read back",
    rules: [{ when: { op: "notPow2" }, fact: "will read back as {pow2}", fix: "set {pow2}" }],
  },
  {
    key: "net.core.default_qdisc", type: "string", pattern: NAME, known: KNOWN_DEFAULT_QDISCS, scope: "host", since: "3.12",
    description: "Queueing discipline attached to new network devices (each TX queue under mq). Default pfifo_fast (fq_codel on most distributions).",
    advice: "only devices created (or whose qdisc is reset) after the change use it; the host loads sch_<name> if needed",
    example: '"fq"',
    rules: [{ when: { op: "unknownName" }, fact: "{unknown} is not a usual queueing discipline: the kernel will try to load module sch_{first} and fail with ENOENT if it does not exist", fix: "check the spelling (known: {known})" }],
  },
  {
    key: "net.core.busy_poll", type: "int", min: 0, max: INT_MAX, unit: "us", scope: "host", since: "3.11",
    description: "Microseconds to busy-poll the device queue in poll()/select() (0 = off). Default 0.",
    advice: "busy polling burns CPU; 50 us is the documented starting point and needs driver support",
    rules: [BUSY_POLL_RULE],
  },
  {
    key: "net.core.busy_read", type: "int", min: 0, max: INT_MAX, unit: "us", scope: "host", since: "3.11",
    description: "Microseconds to busy-poll the device queue on a blocking read() (0 = off). Default 0.",
    advice: "busy polling burns CPU; 50 us is the documented starting point and needs driver support",
    rules: [BUSY_POLL_RULE],
  },
  {
    key: "net.core.netdev_budget", type: "int", min: 1, max: INT_MAX, unit: "packets", scope: "host",
    description: "Packets processed per NAPI softirq cycle across all devices (time_squeeze in softnet_stat column 3 says it ran out). Default 300.",
  },
  {
    key: "net.core.optmem_max", type: "int", min: 1, max: INT_MAX, unit: "bytes", scope: "host",
    description: "Maximum ancillary buffer size per socket (option memory, zerocopy notifications). Default 20480 (131072 since 6.9); per netns since 6.8.",
  },

  // ---------------------------------------------------------------- net.ipv4 TCP buffers
  {
    key: "net.ipv4.tcp_rmem", type: "multi", arity: 3, ordered: true, elementMin: 4096, elementMax: INT_MAX, unit: "bytes", scope: "netns",
    // Seen in the lab on kernel 6.18.44-fc-v1272: "1 1 1", "4095 4096 4096", "4096 1 4096", "4096 4096 1" refused with
    // EINVAL, "4096 4096 4096" and "8192 4096 8192" accepted; tcp_wmem there still takes 1. Earlier lab runs of the
    // same generated inputs passed on 6.18.44-fc-v657, so it depends on the build, not only on the version.
    rangeWhy: "some kernels (seen on a 6.18.44 build) refuse a value below one page with EINVAL, and less than a page was never a useful buffer",
    description: "TCP receive buffer min, default, max; auto-tuning grows up to max (≈ 2 × BDP). Default \"4096 131072 6291456\". Per netns since 4.15.",
    advice: "the default (middle value) is given to every new TCP socket: keep it modest (e.g. 87380-262144) and raise the max (\"max open, default cautious\")",
    example: '"4096 131072 16777216"',
    rules: [bigDefaultRule(1, "keep the default at 256 KiB-1 MiB (e.g. 262144) and raise only the maximum (the third value of net.ipv4.tcp_rmem)")],
  },
  {
    key: "net.ipv4.tcp_wmem", type: "multi", arity: 3, ordered: true, elementMin: 1, elementMax: INT_MAX, unit: "bytes", scope: "netns",
    description: "TCP send buffer min, default, max; auto-tuning grows up to max. Default \"4096 16384 4194304\". Per netns since 4.15.",
    advice: "the default (middle value) is given to every new TCP socket: keep it modest (e.g. 16384-262144) and raise the max (\"max open, default cautious\")",
    example: '"4096 16384 16777216"',
    rules: [bigDefaultRule(1, "keep the default at 256 KiB-1 MiB (e.g. 262144) and raise only the maximum (the third value of net.ipv4.tcp_wmem)")],
  },
  {
    key: "net.ipv4.tcp_mem", type: "multi", arity: 3, ordered: true, elementMin: 1, elementMax: Number.MAX_SAFE_INTEGER, unit: "pages", scope: "host",
    description: "Whole-host TCP memory thresholds low, pressure, high in pages (4 KiB), not bytes. Default computed from RAM at boot.",
    advice: "tcp_mem is in pages (4096 bytes each), not bytes",
    example: '"786432 1048576 1572864"', names: ["low", "pressure", "high"],
    rules: [PAGES_RULE],
  },

  // ---------------------------------------------------------------- net.ipv4 TCP behaviour
  {
    key: "net.ipv4.tcp_window_scaling", type: "bool", min: 0, max: 1, scope: "netns",
    description: "RFC 1323/7323 window scaling: windows above 64 KiB. Default 1.",
    advice: "without window scaling the TCP window is capped at 64 KiB (about 13 Mbit/s at 40 ms RTT)",
    rules: [{ when: { op: "eq", than: 0 }, fix: "keep net.ipv4.tcp_window_scaling = 1 (the default)" }],
  },
  {
    key: "net.ipv4.tcp_sack", type: "bool", min: 0, max: 1, scope: "netns",
    description: "Selective acknowledgements (RFC 2018). Default 1.",
    advice: "disabling SACK does not make ACKs faster; it slows loss recovery to one hole per round trip, hurting lossy and long-RTT paths",
    rules: [{ when: { op: "eq", than: 0 }, fix: "keep net.ipv4.tcp_sack = 1 (the default)" }],
  },
  {
    key: "net.ipv4.tcp_timestamps", type: "bool", min: 0, max: 2, scope: "netns",
    description: "RFC 1323/7323 timestamps: 1 = on with random per-connection offsets, 2 = on without offsets, 0 = off. Default 1.",
    advice: "disabling timestamps turns off PAWS and accurate RTT measurement, and makes tcp_tw_reuse ineffective",
    rules: [{ when: { op: "eq", than: 0 }, fix: "keep net.ipv4.tcp_timestamps = 1 (the default)" }],
  },
  {
    key: "net.ipv4.tcp_mtu_probing", type: "bool", min: 0, max: 2, scope: "netns",
    description: "Packetization-layer path MTU discovery: 0 off, 1 when an ICMP black hole is detected, 2 always. Default 0.",
  },
  {
    key: "net.ipv4.tcp_fin_timeout", type: "int", min: 1, max: JIFFIES_SECONDS_MAX, unit: "seconds", scope: "netns",
    description: "How long an orphaned connection stays in FIN_WAIT_2. Does NOT change TIME_WAIT (fixed at 60 s, TCP_TIMEWAIT_LEN). Default 60.",
    advice: "tcp_fin_timeout only shortens orphaned FIN_WAIT_2; it does NOT shorten TIME_WAIT, which is fixed at 60 s (TCP_TIMEWAIT_LEN, compiled in)",
    rules: [{ when: { op: "lt", than: 60 }, fix: "for many TIME_WAIT sockets reuse connections (keepalive), set net.ipv4.tcp_tw_reuse = 1 for outgoing connections or widen net.ipv4.ip_local_port_range; keep this only if orphaned FIN_WAIT_2 sockets are the problem" }],
  },
  {
    key: "net.ipv4.tcp_max_syn_backlog", type: "int", min: 1, max: INT_MAX, unit: "connections", scope: "netns",
    description: "Maximum remembered connection requests (SYN_RECV) per listener without syncookies. Default 128-1024+ (from memory).",
  },
  {
    key: "net.ipv4.tcp_max_tw_buckets", type: "int", min: 0, max: INT_MAX, unit: "sockets", scope: "netns",
    description: "Maximum TIME_WAIT sockets; beyond it TIME_WAIT is skipped (\"time wait bucket table overflow\"). Default from memory (e.g. 262144).",
  },
  {
    key: "net.ipv4.tcp_tw_reuse", type: "bool", min: 0, max: 2, scope: "netns",
    description: "Reuse TIME_WAIT sockets for new outgoing connections when safe (needs timestamps): 0 off, 1 on, 2 loopback only. Default 2 (since 4.19).",
    rules: [{ when: { op: "gte", than: 1 }, with: { key: "net.ipv4.tcp_timestamps", eq: 0 }, advice: false, fact: "has no effect with net.ipv4.tcp_timestamps = 0 in the same input (reuse relies on timestamps)", fix: "keep net.ipv4.tcp_timestamps = 1" }],
  },
  {
    key: "net.ipv4.tcp_syncookies", type: "bool", min: 0, max: 2, scope: "netns",
    description: "SYN cookies when the SYN queue overflows: 0 off, 1 on overflow, 2 always. Default 1.",
  },
  {
    key: "net.ipv4.tcp_keepalive_time", type: "int", min: 1, max: JIFFIES_SECONDS_MAX, unit: "seconds", scope: "netns",
    description: "Idle time before the first keepalive probe (only for sockets with SO_KEEPALIVE). Default 7200.",
  },
  {
    key: "net.ipv4.tcp_keepalive_intvl", type: "int", min: 1, max: JIFFIES_SECONDS_MAX, unit: "seconds", scope: "netns",
    description: "Interval between keepalive probes. Default 75.",
  },
  {
    key: "net.ipv4.tcp_keepalive_probes", type: "int", min: 0, max: 255, unit: "probes", scope: "netns",
    description: "Unanswered keepalive probes before the connection is dropped. Default 9.",
  },
  {
    key: "net.ipv4.tcp_congestion_control", type: "string", pattern: NAME, known: KNOWN_CONGESTION_CONTROL, scope: "netns",
    module: { perValue: "tcp_{value}", builtin: ["reno", "cubic"] },
    description: "Default congestion control for new connections; the kernel loads tcp_<name> on demand (bbr since 4.9). Default cubic. Per netns since 4.15.",
    advice: "the kernel loads tcp_<name> on demand; the host preflight checks net.ipv4.tcp_available_congestion_control and the module before anything changes",
    example: '"bbr"',
    rules: [UNKNOWN_CC_RULE],
  },
  {
    key: "net.ipv4.tcp_available_congestion_control", type: "string", pattern: NAME_LIST, scope: "host",
    readOnly: { why: "is read-only (the kernel lists what is loaded)", fix: "remove it; load the module (e.g. tcp_bbr) and set net.ipv4.tcp_congestion_control or net.ipv4.tcp_allowed_congestion_control" },
    description: "Read-only list of loaded congestion-control algorithms.",
  },
  {
    key: "net.ipv4.tcp_allowed_congestion_control", type: "string", pattern: NAME_LIST, known: KNOWN_CONGESTION_CONTROL, scope: "host",
    description: "Space-separated algorithms unprivileged processes may select with TCP_CONGESTION. Default \"reno cubic\" (plus the default).",
    example: '"reno cubic bbr"', rules: [{ ...UNKNOWN_CC_RULE, advice: false }],
  },
  {
    key: "net.ipv4.tcp_autocorking", type: "bool", min: 0, max: 1, scope: "netns", since: "3.14",
    description: "Coalesce small writes while earlier packets are still queued in the qdisc/NIC. Default 1. Absent on 3.10 (CentOS 7).",
  },
  {
    key: "net.ipv4.tcp_notsent_lowat", type: "int", min: 1, max: UINT_MAX, unit: "bytes", scope: "netns", since: "3.12",
    description: "A socket is writable only while its unsent data is below this; limits unsent data in the kernel. Default 4294967295 (off).",
    advice: "0 makes every TCP socket permanently non-writable (poll/epoll never report POLLOUT), so senders stall — a 2 MB send stalled completely; it does not \"cheaply disable autocorking\"",
    rules: [{ when: { op: "eq", than: 0 }, level: "error", fix: "use a small positive value such as 16384 (16 KiB), or remove the key to keep the default 4294967295 (off); to disable autocorking set net.ipv4.tcp_autocorking = 0" }],
  },
  {
    key: "net.ipv4.tcp_slow_start_after_idle", type: "bool", min: 0, max: 1, scope: "netns",
    description: "Reset the congestion window to the initial window after an idle period. Default 1.",
  },
  {
    key: "net.ipv4.tcp_no_metrics_save", type: "bool", min: 0, max: 1, scope: "netns",
    description: "Do not cache per-destination metrics (ssthresh, RTT) when a connection closes. Default 0.",
  },
  {
    key: "net.ipv4.tcp_fastopen", type: "int", min: 0, max: 0x607, scope: "netns",
    description: "TCP Fast Open bitmask: 0x1 client, 0x2 server, 0x4 client without cookie, 0x200 server without cookie, 0x400 server without TCP_FASTOPEN. Default 1.",
    rules: [{ when: { op: "bitsOutside", mask: 0x607 }, level: "error", advice: false, fact: "has bits outside the documented flags 0x1, 0x2, 0x4, 0x200, 0x400 ({hex})", fix: "combine only the documented flags, e.g. 3 (client and server) or 0x603" }],
  },
  {
    key: "net.ipv4.tcp_fastopen_key", type: "string", scope: "netns", since: "3.13", secret: true,
    pattern: /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}(,[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8})?$/,
    form: 'TCP Fast Open key (four groups of 8 lowercase hex digits joined by "-", optionally followed by "," and a backup key of the same form)',
    description: "The server's TCP Fast Open cookie key (128 bits as four 8-digit hex words joined by \"-\"), optionally followed by \",\" and a backup key (5.3+) accepted during a rotation. Random at boot. A secret: every server behind one address should share it (ip-sysctl.rst).",
    example: '"00112233-44556677-8899aabb-ccddeeff"',
  },
  {
    key: "net.ipv4.tcp_adv_win_scale", type: "int", min: -31, max: 31, scope: "netns",
    description: "Share of the receive buffer counted as overhead: bytes/2^n (n > 0) or bytes - bytes/2^-n. Default 1. Obsolete since 6.6 (per-socket scaling_ratio).",
    advice: "is obsolete since Linux 6.6 (the receive window comes from a measured per-socket ratio); it only matters on older kernels",
    rules: [{ when: { op: "always" }, fix: "remove the key on 6.6+ hosts; size net.ipv4.tcp_rmem[2] at about 2 × BDP instead" }],
  },
  {
    key: "net.ipv4.tcp_low_latency", type: "bool", min: 0, max: 1, scope: "host",
    description: "Legacy: prequeue processing; a no-op since 4.14 (prequeue removed). Default 0.",
    advice: "has no effect since Linux 4.14 (prequeue was removed)",
    rules: [{ when: { op: "always" }, fix: "remove the key" }],
  },
  {
    key: "net.ipv4.tcp_moderate_rcvbuf", type: "bool", min: 0, max: 1, scope: "netns",
    description: "Receive buffer auto-tuning (within tcp_rmem). Default 1.",
  },
  {
    key: "net.ipv4.tcp_ecn", type: "bool", min: 0, max: 2, scope: "netns",
    description: "ECN: 0 off, 1 request and accept, 2 accept only. Default 2.",
  },
  {
    key: "net.ipv4.tcp_syn_retries", type: "int", min: 1, max: 127, unit: "retries", scope: "netns",
    description: "SYN retransmissions for an active open. Default 6.",
  },
  {
    key: "net.ipv4.tcp_synack_retries", type: "int", min: 0, max: 255, unit: "retries", scope: "netns",
    description: "SYN-ACK retransmissions for a passive open. Default 5.",
  },
  {
    key: "net.ipv4.tcp_abort_on_overflow", type: "bool", min: 0, max: 1, scope: "netns",
    description: "Reset new connections when the accept queue overflows instead of dropping the ACK. Default 0.",
  },
  {
    key: "net.ipv4.tcp_max_orphans", type: "int", min: 0, max: INT_MAX, unit: "sockets", scope: "host",
    description: "Maximum TCP sockets not attached to a file descriptor. Default from memory.",
  },

  {
    key: "net.ipv4.tcp_invalid_ratelimit", type: "int", min: 0, max: INT_MAX, unit: "ms", scope: "netns", since: "4.0", readback: "msJiffies",
    description: "Minimum interval between duplicate ACKs sent in answer to invalid TCP segments (ACK-loop mitigation), in milliseconds kept in jiffies. Default 500.",
    advice: JIFFIES_ADVICE, rules: [JIFFIES_RULE],
  },
  {
    key: "net.ipv4.icmp_ratelimit", type: "int", min: 0, max: INT_MAX, unit: "ms", scope: "netns", readback: "msJiffies",
    description: "Minimum interval between rate-limited ICMP messages (icmp_ratemask) to one destination, in milliseconds kept in jiffies. Default 1000.",
    advice: JIFFIES_ADVICE, rules: [JIFFIES_RULE],
  },
  {
    key: "net.ipv6.icmp.ratelimit", type: "int", min: 0, max: INT_MAX, unit: "ms", scope: "netns", readback: "msJiffies",
    description: "Minimum interval between rate-limited ICMPv6 messages to one destination, in milliseconds kept in jiffies. Default 1000.",
    advice: JIFFIES_ADVICE, rules: [JIFFIES_RULE],
  },

  {
    key: "net.ipv4.udp_mem", type: "multi", arity: 3, ordered: true, elementMin: 1, elementMax: Number.MAX_SAFE_INTEGER, unit: "pages", scope: "host",
    description: "Whole-host UDP memory thresholds low, pressure, high in pages (4 KiB). Default computed from RAM at boot.",
    advice: "udp_mem is in pages (4096 bytes each), not bytes",
    example: '"786432 1048576 1572864"', names: ["low", "pressure", "high"],
    rules: [PAGES_RULE],
  },
  {
    key: "net.ipv4.udp_rmem_min", type: "int", min: 1, max: INT_MAX, unit: "bytes", scope: "netns",
    description: "Minimum receive buffer each UDP socket is guaranteed under memory pressure. Default 4096.",
  },
  {
    key: "net.ipv4.udp_wmem_min", type: "int", min: 1, max: INT_MAX, unit: "bytes", scope: "netns",
    description: "Minimum send buffer each UDP socket is guaranteed under memory pressure. Default 4096.",
  },

  // ---------------------------------------------------------------- net.ipv4 IP
  {
    key: "net.ipv4.ip_local_port_range", type: "multi", arity: 2, ordered: true, elementMin: 1, elementMax: 65535, unit: "ports", scope: "netns",
    description: "Ephemeral port range low, high (low >= ip_unprivileged_port_start). Default \"32768 60999\".",
    advice: "the kernel prefers one even and one odd bound (connect() uses one parity, bind() the other) and logs a warning",
    example: '"10000 65535"', names: ["low port", "high port"],
    rules: [
      { when: { op: "sameParity" }, fact: "{low} and {high} have the same parity", fix: 'use e.g. "{low} {parityFix}"' },
      {
        when: { op: "lt", than: { key: "net.ipv4.ip_unprivileged_port_start" } }, level: "error", advice: false,
        fact: "the low port {n} is below net.ipv4.ip_unprivileged_port_start = {ref} in the same input; the kernel refuses it with EINVAL",
        fix: "raise the low port to at least {ref} or lower ip_unprivileged_port_start to at most {n}",
      },
      {
        when: { op: "lt", than: 1024 }, unlessSet: "net.ipv4.ip_unprivileged_port_start", advice: false,
        fact: "the low port {n} is below the default net.ipv4.ip_unprivileged_port_start (1024); the kernel refuses it with EINVAL unless ip_unprivileged_port_start <= {n} (the host preflight checks the live value)",
        fix: "use a low port of at least 1024, or also set net.ipv4.ip_unprivileged_port_start = {n}",
      },
    ],
  },
  {
    key: "net.ipv4.ip_unprivileged_port_start", type: "int", min: 0, max: 65535, unit: "port", scope: "netns", since: "4.11",
    description: "First port unprivileged processes may bind; must not exceed ip_local_port_range low. Default 1024.",
  },
  {
    key: "net.ipv4.ip_forward", type: "bool", min: 0, max: 1, scope: "netns",
    // devinet.c: ip_forward's data is conf.all.forwarding's (writing either sets conf.default and every conf.<dev> too)
    aliases: ["net.ipv4.conf.all.forwarding"],
    description: "Forward IPv4 packets between interfaces; writing it resets conf.*.forwarding. Default 0.",
  },

  // ---------------------------------------------------------------- netfilter
  {
    key: "net.netfilter.nf_conntrack_max", type: "int", min: 1, max: INT_MAX, unit: "entries", scope: "host", module: "nf_conntrack",
    description: "Maximum tracked connections (about 300 bytes each); absent until nf_conntrack is loaded; read-only in a netns. Default from memory.",
  },
  {
    key: "net.nf_conntrack_max", type: "int", min: 1, max: INT_MAX, unit: "entries", scope: "host", module: "nf_conntrack",
    aliasOf: "net.netfilter.nf_conntrack_max",
    description: "Same variable as net.netfilter.nf_conntrack_max (legacy path).",
  },
  {
    key: "net.netfilter.nf_conntrack_tcp_timeout_established", type: "int", min: 1, max: JIFFIES_SECONDS_MAX, unit: "seconds", scope: "netns", module: "nf_conntrack",
    description: "How long an idle established TCP connection stays tracked. Default 432000 (5 days).",
  },

  // ---------------------------------------------------------------- fs
  {
    key: "fs.file-max", type: "int", min: 8192, maxDecimal: LONG_MAX, unit: "files", scope: "host",
    description: "System-wide limit of open files. systemd (240+) sets it to LONG_MAX (9223372036854775807) at boot.",
    advice: "systemd sets fs.file-max to LONG_MAX (9223372036854775807) at boot, so a finite value LOWERS the limit on systemd hosts (the host preflight compares with the live value)",
    rules: [{ when: { op: "lt", than: LONG_MAX }, fix: "remove the key (the limit is already effectively unlimited) and raise per-process limits instead (LimitNOFILE / nofile, fs.nr_open)" }],
  },
  {
    key: "fs.nr_open", type: "int", min: 1024, max: 2147483584, unit: "files", scope: "host",
    description: "Per-process ceiling for RLIMIT_NOFILE (nofile / LimitNOFILE). Default 1048576.",
  },
  {
    key: "fs.aio-max-nr", type: "int", min: 1, maxDecimal: LONG_MAX, unit: "requests", scope: "host",
    description: "System-wide limit of concurrent asynchronous I/O requests. Default 65536.",
  },

  // ---------------------------------------------------------------- vm
  {
    key: "vm.swappiness", type: "int", min: 0, max: 200, unit: "percent", scope: "host",
    description: "Relative preference for swapping anonymous memory vs dropping page cache, 0-200 (0-100 before 5.8). Default 60.",
    advice: "values above 100 are only accepted by Linux 5.8+",
    rules: [{ when: { op: "gt", than: 100 }, fix: "use 0-100 on older kernels (the host preflight will refuse it there)" }],
  },
  {
    key: "vm.dirty_ratio", type: "int", min: 0, max: 100, unit: "percent", scope: "host",
    description: "Percentage of available memory dirty pages may reach before writers are throttled. Default 20.",
  },
  {
    key: "vm.dirty_background_ratio", type: "int", min: 0, max: 100, unit: "percent", scope: "host",
    description: "Percentage of available memory at which background writeback starts. Default 10.",
    rules: [{ when: { op: "gte", than: { key: "vm.dirty_ratio" }, nonZeroRef: true }, advice: false, fact: "is not below vm.dirty_ratio = {ref}; the kernel then uses half of dirty_ratio instead", fix: "make it smaller than vm.dirty_ratio, e.g. {half}" }],
  },
  {
    key: "vm.min_free_kbytes", type: "int", min: 0, max: INT_MAX, unit: "kbytes", scope: "host",
    description: "Memory kept free for atomic allocations (e.g. packet reception). Default from memory; too high causes early OOM.",
  },
];

function freezeAll(entries: CatalogueEntry[]): Record<string, CatalogueEntry> {
  const out: Record<string, CatalogueEntry> = {};
  for (const e of entries) {
    if (Object.prototype.hasOwnProperty.call(out, e.key)) throw new Error(`catalogue: duplicate key ${e.key}`);
    out[e.key] = Object.freeze(e);
  }
  return Object.freeze(out);
}

/** Every catalogued key (dotted) → its entry. */
export const CATALOGUE: Record<string, CatalogueEntry> = freezeAll(ENTRIES);

/** The entry of a dotted key, or undefined if the key is not catalogued. */
export function lookup(key: string): CatalogueEntry | undefined {
  return Object.prototype.hasOwnProperty.call(CATALOGUE, key) ? CATALOGUE[key] : undefined;
}

/** Every key of a kernel variable named by more than one key → the variable's catalogued key (`aliasOf`, `aliases`). */
const VARIABLE: ReadonlyMap<string, string> = new Map(
  ENTRIES.flatMap((e) => [
    ...(e.aliasOf ? [[e.aliasOf, e.aliasOf], [e.key, e.aliasOf]] : []),
    ...(e.aliases ?? []).flatMap((a) => [[e.key, e.key], [a, e.key]]),
  ] as [string, string][]),
);

/**
 * The kernel variable a dotted key writes, as one name: two keys of one variable (net.ipv4.ip_forward and
 * net.ipv4.conf.all.forwarding) give the same. Claims, the one-resource duplicate check and the host's owner check
 * compare these, not key strings.
 */
export function variableOf(key: string): string {
  return VARIABLE.get(key) ?? key;
}

/** The other keys of `key`'s kernel variable, sorted ([] for a key with one name). */
export function otherNames(key: string): string[] {
  const v = VARIABLE.get(key);
  return v === undefined ? [] : [...VARIABLE.keys()].filter((k) => k !== key && VARIABLE.get(k) === v).sort();
}

/** Read-back forms of keys that cannot be catalogued one by one (per-interface keys). */
const READBACK_PATTERNS: readonly { pattern: RegExp; form: "msJiffies" }[] = [
  // Documentation/networking/ip-sysctl.rst: neigh/<dev>/{retrans_time_ms,base_reachable_time_ms,interval_probe_time_ms}
  // (milliseconds, kept in jiffies; delay_first_probe_time and locktime are in seconds/USER_HZ and have no _ms form),
  // conf/<dev>/mldv{1,2}_unsolicited_report_interval (milliseconds) and route/gc_min_interval_ms.
  { pattern: /^net\.ipv[46]\.neigh\.[^.]+\.(retrans_time_ms|base_reachable_time_ms|interval_probe_time_ms)$/, form: "msJiffies" },
  { pattern: /^net\.ipv6\.conf\.[^.]+\.mldv[12]_unsolicited_report_interval$/, form: "msJiffies" },
  { pattern: /^net\.ipv[46]\.route\.gc_min_interval_ms$/, form: "msJiffies" },
];

/** Modules of keys that cannot be catalogued one by one (every conntrack key, catalogued or not). */
const MODULE_PATTERNS: readonly { pattern: RegExp; module: string }[] = [{ pattern: /^net\.netfilter\.nf_conntrack/, module: "nf_conntrack" }];

/**
 * Why a catalogued key may be absent on a host, for the host's message when it is (the engine's table is generated
 * from this: scripts/gen-spec.ts, provider/host/sh/sysctlspec.sh): the kernel it was added in, and that a host-wide
 * key is absent inside a network namespace or container. Empty when there is nothing to say.
 */
export function absenceHint(key: string): string {
  const entry = lookup(key);
  return [entry?.since ? `added in Linux ${entry.since}` : "", entry?.scope === "host" ? "host-wide: absent inside a network namespace or container" : ""]
    .filter(Boolean)
    .join("; ");
}

/** Whether a catalogued key is host-wide (scope "host"): it exists only in the initial network namespace, or read-only elsewhere. */
export function isHostWide(key: string): boolean {
  return lookup(key)?.scope === "host";
}

/**
 * The kernel module a key (or its value) needs, from its entry or a pattern; undefined when none. Without `value`
 * (not known), only a module the key needs whatever its value (net.netfilter.* → nf_conntrack).
 */
export function moduleOf(key: string, value?: string): string | undefined {
  const m = lookup(key)?.module;
  if (typeof m === "string") return m;
  if (m) return value === undefined || m.builtin.includes(value) ? undefined : m.perValue.replace("{value}", value);
  return MODULE_PATTERNS.find((p) => p.pattern.test(key))?.module;
}

/** The read-back form of a key matched by a pattern rather than catalogued, or undefined. */
export function readbackPattern(key: string): "msJiffies" | undefined {
  return READBACK_PATTERNS.find((p) => p.pattern.test(key))?.form;
}

/** A key that popular articles recommend but that does not exist (or was removed): refused at preview. */
export interface RejectedKey {
  key: string;
  /** Why it cannot be set, naming the real mechanism. */
  reason: string;
  /** What to do instead. */
  fix: string;
}

const REJECTED: RejectedKey[] = [
  {
    key: "net.ipv4.tcp_nodelay",
    reason: "there is no such sysctl: TCP_NODELAY is a per-socket option the application sets with setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, 1) (e.g. nginx \"tcp_nodelay on;\")",
    fix: "remove it and enable TCP_NODELAY in the application; to stop the kernel coalescing small writes host-wide use net.ipv4.tcp_autocorking = 0",
  },
  {
    key: "net.ipv4.tcp_init_cwnd",
    reason: "there is no such sysctl: the initial congestion/receive window is a route attribute (initcwnd, initrwnd)",
    fix: "remove it and set it on the route, e.g. \"ip route change default via GATEWAY dev DEV initcwnd 10 initrwnd 10\" (persist it in the network configuration)",
  },
  {
    key: "net.ipv4.tcp_initcwnd",
    reason: "there is no such sysctl: the initial congestion/receive window is a route attribute (initcwnd, initrwnd)",
    fix: "remove it and set it on the route, e.g. \"ip route change default via GATEWAY dev DEV initcwnd 10 initrwnd 10\" (persist it in the network configuration)",
  },
  {
    key: "net.ipv4.tcp_initrwnd",
    reason: "there is no such sysctl: the initial receive window is the route attribute initrwnd",
    fix: "remove it and set it on the route, e.g. \"ip route change default via GATEWAY dev DEV initrwnd 10\"",
  },
  {
    key: "net.ipv4.tcp_cwnd_clamp",
    reason: "there is no such sysctl: a congestion window clamp is the route attribute \"cwnd N lock\"",
    fix: "remove it and set it on the route, e.g. \"ip route change PREFIX via GATEWAY cwnd 40 lock\"",
  },
  {
    key: "net.ipv4.tcp_tw_recycle",
    reason: "it was removed in Linux 4.12; before that it dropped connections from clients behind NAT (their timestamps are not monotonic)",
    fix: "remove it; to reuse TIME_WAIT sockets for outgoing connections set net.ipv4.tcp_tw_reuse = 1",
  },
  {
    key: "net.ipv4.tcp_quickack",
    reason: "there is no such sysctl: TCP_QUICKACK is a per-socket option (or the route attribute \"quickack 1\")",
    fix: "remove it and set TCP_QUICKACK in the application or \"ip route change PREFIX via GATEWAY quickack 1\"",
  },
  {
    key: "net.ipv4.tcp_autocork",
    reason: "there is no such sysctl (a common misspelling)",
    fix: "use net.ipv4.tcp_autocorking",
  },
];

/** Keys refused at preview with the real mechanism named. */
export const REJECTED_KEYS: Record<string, RejectedKey> = Object.freeze(
  Object.fromEntries(REJECTED.map((r) => [r.key, Object.freeze(r)])),
);

/** Why a dotted key is refused, or undefined. */
export function rejection(key: string): RejectedKey | undefined {
  return Object.prototype.hasOwnProperty.call(REJECTED_KEYS, key) ? REJECTED_KEYS[key] : undefined;
}

/**
 * What an entry's values are, in words: for the reference docs and for messages that must not show the value (a
 * secret's). Ranges as the catalogue gives them.
 */
export function valueForm(e: CatalogueEntry, opts: { usual?: boolean } = {}): string {
  const range = (a?: number, b?: number | string) => (a !== undefined || b !== undefined ? ` ${a ?? ""}–${b ?? ""}` : "");
  const unit = e.unit ? ` ${e.unit}` : "";
  switch (e.type) {
    case "int":
      return `integer${range(e.min, e.maxDecimal ?? e.max)}${unit}`;
    case "bool":
      return `integer${range(e.min, e.max)}${unit}`;
    case "multi":
      return `${e.arity} integers${range(e.elementMin, e.elementMax)}${unit}${e.ordered ? ", in order (min ≤ default ≤ max)" : ""}${e.names ? ` (${e.names.join(", ")})` : ""}`;
    case "string":
      return `${e.form ?? (e.pattern?.source.includes("( ") ? 'list of names (lowercase letters, digits and "_", at most 15 characters each, separated by spaces)' : 'name (lowercase letters, digits and "_", at most 15 characters)')}${e.known && opts.usual !== false ? ` (usual: ${e.known.join(", ")})` : ""}`;
  }
}

/** Whether the catalogue marks `key`'s value as a secret (net.ipv4.tcp_fastopen_key). */
export function isSecretKey(key: string): boolean {
  return lookup(key)?.secret === true;
}
