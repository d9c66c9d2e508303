/** Small helpers shared by the benchmarks: statistics, bounded parallel map, host probes (pid counter, CPU). */
import { spawn } from "child_process";
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

/** "1.23 (1.10–1.40)" = median (min–max) */
export function fmtSummary(s: Summary, digits = 2, unit = ""): string {
  if (s.n === 0) return "n/a";
  const f = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(digits));
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
 * Host counters read inside the host's namespaces (root, no SSH):
 * - lastPid: /proc/sys/kernel/ns_last_pid of the host's own pid namespace (the last pid handed out there). Pids
 *   are allocated sequentially, so the difference between two readings = processes (and threads) created in
 *   between, including the reader's own `sh` (calibrated by {@link calibratePidReader}).
 * - cpuTicks: cutime+cstime of the host's pid 1 (sshd): the CPU time of every waited-for descendant, i.e. of every
 *   finished SSH connection and everything it ran (sshd reaps its connection processes, which reap theirs).
 */
export interface HostCounters {
  lastPid: number;
  cpuTicks: number;
}
// cat, not the read builtin: read(1) byte by byte gets only the first digit from a /proc/sys handler.
const READER = `cat /proc/sys/kernel/ns_last_pid; read s < /proc/1/stat; set -- \${s##*) }; echo "\${14} \${15}"`;
export async function readCounters(host: LabHost): Promise<HostCounters> {
  const r = await host.exec(READER, { timeoutMs: 30_000 });
  const [p, cu, cs] = r.stdout.trim().split(/\s+/).map(Number);
  if (r.code !== 0 || !Number.isFinite(p) || !Number.isFinite(cu) || !Number.isFinite(cs)) {
    throw new Error(`cannot read counters on ${host.name}: ${r.stdout} ${r.stderr}`);
  }
  return { lastPid: p, cpuTicks: cu + cs };
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

export const CLK_TCK = 100;

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
