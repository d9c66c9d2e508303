/** Small helpers shared by the benchmarks: statistics, bounded parallel map, host probes (pid counter, CPU). */
import { spawn } from "child_process";
import * as fs from "fs";
import * as path from "path";
import type { LabHost } from "../testkit/lab";

export interface Summary {
  n: number;
  median: number;
  min: number;
  max: number;
  /** Interquartile range (linear interpolation); undefined with fewer than 4 samples. */
  q1?: number;
  q3?: number;
}

function quantile(sorted: number[], q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export function summarize(xs: number[]): Summary {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return { n: 0, median: NaN, min: NaN, max: NaN };
  const out: Summary = { n: s.length, median: quantile(s, 0.5), min: s[0], max: s[s.length - 1] };
  if (s.length >= 4) {
    out.q1 = quantile(s, 0.25);
    out.q3 = quantile(s, 0.75);
  }
  return out;
}

/** "1.23 (1.10–1.40)" = median (min–max); `fixed`: always `digits` decimals (else none from 100 on) */
export function fmtSummary(s: Summary, digits = 2, unit = "", fixed = false): string {
  if (s.n === 0) return "n/a";
  const f = (x: number) => (Math.abs(x) >= 100 && !fixed ? x.toFixed(0) : x.toFixed(digits));
  if (s.n === 1 || s.min === s.max) return `${f(s.median)}${unit}`;
  return `${f(s.median)}${unit} (${f(s.min)}–${f(s.max)})`;
}

export async function mapLimit<T, R>(items: T[], limit: number, f: (x: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await f(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Host CPU, measured per lab host in one of three ways (the best that works on this machine, chosen once by
 * {@link attachCpuMeters}; every host of a run uses the same):
 * - "cpuacct": the host's pid 1 (sshd) is moved into its own cgroup v1 cpuacct group
 *   (/sys/fs/cgroup/cpuacct/ntbench-<lab id>-<host>); every process sshd forks inherits it, and `cpuacct.usage` is
 *   the scheduler's exact run time of all of them, in nanoseconds, counted while they run (sshd's own share
 *   included: accepting and forking a connection);
 * - "cgroup2": the same with a cgroup v2 group (`cpu.stat` usage_usec, microseconds), when only the unified
 *   hierarchy is writable;
 * - "ticks" (fallback, no cgroup available): cutime+cstime of the host's pid 1 (/proc/1/stat inside the host), the CPU
 *   time of every reaped descendant, i.e. of every finished SSH connection and everything it ran (sshd reaps its
 *   connection processes, which reap theirs), in 10 ms ticks (USER_HZ 100): coarse for one small run.
 * The readers of {@link readCounters} (`nsenter` from the machine) and every other `host.exec` stay in the machine's
 * cgroup: only what runs under the host's sshd is counted.
 */
/** USER_HZ: the unit of /proc/PID/stat times. */
export const CLK_TCK = 100;

export type CpuMethod = "cpuacct" | "cgroup2" | "ticks";
export const CPU_METHOD_TEXT: Record<CpuMethod, string> = {
  cpuacct: "cgroup v1 cpuacct.usage of the host's sshd tree (ns)",
  cgroup2: "cgroup v2 cpu.stat usage_usec of the host's sshd tree (µs)",
  ticks: "cutime+cstime of the host's sshd (10 ms ticks; without a cgroup)",
};
export interface Meter { dir: string; file: string; pid: number }
const meters = new Map<string, Meter>(); // by host netns (unique per lab host)
let cpuMethod: CpuMethod = "ticks";
export const currentCpuMethod = (): CpuMethod => cpuMethod;

const CG_V1 = "/sys/fs/cgroup/cpuacct";
const CG_V2 = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"];
/** Name prefix of the benchmarks' cgroups (an empty one left by a killed run is removed by the next run). */
export const CG_PREFIX = "ntbench-";

/** The writable CPU-accounting hierarchies here, cgroup v1 cpuacct first. */
export function cgroupRoots(): { method: "cpuacct" | "cgroup2"; root: string; file: string }[] {
  const out: { method: "cpuacct" | "cgroup2"; root: string; file: string }[] = [];
  if (fs.existsSync(path.join(CG_V1, "cpuacct.usage"))) out.push({ method: "cpuacct", root: CG_V1, file: "cpuacct.usage" });
  for (const r of CG_V2) if (fs.existsSync(path.join(r, "cgroup.subtree_control"))) { out.push({ method: "cgroup2", root: r, file: "cpu.stat" }); break; }
  return out;
}

/** Removes empty ntbench-* groups left by a killed run (a group in use is not empty: rmdir refuses, it stays). */
function removeStaleGroups(): void {
  for (const { root } of cgroupRoots()) {
    let names: string[] = [];
    try { names = fs.readdirSync(root).filter((n) => n.startsWith(CG_PREFIX)); } catch { continue; }
    for (const n of names) try { fs.rmdirSync(path.join(root, n)); } catch { /* in use or gone */ }
  }
}

/** CPU time of a meter's cgroup, ns. */
export function readMeterNs(m: Meter, method: CpuMethod): number {
  const t = fs.readFileSync(path.join(m.dir, m.file), "utf8");
  if (method === "cpuacct") return Number(t.trim());
  const us = /^usage_usec (\d+)$/m.exec(t);
  return us ? Number(us[1]) * 1000 : NaN;
}

/**
 * Puts each host's sshd (pid 1 of its pid namespace) into its own CPU-accounting cgroup; returns the method used
 * (all hosts the same; "ticks" when no cgroup can be created, e.g. without root or without a writable hierarchy).
 * `want`: only that method (then "ticks" if it does not work here).
 * Call {@link detachCpuMeters} after the lab has stopped.
 */
export function attachCpuMeters(labId: string, hosts: LabHost[], want?: CpuMethod): CpuMethod {
  removeStaleGroups();
  for (const c of cgroupRoots().filter((r) => !want || r.method === want)) {
    const made: Meter[] = [];
    try {
      for (const h of hosts) {
        const dir = path.join(c.root, `${CG_PREFIX}${labId}-${h.name}`);
        fs.mkdirSync(dir);
        const m = { dir, file: c.file, pid: h.pid };
        made.push(m);
        fs.writeFileSync(path.join(dir, "cgroup.procs"), `${h.pid}\n`);
        if (!Number.isFinite(readMeterNs(m, c.method))) throw new Error(`${dir}: no CPU usage`);
      }
    } catch {
      for (const m of made) moveBackAndRemove(m, c.root);
      continue;
    }
    hosts.forEach((h, i) => meters.set(h.netns, made[i]));
    cpuMethod = c.method;
    return cpuMethod;
  }
  cpuMethod = "ticks";
  return cpuMethod;
}

function moveBackAndRemove(m: Meter, root: string): void {
  try { fs.writeFileSync(path.join(root, "cgroup.procs"), `${m.pid}\n`); } catch { /* process gone */ }
  try { fs.rmdirSync(m.dir); } catch { /* still in use: removed by the next run's removeStaleGroups */ }
}

/** Removes the groups (a host still running is moved back to the root group first). Idempotent. */
export function detachCpuMeters(): void {
  for (const m of meters.values()) moveBackAndRemove(m, path.dirname(m.dir));
  meters.clear();
  cpuMethod = "ticks";
}

/**
 * Waits until the connection processes of the host are gone (sshd reaps them after the exit status is sent) so that
 * the next reading holds all of their CPU: with a cgroup, until the group holds sshd alone (bounded: 10 s, then it
 * reads anyway); with ticks, a fixed pause (they are counted only once reaped).
 */
export async function settle(host: LabHost, fixedMs = 300): Promise<void> {
  const m = meters.get(host.netns);
  if (!m) return sleep(fixedMs);
  for (let i = 0; i < 200; i++) {
    let procs: string[] = [];
    try { procs = fs.readFileSync(path.join(m.dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean); } catch { return; }
    if (procs.every((p) => Number(p) === m.pid)) return;
    await sleep(50);
  }
}

/** {@link settle} for many hosts: one pause without cgroups, else each host until its group holds sshd alone. */
export async function settleAll(hosts: LabHost[], fixedMs = 500): Promise<void> {
  if (!hosts.some((h) => meters.has(h.netns))) return sleep(fixedMs);
  await mapLimit(hosts, 10, (h) => settle(h, fixedMs));
}

/**
 * Host counters, read without SSH:
 * - lastPid: /proc/sys/kernel/ns_last_pid of the host's own pid namespace (the last pid handed out there), read
 *   inside the host (`host.exec`). Pids are allocated sequentially, so the difference between two readings =
 *   processes (and threads) created in between, including the reader's own `sh` (calibrated by
 *   {@link calibratePidReader}).
 * - cpuNs: the host's CPU counter in nanoseconds (see {@link CpuMethod}; ticks × 10 ms without a cgroup).
 */
export interface HostCounters {
  lastPid: number;
  cpuNs: number;
}
// cat, not the read builtin: read(1) byte by byte gets only the first digit from a /proc/sys handler.
const READER = `cat /proc/sys/kernel/ns_last_pid; read s < /proc/1/stat; set -- \${s##*) }; echo "\${14} \${15}"`;
export async function readCounters(host: LabHost): Promise<HostCounters> {
  const m = meters.get(host.netns);
  // the cgroup is read before the host's pid counter: the reader runs outside the group, either order is exact
  const cg = m ? readMeterNs(m, cpuMethod) : NaN;
  const r = await host.exec(READER, { timeoutMs: 30_000 });
  const [p, cu, cs] = r.stdout.trim().split(/\s+/).map(Number);
  if (r.code !== 0 || !Number.isFinite(p) || !Number.isFinite(cu) || !Number.isFinite(cs) || (m && !Number.isFinite(cg))) {
    throw new Error(`cannot read counters on ${host.name}: ${r.stdout} ${r.stderr}`);
  }
  return { lastPid: p, cpuNs: m ? cg : (cu + cs) * (1e9 / CLK_TCK) };
}

/** Pids consumed by one readCounters() call (expected 2: the reader's sh and its cat; read/echo/set are builtins). */
export async function calibratePidReader(host: LabHost): Promise<number> {
  const a = await readCounters(host);
  const b = await readCounters(host);
  const c = await readCounters(host);
  const d1 = b.lastPid - a.lastPid;
  const d2 = c.lastPid - b.lastPid;
  if (d1 !== d2) throw new Error(`pid reader is not stable on ${host.name}: ${d1} vs ${d2} (something else runs in the host?)`);
  return d1;
}

export interface ProcResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  timedOut: boolean;
}
/** Run a program with a hard timeout (the process group is killed when it passes). */
export function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs: number; input?: string }): Promise<ProcResult> {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const p = spawn(cmd, args, { env: opts.env ?? process.env, cwd: opts.cwd, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    p.stdout.on("data", (d: Buffer) => { stdout += d.toString(); });
    p.stderr.on("data", (d: Buffer) => { stderr += d.toString(); });
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-p.pid!, "SIGKILL"); } catch { /* gone */ }
    }, opts.timeoutMs);
    p.on("error", (e) => { stderr += String(e); });
    p.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Number(process.hrtime.bigint() - t0) / 1e6, timedOut });
    });
    p.stdin.on("error", () => undefined); // a child that exits without reading its stdin (ssh -V): EPIPE
    p.stdin.end(opts.input ?? "");
  });
}

export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
