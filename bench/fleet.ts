/**
 * 1. Fleet apply: the same 40-key change, persisted in /etc/sysctl.d/90-bench.conf, on N lab hosts by
 *   (a) NetTuning through the command-provider harness (parallelism unbounded, the CLI default),
 *   (b) Ansible ansible.posix.sysctl over the 40 keys (forks=5, sysctl_file set),
 *   (c) Ansible copy (file content) + handler `sysctl -p FILE`.
 * Each repeat runs the three approaches back to back in rotated order (side by side under the same machine load),
 * each from a freshly reset fleet, then a second run with no change.
 */
import { NetTuning } from "../components/netTuning";
import { Stack } from "../testkit/harness";
import type { Lab, LabHost } from "../testkit/lab";
import { AnsibleBench, sshdLogins } from "./ansible";
import { FILE_NAME, FILE_PATH, netTuningSysctls, readValues, resetHost, SYSCTLS } from "./keys";
import { HostCounters, mapLimit, nowMs, readCounters, settleAll } from "./lib";

export type Approach = "nettuning" | "ansible-sysctl" | "ansible-copy" | "ansible-sysctl-forks-n" | "ansible-copy-forks-n";
/** The `-forks-n` approaches run Ansible with forks = the number of hosts (NetTuning's parallelism is unbounded). */
export const APPROACHES: Approach[] = ["nettuning", "ansible-sysctl", "ansible-copy", "ansible-sysctl-forks-n", "ansible-copy-forks-n"];

export interface PhaseSample {
  ok: boolean;
  ms: number;
  /** SSH sessions per host (harness count / ssh+sftp wrapper count) */
  sessionsPerHost: number[];
  /** authenticated TCP connections per host (sshd log) */
  loginsPerHost: number[];
  /** processes created on each host (pid-namespace counter) */
  procsPerHost: number[];
  /** CPU ms used on each host by its sshd tree (bench/lib.ts CpuMethod) */
  hostCpuMsPerHost: number[];
  changed?: number;
  note?: string;
}
export interface FleetSample {
  hosts: number;
  repeat: number;
  approach: Approach;
  order: number;
  first: PhaseSample;
  second: PhaseSample;
}

async function counters(hosts: LabHost[]): Promise<HostCounters[]> {
  return mapLimit(hosts, 10, (h) => readCounters(h));
}

function deltas(hosts: LabHost[], b: HostCounters[], a: HostCounters[], readerPids: number) {
  return {
    procs: hosts.map((_, i) => a[i].lastPid - b[i].lastPid - readerPids),
    cpuMs: hosts.map((_, i) => (a[i].cpuNs - b[i].cpuNs) / 1e6),
  };
}

/** All 40 values live and the file present on every host. */
async function verifyApplied(hosts: LabHost[]): Promise<string | undefined> {
  const bad: string[] = [];
  await mapLimit(hosts, 10, async (h) => {
    const v = await readValues(h);
    const wrong = Object.entries(SYSCTLS).filter(([k, want]) => v[k] !== want).map(([k]) => k);
    const f = await h.exec(`test -f ${FILE_PATH}`);
    if (wrong.length || f.code !== 0) bad.push(`${h.name}: ${wrong.length} wrong values${f.code !== 0 ? ", no file" : ""}`);
  });
  return bad.length ? bad.join("; ") : undefined;
}

export async function fleetBench(opts: {
  lab: Lab;
  sizes: number[];
  repeats: number[];
  orig: Record<string, string>[];
  readerPids: number;
  workDir: string;
  ansibleTimeoutMs: number;
  log: (s: string) => void;
}): Promise<FleetSample[]> {
  const { lab, orig, readerPids, log } = opts;
  const out: FleetSample[] = [];
  const sysctls = netTuningSysctls();
  for (const [si, n] of opts.sizes.entries()) {
    const hosts = lab.hosts.slice(0, n);
    const ansible = new AnsibleBench(lab, hosts, opts.workDir);
    const reset = () => mapLimit(hosts, 10, (h, i) => resetHost(h, orig[i]));
    for (let rep = 0; rep < opts.repeats[si]; rep++) {
      const order = APPROACHES.map((_, i) => APPROACHES[(i + rep) % APPROACHES.length]);
      for (let oi = 0; oi < order.length; oi++) {
        const approach = order[oi];
        await reset();
        const phase = async (runIt: () => Promise<{ ok: boolean; ms: number; sessions: number[]; changed?: number; note?: string }>): Promise<PhaseSample> => {
          const lb = sshdLogins(lab, hosts);
          const cb = await counters(hosts);
          const r = await runIt();
          await settleAll(hosts, 500); // let sshd reap the connection processes before reading its CPU counters
          const ca = await counters(hosts);
          const la = sshdLogins(lab, hosts);
          const d = deltas(hosts, cb, ca, readerPids);
          return {
            ok: r.ok, ms: r.ms, sessionsPerHost: r.sessions,
            loginsPerHost: hosts.map((h) => la[h.address] - lb[h.address]),
            procsPerHost: d.procs, hostCpuMsPerHost: d.cpuMs, changed: r.changed, note: r.note,
          };
        };
        let first: PhaseSample;
        let second: PhaseSample;
        if (approach === "nettuning") {
          const stack = new Stack({ project: "bench", stack: `fleet${n}r${rep}` });
          const program = () => {
            for (const h of hosts) new NetTuning(h.name, { connection: h.connection("root"), sysctls, fileName: FILE_NAME });
          };
          const up = async () => {
            const t0 = nowMs();
            const r = await stack.up(program);
            const ms = nowMs() - t0;
            return {
              ok: r.ok, ms,
              sessions: hosts.map((h) => r.sessions.byHost[`${h.address}:${h.port}`] ?? 0),
              changed: r.created.length + r.updated.length,
              note: r.ok ? undefined : r.error?.slice(0, 2000),
            };
          };
          first = await phase(up);
          if (first.ok) {
            const v = await verifyApplied(hosts);
            if (v) { first.ok = false; first.note = v; }
          }
          second = await phase(up);
        } else {
          const variant = approach.startsWith("ansible-sysctl") ? "posix-sysctl" : "copy-reload";
          const forks = approach.endsWith("-forks-n") ? n : undefined;
          const play = async () => {
            const r = await ansible.play(variant, opts.ansibleTimeoutMs, forks);
            return { ok: r.ok, ms: r.ms, sessions: hosts.map((h) => r.sessions[h.address]), changed: r.changedTotal, note: r.ok ? undefined : r.output };
          };
          first = await phase(play);
          if (first.ok) {
            const v = await verifyApplied(hosts);
            if (v) { first.ok = false; first.note = v; }
          }
          second = await phase(play);
        }
        const s: FleetSample = { hosts: n, repeat: rep, approach, order: oi, first, second };
        out.push(s);
        const avg = (xs: number[]) => (xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(1);
        log(`fleet n=${n} rep=${rep} ${approach}: first ${first.ok ? "ok" : "FAILED"} ${(first.ms / 1000).toFixed(2)} s, ` +
          `${avg(first.sessionsPerHost)} sessions/host, ${avg(first.procsPerHost)} procs/host; ` +
          `second ${second.ok ? "ok" : "FAILED"} ${(second.ms / 1000).toFixed(2)} s, ${avg(second.sessionsPerHost)} sessions/host, changed=${second.changed}` +
          (first.note ? `\n  first: ${first.note}` : "") + (second.note ? `\n  second: ${second.note}` : ""));
      }
    }
    await reset();
  }
  return out;
}
