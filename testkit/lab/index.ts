/**
 * The lab: real SSH test hosts on this machine. Each host is a network namespace (`ntlab-<labid>-<n>`)
 * linked to the machine by a veth pair (machine side `nt<key>h<n>`, host side `eth0`, 4 rx/tx queues),
 * with its own pid/mount/UTS namespaces, a private copy-on-write root filesystem and its own OpenSSH
 * sshd running Debian's default /etc/ssh/sshd_config. See testkit/lab/README.md for what is isolated.
 *
 * Needs root, iproute2, util-linux (unshare, nsenter, setpriv), openssh-server/-client, overlayfs.
 */
import { spawn, spawnSync } from "child_process";
import type { ChildProcess } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as net from "net";
import * as os from "os";
import * as path from "path";

export interface LabUser {
  user: string;
  /** OpenSSH private key text */
  privateKey: string;
  keyPath: string;
}

export type Who = "root" | "sudo" | "plain";

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface LabHost {
  name: string;
  netns: string;
  address: string;
  port: number;
  iface: string;
  root: LabUser;
  sudoUser: LabUser;
  plainUser: LabUser;
  /** the pid whose namespaces {@link LabHost.exec} enters (for a test's own child process: `nsenter -t PID -n -m -u -p`) */
  pid: number;
  /** connection args in @pulumi/command's shape for one of the users (default root) */
  connection(who?: Who): { host: string; port: number; user: string; privateKey: string };
  /** run a sh command as root inside the host's network + mount (+ pid, UTS) namespaces, without SSH */
  exec(cmd: string, opts?: { stdin?: string; timeoutMs?: number }): Promise<RunResult>;
  /** run a command over real SSH (openssh client) as a user (default root) */
  ssh(cmd: string, opts?: { who?: Who; stdin?: string; timeoutMs?: number }): Promise<RunResult>;
  /**
   * What a reboot does to this host, as far as a network namespace can have one: every /proc/sys/net value and the
   * NIC's settings back to their values when the host started, /run emptied (sshd's own files kept, so sessions survive), then the
   * boot's sysctl loading (see {@link BOOT_SYSCTL}), then /etc/rc.local when it is executable (systemd's
   * rc-local.service). The NIC's channels, txqueuelen, features and RPS go back to their values at start. Files under
   * /etc, /usr, /var are kept, as on a disk. No systemd runs in a lab host: units are not started (the VM tier has them).
   * Resolves with the boot's log of refused keys (host-wide keys are read-only or absent in a namespace).
   */
  reboot(): Promise<string>;
}

/**
 * The boot's sysctl loading on a lab host: `sysctl --system` of procps, i.e. every `*.conf` of /etc/sysctl.d,
 * /run/sysctl.d, /usr/local/lib/sysctl.d, /usr/lib/sysctl.d, /lib/sysctl.d (a name in an earlier directory masks
 * the same name in a later one; all files applied in file-name order), then /etc/sysctl.conf. Lines refused only
 * because a key is host-wide (read-only file system, absent, or read-only in a namespace) are tolerated and
 * returned as the boot log; any other refusal (e.g. "Invalid argument") makes the boot fail.
 */
export const BOOT_SYSCTL = `out=$(sysctl --system 2>&1 >/dev/null); rc=$?
bad=$(printf '%s\n' "$out" | grep . | grep -v -e 'Read-only file system' -e 'No such file or directory' -e 'cannot stat' -e 'permission denied on key')
printf '%s\n' "$out"
[ -z "$bad" ] || { printf 'boot: sysctl --system refused (exit %s):\n%s\n' "$rc" "$bad" >&2; exit 1; }`;

/** Every readable /proc/sys/net value as "path:value" lines (what the host's kernel had at boot). */
const READ_NET_SYSCTLS = "grep -r . /proc/sys/net 2>/dev/null | grep -v -e '_count:' -e '/stable_secret:' | LC_ALL=C sort";

/** Writes back every /proc/sys/net value that differs from the boot record on stdin ("path:value" lines). */
const RESET_NET_SYSCTLS = `rc=0
${READ_NET_SYSCTLS} > /tmp/.ntlab-now
LC_ALL=C sort - | LC_ALL=C comm -23 - /tmp/.ntlab-now | while IFS= read -r l; do
  p=\${l%%:*}; v=\${l#*:}
  [ -e "$p" ] || continue
  case $(stat -L -c %A "$p") in ??w*) ;; *) continue ;; esac
  printf '%s\n' "$v" > "$p" || { echo "reboot: cannot reset $p to $v" >&2; exit 1; }
done || rc=1
rm -f /tmp/.ntlab-now
exit $rc`;

/** The NIC's settings a boot resets, as lines: "channels RX TX", "txqueuelen N", "feature NAME on|off" (not [fixed]), "rps QUEUE CPUS FLOWS". */
const READ_NIC = `i=eth0
printf 'channels %s\\n' "$(ethtool -l "$i" | sed -n '/^Current/,$p' | awk '$1 == "RX:" { rx = $2 } $1 == "TX:" { tx = $2 } END { print rx, tx }')"
printf 'txqueuelen %s\\n' "$(cat /sys/class/net/$i/tx_queue_len)"
ethtool -k "$i" | awk -F': ' 'NR > 1 && $2 !~ /fixed/ { sub(/^[ \\t]+/, "", $1); split($2, w, " "); print "feature", $1, w[1] }' | LC_ALL=C sort
for q in /sys/class/net/$i/queues/rx-*; do printf 'rps %s %s %s\\n' "\${q##*/}" "$(cat "$q/rps_cpus")" "$(cat "$q/rps_flow_cnt")"; done`;

/** Puts the NIC back to the boot record on stdin (READ_NIC's lines): channels, txqueuelen, features, then RPS. */
const RESET_NIC = `i=eth0; rc=0; rec=$(cat)
now=$(
${READ_NIC}
)
want() { printf '%s\\n' "$rec" | grep "^$1 "; }
have() { printf '%s\\n' "$now" | grep "^$1 "; }
if [ "$(want channels)" != "$(have channels)" ]; then set -- $(want channels); ethtool -L "$i" rx "$2" tx "$3" || rc=1; fi
if [ "$(want txqueuelen)" != "$(have txqueuelen)" ]; then set -- $(want txqueuelen); ip link set dev "$i" txqueuelen "$2" || rc=1; fi
want feature | LC_ALL=C sort > /tmp/.ntlab-want
have feature | LC_ALL=C sort > /tmp/.ntlab-have
args=$(LC_ALL=C comm -23 /tmp/.ntlab-want /tmp/.ntlab-have | awk '{ printf " %s %s", $2, $3 }')
rm -f /tmp/.ntlab-want /tmp/.ntlab-have
if [ -n "$args" ]; then ethtool -K "$i" $args || rc=1; fi
want rps | while read -r _ q cpus flows; do
  d=/sys/class/net/$i/queues/$q
  [ -d "$d" ] || continue
  [ "$(cat "$d/rps_cpus")" = "$cpus" ] || printf '%s\\n' "$cpus" > "$d/rps_cpus" || exit 1
  [ "$(cat "$d/rps_flow_cnt")" = "$flows" ] || printf '%s\\n' "$flows" > "$d/rps_flow_cnt" || exit 1
done || rc=1
[ "$rc" = 0 ] || echo "reboot: cannot reset $i to its boot settings" >&2
exit $rc`;

/** What systemd's rc-local.service does at boot: runs /etc/rc.local when it is executable. */
const RUN_RC_LOCAL = "if [ -x /etc/rc.local ]; then /etc/rc.local start; fi";

/** Empties /run as a boot would, keeping only what the running sshd needs (its privsep dir and pid file). */
const WIPE_RUN = "find /run -mindepth 1 -maxdepth 1 ! -name sshd ! -name sshd.pid -exec rm -rf {} + && mkdir -p /run/lock /run/sysctl.d && chmod 1777 /run/lock";

export interface Lab {
  id: string;
  hosts: LabHost[];
  stop(): Promise<void>;
  /** start-up time per host in ms (netns + veth + mounts + users + sshd accepting TCP) */
  startupMs: number[];
}

/** Where lab state lives on the machine: /run/ntlab/<labid>/ (lab.json with the owner pid, keys/, h<n>/). */
export const STATE_ROOT = "/run/ntlab";
const SLOTS_DIR = path.join(STATE_ROOT, ".slots");
const INIT_SCRIPT = path.join(__dirname, "host-init.sh");
export const NETNS_PREFIX = "ntlab-";
/** 198.18.0.0/15 split into 128 slots of 1024 addresses; a lab takes one slot, a host one /30 in it. */
const NET_BASE = ipToInt("198.18.0.0");
const SLOT_ADDRS = 1024;
const SLOT_COUNT = 128;
export const MAX_HOSTS = SLOT_ADDRS / 4;
const QUEUES = 4;
const SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const USERS: Record<Who, string> = { root: "root", sudo: "ntsudo", plain: "ntplain" };

interface LabState {
  id: string;
  key: string;
  ownerPid: number;
  ownerStart: string;
  createdAt: string;
  slot: number;
}

// ---------------------------------------------------------------------------------------------- utils

function ipToInt(ip: string): number {
  return ip.split(".").reduce((a, o) => a * 256 + Number(o), 0);
}
function intToIp(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join(".");
}
function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Start time (clock ticks since boot) of a pid, or undefined when the pid does not exist. */
/** A process's start time (clock ticks since boot, field 22 of /proc/PID/stat): with the pid, it names one process. */
export function procStart(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}
function procPpid(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

/** Run a program; resolves with its exit code (128+signal when killed); rejects on timeout. */
function run(
  file: string,
  args: string[],
  opts: { stdin?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv; what?: string } = {},
): Promise<RunResult> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    // own process group, so a timeout kills the whole tree (nsenter forks once more for the pid namespace)
    const child = spawn(file, args, { env: opts.env ?? process.env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* already gone */
      }
    }, timeoutMs);
    child.stdout!.on("data", (d: Buffer) => out.push(d));
    child.stderr!.on("data", (d: Buffer) => err.push(d));
    child.stdin!.on("error", () => undefined); // EPIPE when the command does not read its stdin
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const res: RunResult = {
        code: code ?? 128 + (signal ? os.constants.signals[signal] : 0),
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      };
      if (timedOut) {
        const e = new Error(`${opts.what ?? file} timed out after ${timeoutMs} ms\nstdout: ${res.stdout}\nstderr: ${res.stderr}`);
        reject(Object.assign(e, { result: res }));
      } else resolve(res);
    });
    child.stdin!.end(opts.stdin ?? "");
  });
}

async function sh(script: string, timeoutMs = 60_000): Promise<RunResult> {
  return run("/bin/sh", ["-c", script], { timeoutMs, env: { PATH: SAFE_PATH, LANG: "C" } });
}
async function shOk(script: string, what: string, timeoutMs = 60_000): Promise<string> {
  const r = await sh(script, timeoutMs);
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: unknown;
  const worker = async () => {
    while (next < items.length && failure === undefined) {
      const item = items[next++];
      try {
        await fn(item);
      } catch (e) {
        failure ??= e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure !== undefined) throw failure;
}

// ------------------------------------------------------------------------------------------- teardown

/** A POSIX sh script that kills every process in the given namespaces, deletes veths and namespaces. */
function teardownScript(netnses: string[], veths: string[]): string {
  const nsList = netnses.map(shq).join(" ");
  const vList = veths.map(shq).join(" ");
  return `
for ns in ${nsList}; do
  i=0
  while [ $i -lt 50 ]; do
    pids=$(ip netns pids "$ns" 2>/dev/null) || break
    [ -n "$pids" ] || break
    kill -9 $pids 2>/dev/null
    i=$((i + 1)); sleep 0.1
  done
done
for v in ${vList}; do ip link del "$v" 2>/dev/null; done
for ns in ${nsList}; do ip netns del "$ns" 2>/dev/null; done
for v in ${vList}; do
  i=0; while [ -e "/sys/class/net/$v" ] && [ $i -lt 50 ]; do i=$((i + 1)); sleep 0.1; done
done
true
`;
}

function labNetnses(id: string): string[] {
  let names: string[] = [];
  try {
    names = fs.readdirSync("/run/netns");
  } catch {
    /* no namespaces */
  }
  return names.filter((n) => n.startsWith(`${NETNS_PREFIX}${id}-`) && /^\d+$/.test(n.slice(NETNS_PREFIX.length + id.length + 1)));
}
function labVeths(key: string): string[] {
  let names: string[] = [];
  try {
    names = fs.readdirSync("/sys/class/net");
  } catch {
    /* none */
  }
  return names.filter((n) => new RegExp(`^nt${key}h\\d+$`).test(n));
}
/** Mount points on the machine that contain the lab dir (normally none: all host mounts are namespaced). */
function labMounts(dir: string): string[] {
  let info = "";
  try {
    info = fs.readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return [];
  }
  return info
    .split("\n")
    .map((l) => l.split(" ")[4])
    .filter((m): m is string => !!m && (m === dir || m.startsWith(dir + "/")))
    .reverse();
}
function removeSlots(id: string): string[] {
  const removed: string[] = [];
  let slots: string[] = [];
  try {
    slots = fs.readdirSync(SLOTS_DIR);
  } catch {
    return removed;
  }
  for (const s of slots) {
    try {
      if (fs.readlinkSync(path.join(SLOTS_DIR, s)) === id) {
        fs.unlinkSync(path.join(SLOTS_DIR, s));
        removed.push(`slot ${s}`);
      }
    } catch {
      /* raced */
    }
  }
  return removed;
}

interface RecordedPid {
  pid: number;
  start: string;
}
/** Pids recorded in <lab>/h<n>/<file> ("pid starttime"); with `withStart`, entries as {pid,start} objects. */
function recordedPids(id: string, file: string): number[];
function recordedPids(id: string, file: string, withStart: true): RecordedPid[];
function recordedPids(id: string, file: string, withStart = false): (number | RecordedPid)[] {
  const dir = path.join(STATE_ROOT, id);
  const out: RecordedPid[] = [];
  let hosts: string[] = [];
  try {
    hosts = fs.readdirSync(dir).filter((d) => /^h\d+$/.test(d));
  } catch {
    return [];
  }
  for (const h of hosts) {
    try {
      const [pid, start] = fs.readFileSync(path.join(dir, h, file), "utf8").trim().split(" ");
      // only a process that is still the one we started (same start time), never a reused pid
      if (Number(pid) > 1 && start && procStart(Number(pid)) === start) out.push({ pid: Number(pid), start });
    } catch {
      /* not written */
    }
  }
  return withStart ? out : out.map((p) => p.pid);
}
function stillThere(p: RecordedPid): boolean {
  return procStart(p.pid) === p.start;
}

interface Leftovers {
  netns: string[];
  veths: string[];
  mounts: string[];
  dir: string;
}
function leftovers(id: string, key: string): Leftovers {
  const dir = path.join(STATE_ROOT, id);
  return { netns: labNetnses(id), veths: labVeths(key), mounts: labMounts(dir), dir };
}
function describeLeftovers(l: Leftovers, id: string): string[] {
  return [
    ...l.netns.map((n) => `netns ${n}`),
    ...l.veths.map((v) => `veth ${v}`),
    ...l.mounts.map((m) => `mount ${m}`),
    ...(fs.existsSync(l.dir) ? [`dir ${l.dir}`] : []),
  ].map((s) => `${id}: ${s}`);
}
function pidsIn(netnses: string[]): string[] {
  const out: string[] = [];
  for (const ns of netnses) {
    const r = spawnSync("ip", ["netns", "pids", ns], { encoding: "utf8", timeout: 10_000 });
    out.push(...(r.stdout ?? "").split(/\s+/).filter(Boolean).map((p) => `process ${p} in ${ns}`));
  }
  return out;
}

/**
 * How a lab directory is removed: retried when it is not empty yet (ENOTEMPTY), as when a concurrent
 * cleanupStaleLabs() of the other test lane makes its `.cleanup-claim` in it again while this one removes it (both
 * lanes of one `npm test` start by cleaning stale labs: seen after a killed run left some).
 */
const RM_LAB_DIR = { recursive: true, force: true, maxRetries: 10, retryDelay: 100 } as const;

function teardownSync(id: string, key: string): void {
  const l = leftovers(id, key);
  spawnSync("/bin/sh", ["-c", teardownScript(l.netns, l.veths)], { timeout: 30_000, env: { PATH: SAFE_PATH }, stdio: "ignore" });
  for (const m of labMounts(l.dir)) spawnSync("umount", ["-l", m], { timeout: 10_000, stdio: "ignore" });
  fs.rmSync(l.dir, RM_LAB_DIR);
  removeSlots(id);
}

async function teardown(id: string, key: string): Promise<string[]> {
  const l = leftovers(id, key);
  const what = [...pidsIn(l.netns), ...describeLeftovers(l, id)];
  const recorded = [...recordedPids(id, "init.pid", true), ...recordedPids(id, "unshare.pid", true)];
  await sh(teardownScript(l.netns, l.veths), 60_000);
  // killed processes leave the netns at once but stay zombies until reaped: wait (bounded) until they are gone
  for (let i = 0; i < 100 && recorded.some((p) => stillThere(p)); i++) await sleep(50);
  const zombies = recorded.filter((p) => stillThere(p));
  if (zombies.length) what.push(`${id}: processes not yet reaped by their parent: ${zombies.map((z) => z.pid).join(" ")}`);
  for (const m of labMounts(l.dir)) await run("umount", ["-l", m], { timeoutMs: 10_000 });
  fs.rmSync(l.dir, RM_LAB_DIR);
  what.push(...removeSlots(id).map((s) => `${id}: ${s}`));
  const left = leftovers(id, key);
  const still = describeLeftovers(left, id);
  if (still.length) throw new Error(`lab ${id}: teardown left ${still.join(", ")}`);
  return what;
}

// ---------------------------------------------------------------------------- process-wide bookkeeping

// Shared by every copy of this module in the process (jest loads it once per test file), so the exit and
// signal handlers are installed once and clean up every lab of the process.
interface Registry {
  active: Map<string, { key: string; children: ChildProcess[] }>;
  handlersInstalled: boolean;
}
const REGISTRY = Symbol.for("pulumi-net-tuning.lab.registry");
const registry: Registry = ((globalThis as Record<symbol, unknown>)[REGISTRY] as Registry | undefined) ??
  ((globalThis as Record<symbol, unknown>)[REGISTRY] = { active: new Map(), handlersInstalled: false } as Registry);
const active = registry.active;

function cleanupAllSync(): void {
  for (const [id, l] of active) {
    for (const c of l.children) {
      if (c.exitCode === null && c.signalCode === null && c.pid) {
        try {
          process.kill(c.pid, "SIGKILL");
        } catch {
          /* gone */
        }
      }
    }
    try {
      teardownSync(id, l.key);
    } catch {
      /* best effort at exit; cleanupStaleLabs() catches the rest */
    }
  }
  active.clear();
}

function installHandlers(): void {
  if (registry.handlersInstalled) return;
  registry.handlersInstalled = true;
  process.on("exit", cleanupAllSync);
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    const h = () => {
      cleanupAllSync();
      process.removeListener(sig, h);
      // re-raise with the default action unless somebody else handles the signal
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    };
    process.on(sig, h);
  }
}

// ---------------------------------------------------------------------------------------------- startLab

function allocateSlot(id: string): number {
  fs.mkdirSync(SLOTS_DIR, { recursive: true, mode: 0o700 });
  const used = new Set<number>();
  const r = spawnSync("ip", ["-4", "-o", "addr", "show"], { encoding: "utf8", timeout: 10_000 });
  for (const m of (r.stdout ?? "").matchAll(/inet (\d+\.\d+\.\d+\.\d+)/g)) {
    const off = ipToInt(m[1]) - NET_BASE;
    if (off >= 0 && off < SLOT_ADDRS * SLOT_COUNT) used.add(Math.floor(off / SLOT_ADDRS));
  }
  for (let s = 0; s < SLOT_COUNT; s++) {
    if (used.has(s)) continue;
    try {
      fs.symlinkSync(id, path.join(SLOTS_DIR, String(s)));
      return s;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
  }
  throw new Error("lab: no free address slot in 198.18.0.0/15 (run cleanupStaleLabs())");
}

function pickUids(): [number, number] {
  const used = new Set(
    fs
      .readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .map((l) => Number(l.split(":")[2]))
      .filter((n) => !Number.isNaN(n)),
  );
  const free: number[] = [];
  for (let u = 2101; free.length < 2 && u < 60000; u++) if (!used.has(u)) free.push(u);
  return [free[0], free[1]];
}

function checkPrerequisites(): void {
  if (process.platform !== "linux") throw new Error("lab: needs Linux");
  if (process.getuid?.() !== 0) throw new Error("lab: needs root (network namespaces, mounts)");
  for (const bin of ["/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/ssh-keygen"]) {
    if (!fs.existsSync(bin)) throw new Error(`lab: ${bin} missing (apt-get install openssh-server openssh-client)`);
  }
  for (const bin of ["ip", "unshare", "nsenter", "setpriv"]) {
    if (spawnSync("sh", ["-c", `command -v ${bin}`], { stdio: "ignore" }).status !== 0) throw new Error(`lab: ${bin} missing`);
  }
  if (!fs.readFileSync("/proc/filesystems", "utf8").includes("overlay")) throw new Error("lab: overlayfs not available");
}

function waitForPort(address: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: address, port, timeout: timeoutMs });
    let done = false;
    const finish = (ok: boolean) => {
      if (done) return;
      done = true;
      s.destroy();
      resolve(ok);
    };
    s.once("data", (d) => finish(d.toString("latin1").startsWith("SSH-")));
    s.once("timeout", () => finish(false));
    s.once("error", () => finish(false));
    s.once("close", () => finish(false));
  });
}

function tail(file: string, n = 20): string {
  try {
    return fs.readFileSync(file, "utf8").split("\n").slice(-n).join("\n");
  } catch {
    return "(no log)";
  }
}

export async function startLab(opts: { hosts: number; tag?: string; concurrency?: number }): Promise<Lab> {
  checkPrerequisites();
  // lab addresses are reused with a new host key per lab: the live read must not consult the user's known_hosts (an
  // old 198.18.* entry there would refuse every preview); a test of known_hosts sets its own files
  process.env.NET_TUNING_KNOWN_HOSTS ??= "";
  const count = opts.hosts;
  if (!Number.isInteger(count) || count < 1 || count > MAX_HOSTS) throw new Error(`lab: hosts must be 1..${MAX_HOSTS}`);
  const tag = (opts.tag ?? "").toLowerCase().replace(/[^a-z0-9]/g, "").slice(0, 12);
  const key = crypto.randomBytes(4).toString("hex");
  const id = tag ? `${tag}-${key}` : key;
  const labDir = path.join(STATE_ROOT, id);
  fs.mkdirSync(STATE_ROOT, { recursive: true, mode: 0o755 });
  fs.mkdirSync(labDir, { mode: 0o700 });
  installHandlers();
  const children: ChildProcess[] = [];
  active.set(id, { key, children });

  let slot = -1;
  const writeState = () => {
    const st: LabState = {
      id,
      key,
      ownerPid: process.pid,
      ownerStart: procStart(process.pid) ?? "",
      createdAt: new Date().toISOString(),
      slot,
    };
    fs.writeFileSync(path.join(labDir, "lab.json.tmp"), JSON.stringify(st, null, 2) + "\n", { mode: 0o600 });
    fs.renameSync(path.join(labDir, "lab.json.tmp"), path.join(labDir, "lab.json"));
  };
  writeState();

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      // SIGKILL each host's pid 1 (sshd): the kernel kills its whole pid namespace, unshare reaps it and exits
      for (const p of recordedPids(id, "init.pid")) {
        try {
          process.kill(p, "SIGKILL");
        } catch {
          /* gone */
        }
      }
      const running = () => children.filter((c) => c.exitCode === null && c.signalCode === null);
      for (let i = 0; i < 100 && running().length; i++) await sleep(50);
      for (const c of running()) {
        try {
          process.kill(c.pid!, "SIGKILL"); // unshare --kill-child then SIGKILLs the host's pid 1
        } catch {
          /* gone */
        }
      }
      try {
        await teardown(id, key);
      } finally {
        active.delete(id);
      }
    })());

  try {
    slot = allocateSlot(id);
    writeState();
    const keysDir = path.join(labDir, "keys");
    fs.mkdirSync(keysDir, { mode: 0o700 });
    await Promise.all(
      ["root", "sudo", "plain", "host_ed25519_key"].map((k) =>
        shOk(`ssh-keygen -q -t ed25519 -N '' -C ${shq(`ntlab-${id}-${k}`)} -f ${shq(path.join(keysDir, k))}`, "ssh-keygen"),
      ),
    );
    const mkUser = (who: Who): LabUser => {
      const keyPath = path.join(keysDir, who);
      fs.chmodSync(keyPath, 0o600);
      return { user: USERS[who], privateKey: fs.readFileSync(keyPath, "utf8"), keyPath };
    };
    const users: Record<Who, LabUser> = { root: mkUser("root"), sudo: mkUser("sudo"), plain: mkUser("plain") };
    const [sudoUid, plainUid] = pickUids();

    const hosts: LabHost[] = [];
    const startupMs: number[] = new Array(count).fill(0);
    const indices = Array.from({ length: count }, (_, i) => i);
    await pool(indices, opts.concurrency ?? 8, async (n) => {
      const t0 = Date.now();
      const netns = `${NETNS_PREFIX}${id}-${n}`;
      const veth = `nt${key}h${n}`;
      const subnet = NET_BASE + slot * SLOT_ADDRS + n * 4;
      const gw = intToIp(subnet + 1);
      const address = intToIp(subnet + 2);
      const hostDir = path.join(labDir, `h${n}`);
      const stage = path.join(hostDir, "stage");
      fs.mkdirSync(stage, { recursive: true, mode: 0o700 });
      await shOk(
        [
          "set -e",
          `ip netns add ${netns}`,
          `ip link add ${veth} numtxqueues ${QUEUES} numrxqueues ${QUEUES} type veth peer name eth0 numtxqueues ${QUEUES} numrxqueues ${QUEUES} netns ${netns}`,
          `ip addr add ${gw}/30 dev ${veth}`,
          `ip link set ${veth} up`,
          `ip -n ${netns} link set lo up`,
          `ip -n ${netns} addr add ${address}/30 dev eth0`,
          `ip -n ${netns} link set eth0 up`,
          `ip -n ${netns} route add default via ${gw}`,
        ].join("\n"),
        `lab host ${n}: network setup`,
      );
      const logPath = path.join(hostDir, "sshd.log");
      const logFd = fs.openSync(logPath, "a", 0o600);
      let child: ChildProcess;
      try {
        child = spawn(
          "setpriv",
          [
            "--pdeathsig", "KILL", "--",
            "ip", "netns", "exec", netns,
            "unshare", "--mount", "--uts", "--pid", "--fork", "--kill-child=KILL", "--mount-proc", "--propagation", "private",
            "--", "/bin/sh", INIT_SCRIPT,
          ],
          {
            detached: true,
            stdio: ["ignore", logFd, logFd],
            env: {
              PATH: SAFE_PATH,
              LANG: "C",
              NTLAB_STAGE: stage,
              NTLAB_KEYS: keysDir,
              NTLAB_HOSTNAME: netns,
              NTLAB_SUDO_UID: String(sudoUid),
              NTLAB_PLAIN_UID: String(plainUid),
            },
          },
        );
      } finally {
        fs.closeSync(logFd);
      }
      children.push(child);
      child.unref();
      child.on("error", () => undefined);
      const unsharePid = child.pid!;
      fs.writeFileSync(path.join(hostDir, "unshare.pid"), `${unsharePid} ${procStart(unsharePid) ?? ""}\n`);

      // wait (bounded) for sshd to answer with its banner
      const deadline = Date.now() + 30_000;
      let ready = false;
      while (!ready && Date.now() < deadline) {
        if (child.exitCode !== null || child.signalCode !== null) break;
        ready = await waitForPort(address, 22, 1000);
        if (!ready) await sleep(20);
      }
      if (!ready) throw new Error(`lab host ${n} (${netns}): sshd did not start; log:\n${tail(logPath)}`);
      // pid 1 of the host's pid namespace (sshd): the child of unshare
      let initPid: number | undefined;
      for (let i = 0; i < 100 && initPid === undefined; i++) {
        for (const d of fs.readdirSync("/proc")) {
          if (/^\d+$/.test(d) && procPpid(Number(d)) === unsharePid) {
            initPid = Number(d);
            break;
          }
        }
        if (initPid === undefined) await sleep(10);
      }
      if (initPid === undefined) throw new Error(`lab host ${n}: cannot find the host's init pid`);
      fs.writeFileSync(path.join(hostDir, "init.pid"), `${initPid} ${procStart(initPid) ?? ""}\n`);
      const pid1 = initPid;
      let bootValues = "";
      let bootNic = "";

      const host: LabHost = {
        name: `h${n}`,
        netns,
        address,
        port: 22,
        iface: "eth0",
        root: users.root,
        sudoUser: users.sudo,
        plainUser: users.plain,
        pid: pid1,
        connection(who: Who = "root") {
          const u = users[who];
          return { host: address, port: 22, user: u.user, privateKey: u.privateKey };
        },
        exec(cmd, o = {}) {
          return run("nsenter", ["-t", String(pid1), "-n", "-m", "-u", "-p", "--", "/bin/sh", "-c", cmd], {
            stdin: o.stdin,
            timeoutMs: o.timeoutMs ?? 30_000,
            env: { PATH: SAFE_PATH, HOME: "/root", USER: "root", LOGNAME: "root", SHELL: "/bin/sh", LANG: "C" },
            what: `exec on ${netns}`,
          });
        },
        ssh(cmd, o = {}) {
          const u = users[o.who ?? "root"];
          return run("ssh", [...sshOptions(u.keyPath), "-p", "22", `${u.user}@${address}`, "--", cmd], {
            stdin: o.stdin,
            timeoutMs: o.timeoutMs ?? 30_000,
            what: `ssh ${u.user}@${address}`,
          });
        },
        async reboot() {
          const steps: [string, string, string | undefined][] = [
            ["reset /proc/sys/net", RESET_NET_SYSCTLS, bootValues],
            ["reset the NIC", RESET_NIC, bootNic],
            ["empty /run", WIPE_RUN, undefined],
            ["load sysctls", BOOT_SYSCTL, undefined],
            ["run /etc/rc.local", RUN_RC_LOCAL, undefined],
          ];
          let log = "";
          for (const [what, script, stdin] of steps) {
            const r = await host.exec(script, { stdin, timeoutMs: 60_000 });
            if (r.code !== 0) throw new Error(`reboot of ${netns}: ${what} failed (exit ${r.code}): ${r.stderr.trim()}`);
            if (what === "load sysctls") log = r.stdout;
          }
          return log;
        },
      };
      // Boot: record the kernel's values, then load sysctls as the boot would (the host starts as a booted machine).
      const boot = await host.exec(READ_NET_SYSCTLS);
      if (boot.code !== 0 || boot.stdout === "") throw new Error(`lab host ${n}: cannot read /proc/sys/net: ${boot.stderr}`);
      bootValues = boot.stdout;
      const nic = await host.exec(READ_NIC);
      if (nic.code !== 0 || !/^channels \d+ \d+$/m.test(nic.stdout)) throw new Error(`lab host ${n}: cannot read eth0's settings: ${nic.stderr}`);
      bootNic = nic.stdout;
      const loaded = await host.exec(BOOT_SYSCTL);
      if (loaded.code !== 0) throw new Error(`lab host ${n}: ${loaded.stderr.trim()}`);
      hosts[n] = host;
      startupMs[n] = Date.now() - t0;
    });
    return { id, hosts, stop, startupMs };
  } catch (e) {
    try {
      await stop();
    } catch (e2) {
      throw new Error(`${(e as Error).message}\n(and teardown failed: ${(e2 as Error).message})`);
    }
    throw e;
  }
}

/** openssh client options used by LabHost.ssh() (exported for tests that need extra -o options). */
export function sshOptions(keyPath: string): string[] {
  return [
    "-F", "/dev/null",
    "-o", "StrictHostKeyChecking=no",
    "-o", "UserKnownHostsFile=/dev/null",
    "-o", "BatchMode=yes",
    "-o", "LogLevel=ERROR",
    "-o", "ConnectTimeout=10",
    "-o", "IdentitiesOnly=yes",
    "-o", "ServerAliveInterval=5",
    "-o", "ServerAliveCountMax=3",
    "-i", keyPath,
  ];
}

// ------------------------------------------------------------------------------------- cleanupStaleLabs

function ownerAlive(st: Partial<LabState>): boolean {
  if (typeof st.ownerPid !== "number") return false;
  const start = procStart(st.ownerPid);
  return start !== undefined && (!st.ownerStart || start === st.ownerStart);
}

/**
 * Removes leftovers of lab runs whose owner process is dead (or of this process's labs that were never
 * stopped is NOT done: those are live). Also removes `ntlab-*` namespaces and `nt<key>h<n>` veths whose lab
 * directory is gone. Returns a description of everything removed.
 */
/** Atomically claims a stale lab for removal (mkdir); a claim older than 2 minutes counts as abandoned. */
function claim(dir: string): boolean {
  const c = path.join(dir, ".cleanup-claim");
  try {
    fs.mkdirSync(c);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") return false; // dir gone: removed by someone else
    try {
      if (Date.now() - fs.statSync(c).mtimeMs < 120_000) return false;
      fs.utimesSync(c, new Date(), new Date());
      return true;
    } catch {
      return false;
    }
  }
}

export async function cleanupStaleLabs(): Promise<string[]> {
  const removed: string[] = [];
  let entries: string[] = [];
  try {
    entries = fs.readdirSync(STATE_ROOT);
  } catch {
    /* nothing yet */
  }
  for (const id of entries) {
    if (id.startsWith(".")) continue;
    if (active.has(id)) continue;
    const dir = path.join(STATE_ROOT, id);
    let st: Partial<LabState> | undefined;
    try {
      st = JSON.parse(fs.readFileSync(path.join(dir, "lab.json"), "utf8")) as Partial<LabState>;
    } catch {
      // no state file: being created right now (give it a minute) or garbage
      try {
        if (Date.now() - fs.statSync(dir).mtimeMs < 60_000) continue;
      } catch {
        continue;
      }
    }
    if (st && ownerAlive(st)) continue;
    if (!claim(dir)) continue; // a concurrent cleanupStaleLabs() (another test run) is removing it
    const key = st?.key ?? (/([0-9a-f]{8})$/.exec(id)?.[1] ?? "none");
    removed.push(`lab ${id} (owner pid ${st?.ownerPid ?? "?"} is gone)`);
    removed.push(...(await teardown(id, key)));
  }
  // orphans: namespaces / veths whose lab dir does not exist. A lab creates its dir before its first
  // namespace and removes it after its last veth, so list the network objects FIRST and the dirs after.
  let nsNames: string[] = [];
  try {
    nsNames = fs.readdirSync("/run/netns");
  } catch {
    /* none */
  }
  const links = fs.readdirSync("/sys/class/net");
  let dirsNow: string[] = [];
  try {
    dirsNow = fs.readdirSync(STATE_ROOT).filter((d) => !d.startsWith("."));
  } catch {
    /* none */
  }
  const liveIds = new Set(dirsNow);
  const liveKeys = new Set(dirsNow.map((id) => /([0-9a-f]{8})$/.exec(id)?.[1]));
  const orphanNs = nsNames.filter((n) => {
    const m = /^ntlab-(.+)-\d+$/.exec(n);
    return m && !liveIds.has(m[1]);
  });
  const orphanVeth = links.filter((v) => {
    const m = /^nt([0-9a-f]{8})h\d+$/.exec(v);
    return m && !liveKeys.has(m[1]);
  });
  if (orphanNs.length || orphanVeth.length) {
    removed.push(...pidsIn(orphanNs), ...orphanNs.map((n) => `orphan netns ${n}`), ...orphanVeth.map((v) => `orphan veth ${v}`));
    await sh(teardownScript(orphanNs, orphanVeth), 60_000);
  }
  try {
    for (const s of fs.readdirSync(SLOTS_DIR)) {
      const p = path.join(SLOTS_DIR, s);
      let target = "";
      try {
        target = fs.readlinkSync(p);
      } catch {
        continue;
      }
      if (!fs.existsSync(path.join(STATE_ROOT, target))) {
        fs.rmSync(p, { force: true });
        removed.push(`orphan slot ${s} (${target})`);
      }
    }
  } catch {
    /* no slots */
  }
  return removed;
}

/** jest globalSetup-friendly: removes leftovers of dead lab runs before the lab tests start. */
export default async function globalSetup(): Promise<void> {
  if (process.getuid?.() !== 0) return;
  const removed = await cleanupStaleLabs();
  if (removed.length) console.log(`[lab] removed leftovers of dead lab runs:\n  ${removed.join("\n  ")}`);
}
