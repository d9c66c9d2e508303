/**
 * The one home of the small helpers every lifecycle test uses: key → /proc/sys path, read/write a sysctl, run sh on a
 * test host, `ok()`, the NetTuning / NicQueues programs for the harness, and the host snapshot. Works on lab hosts
 * (`testkit/lab`, run without SSH through `exec`) and on the VM (`testkit/vm`, run over SSH as root).
 */
import { spawnSync } from "child_process";
import { NetTuning, NetTuningArgs } from "../components/netTuning";
import { NicQueues, NicQueuesArgs } from "../components/nicQueues";
import { keyToPath } from "../provider/sysctl/validate";
import type { UpResult } from "./harness";
import type { LabHost, RunResult } from "./lab";
import type { VmHost } from "./vm";

export type { Who } from "./lab";

/** A host a test runs root commands on: a lab host (`exec`, inside its namespaces) or the VM guest (`ssh` as root). */
export type TestHost = LabHost | VmHost;

function isLab(host: TestHost): host is LabHost {
  return "netns" in host;
}
function nameOf(host: TestHost): string {
  return isLab(host) ? host.name : `the VM (port ${host.port})`;
}

/** Runs a sh command as root on the host; resolves with its exit code and output (never throws on a non-zero exit). */
export function run(host: TestHost, cmd: string, opts: { stdin?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return isLab(host) ? host.exec(cmd, opts) : host.ssh(cmd, opts);
}

/** Runs a sh command as root on the host and returns its stdout; throws with the exit code and stderr on failure. */
export async function sh(host: TestHost, cmd: string, timeoutMs = 30_000): Promise<string> {
  const r = await run(host, cmd, { timeoutMs });
  if (r.code !== 0) throw new Error(`${cmd} failed on ${nameOf(host)} (exit ${r.code}): ${r.stderr}`);
  return r.stdout;
}

/**
 * The file of a sysctl under /proc/sys, with the provider's own key → path mapping (provider/sysctl/validate.ts):
 * dots separate components except a "/" in the dotted form, which stands for a dot inside a component (an
 * interface name): `net.ipv4.conf.eth0/100.rp_filter` → `/proc/sys/net/ipv4/conf/eth0.100/rp_filter`, the slash
 * form `net/ipv4/conf/eth0.100/rp_filter` → the same path (sysctl(8)'s rules).
 */
export function procPath(key: string): string {
  return "/proc/sys/" + keyToPath(key);
}

/** The value of a sysctl on the host as the kernel reads it back, whitespace collapsed to single spaces. */
export async function readSysctl(host: TestHost, key: string): Promise<string> {
  const r = await run(host, `cat '${procPath(key)}'`);
  if (r.code !== 0) throw new Error(`cannot read ${key} on ${nameOf(host)}: ${r.stderr}`);
  return r.stdout.trim().split(/\s+/).join(" ");
}

/** Writes a value straight into /proc/sys (what a boot, an operator or another tool would do behind our back). */
/** Short name used by lifecycle tests. */
export const sysctl = readSysctl;

export async function writeSysctl(host: TestHost, key: string, value: string | number): Promise<void> {
  await sh(host, `printf '%s\\n' '${String(value)}' > '${procPath(key)}'`);
}

/** A file's content on the host, or undefined when it cannot be read. */
export async function fileOn(host: TestHost, path: string): Promise<string | undefined> {
  const r = await run(host, `cat '${path}'`);
  return r.code === 0 ? r.stdout : undefined;
}

/** The result of a harness operation that must have succeeded (throws with the provider's error text). */
export function ok(r: UpResult, what = "operation"): UpResult {
  if (!r.ok) throw new Error(`${what} failed:\n${r.error}`);
  return r;
}

/**
 * What the command substitution `"$(pulumi stack --show-urns|grep …)"` of a recovery message (provider/host/programs.ts
 * urnLookup, runtime.sh's refusal of an update without its journal) prints for `urns` (the stack's): the message's own
 * command, run by sh with `pulumi stack --show-urns` answering as the CLI lists URNs ("    │  URN: <urn>" lines).
 */
export function lookedUpUrn(message: string, urns: string[]): string {
  const m = /"\$\((pulumi stack --show-urns\|grep -o '[^']*')\)"/.exec(message);
  if (!m) throw new Error(`no URN look-up in: ${message}`);
  const listing = urns.map((u) => `    │  URN: ${u}\n`).join("");
  const r = spawnSync("sh", ["-c", `pulumi() { printf '%s' "$L"; }; ${m[1]}`], { env: { PATH: process.env.PATH, L: listing }, encoding: "utf8" });
  return r.stdout.trim();
}

type Connection = { host: string; port: number; user: string; privateKey: string };
/** Anything with lab/VM-style connections: `connection(who)` in @pulumi/command's shape, and its NIC name(s). */
interface Target<W extends string> {
  connection(who?: W): Connection;
  iface: string | { e1000e: string };
}

export type SysArgs = Omit<NetTuningArgs, "connection">;
/** NicQueues args without `connection`; `interface` defaults to the host's test NIC (lab: eth0, VM: the e1000e). */
export type NicArgs = Omit<NicQueuesArgs, "connection" | "interface"> & { interface?: NicQueuesArgs["interface"] };

/** A harness program with one NetTuning on the host as `who` (default root); every output of the component. */
export function sysProgram<W extends string>(host: Target<W>, name: string, args: SysArgs, who?: W) {
  return () => {
    const t = new NetTuning(name, { connection: host.connection(who), ...args });
    return { applied: t.applied, previous: t.previous, filePath: t.filePath, warnings: t.warnings, fileContent: t.fileContent };
  };
}

/** A harness program with one NicQueues on the host as `who` (default root); every output of the component. */
export function nicProgram<W extends string>(host: Target<W>, name: string, args: NicArgs, who?: W) {
  return () => {
    const iface = typeof host.iface === "string" ? host.iface : host.iface.e1000e;
    const n = new NicQueues(name, { connection: host.connection(who), ...args, interface: args.interface ?? iface });
    return { applied: n.applied, previous: n.previous, persistedAs: n.persistedAs, warnings: n.warnings };
  };
}

/**
 * Everything a NetTuning or NicQueues run may touch, as text, so that "the host is byte-identical" is one comparison:
 * - every readable value under /proc/sys/net (minus counters that move by themselves);
 * - the NIC: tx_queue_len and RPS settings under /sys/class/net/<iface>, the affinity of its IRQs, and `ethtool -k/-l/-g/-c` (features,
 *   channels, rings, coalescing). A NIC without rings or coalescing (a veth) answers "Operation not supported":
 *   the snapshot holds that answer and the exit code, so it stays comparable and still catches a change;
 * - every entry of /etc: path, type, mode and owner:group; for files and links also link target, size, mtime and a
 *   content hash of every regular file (a directory's size and mtime change whenever an entry comes and goes, so
 *   they are left out: its entries are listed), except the lab's fault-injection hook file, which tests create;
 * - /usr/local and /var/lib (files: path, mode, owner, link target, size, mtime; content hashes for this project's
 *   files); /var/lib/dpkg, /var/lib/apt and /var/lib/ucf are left out: the lab's copy-on-write root shares them with
 *   the machine, whose package manager may change them at any time; so is /var/lib/systemd/timers, the stamps systemd
 *   writes when a timer elapses (a VM guest's daily dpkg-db-backup.timer fired at midnight during a test).
 */
/** The lab's fault-injection hook file (read only by the lab's build of the engine, testkit/lab-engine.sh): tests create it. */
const TEST_HOOKS = "/etc/pulumi-net-tuning-test-hooks";

/**
 * Where the engine is delivered: CopyToRemote's staged copies and the installed engine. A create refused by the host
 * leaves them (the copy ran first and Pulumi keeps it in state; docs/operations.md "Rollback"), so by default a snapshot leaves
 * them out; `{ delivery: true }` includes them (tests/engine checks that a destroy removes them).
 */
const DELIVERY = ["/usr/local/lib/pulumi-net-tuning", "/var/lib/pulumi-net-tuning/incoming"];

/** What `snapshot` needs: a lab host, or a VM guest adapted with `{ name, iface, exec: (c, o) => vm.ssh(c, o) }`. */
export type SnapshotHost = Pick<LabHost, "name" | "iface" | "exec">;

export async function snapshot(host: SnapshotHost, opts: { delivery?: boolean } = {}): Promise<string> {
  const i = host.iface;
  const prune = opts.delivery ? "" : DELIVERY.map((d) => `-path ${d} -prune -o `).join("");
  const script = `
    grep -r . /proc/sys/net 2>/dev/null | grep -v -e '_count:' -e '/nf_conntrack_buckets:' -e '/stable_secret:' | LC_ALL=C sort
    grep -r . /sys/class/net/${i}/tx_queue_len /sys/class/net/${i}/queues/*/rps_cpus /sys/class/net/${i}/queues/*/rps_flow_cnt 2>/dev/null | LC_ALL=C sort
    for o in -k -l -g -c; do echo "ethtool $o ${i}:"; ethtool $o ${i} 2>&1; echo "exit $?"; done
    for n in $(awk -v i="${i}" '$NF == i || index($NF, i "-") == 1 { sub(":", "", $1); print $1 }' /proc/interrupts); do echo "irq $n $(cat /proc/irq/$n/smp_affinity_list)"; done
    { find /etc -path ${TEST_HOOKS} -prune -o \\( -type f -o -type l \\) -printf '%p %y %m %U:%G %l %s %T@\\n'; find /etc -type d -printf '%p %y %m %U:%G\\n'; } | LC_ALL=C sort
    find /etc -path ${TEST_HOOKS} -prune -o -type f -exec md5sum {} + | LC_ALL=C sort
    find /usr/local /var/lib ${prune}\\( -path /var/lib/dpkg -o -path /var/lib/apt -o -path /var/lib/ucf -o -path /var/lib/systemd/timers \\) -prune -o \\( -type f -o -type l \\) -printf '%p %m %U:%G %l %s %T@\\n' | LC_ALL=C sort
    for d in /usr/local/libexec /var/lib/pulumi-net-tuning; do
      [ -e "$d" ] && find "$d" ${prune}-type f -exec md5sum {} +
    done | LC_ALL=C sort
    true`;
  const r = await host.exec(script, { timeoutMs: 60000 });
  if (r.code !== 0) throw new Error(`snapshot of ${host.name} failed: ${r.stderr}`);
  return r.stdout;
}
