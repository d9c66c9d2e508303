/**
 * The bad-input catalogue (issue #8): every case names the resource, its args, where it must be refused
 * ("preview" = in the program, before any SSH session; "host" = in the host preflight, exit 2, nothing changed;
 * "apply" = the kernel refuses it mid-run and the run is rolled back) and what the message must contain:
 * the input (key / field / value) and the fix.
 */
import type { NetTuningArgs } from "../../components/netTuning";
import type { NicQueuesArgs } from "../../components/nicQueues";

export type Stage = "preview" | "host" | "apply";
type SysArgs = Omit<NetTuningArgs, "connection">;
type NicArgs = Omit<NicQueuesArgs, "connection">;

/** Shell commands run on the lab host (as root, without SSH) around one case: the host condition it needs. */
export interface HostSetup { why: string; apply: string; undo: string }
export interface SysCase { kind: "sysctl"; id: string; args: SysArgs; stage: Stage; expect: (string | RegExp)[]; hostSetup?: HostSetup }
export interface NicCase { kind: "nic"; id: string; args: NicArgs; stage: Stage; expect: (string | RegExp)[] }
export type BadCase = SysCase | NicCase;

const S = (id: string, stage: Stage, sysctls: Record<string, unknown>, expect: (string | RegExp)[], extra: Partial<SysArgs> = {}): SysCase => ({
  kind: "sysctl", id, stage, expect, args: { sysctls: sysctls as SysArgs["sysctls"], ...extra },
});
const N = (id: string, stage: Stage, args: Record<string, unknown>, expect: (string | RegExp)[]): NicCase => ({
  kind: "nic", id, stage, expect, args: { interface: "eth0", persistence: "none", ...args } as NicArgs,
});

const SOMAX = "net.core.somaxconn";
const RMEM = "net.ipv4.tcp_rmem";
const RANGE = "net.ipv4.ip_local_port_range";

/**
 * A real fix: "Fix: …", or an imperative clause that tells the user what to do ("use …", "remove it", "give a
 * value …", "keep one", "check the spelling", "pick an available one", "load module …", "add it to …", "set it on
 * the host", "connect as root"), starting a message, a clause (after ":", ";", ",", "(", "—") or an alternative
 * ("or …", "and …", "then …"). Stating the rule ("must be an integer", "only", "one of", "is not set", "e.g.") is not a fix.
 */
export const FIX =
  /\bFix: \S|(?:^|[:;,(—]\s*|\b(?:or|and|then)\s+)(?:use|remove|give|keep one|keep only|check the|check that|pick|choose|install|load|add|rename|move|order them|raise|lower|write|connect as|grant|pass|delete|drop|name|set (?:it|them|`|net\.|the )|run|re-?run|mount|free|wait|enable|disable|swap)\b/i;

/**
 * The problems of an error: its "  - …" items (a value with a newline continues its item on the next lines), or the
 * whole text when it has none.
 */
export function problems(error: string): string[] {
  const items: string[] = [];
  for (const line of error.split("\n")) {
    if (/^\s+- /.test(line)) items.push(line);
    else if (items.length > 0) items[items.length - 1] += "\n" + line;
  }
  return items.length > 0 ? items : [error];
}
/** The problem lines that name no fix. */
export function withoutFix(error: string): string[] {
  return problems(error).filter((l) => !FIX.test(l.replace(/^\s+- /, "")));
}

/**
 * Cases whose message states the rule or the refusal but names no fix (no "Fix:" and no imperative clause): known
 * gaps of the validators (provider/nic/validate.ts, bootOverride in provider/sysctl). The check is strict both ways: a
 * case listed here must still lack a
 * fix, so the entry has to go when its message gains one.
 */
export const MISSING_FIX = new Set([
  "bootOverride not an enum value",
  "interface with ;", "interface with $()", "interface with backticks", "interface with a newline", "interface with quotes",
  "interface ../", "interface ..", "interface empty", "interface oversize (16 chars)", "interface not a string",
  "rings.rx 0", "rings.rx above 1048576", "rings.rx a string", "rings.rx 'maximum'",
  "channels negative", "channels all zero", "channels fractional",
  "feature value a string", "coalesce negative usecs", "coalesce adaptive 'on' string",
  "txQueueLength 0", "txQueueLength -1 (iproute2 would store UINT_MAX)", "txQueueLength above 1000000",
  "rps cpus empty", "rps cpus twice", "rps cpus beyond 8191", "rps cpus a word", "rps cpus as a hex mask string",
  "rps flowEntriesPerQueue too big", "rps sockFlowEntries too big", "irqAffinity a word", "persistence unknown",
]);

export const SYSCTL_CASES: SysCase[] = [
  // --- the articles' wrong keys and values (DOMAIN.md §2)
  S("article: tcp_nodelay is a socket option", "preview", { "net.ipv4.tcp_nodelay": 1 }, ["net.ipv4.tcp_nodelay", /TCP_NODELAY/]),
  S("article: tcp_init_cwnd is a route attribute", "preview", { "net.ipv4.tcp_init_cwnd": 10 }, ["net.ipv4.tcp_init_cwnd", /initcwnd/]),
  S("article: tcp_cwnd_clamp does not exist", "preview", { "net.ipv4.tcp_cwnd_clamp": 100 }, ["net.ipv4.tcp_cwnd_clamp", /cwnd/]),
  S("article: tcp_notsent_lowat = 0 stalls sockets", "preview", { "net.ipv4.tcp_notsent_lowat": 0 }, ["net.ipv4.tcp_notsent_lowat", /\b0\b/]),
  S("article: tcp_tw_recycle was removed", "preview", { "net.ipv4.tcp_tw_recycle": 1 }, ["net.ipv4.tcp_tw_recycle", /4\.12|NAT/]),
  S("article: tcp_initrwnd is a route attribute", "preview", { "net.ipv4.tcp_initrwnd": 10 }, ["net.ipv4.tcp_initrwnd", /initrwnd/]),
  // --- out of range
  S("somaxconn negative", "preview", { [SOMAX]: -1 }, [SOMAX, "-1"]),
  S("somaxconn above INT_MAX", "preview", { [SOMAX]: 2147483648 }, [SOMAX, "2147483648", "2147483647"]),
  S("tcp_window_scaling = 2 (0/1 only)", "preview", { "net.ipv4.tcp_window_scaling": 2 }, ["net.ipv4.tcp_window_scaling", /\b2\b/]),
  S("tcp_tw_reuse = 3 (0-2)", "preview", { "net.ipv4.tcp_tw_reuse": 3 }, ["net.ipv4.tcp_tw_reuse", /\b3\b/]),
  S("tcp_keepalive_probes = 256 (0-255)", "preview", { "net.ipv4.tcp_keepalive_probes": 256 }, ["net.ipv4.tcp_keepalive_probes", "256"]),
  S("ip_local_port_range high above 65535", "preview", { [RANGE]: [1024, 70000] }, [RANGE, "70000"]),
  S("ip_local_port_range low 0", "preview", { [RANGE]: [0, 65535] }, [RANGE]),
  S("fs.file-max above LONG_MAX", "preview", { "fs.file-max": "9223372036854775808" }, ["fs.file-max", "9223372036854775808"]),
  S("vm.swappiness 201", "preview", { "vm.swappiness": 201 }, ["vm.swappiness", "201"]),
  // --- wrong type
  S("somaxconn fractional", "preview", { [SOMAX]: 1.5 }, [SOMAX, "1.5"]),
  S("somaxconn a word", "preview", { [SOMAX]: "lots" }, [SOMAX, "lots"]),
  S("somaxconn boolean", "preview", { [SOMAX]: true }, [SOMAX, "true"]),
  S("somaxconn object", "preview", { [SOMAX]: { v: 1 } }, [SOMAX]),
  S("somaxconn null", "preview", { [SOMAX]: null }, [SOMAX, "null"]),
  S("somaxconn NaN", "preview", { [SOMAX]: NaN }, [SOMAX, "NaN"]),
  S("somaxconn Infinity", "preview", { [SOMAX]: Infinity }, [SOMAX, "Infinity"]),
  S("tcp_rmem an array of strings with words", "preview", { [RMEM]: ["4096", "lots", "8M"] }, [RMEM]),
  S("congestion control a number", "preview", { "net.ipv4.tcp_congestion_control": 7 }, ["net.ipv4.tcp_congestion_control"]),
  S("default_qdisc upper case", "preview", { "net.core.default_qdisc": "FQ CoDel" }, ["net.core.default_qdisc"]),
  // --- multi-value order / arity
  S("tcp_rmem min > default > max", "preview", { [RMEM]: [16777216, 87380, 4096] }, [RMEM, /min|order|<=|≤/]),
  S("tcp_rmem default above max", "preview", { [RMEM]: [4096, 16777216, 87380] }, [RMEM]),
  S("tcp_rmem two values", "preview", { [RMEM]: [4096, 87380] }, [RMEM, /3|three/]),
  S("tcp_rmem four values as text", "preview", { [RMEM]: "4096 87380 16777216 1" }, [RMEM, /3|three/]),
  S("ip_local_port_range high < low", "preview", { [RANGE]: [65000, 1024] }, [RANGE]),
  S("tcp_mem fractional pages", "preview", { "net.ipv4.tcp_mem": [1.5, 2, 3] }, ["net.ipv4.tcp_mem"]),
  // --- empty and oversize
  S("no sysctls at all", "preview", {}, [/no sysctls/, /sysctls/]),
  S("empty value", "preview", { [SOMAX]: "" }, [SOMAX]),
  S("blank value", "preview", { [SOMAX]: "   " }, [SOMAX]),
  S("empty array", "preview", { [RMEM]: [] }, [RMEM]),
  S("oversize value (5000 digits)", "preview", { [SOMAX]: "1".repeat(5000) }, [SOMAX]),
  S("oversize key (300 characters)", "preview", { ["net.ipv4." + "a".repeat(300)]: 1 }, [/net\.ipv4\.a+/]),
  S("empty key", "preview", { "": 1 }, [/""|empty/i]),
  S("read-only key tcp_available_congestion_control", "preview", { "net.ipv4.tcp_available_congestion_control": "bbr" }, ["net.ipv4.tcp_available_congestion_control", /read-only/]),
  S("same key dotted and slashed", "preview", { [SOMAX]: 1024, "net/core/somaxconn": 2048 }, [SOMAX, /twice/]),
  // --- injection attempts in keys
  S("key with ;", "preview", { "net.core.somaxconn; touch /tmp/pwned": 1 }, [/net\.core\.somaxconn; touch \/tmp\/pwned/]),
  S("key with $()", "preview", { "net.core.$(touch /tmp/pwned)": 1 }, [/\$\(touch \/tmp\/pwned\)/]),
  S("key with backticks", "preview", { "net.core.`touch /tmp/pwned`": 1 }, [/`touch \/tmp\/pwned`/]),
  S("key with a newline", "preview", { "net.core.somaxconn\nkernel.panic": 1 }, [/somaxconn(\\n|\n)kernel\.panic/]),
  S("key with quotes", "preview", { "net.core.'somaxconn\"": 1 }, [/somaxconn/]),
  S("key with ../", "preview", { "../../etc/passwd": 1 }, [/\.\.\/\.\.\/etc\/passwd/]),
  S("key with spaces and =", "preview", { "net.core.somaxconn = 1\nkernel.panic": 1 }, [/somaxconn/]),
  // --- injection attempts in values
  S("value with ;", "preview", { [SOMAX]: "1024; touch /tmp/pwned" }, [SOMAX, "1024; touch /tmp/pwned"]),
  S("value with $()", "preview", { [SOMAX]: "$(touch /tmp/pwned)" }, [SOMAX, "$(touch /tmp/pwned)"]),
  S("value with backticks", "preview", { [SOMAX]: "`touch /tmp/pwned`" }, [SOMAX, "`touch /tmp/pwned`"]),
  S("value with a newline adding a key", "preview", { [SOMAX]: "1024\nnet.ipv4.ip_forward = 1" }, [SOMAX]),
  S("value with quotes", "preview", { "net.ipv4.tcp_congestion_control": "cubic' 'bbr" }, ["net.ipv4.tcp_congestion_control"]),
  S("congestion control name with ;", "preview", { "net.ipv4.tcp_congestion_control": "bbr;reboot" }, ["net.ipv4.tcp_congestion_control", "bbr;reboot"]),
  S("value with ../", "preview", { "net.core.default_qdisc": "../../etc/shadow" }, ["net.core.default_qdisc"]),
  // Uncatalogued keys keep their text: the kernel parses "010" as octal 8 and "0x10" as 16, so the host reports
  // "did not stick" mid-apply. Catalogued keys refuse a leading zero at preview; uncatalogued ones must too.
  S("uncatalogued key, leading-zero number (octal to the kernel)", "preview", { "net.ipv4.tcp_reordering": "010" }, ["net.ipv4.tcp_reordering", "010", /leading zero|octal/]),
  // --- file names
  S("fileName with ../", "preview", { [SOMAX]: 1024 }, ["fileName", "../evil.conf", /letters, digits/], { fileName: "../evil.conf" }),
  S("fileName with ;", "preview", { [SOMAX]: 1024 }, ["fileName", "a;touch b.conf"], { fileName: "a;touch b.conf" }),
  S("fileName with $()", "preview", { [SOMAX]: 1024 }, ["fileName", "$(id).conf"], { fileName: "$(id).conf" }),
  S("fileName with backticks", "preview", { [SOMAX]: 1024 }, ["fileName", "`id`.conf"], { fileName: "`id`.conf" }),
  S("fileName with a newline", "preview", { [SOMAX]: 1024 }, ["fileName", /90-a(\\n|\n)\.conf/], { fileName: "90-a\n.conf" }),
  S("fileName with quotes", "preview", { [SOMAX]: 1024 }, ["fileName", /90-'x"\.conf/], { fileName: "90-'x\".conf" }),
  S("fileName not ending in .conf", "preview", { [SOMAX]: 1024 }, ["fileName", "90-web.txt", ".conf"], { fileName: "90-web.txt" }),
  S("fileName oversize", "preview", { [SOMAX]: 1024 }, ["fileName", /100 characters/], { fileName: "9".repeat(200) + ".conf" }),
  S("fileName empty", "preview", { [SOMAX]: 1024 }, ["fileName"], { fileName: "" }),
  S("fileName hidden (.conf)", "preview", { [SOMAX]: 1024 }, ["fileName", ".conf"], { fileName: ".conf" }),
  S("bootOverride not an enum value", "preview", { [SOMAX]: 1024 }, ["bootOverride", "sometimes", /"error", "warn", "ignore"/], { bootOverride: "sometimes" as never }),
  // --- found only on the host (preflight: exit 2, nothing changed)
  S("unknown well-formed key", "host", { "net.ipv4.tcp_nosuch_knob": 1 }, ["net.ipv4.tcp_nosuch_knob", /do not exist on this kernel/, /check the spelling/]),
  S("host-wide key inside a netns", "host", { "net.core.netdev_max_backlog": 250000 }, ["net.core.netdev_max_backlog", /host-wide/]),
  S("read-only key inside a netns (rmem_max)", "host", { "net.core.rmem_max": 268435456 }, ["net.core.rmem_max", /read-only/, /set it on the host/]),
  S("congestion control not available", "host", { "net.ipv4.tcp_congestion_control": "nosuchcc" }, ["net.ipv4.tcp_congestion_control", "nosuchcc", /not available|could not be loaded/, /load module|pick an available|install it/]),
  // Inside a network namespace the kernel refuses (EPERM) an algorithm missing from tcp_allowed_congestion_control
  // (DOMAIN.md §3). Which algorithms a kernel allows depends on its default (this machine: "reno bbr", a stock kernel:
  // "reno cubic"), so the case sets the list itself: the lab host's tcp_allowed_congestion_control reads "reno" (reno
  // is always allowed), and cubic (built into every distribution kernel; checked) is available but not allowed.
  {
    ...S("congestion control available but not allowed in this netns", "host", { "net.ipv4.tcp_congestion_control": "cubic" }, ["net.ipv4.tcp_congestion_control", "cubic", "tcp_allowed_congestion_control: reno)"]),
    hostSetup: {
      why: "allowed list = reno, independent of the kernel's default",
      apply: "grep -qw cubic /proc/sys/net/ipv4/tcp_available_congestion_control || { echo 'cubic is not available on this kernel' >&2; exit 1; }; " +
        "printf 'reno\\n' > /run/nt-allowed-cc && mount --bind /run/nt-allowed-cc /proc/sys/net/ipv4/tcp_allowed_congestion_control",
      undo: "umount /proc/sys/net/ipv4/tcp_allowed_congestion_control && rm -f /run/nt-allowed-cc",
    },
  },
  // --- only the kernel knows (checked mid-apply; rolled back)
  S("tcp_ecn_fallback = 7 (kernel range 0-1)", "apply", { [SOMAX]: 1111, "net.ipv4.tcp_ecn_fallback": 7 }, ["net.ipv4.tcp_ecn_fallback", "'7'", /Invalid argument/, /rolled back/]),
  // The preview warning promises "the host preflight checks the live value" of ip_unprivileged_port_start: it must.
  S("ip_local_port_range below ip_unprivileged_port_start", "host", { [RANGE]: [80, 60001] }, [RANGE, /80/, "ip_unprivileged_port_start"]),
];

export const NIC_CASES: NicCase[] = [
  // --- interface names: injection and shape
  N("interface with ;", "preview", { interface: "eth0;reboot", txQueueLength: 2000 }, ["interface", "eth0;reboot", /not a valid Linux interface name/]),
  N("interface with $()", "preview", { interface: "$(reboot)", txQueueLength: 2000 }, ["interface", "$(reboot)"]),
  N("interface with backticks", "preview", { interface: "`reboot`", txQueueLength: 2000 }, ["interface", "`reboot`"]),
  N("interface with a newline", "preview", { interface: "eth0\neth1", txQueueLength: 2000 }, ["interface"]),
  N("interface with quotes", "preview", { interface: "eth'0\"", txQueueLength: 2000 }, ["interface", "eth'0\""]),
  N("interface ../", "preview", { interface: "../../etc", txQueueLength: 2000 }, ["interface", "../../etc", /no "\/"/]),
  N("interface ..", "preview", { interface: "..", txQueueLength: 2000 }, ["interface", '".."']),
  N("interface empty", "preview", { interface: "", txQueueLength: 2000 }, ["interface", /1-15 characters/]),
  N("interface oversize (16 chars)", "preview", { interface: "eth0123456789abc", txQueueLength: 2000 }, ["interface", "eth0123456789abc", /1-15 characters/]),
  N("interface not a string", "preview", { interface: 0, txQueueLength: 2000 }, ["interface", /string/]),
  // --- rings / channels
  N("rings.rx 0", "preview", { rings: { rx: 0 } }, ["rings.rx", /1 to 1048576/]),
  N("rings.rx above 1048576", "preview", { rings: { rx: 2000000 } }, ["rings.rx", /1048576/]),
  N("rings.rx a string", "preview", { rings: { rx: "4096" } }, ["rings.rx", /"max"/]),
  N("rings.rx 'maximum'", "preview", { rings: { rx: "maximum" } }, ["rings.rx", /"max"/]),
  N("rings unknown field", "preview", { rings: { rxx: 4096 } }, ["rings", '"rxx"', /spelling/]),
  N("channels negative", "preview", { channels: { rx: -1 } }, ["channels.rx", /0 to 4096/]),
  N("channels all zero", "preview", { channels: { rx: 0, tx: 0 } }, ["channels", /every count is 0/]),
  N("channels fractional", "preview", { channels: { combined: 2.5 } }, ["channels.combined", /integer/]),
  // --- features
  N("feature name with ;", "preview", { features: { "gro;reboot": true } }, ["features.gro;reboot", /not a feature name/]),
  N("feature name with $()", "preview", { features: { "$(reboot)": true } }, [/features\.\$\(reboot\)/, /ethtool -K short name/]),
  N("feature name with a newline", "preview", { features: { "gro\ntso": true } }, [/features\.gro/, /not a feature name/]),
  N("feature value a string", "preview", { features: { gro: "on" } }, ["features.gro", /true \(on\) or false \(off\)/]),
  N("feature alias twice with different values", "preview", { features: { gro: true, "rx-gro": false } }, ["features", /same feature/, /keep one/]),
  // --- coalesce
  N("coalesce negative usecs", "preview", { coalesce: { rxUsecs: -1 } }, ["coalesce.rxUsecs", /0 to 4294967295/]),
  N("coalesce unknown parameter", "preview", { coalesce: { rxUsec: 8 } }, ["coalesce", '"rxUsec"']),
  N("coalesce adaptive 'on' string", "preview", { coalesce: { adaptiveRx: "on" } }, ["coalesce.adaptiveRx", /true \(on\) or false \(off\)/]),
  // --- txqueuelen
  N("txQueueLength 0", "preview", { txQueueLength: 0 }, ["txQueueLength", /1 to 1000000/]),
  N("txQueueLength -1 (iproute2 would store UINT_MAX)", "preview", { txQueueLength: -1 }, ["txQueueLength", /1 to 1000000/]),
  N("txQueueLength above 1000000", "preview", { txQueueLength: 1000001 }, ["txQueueLength", /1 to 1000000/]),
  // --- rps / irq / persistence
  N("rps cpus empty", "preview", { rps: { cpus: [] } }, ["rps.cpus", /at least one CPU/]),
  N("rps cpus twice", "preview", { rps: { cpus: [0, 0] } }, ["rps.cpus", /twice/]),
  N("rps cpus beyond 8191", "preview", { rps: { cpus: [9000] } }, ["rps.cpus", /0 to 8191/]),
  N("rps cpus a word", "preview", { rps: { cpus: "some" } }, ["rps.cpus", /"all" or a list of CPU numbers/]),
  N("rps cpus as a hex mask string", "preview", { rps: { cpus: "ffffffff" } }, ["rps.cpus", /"all" or a list of CPU numbers/]),
  N("rps flowEntriesPerQueue too big", "preview", { rps: { cpus: "all", flowEntriesPerQueue: 2000000 } }, ["rps.flowEntriesPerQueue", /1048576/]),
  N("rps sockFlowEntries too big", "preview", { rps: { cpus: "all", sockFlowEntries: 536870913 } }, ["rps.sockFlowEntries", /536870912/]),
  N("irqAffinity a word", "preview", { irqAffinity: { cpus: "everything" } }, ["irqAffinity.cpus", /"spread"/]),
  N("persistence unknown", "preview", { persistence: "cron", txQueueLength: 2000 }, ["persistence", /"systemd", "rc.local", "none" or "auto"/]),
  N("nothing to set", "preview", {}, [/nothing to set/, /preset/]),
  // --- found only on the host (driver / host limits)
  N("rings on veth (no rings)", "host", { rings: { rx: 4096 } }, ["rings", /does not support ring parameters/, /Operation not supported/, /remove rings/]),
  N("rings 'max' on veth", "host", { rings: { tx: "max" } }, ["rings", /does not support ring parameters/, /remove rings/]),
  N("coalesce on veth", "host", { coalesce: { rxUsecs: 8 } }, ["coalesce", /not supported by eth0/, /remove coalesce/]),
  N("channels above the driver maximum", "host", { channels: { rx: 8 } }, ["channels.rx", "8", /maximum 4/, /use at most 4/]),
  N("combined channels on veth (n/a)", "host", { channels: { combined: 2 } }, ["channels.combined", /not supported/, /remove it/]),
  N("rps CPUs beyond the host", "host", { rps: { cpus: [0, 64] } }, ["rps.cpus", /64/, /possible CPUs: 0-1/]),
  N("irqAffinity CPUs beyond the host", "host", { irqAffinity: { cpus: [0, 64] } }, ["irqAffinity", /64|no IRQs/]),
  N("unknown feature", "host", { features: { "rx-nosuch": true } }, ["rx-nosuch", /does not exist on eth0/, /check the name/]),
  N("[fixed] feature", "host", { features: { lro: true } }, ["large-receive-offload", /\[fixed\]/, /remove it/]),
  N("interface that does not exist", "host", { interface: "eth9", txQueueLength: 2000 }, ["eth9", /does not exist/, /check the name/]),
  N("sockFlowEntries inside a netns", "host", { rps: { cpus: "all", sockFlowEntries: 32768 } }, ["rps.sockFlowEntries", /host-wide/]),
];

export const ALL_CASES: BadCase[] = [...SYSCTL_CASES, ...NIC_CASES];

/** The catalogue's split as tests/reliability/README.md states it (checked against the README by bad-input.test.ts). */
export function caseSummary(): string {
  const at = (stage: Stage) => ALL_CASES.filter((c) => c.stage === stage).length;
  return `${ALL_CASES.length} cases (${SYSCTL_CASES.length} NetTuning + ${NIC_CASES.length} NicQueues: ${at("preview")} refused at preview, ` +
    `${at("host")} in the host preflight, ${at("apply")} by the kernel mid-apply)`;
}
