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
 * Facts are from the kernel source and Documentation/networking/ip-sysctl.rst, and ../shared/DOMAIN.md §3.
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
  /** "bytes", "pages", "packets", "connections", "seconds", "us", "percent", ... */
  unit?: string;
  /** host: absent or read-only inside a container/netns; netns: per network namespace. */
  scope: "netns" | "host";
  /** Kernel version that introduced the key (only when later than 3.10, the oldest supported host, or notable). */
  since?: string;
  /** Module that provides the key or its values (net.netfilter.* → "nf_conntrack"). */
  module?: string;
  /** The kernel rounds the value up to a power of two: read-back differs. */
  readback?: "pow2";
  /** The key cannot be written (e.g. tcp_available_congestion_control). Refused at preview. */
  readOnly?: boolean;
  /** string: the whole (whitespace-collapsed) value must match. */
  pattern?: RegExp;
  /** string: the usual names; another well-formed name only produces a warning. */
  known?: readonly string[];
  /** Another key for the same kernel variable (net.nf_conntrack_max ↔ net.netfilter.nf_conntrack_max). */
  aliasOf?: string;
  /** One line: what it does, units, default on modern kernels. */
  description: string;
  /**
   * Pitfall text. `validateSysctls` turns it into a preview warning when the value triggers the pitfall
   * (the conditions are the rules in validate.ts); it is also meant for documentation.
   */
  advice?: string;
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

const NAME = /^[a-z0-9_]{1,15}$/; // TCP_CA_NAME_MAX and IFNAMSIZ are 16 including the NUL
const NAME_LIST = /^[a-z0-9_]{1,15}( [a-z0-9_]{1,15})*$/;

const ENTRIES: CatalogueEntry[] = [
  // ---------------------------------------------------------------- net.core
  {
    key: "net.core.rmem_max", type: "int", min: MIN_RCVBUF, max: INT_MAX, unit: "bytes", scope: "host",
    description: "Upper bound for SO_RCVBUF set with setsockopt(); does not bound TCP receive auto-tuning (tcp_rmem[2] does). Default 212992.",
    advice: "rmem_max only caps setsockopt(SO_RCVBUF); TCP auto-tuning is bounded by net.ipv4.tcp_rmem[2]",
  },
  {
    key: "net.core.wmem_max", type: "int", min: MIN_SNDBUF, max: INT_MAX, unit: "bytes", scope: "host",
    description: "Upper bound for SO_SNDBUF set with setsockopt(); does not bound TCP send auto-tuning (tcp_wmem[2] does). Default 212992.",
    advice: "wmem_max only caps setsockopt(SO_SNDBUF); TCP auto-tuning is bounded by net.ipv4.tcp_wmem[2]",
  },
  {
    key: "net.core.rmem_default", type: "int", min: MIN_RCVBUF, max: INT_MAX, unit: "bytes", scope: "host",
    description: "Initial receive buffer of non-TCP sockets (TCP uses tcp_rmem[1]). Default 212992.",
    advice: "every new socket starts with this buffer: keep defaults modest (256 KiB-1 MiB) and raise only the maxima (\"max open, default cautious\")",
  },
  {
    key: "net.core.wmem_default", type: "int", min: MIN_SNDBUF, max: INT_MAX, unit: "bytes", scope: "host",
    description: "Initial send buffer of non-TCP sockets (TCP uses tcp_wmem[1]). Default 212992.",
    advice: "every new socket starts with this buffer: keep defaults modest (256 KiB-1 MiB) and raise only the maxima (\"max open, default cautious\")",
  },
  {
    key: "net.core.netdev_max_backlog", type: "int", min: 1, max: INT_MAX, unit: "packets", scope: "host",
    description: "Per-CPU input queue length for packets received faster than the stack processes them (drops show in /proc/net/softnet_stat column 2). Default 1000.",
  },
  {
    key: "net.core.somaxconn", type: "int", min: 1, max: INT_MAX, unit: "connections", scope: "netns",
    description: "Upper bound for the listen() backlog (accept queue) of every socket. Default 4096 since 5.4 (128 before).",
    advice: "before Linux 4.1 the backlog was 16 bits: values above 65535 wrap around (65536 becomes 0); applications must also ask for a large backlog in listen() (e.g. nginx \"listen ... backlog=\")",
  },
  {
    key: "net.core.rps_sock_flow_entries", type: "int", min: 0, max: 536870912, unit: "entries", scope: "host", readback: "pow2",
    description: "Size of the global RFS socket flow table (0 disables RFS); rounded up to a power of two. Default 0.",
    advice: "the kernel rounds the value up to a power of two, so a different value is read back",
  },
  {
    key: "net.core.default_qdisc", type: "string", pattern: NAME, known: KNOWN_DEFAULT_QDISCS, scope: "host", since: "3.12",
    description: "Queueing discipline attached to new network devices (each TX queue under mq). Default pfifo_fast (fq_codel on most distributions).",
    advice: "only devices created (or whose qdisc is reset) after the change use it; the host loads sch_<name> if needed",
  },
  {
    key: "net.core.busy_poll", type: "int", min: 0, max: INT_MAX, unit: "us", scope: "host", since: "3.11",
    description: "Microseconds to busy-poll the device queue in poll()/select() (0 = off). Default 0.",
    advice: "busy polling burns CPU; 50 us is the documented starting point and needs driver support",
  },
  {
    key: "net.core.busy_read", type: "int", min: 0, max: INT_MAX, unit: "us", scope: "host", since: "3.11",
    description: "Microseconds to busy-poll the device queue on a blocking read() (0 = off). Default 0.",
    advice: "busy polling burns CPU; 50 us is the documented starting point and needs driver support",
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
    key: "net.ipv4.tcp_rmem", type: "multi", arity: 3, ordered: true, elementMin: 1, elementMax: INT_MAX, unit: "bytes", scope: "netns",
    description: "TCP receive buffer min, default, max; auto-tuning grows up to max (≈ 2 × BDP). Default \"4096 131072 6291456\". Per netns since 4.15.",
    advice: "the default (middle value) is given to every new TCP socket: keep it modest (e.g. 87380-262144) and raise the max (\"max open, default cautious\")",
  },
  {
    key: "net.ipv4.tcp_wmem", type: "multi", arity: 3, ordered: true, elementMin: 1, elementMax: INT_MAX, unit: "bytes", scope: "netns",
    description: "TCP send buffer min, default, max; auto-tuning grows up to max. Default \"4096 16384 4194304\". Per netns since 4.15.",
    advice: "the default (middle value) is given to every new TCP socket: keep it modest (e.g. 16384-262144) and raise the max (\"max open, default cautious\")",
  },
  {
    key: "net.ipv4.tcp_mem", type: "multi", arity: 3, ordered: true, elementMin: 1, elementMax: Number.MAX_SAFE_INTEGER, unit: "pages", scope: "host",
    description: "Whole-host TCP memory thresholds low, pressure, high in pages (4 KiB), not bytes. Default computed from RAM at boot.",
    advice: "tcp_mem is in pages (4096 bytes each), not bytes",
  },

  // ---------------------------------------------------------------- net.ipv4 TCP behaviour
  {
    key: "net.ipv4.tcp_window_scaling", type: "bool", min: 0, max: 1, scope: "netns",
    description: "RFC 1323/7323 window scaling: windows above 64 KiB. Default 1.",
    advice: "without window scaling the window is capped at 64 KiB (about 13 Mbit/s at 40 ms RTT)",
  },
  {
    key: "net.ipv4.tcp_sack", type: "bool", min: 0, max: 1, scope: "netns",
    description: "Selective acknowledgements (RFC 2018). Default 1.",
    advice: "disabling SACK does not make ACKs faster; it makes loss recovery slow (one hole per round trip), hurting lossy and long-RTT paths",
  },
  {
    key: "net.ipv4.tcp_timestamps", type: "bool", min: 0, max: 2, scope: "netns",
    description: "RFC 1323/7323 timestamps: 1 = on with random per-connection offsets, 2 = on without offsets, 0 = off. Default 1.",
    advice: "timestamps are needed for PAWS, accurate RTT and tcp_tw_reuse",
  },
  {
    key: "net.ipv4.tcp_mtu_probing", type: "bool", min: 0, max: 2, scope: "netns",
    description: "Packetization-layer path MTU discovery: 0 off, 1 when an ICMP black hole is detected, 2 always. Default 0.",
  },
  {
    key: "net.ipv4.tcp_fin_timeout", type: "int", min: 1, max: JIFFIES_SECONDS_MAX, unit: "seconds", scope: "netns",
    description: "How long an orphaned connection stays in FIN_WAIT_2. Does NOT change TIME_WAIT (fixed at 60 s, TCP_TIMEWAIT_LEN). Default 60.",
    advice: "tcp_fin_timeout only shortens orphaned FIN_WAIT_2; TIME_WAIT stays 60 s (TCP_TIMEWAIT_LEN, compiled in). Too many TIME_WAIT sockets: use connection reuse (keepalive), net.ipv4.tcp_tw_reuse = 1 for outgoing connections, or a wider ip_local_port_range",
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
    description: "Default congestion control for new connections; the kernel loads tcp_<name> on demand (bbr since 4.9). Default cubic. Per netns since 4.15.",
    advice: "an unknown name fails with ENOENT; the host preflight checks net.ipv4.tcp_available_congestion_control and the module",
  },
  {
    key: "net.ipv4.tcp_available_congestion_control", type: "string", pattern: NAME_LIST, scope: "host", readOnly: true,
    description: "Read-only list of loaded congestion-control algorithms.",
  },
  {
    key: "net.ipv4.tcp_allowed_congestion_control", type: "string", pattern: NAME_LIST, known: KNOWN_CONGESTION_CONTROL, scope: "host",
    description: "Space-separated algorithms unprivileged processes may select with TCP_CONGESTION. Default \"reno cubic\" (plus the default).",
  },
  {
    key: "net.ipv4.tcp_autocorking", type: "bool", min: 0, max: 1, scope: "netns", since: "3.14",
    description: "Coalesce small writes while earlier packets are still queued in the qdisc/NIC. Default 1. Absent on 3.10 (CentOS 7).",
  },
  {
    key: "net.ipv4.tcp_notsent_lowat", type: "int", min: 1, max: UINT_MAX, unit: "bytes", scope: "netns", since: "3.12",
    description: "A socket is writable only while its unsent data is below this; limits unsent data in the kernel. Default 4294967295 (off).",
    advice: "0 means a socket is never writable: a 2 MB send stalled completely; it does not disable autocorking",
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
  },
  {
    key: "net.ipv4.tcp_adv_win_scale", type: "int", min: -31, max: 31, scope: "netns",
    description: "Share of the receive buffer counted as overhead: bytes/2^n (n > 0) or bytes - bytes/2^-n. Default 1. Obsolete since 6.6 (per-socket scaling_ratio).",
    advice: "obsolete since Linux 6.6: the receive window is derived from a measured per-socket ratio",
  },
  {
    key: "net.ipv4.tcp_low_latency", type: "bool", min: 0, max: 1, scope: "host",
    description: "Legacy: prequeue processing; a no-op since 4.14 (prequeue removed). Default 0.",
    advice: "no effect since Linux 4.14 (prequeue was removed)",
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
    key: "net.ipv4.udp_mem", type: "multi", arity: 3, ordered: true, elementMin: 1, elementMax: Number.MAX_SAFE_INTEGER, unit: "pages", scope: "host",
    description: "Whole-host UDP memory thresholds low, pressure, high in pages (4 KiB). Default computed from RAM at boot.",
    advice: "udp_mem is in pages (4096 bytes each), not bytes",
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
    advice: "the two numbers should have different parity (one even, one odd): connect() uses one parity and bind() the other",
  },
  {
    key: "net.ipv4.ip_unprivileged_port_start", type: "int", min: 0, max: 65535, unit: "port", scope: "netns", since: "4.11",
    description: "First port unprivileged processes may bind; must not exceed ip_local_port_range low. Default 1024.",
  },
  {
    key: "net.ipv4.ip_forward", type: "bool", min: 0, max: 1, scope: "netns",
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
    advice: "systemd sets fs.file-max to LONG_MAX (9223372036854775807) at boot, so a finite value lowers the limit; the host preflight compares with the live value",
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
    advice: "values above 100 need Linux 5.8+",
  },
  {
    key: "vm.dirty_ratio", type: "int", min: 0, max: 100, unit: "percent", scope: "host",
    description: "Percentage of available memory dirty pages may reach before writers are throttled. Default 20.",
  },
  {
    key: "vm.dirty_background_ratio", type: "int", min: 0, max: 100, unit: "percent", scope: "host",
    description: "Percentage of available memory at which background writeback starts. Default 10.",
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
