/**
 * Where every counter name of the verify gate (issue #34) is read on the host, and how: ONE table, from which
 * `provider/host/sh/counters.sh` is generated (`npm run gen`, scripts/gen-spec.ts): the engine's source lookup (which
 * files a name needs) and its awk extractor (one process per reading, every source read directly by awk; `ethtool -S`
 * piped in). The extraction follows parseCounters() of provider/audit/counters.ts (the audit's reader, shared naming)
 * rule for rule; tests/live/verifyCounters.test.ts reads a lab host both ways and compares every name the gate takes.
 *
 * Pure: no I/O. The awk is POSIX (mawk, gawk, busybox awk) and holds no single quote (it is a single-quoted sh word).
 */

/** How a source's text is turned into names (the awk function `NAME` below handles each). */
export type SourceFormat = "pairs" | "softnet" | "tcpstate" | "ctcount" | "ctmax" | "ethtool";

export interface CounterSource {
  /** The names read from it: a prefix ending in "." or an exact name. */
  names: readonly string[];
  /** The files awk reads (absent ones are skipped); none for `ethtool -S`, which the engine pipes in. */
  files: readonly string[];
  format: SourceFormat;
}

/** /proc/net/netstat groups and /proc/net/snmp groups (the kernel's own "Group: names" / "Group: values" lines). */
export const NETSTAT_GROUPS = ["TcpExt", "IpExt", "MPTcpExt"] as const;
export const SNMP_GROUPS = ["Ip", "Icmp", "IcmpMsg", "Tcp", "Udp", "UdpLite"] as const;

export const COUNTER_SOURCES: readonly CounterSource[] = Object.freeze([
  { names: NETSTAT_GROUPS.map((g) => `${g}.`), files: ["/proc/net/netstat"], format: "pairs" },
  { names: SNMP_GROUPS.map((g) => `${g}.`), files: ["/proc/net/snmp"], format: "pairs" },
  { names: ["softnet.processed", "softnet.dropped", "softnet.time_squeeze"], files: ["/proc/net/softnet_stat"], format: "softnet" },
  { names: ["sockets.timeWait"], files: ["/proc/net/tcp", "/proc/net/tcp6"], format: "tcpstate" },
  { names: ["conntrack.count", "conntrack.max", "conntrack.fill"], files: ["/proc/sys/net/netfilter/nf_conntrack_count"], format: "ctcount" },
  { names: ["conntrack.count", "conntrack.max", "conntrack.fill"], files: ["/proc/sys/net/netfilter/nf_conntrack_max"], format: "ctmax" },
  { names: ["ethtool."], files: [], format: "ethtool" },
]);

/** The sources of a name (several for conntrack, which needs two files). */
export function sourcesOf(name: string): CounterSource[] {
  return COUNTER_SOURCES.filter((s) => s.names.some((n) => (n.endsWith(".") ? name.startsWith(n) : name === n)));
}

/**
 * The awk extractor. Variables: `phase` (before, post, after) and the paths `spec` (the gate's spec, $NT_TMP/gate.spec:
 * `name<TAB>increase|level<TAB>limit`, its first file), `before` and `post` (phase "after": the readings before and
 * right after the change, `name<TAB>value`). Every other file is a source, dispatched by its path (FMT, from
 * COUNTER_SOURCES); any other input (stdin, "-") is `ethtool -S` text after `@@counters ethtool IF` lines. Prints
 * `v<TAB>name<TAB>value` per wanted name read and `m<TAB>name<TAB>close names` per wanted name not read; in phase
 * "after" also `r<TAB>name<TAB>class<TAB>before<TAB>post<TAB>after<TAB>limit<TAB>change<TAB>ok|exceeded` per name.
 */
export function renderAwk(): string {
  const fmt = COUNTER_SOURCES.flatMap((s) => s.files.map((f) => `FMT["${f}"] = "${s.format}"`)).join("; ");
  return `BEGIN { ${fmt} }
FNR == 1 { hdr = ""; fmt = (FILENAME in FMT) ? FMT[FILENAME] : "ethtool"; if (FILENAME == spec) fmt = "spec"; else if (phase == "after" && FILENAME == before) fmt = "before"; else if (phase == "after" && FILENAME == post) fmt = "post" }
fmt == "spec" { split($0, S, "\\t"); want[S[1]] = 1; cls[S[1]] = S[2]; lim[S[1]] = S[3]; order[++nw] = S[1]; next }
fmt == "before" { split($0, S, "\\t"); bv[S[1]] = S[2]; next }
fmt == "post" { split($0, S, "\\t"); pv[S[1]] = S[2]; next }
fmt == "pairs" { pairs(); next }
fmt == "softnet" { ok = NF >= 3; for (k = 1; k <= NF; k++) if ($k !~ /^[0-9a-fA-F]+$/) ok = 0; if (ok) { rows++; s1 += hex($1); s2 += hex($2); s3 += hex($3) } next }
fmt == "tcpstate" { twseen = 1; if ($4 == "06") tw++; next }
fmt == "ctcount" { if ($0 ~ /^[ \\t]*[0-9]+[ \\t]*$/ && ctc == "") ctc = $1; next }
fmt == "ctmax" { if ($0 ~ /^[ \\t]*[0-9]+[ \\t]*$/ && ctm == "") ctm = $1; next }
fmt == "ethtool" { eth(); next }
function hex(s,   i, n) { n = 0; s = tolower(s); for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return n }
function pairs(   k, g, ok) {
  if ($0 !~ /^[A-Za-z0-9_]+:/) return
  ok = (hdr != "" && $1 == hg && NF > 1)
  if (ok) for (k = 2; k <= NF; k++) if ($k !~ /^-?[0-9]+$/) ok = 0
  if (ok && hok) { g = substr(hg, 1, length(hg) - 1); for (k = 2; k <= hn && k <= NF; k++) val[g "." H[k]] = $k; hdr = ""; return }
  hdr = $0; hg = $1; hn = NF; hok = (NF > 1); for (k = 2; k <= NF; k++) { H[k] = $k; if ($k !~ /^[A-Za-z]/) hok = 0 }
}
function eth(   n) {
  if ($1 == "@@counters" && $2 == "ethtool") { ifc = ($3 ~ /^[A-Za-z0-9_.:@-]+$/ && length($3) <= 15) ? $3 : ""; return }
  if (ifc == "" || $0 !~ /^[ \\t]*.+:[ \\t]+-?[0-9]+[ \\t]*$/) return
  n = $0; sub(/:[ \\t]+-?[0-9]+[ \\t]*$/, "", n); sub(/^[ \\t]+/, "", n); sub(/[ \\t]+$/, "", n); gsub(/[ \\t]+/, "_", n)
  val["ethtool." ifc "." n] = $NF
}
function dist(a, b,   i, j, la, lb, c, D) {
  la = length(a); lb = length(b); for (i = 0; i <= la; i++) D[i, 0] = i; for (j = 0; j <= lb; j++) D[0, j] = j
  for (i = 1; i <= la; i++) for (j = 1; j <= lb; j++) {
    c = D[i - 1, j - 1] + (substr(a, i, 1) != substr(b, j, 1)); if (D[i - 1, j] + 1 < c) c = D[i - 1, j] + 1; if (D[i, j - 1] + 1 < c) c = D[i, j - 1] + 1; D[i, j] = c
  }
  return D[la, lb]
}
function near(w,   p, k, out, n, lw, dk) {
  p = w; sub(/[^.]*$/, "", p); lw = tolower(w); out = ""; n = 0
  for (k in val) {
    if (n >= 5 || substr(k, 1, length(p)) != p) continue
    dk = tolower(k); if (index(dk, substr(lw, length(p) + 1)) || index(lw, substr(dk, length(p) + 1)) || dist(lw, dk) <= 3) { out = out " " k; n++ }
  }
  return substr(out, 2)
}
function num(x) { return (x ~ /^-?[0-9]+$/) ? sprintf("%.0f", x) : sprintf("%.6g", x) }
END {
  if (rows > 0) { val["softnet.processed"] = s1; val["softnet.dropped"] = s2; val["softnet.time_squeeze"] = s3 }
  if (twseen) val["sockets.timeWait"] = tw + 0
  if (ctc != "" && ctm != "") { val["conntrack.count"] = ctc; val["conntrack.max"] = ctm; if (ctm > 0) val["conntrack.fill"] = ctc / ctm }
  for (i = 1; i <= nw; i++) { w = order[i]; if (w in val) printf "v\\t%s\\t%s\\n", w, num(val[w]); else printf "m\\t%s\\t%s\\n", w, near(w) }
  if (phase != "after") exit
  for (i = 1; i <= nw; i++) {
    w = order[i]; b = bv[w]; p = (w in pv) ? pv[w] : b; a = (w in val) ? num(val[w]) : "-"
    if (a == "-") { printf "r\\t%s\\t%s\\t%s\\t%s\\t-\\t%s\\t-\\texceeded\\n", w, cls[w], b, p, lim[w]; continue }
    if (cls[w] == "level") { ch = a - b; bad = (a + 0 > lim[w] + 0) }
    else { base = (p + 0 < b + 0) ? p : b; ch = (a + 0 < base + 0) ? a : a - base; bad = (ch > lim[w] + 0) }
    printf "r\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\n", w, cls[w], b, p, a, lim[w], num(ch), bad ? "exceeded" : "ok"
  }
}
`;
}

/** The engine's source lookup and extractor (provider/host/sh/counters.sh, loaded with the runtime). */
export function renderCountersSh(): string {
  // name patterns → the files they need (conntrack names need both of their files)
  const cases = new Map<string, string[]>();
  for (const src of COUNTER_SOURCES) {
    if (src.files.length === 0) continue;
    const pats = src.names.map((n) => (n.endsWith(".") ? `${n}*` : n)).join(" | ");
    cases.set(pats, [...(cases.get(pats) ?? []), ...src.files]);
  }
  const awk = renderAwk();
  if (awk.includes("'")) throw new Error("renderCountersSh: the awk program holds a single quote");
  const lines = [
    "# pulumi-net-tuning: where the verify gate's counters are read, and how (issue #34). Generated by scripts/gen-spec.ts",
    "# from provider/counters/sources.ts (npm run gen); do not edit.",
    "# nt_counter_files NAME: NT_CF = the files awk reads for NAME (space-separated; empty for ethtool.* names, whose",
    "# `ethtool -S` output the engine pipes in); 1 for a name of no source.",
    "nt_counter_files() {",
    '  case "$1" in',
  ];
  for (const [pats, files] of cases) lines.push(`    ${pats}) NT_CF='${files.join(" ")}' ;;`);
  lines.push("    ethtool.*) NT_CF='' ;;", "    *) return 1 ;;", "  esac", "}");
  lines.push("# The extractor (awk -v phase=before|post|after \"$NT_COUNTERS_AWK\" SPEC [BEFORE POST] FILES... [-]).");
  lines.push("# shellcheck disable=SC2016 # awk program text", `NT_COUNTERS_AWK='${awk}'`, "");
  return lines.join("\n");
}
