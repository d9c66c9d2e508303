/**
 * 2. Host-side cost of one create on one lab host: wall time and processes created on the host, for
 *   - NetTuning create of the 40 keys (harness up, one SSH session),
 *   - NicQueues create (offload features, txqueuelen, RPS on every rx queue, rc.local persistence),
 *   - naive equivalents over one SSH session each (the same ssh2 transport): one `sysctl -w` per key then the
 *     sysctl.d file written with one `cat`; ethtool -K + ip link + RPS writes + an rc.local block,
 *   - the same one-session loop as the sudo user (`sudo -n /bin/sh -s`, the script on stdin): the counterpart of the
 *     apply with become "sudo", which pays for sudo the same way,
 *   - the naive sysctl loop as 40 SSH sessions (`ssh host sysctl -w k=v` per key),
 *   - an empty session (`true`): the SSH/sshd share of every figure.
 * Processes: /proc/sys/kernel/ns_last_pid of the host's own pid namespace before/after (pids are handed out
 * sequentially and nothing else runs in a lab host, so the difference is exactly the processes and threads created,
 * sshd's own per-connection processes included; the reader's own `sh` is subtracted). CPU: the host's sshd tree in
 * its own cpuacct cgroup, in nanoseconds (bench/lib.ts attachCpuMeters; 10 ms ticks of sshd's cutime+cstime when no
 * cgroup is available).
 */
import { NetTuning } from "../components/netTuning";
import { NicQueues, NicQueuesArgs } from "../components/nicQueues";
import { defaultSshTuning, runCommand, Stack } from "../testkit/harness";
import type { LabHost } from "../testkit/lab";
import { FILE_NAME, FILE_PATH, netTuningSysctls, readValues, resetHost, SYSCTLS } from "./keys";
import { nowMs, readCounters, settle } from "./lib";
import { engine, ENGINE_INSTALL_DIR } from "../provider/host/engine";

export type CostVariant = "ssh-true" | "nettuning" | "nettuning-apply" | "nettuning-apply-sudo" | "naive-sysctl" | "naive-sysctl-sudo" | "naive-sysctl-40-ssh" | "nicqueues" | "nicqueues-apply" | "naive-nic";
export const COST_VARIANTS: CostVariant[] = ["ssh-true", "nettuning", "nettuning-apply", "nettuning-apply-sudo", "naive-sysctl", "naive-sysctl-sudo", "naive-sysctl-40-ssh", "nicqueues", "nicqueues-apply", "naive-nic"];

export interface CostSample {
  variant: CostVariant;
  repeat: number;
  ok: boolean;
  /** wall time of the whole operation (harness up incl. program evaluation, or the SSH run(s)) */
  ms: number;
  /** SSH part only: connect → exit status (sum over sessions) */
  sshMs: number;
  sessions: number;
  procs: number;
  /** CPU time of the host's sshd tree during the run, ms (µs precision with a cgroup; 10 ms steps without) */
  hostCpuMs: number;
  note?: string;
}

export const NIC_ARGS = (h: LabHost): NicQueuesArgs => ({
  connection: h.connection("root"),
  interface: h.iface,
  features: { gro: true },
  txQueueLength: 5000,
  rps: { cpus: "all", flowEntriesPerQueue: 4096 },
  persistence: "rc.local",
});

/** The NicQueues of the cost rows: NIC_ARGS with the confirmed apply off (issue #31's bound is for the apply alone; a
 * feature change is confirmed by default since issue #34: the apply then arms a revert and writes rc.local only at
 * the confirm, a second session). bench/state.ts measures both. */
const NIC_COST_ARGS = (h: LabHost): NicQueuesArgs => ({ ...NIC_ARGS(h), confirm: { timeoutSeconds: 0 } });

const sysctlFile = () => Object.entries(SYSCTLS).map(([k, v]) => `${k} = ${v}`).join("\n") + "\n";
function naiveSysctlScript(): string {
  const sets = Object.entries(SYSCTLS).map(([k, v]) => `sysctl -w '${k}=${v}' >/dev/null || exit 1`);
  return `${sets.join("\n")}\ncat > ${FILE_PATH} <<'EOF'\n${sysctlFile()}EOF\n`;
}

function naiveNicScript(iface: string, mask: string): string {
  const body = [
    `ethtool -K ${iface} gro on`,
    `ip link set dev ${iface} txqueuelen 5000`,
    `for q in /sys/class/net/${iface}/queues/rx-*; do echo ${mask} > "$q/rps_cpus"; echo 4096 > "$q/rps_flow_cnt"; done`,
  ];
  return [
    ...body.map((l) => `${l} || exit 1`),
    `[ -f /etc/rc.local ] || printf '#!/bin/sh\\n' > /etc/rc.local`,
    `cat >> /etc/rc.local <<'EOF'\n# BEGIN naive nic\n${body.join("\n")}\n# END naive nic\nEOF`,
    `chmod +x /etc/rc.local`,
  ].join("\n") + "\n";
}

interface NicOrig { gro: string; txq: string; rps: string[]; flow: string[]; queues: string[] }
async function nicOriginals(h: LabHost): Promise<NicOrig> {
  const i = h.iface;
  const r = await h.exec(`ethtool -k ${i} | awk -F': ' '$1=="generic-receive-offload"{print $2}';
    cat /sys/class/net/${i}/tx_queue_len; for q in /sys/class/net/${i}/queues/rx-*; do echo "\${q##*/} $(cat $q/rps_cpus) $(cat $q/rps_flow_cnt)"; done`);
  const lines = r.stdout.trim().split("\n");
  const qs = lines.slice(2).map((l) => l.split(" "));
  return { gro: lines[0].split(" ")[0], txq: lines[1], queues: qs.map((q) => q[0]), rps: qs.map((q) => q[1]), flow: qs.map((q) => q[2]) };
}
async function resetNic(h: LabHost, o: NicOrig): Promise<void> {
  const i = h.iface;
  const q = o.queues.map((n, k) => `echo ${o.rps[k]} > /sys/class/net/${i}/queues/${n}/rps_cpus; echo ${o.flow[k]} > /sys/class/net/${i}/queues/${n}/rps_flow_cnt`).join("; ");
  const r = await h.exec(`ethtool -K ${i} gro ${o.gro} ; ip link set dev ${i} txqueuelen ${o.txq}; ${q}; rm -f /etc/rc.local; rm -rf /etc/rc.d /var/lib/pulumi-net-tuning /usr/local/libexec/net-tuning`);
  if (r.code !== 0) throw new Error(`nic reset failed: ${r.stderr}`);
}

async function sysctlsApplied(h: LabHost): Promise<string | undefined> {
  const v = await readValues(h);
  const wrong = Object.entries(SYSCTLS).filter(([k, want]) => v[k] !== want).map(([k]) => k);
  const f = await h.exec(`test -f ${FILE_PATH}`);
  if (wrong.length || f.code !== 0) return `host not changed as asked: ${wrong.length} of 40 values differ${f.code !== 0 ? ", no sysctl.d file" : ""}`;
  return undefined;
}
async function nicApplied(h: LabHost, mask: string): Promise<string | undefined> {
  const i = h.iface;
  const r = await h.exec(`ethtool -k ${i} | awk -F': ' '$1=="generic-receive-offload"{print $2}'; cat /sys/class/net/${i}/tx_queue_len; cat /sys/class/net/${i}/queues/rx-*/rps_cpus | sort -u; cat /sys/class/net/${i}/queues/rx-*/rps_flow_cnt | sort -u; grep -c . /etc/rc.local /etc/rc.d/rc.local 2>/dev/null | grep -v ':0$' | wc -l`);
  const [gro, txq, rps, flow, rc] = r.stdout.trim().split("\n").map((x) => x.trim());
  const bad: string[] = [];
  if (!gro?.startsWith("on")) bad.push(`gro ${gro}`);
  if (txq !== "5000") bad.push(`txqueuelen ${txq}`);
  if (parseInt(rps ?? "", 16) !== parseInt(mask, 16)) bad.push(`rps_cpus ${rps}`);
  if (flow !== "4096") bad.push(`rps_flow_cnt ${flow}`);
  if (rc === "0") bad.push("no rc.local");
  return bad.length ? `host not changed as asked (${bad.join(", ")})` : undefined;
}

export async function costBench(opts: {
  host: LabHost;
  repeats: number;
  orig: Record<string, string>;
  readerPids: number;
  log: (s: string) => void;
}): Promise<{ samples: CostSample[] }> {
  const { host: h, orig, readerPids, log } = opts;
  const nicOrig = await nicOriginals(h);
  const possible = (await h.exec("cat /sys/devices/system/cpu/possible")).stdout.trim(); // e.g. 0-1
  const [lo, hi] = possible.split("-").map(Number);
  const mask = ((2 ** ((hi ?? lo) + 1)) - 1).toString(16);
  const samples: CostSample[] = [];
  const sysctls = netTuningSysctls();
  const ssh = (cmd: string, stdin?: string, who: "root" | "sudo" = "root") => runCommand({ connection: h.connection(who), cmd, stdin, addPreviousOutputInEnv: false }, defaultSshTuning);

  // BENCH_COST_VARIANTS=a,b,...: only these variants (e.g. the apply-alone rows against the naive loop); default all
  const only = process.env.BENCH_COST_VARIANTS?.split(",").map((v) => v.trim()).filter(Boolean);
  const bad = only?.filter((v) => !(COST_VARIANTS as string[]).includes(v));
  if (bad?.length) throw new Error(`BENCH_COST_VARIANTS: unknown variant(s) ${bad.join(", ")} (known: ${COST_VARIANTS.join(", ")})`);
  const variants = only ? COST_VARIANTS.filter((v) => only.includes(v)) : COST_VARIANTS;
  for (let rep = 0; rep < opts.repeats; rep++) {
    const order = variants.map((_, i) => variants[(i + rep) % variants.length]);
    for (const variant of order) {
      // apply-only variants: capture the exact apply command and stdin (untimed; installs the engine)
      let captured: { cmd: string; stdin?: string; who: "root" | "sudo" } | undefined;
      if (variant.includes("-apply")) {
        await resetHost(h, orig); // the previous variant's apply-only run left its journal
        await resetNic(h, nicOrig);
        const who = variant.endsWith("-sudo") ? ("sudo" as const) : ("root" as const);
        const become = who === "sudo" ? ("sudo" as const) : undefined;
        const prep = new Stack({ project: "bench", stack: `cost-prep-${variant}-${rep}` });
        const r = await prep.up(variant.startsWith("nettuning")
          ? () => { new NetTuning("cost", { connection: h.connection(who), become, sysctls, fileName: FILE_NAME }); }
          : () => { new NicQueues("cost", { ...NIC_COST_ARGS(h), connection: h.connection(who), become }); });
        const run = r.runs.find((x) => x.name === "cost-apply");
        if (!r.ok || !run) throw new Error(`cost prep ${variant} failed: ${r.error}`);
        captured = { cmd: run.cmd, stdin: run.stdin, who };
        const d = await prep.destroy();
        if (!d.ok) throw new Error(`cost prep ${variant}: destroy failed: ${d.error}`);
      }
      await resetHost(h, orig);
      await resetNic(h, nicOrig);
      if (captured) {
        // "engine installed": the prep's destroy removed it with the last journal; install it as a first apply does
        // (root-owned, 0644, named by its sha256), untimed
        const e = engine();
        const put = await h.exec(`umask 022 && mkdir -p ${ENGINE_INSTALL_DIR} && cat > ${ENGINE_INSTALL_DIR}/${e.fileName} && [ "$(sha256sum < ${ENGINE_INSTALL_DIR}/${e.fileName})" = "${e.sha256}  -" ]`, { stdin: e.text });
        if (put.code !== 0) throw new Error(`cost ${variant}: cannot install the engine: ${put.stderr}`);
      }
      const before = await readCounters(h);
      let ok = true;
      let ms = 0;
      let sshMs = 0;
      let sessions = 0;
      let note: string | undefined;
      let stack: Stack | undefined;
      const t0 = nowMs();
      if (variant === "nettuning" || variant === "nicqueues") {
        stack = new Stack({ project: "bench", stack: `cost-${variant}-${rep}` });
        const r = await stack.up(variant === "nettuning"
          ? () => { new NetTuning("cost", { connection: h.connection("root"), sysctls, fileName: FILE_NAME }); }
          : () => { new NicQueues("cost", NIC_COST_ARGS(h)); });
        ms = nowMs() - t0;
        ok = r.ok;
        note = r.error?.slice(0, 2000);
        sessions = r.sessions.total;
        sshMs = r.runs.reduce((a, x) => a + x.durationMs, 0);
      } else if (captured) {
        const r = await runCommand({ connection: h.connection(captured.who), cmd: captured.cmd, stdin: captured.stdin, addPreviousOutputInEnv: false }, defaultSshTuning);
        ms = nowMs() - t0;
        sshMs = r.durationMs;
        sessions = 1;
        ok = r.ok;
        note = r.error;
      } else if (variant === "naive-sysctl-40-ssh") {
        for (const [k, v] of Object.entries(SYSCTLS)) {
          const r = await ssh(`sysctl -w '${k}=${v}'`);
          sessions++;
          sshMs += r.durationMs;
          if (!r.ok) { ok = false; note = r.error; break; }
        }
        if (ok) { // and one more session that writes the sysctl.d file
          const r = await ssh(`cat > ${FILE_PATH}`, sysctlFile());
          sessions++;
          sshMs += r.durationMs;
          if (!r.ok) { ok = false; note = r.error; }
        }
        ms = nowMs() - t0;
      } else {
        // one session: `true`, or a naive script on stdin (the sysctl loop also as the sudo user under sudo)
        const sudo = variant === "naive-sysctl-sudo";
        const cmd = variant === "ssh-true" ? "true" : sudo ? "sudo -n /bin/sh -s" : "/bin/sh -s";
        const stdin = variant === "naive-sysctl" || sudo ? naiveSysctlScript() : variant === "naive-nic" ? naiveNicScript(h.iface, mask) : undefined;
        const r = await ssh(cmd, stdin, sudo ? "sudo" : "root");
        ms = nowMs() - t0;
        sshMs = r.durationMs;
        sessions = 1;
        ok = r.ok;
        note = r.error;
      }
      await settle(h); // sshd reaps the connection before we read its CPU counters
      const after = await readCounters(h);
      // Did the variant really change the host? (untimed, after the counters)
      if (ok && variant !== "ssh-true") {
        const problem = variant.startsWith("nicqueues") || variant === "naive-nic" ? await nicApplied(h, mask) : await sysctlsApplied(h);
        if (problem) { ok = false; note = `${problem}${note ? `; ${note}` : ""}`; }
      }
      const s: CostSample = {
        variant, repeat: rep, ok, ms, sshMs, sessions,
        procs: after.lastPid - before.lastPid - readerPids,
        hostCpuMs: (after.cpuNs - before.cpuNs) / 1e6,
        note,
      };
      samples.push(s);
      log(`cost rep=${rep} ${variant}: ${ok ? "ok" : "FAILED"} ${s.ms.toFixed(0)} ms (ssh ${s.sshMs.toFixed(0)} ms), ${s.sessions} sessions, ${s.procs} processes, host CPU ${s.hostCpuMs.toFixed(3)} ms${note ? `\n  ${note}` : ""}`);
      if (stack) await stack.destroy(); // untimed; the resets below make the next run start clean anyway
      // the next variant starts without an installed engine (a create's row includes the install)
      if (captured) await h.exec(`rm -rf ${ENGINE_INSTALL_DIR}`);
    }
  }
  await resetHost(h, orig);
  await resetNic(h, nicOrig);
  return { samples };
}
