/**
 * The counter reader (issue #33; the verify gate of the safe-rollout issue #34 reuses it): ONE module that names every
 * counter the audit reports, renders the POSIX sh that prints their raw sources, and parses that text into
 * `Record<string, number>`.
 *
 * Names:
 *   - `TcpExt.<Field>`, `IpExt.<Field>`, `MPTcpExt.<Field>` from /proc/net/netstat, `Tcp.<Field>`, `Udp.<Field>`, `Ip.<Field>`,
 *     … from /proc/net/snmp (every field of both files, as the kernel names it: pairs of "Group: names" / "Group: values" lines);
 *   - `softnet.processed`, `softnet.dropped`, `softnet.time_squeeze`: /proc/net/softnet_stat columns 1-3 (hex), summed
 *     over CPUs;
 *   - `ethtool.<iface>.<stat>`: `ethtool -S <iface>` (driver-defined names; blanks in a name become "_");
 *   - gauges `sockets.timeWait` (sockets in TIME_WAIT, state 06 of /proc/net/tcp and /proc/net/tcp6),
 *     `conntrack.count`, `conntrack.max`, `conntrack.fill` (count / max; absent when nf_conntrack is not loaded).
 *
 * Pure: no I/O and no Pulumi here. The sh is read-only (reads /proc and runs `ethtool -S`), writes nothing, and works
 * with dash and busybox sh.
 */
import { shQuote } from "../shell";

/** First line of every counter section block; the parser keys on these markers. */
export const COUNTER_MARK = "@@counters";

/** What one counter is, where it is read, and what a rise means. */
export interface CounterDoc {
  /** Name (or, for per-interface ethtool names, the pattern with `<iface>`). */
  name: string;
  /** Where it is read. */
  source: string;
  /** "counter": only rises (compare two reads); "gauge": a level now. */
  kind: "counter" | "gauge";
  /** What a rise (or a high level) means, and what to look at. */
  meaning: string;
  /** Public documentation of the value. */
  reference: string;
}

const NETSTAT_DOC = "Documentation/networking/snmp_counter.rst (kernel)";

/**
 * The counters the audit reports and explains. Every other field of /proc/net/netstat, /proc/net/snmp and
 * `ethtool -S` is read too (under the same naming) but not explained.
 */
export const COUNTER_CATALOGUE: readonly CounterDoc[] = Object.freeze([
  { name: "TcpExt.ListenOverflows", source: "/proc/net/netstat", kind: "counter", meaning: "a SYN or final ACK arrived while a listener's accept queue was full (backlog = min(listen() backlog, net.core.somaxconn)): the connection was dropped; raise somaxconn and the application's backlog, or accept faster", reference: NETSTAT_DOC },
  { name: "TcpExt.ListenDrops", source: "/proc/net/netstat", kind: "counter", meaning: "every connection request a listener dropped, for any reason (includes ListenOverflows)", reference: NETSTAT_DOC },
  { name: "TcpExt.TCPBacklogDrop", source: "/proc/net/netstat", kind: "counter", meaning: "segments dropped because a socket's backlog (owned by the user) exceeded its receive buffer limit", reference: NETSTAT_DOC },
  { name: "TcpExt.PruneCalled", source: "/proc/net/netstat", kind: "counter", meaning: "a socket ran over its receive buffer and the kernel pruned (collapsed) its queue: tcp_rmem or the application's reads are too small", reference: NETSTAT_DOC },
  { name: "TcpExt.TCPTimeouts", source: "/proc/net/netstat", kind: "counter", meaning: "retransmission timeouts (RTO fired): loss that fast retransmit did not recover", reference: NETSTAT_DOC },
  { name: "Tcp.RetransSegs", source: "/proc/net/snmp", kind: "counter", meaning: "TCP segments retransmitted; compare with Tcp.OutSegs (a rise of a few percent points at loss or too-small buffers on the path)", reference: "RFC 4022 tcpRetransSegs; " + NETSTAT_DOC },
  { name: "Tcp.OutSegs", source: "/proc/net/snmp", kind: "counter", meaning: "TCP segments sent (the denominator of the retransmission rate)", reference: "RFC 4022 tcpOutSegs" },
  { name: "Udp.RcvbufErrors", source: "/proc/net/snmp", kind: "counter", meaning: "UDP datagrams dropped because a socket's receive buffer was full: raise net.core.rmem_max / SO_RCVBUF or read faster", reference: "udp(7); " + NETSTAT_DOC },
  { name: "Udp.SndbufErrors", source: "/proc/net/snmp", kind: "counter", meaning: "UDP sends that failed for lack of send buffer: raise net.core.wmem_max / SO_SNDBUF", reference: "udp(7); " + NETSTAT_DOC },
  { name: "Udp.InErrors", source: "/proc/net/snmp", kind: "counter", meaning: "UDP datagrams not delivered for any reason other than no port (includes RcvbufErrors)", reference: "RFC 4113 udpInErrors" },
  { name: "softnet.processed", source: "/proc/net/softnet_stat (column 1, hex, summed over CPUs)", kind: "counter", meaning: "packets processed by the receive softirq", reference: "Documentation/networking/scaling.rst; net/core/net-procfs.c" },
  { name: "softnet.dropped", source: "/proc/net/softnet_stat (column 2, hex, summed over CPUs)", kind: "counter", meaning: "packets dropped because a CPU's input backlog was full: raise net.core.netdev_max_backlog, spread the load (RPS, more queues)", reference: "Documentation/networking/scaling.rst; Documentation/admin-guide/sysctl/net.rst (netdev_max_backlog)" },
  { name: "softnet.time_squeeze", source: "/proc/net/softnet_stat (column 3, hex, summed over CPUs)", kind: "counter", meaning: "the receive softirq ran out of budget or time with work left: raise net.core.netdev_budget / netdev_budget_usecs", reference: "Documentation/admin-guide/sysctl/net.rst (netdev_budget)" },
  { name: "ethtool.<iface>.rx_no_buffer", source: "ethtool -S <iface> (driver-defined; e.g. rx_no_buffer_count on igb/ixgbe)", kind: "counter", meaning: "the NIC had no free receive descriptor: raise the RX ring (ethtool -G) or poll faster", reference: "ethtool(8); the driver's Documentation/networking/device_drivers/*" },
  { name: "ethtool.<iface>.rx_missed", source: "ethtool -S <iface> (driver-defined; e.g. rx_missed_errors)", kind: "counter", meaning: "frames the NIC dropped because its FIFO or rings were full: larger rings, more queues, interrupt coalescing", reference: "ethtool(8); Documentation/networking/statistics.rst (rx_missed_errors)" },
  { name: "sockets.timeWait", source: "/proc/net/tcp and /proc/net/tcp6, lines in state 06", kind: "gauge", meaning: "sockets in TIME_WAIT now: near net.ipv4.tcp_max_tw_buckets, or many with a narrow ip_local_port_range, outgoing connects fail; tcp_tw_reuse = 1 helps clients", reference: "Documentation/networking/proc_net_tcp.rst; Documentation/networking/ip-sysctl.rst (tcp_max_tw_buckets)" },
  { name: "conntrack.fill", source: "/proc/sys/net/netfilter/nf_conntrack_count / nf_conntrack_max", kind: "gauge", meaning: "share of the connection-tracking table in use: at 1 new flows are dropped (\"nf_conntrack: table full\")", reference: "Documentation/networking/nf_conntrack-sysctl.rst" },
]);

/** The explanation of a counter name (per-interface ethtool names match the `<iface>` pattern, suffix variants included). */
export function counterDoc(name: string): CounterDoc | undefined {
  const exact = COUNTER_CATALOGUE.find((d) => d.name === name);
  if (exact) return exact;
  const m = /^ethtool\.[^.]+\.(.+)$/.exec(name);
  if (!m) return undefined;
  return COUNTER_CATALOGUE.find((d) => d.name.startsWith("ethtool.<iface>.") && m[1].startsWith(d.name.slice("ethtool.<iface>.".length)));
}

const IFACE = /^[A-Za-z0-9_.:@-]{1,15}$/;

/**
 * The sh that prints the raw sources of every counter, one `@@counters <source>` line before each. `ifaces`: the
 * interfaces whose `ethtool -S` is read; "all" reads every interface of /sys/class/net except lo (at run time).
 * Needs `ethtool` on PATH (or prints nothing for that source); /proc reads are `cat` (works as any user).
 */
export function renderCounterSh(ifaces: string[] | "all" = "all"): string {
  if (ifaces !== "all") {
    const bad = ifaces.find((i) => !IFACE.test(i));
    if (bad !== undefined) throw new Error(`renderCounterSh: invalid interface name ${JSON.stringify(bad)}`);
  }
  const list = ifaces === "all" ? `$(cd /sys/class/net 2>/dev/null && for f in *; do [ "$f" = lo ] || printf '%s ' "$f"; done)` : shQuote(ifaces.join(" "));
  return [
    `printf '${COUNTER_MARK} netstat\\n'; cat /proc/net/netstat 2>/dev/null`,
    `printf '${COUNTER_MARK} snmp\\n'; cat /proc/net/snmp 2>/dev/null`,
    `printf '${COUNTER_MARK} softnet\\n'; cat /proc/net/softnet_stat 2>/dev/null`,
    // count in awk on the host: /proc/net/tcp has a line per socket (tens of MB on a busy proxy)
    `printf '${COUNTER_MARK} timewait\\n'; for ntc_f in /proc/net/tcp /proc/net/tcp6; do [ -r "$ntc_f" ] && awk '$4 == "06" { n++ } END { print n + 0 }' "$ntc_f"; done`,
    `if [ -r /proc/sys/net/netfilter/nf_conntrack_count ] && [ -r /proc/sys/net/netfilter/nf_conntrack_max ]; then printf '${COUNTER_MARK} conntrack\\n'; cat /proc/sys/net/netfilter/nf_conntrack_count /proc/sys/net/netfilter/nf_conntrack_max; fi`,
    `for ntc_i in ${list}; do printf '${COUNTER_MARK} ethtool %s\\n' "$ntc_i"; ethtool -S "$ntc_i" 2>/dev/null; done`,
    `printf '${COUNTER_MARK} end\\n'`,
    "",
  ].join("\n");
}

/** Parses "Group: a b c" / "Group: 1 2 3" line pairs (/proc/net/netstat, /proc/net/snmp) into `Group.a` → 1 … */
export function parseProcPairs(text: string, out: Record<string, number> = {}): Record<string, number> {
  const lines = text.split("\n").filter((l) => /^\w+:/.test(l));
  for (let i = 0; i + 1 < lines.length; i++) {
    const [g1, ...names] = lines[i].trim().split(/\s+/);
    const [g2, ...values] = lines[i + 1].trim().split(/\s+/);
    if (g1 !== g2 || names.length === 0 || !names.every((n) => /^[A-Za-z]/.test(n))) continue;
    if (!values.every((v) => /^-?\d+$/.test(v))) continue;
    const group = g1.slice(0, -1);
    names.forEach((n, k) => {
      if (values[k] !== undefined) out[`${group}.${n}`] = Number(values[k]);
    });
    i++;
  }
  return out;
}

/** /proc/net/softnet_stat: one line per CPU, hex columns; columns 1-3 (processed, dropped, time_squeeze) summed. */
export function parseSoftnet(text: string, out: Record<string, number> = {}): Record<string, number> {
  let rows = 0;
  const sums = [0, 0, 0];
  for (const line of text.split("\n")) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 3 || !cols.every((c) => /^[0-9a-fA-F]+$/.test(c))) continue;
    rows++;
    for (let k = 0; k < 3; k++) sums[k] += parseInt(cols[k], 16);
  }
  if (rows > 0) {
    out["softnet.processed"] = sums[0];
    out["softnet.dropped"] = sums[1];
    out["softnet.time_squeeze"] = sums[2];
  }
  return out;
}

/** `ethtool -S IF` text ("NIC statistics:" then "     name: value") into `ethtool.IF.name` → value. */
export function parseEthtoolStats(iface: string, text: string, out: Record<string, number> = {}): Record<string, number> {
  for (const line of text.split("\n")) {
    const m = /^\s*(.+?):\s+(-?\d+)\s*$/.exec(line);
    if (!m) continue;
    const name = m[1].trim().replace(/\s+/g, "_");
    out[`ethtool.${iface}.${name}`] = Number(m[2]);
  }
  return out;
}

/** Splits the text of {@link renderCounterSh} into its sources: [source, argument, body]. */
function sections(text: string): { source: string; arg: string; body: string }[] {
  const out: { source: string; arg: string; body: string }[] = [];
  let cur: { source: string; arg: string; lines: string[] } | undefined;
  const flush = () => { if (cur) out.push({ source: cur.source, arg: cur.arg, body: cur.lines.join("\n") }); };
  for (const line of text.split("\n")) {
    if (line.startsWith(`${COUNTER_MARK} `)) {
      flush();
      const [source, ...rest] = line.slice(COUNTER_MARK.length + 1).split(" ");
      cur = source === "end" ? undefined : { source, arg: rest.join(" "), lines: [] };
      continue;
    }
    cur?.lines.push(line);
  }
  flush();
  return out;
}

/**
 * Parses the output of {@link renderCounterSh} (other text around it is ignored) into counter name → value.
 * Absent sources give no names (no conntrack module: no `conntrack.*`).
 */
export function parseCounters(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of sections(text)) {
    if (s.source === "netstat" || s.source === "snmp") parseProcPairs(s.body, out);
    else if (s.source === "softnet") parseSoftnet(s.body, out);
    else if (s.source === "timewait") {
      const n = s.body.split("\n").filter((l) => /^\d+$/.test(l.trim()));
      if (n.length > 0) out["sockets.timeWait"] = n.reduce((a, l) => a + Number(l), 0);
    } else if (s.source === "conntrack") {
      const [count, max] = s.body.split("\n").map((l) => l.trim()).filter((l) => /^\d+$/.test(l)).map(Number);
      if (count !== undefined && max !== undefined) {
        out["conntrack.count"] = count;
        out["conntrack.max"] = max;
        if (max > 0) out["conntrack.fill"] = count / max;
      }
    } else if (s.source === "ethtool" && IFACE.test(s.arg)) parseEthtoolStats(s.arg, s.body, out);
  }
  return out;
}

/** The counters the report shows for a host (the catalogue's names present, and each NIC's drop/miss counters). */
export function headlineCounters(all: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const d of COUNTER_CATALOGUE) if (!d.name.includes("<iface>") && all[d.name] !== undefined) out[d.name] = all[d.name];
  for (const [k, v] of Object.entries(all)) {
    if (/^ethtool\.[^.]+\.(rx_no_buffer|rx_missed|rx_dropped|tx_dropped|rx_fifo_errors|rx_over_errors)/.test(k)) out[k] = v;
  }
  return out;
}

/** Counter deltas between two reads of the same host (`after - before`; gauges give their `after` level). */
export function counterDeltas(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    const d = counterDoc(k);
    if (d?.kind === "gauge" || /^(sockets|conntrack)\./.test(k)) out[k] = v;
    else if (before[k] !== undefined) out[k] = v - before[k];
  }
  return out;
}
