/**
 * Audit at scale (issue #33): on the same lab hosts, side by side in one run, at the same parallelism:
 *   - `net-tuning audit` (auditHosts: known_hosts handshake + one session with the audit program, parse, findings);
 *   - the same audit without the host-key handshake (the session alone);
 *   - the previews' live read of the same hosts (NetTuning of 40 keys + NicQueues: renderLiveRead, one session each);
 *   - Ansible: `setup` (gather_facts) plus `command` tasks gathering the same facts (counters, ethtool, sysctls, boot
 *     files), forks = the same parallelism.
 * Targets from the issue: audit ≤ 3 × the live read, and ≥ 10 × faster than Ansible.
 *
 * Run: `BENCH_PARTS=audit npm run bench`, or alone `npx ts-node --transpile-only -P tsconfig.dev.json bench/audit.ts`
 * (root). Environment:
 *   BENCH_AUDIT_HOSTS=200  BENCH_AUDIT_PARALLEL=32  BENCH_AUDIT_REPEATS=2  BENCH_OUT=bench/results
 *   BENCH_AUDIT_ANSIBLE=0  skip Ansible
 * Writes audit.json and audit.md into BENCH_OUT.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { Lab, STATE_ROOT, startLab } from "../testkit/lab";
import { auditHosts, AuditOptions, AuditTarget } from "../provider/audit/run";
import { auditProgram } from "../provider/audit/program";
import { limiter, readOverSsh } from "../provider/live/ssh";
import { LIVE_READ_COMMAND, renderLiveRead } from "../provider/live/read";
import { SYSCTLS } from "./keys";
import { fmtSummary, run, summarize } from "./lib";

interface Sample {
  approach: "audit" | "audit-no-hostkey" | "live-read" | "ansible";
  repeat: number;
  hosts: number;
  parallel: number;
  wallMs: number;
  perHostMs: number[];
  failed: number;
  load1: number;
  note?: string;
}

function env(name: string, def: number): number {
  const v = Number(process.env[name] ?? def);
  if (!Number.isInteger(v) || v < 0) throw new Error(`${name} must be a non-negative integer`);
  return v;
}

async function auditRun(lab: Lab, parallel: number, knownHosts: string | undefined): Promise<Omit<Sample, "approach" | "repeat">> {
  const targets: AuditTarget[] = lab.hosts.map((h) => ({ name: h.name, host: h.address, port: h.port, user: "root" }));
  const o: AuditOptions = { privateKey: lab.hosts[0].root.privateKey, sudo: false, parallel, timeoutMs: 60_000, advice: {} };
  if (knownHosts) o.hostKeys = { files: [knownHosts], acceptNew: false };
  const t0 = Date.now();
  const reports = await auditHosts(targets, o);
  return { hosts: lab.hosts.length, parallel, wallMs: Date.now() - t0, perHostMs: reports.map((r) => r.ms), failed: reports.filter((r) => !r.reachable).length, load1: os.loadavg()[0] };
}

async function liveRun(lab: Lab, parallel: number): Promise<Omit<Sample, "approach" | "repeat">> {
  const lim = limiter(parallel);
  const t0 = Date.now();
  const res = await Promise.all(lab.hosts.map((h) => lim.run(() => readOverSsh(h.connection("root"), LIVE_READ_COMMAND, renderLiveRead([
    { kind: "sysctl", ownerId: `nt-bench-${h.name}`, keys: Object.keys(SYSCTLS) },
    { kind: "nic", ownerId: `nt-benchnic-${h.name}`, keys: [`${h.iface}/txqueuelen`, `${h.iface}/features.gro`] },
  ]), 60_000))));
  return { hosts: lab.hosts.length, parallel, wallMs: Date.now() - t0, perHostMs: res.map((r) => r.ms), failed: res.filter((r) => !r.ok || r.code !== 0).length, load1: os.loadavg()[0] };
}

function ansibleDir(lab: Lab, base: string): string {
  const dir = fs.mkdtempSync(path.join(base, "ansible-audit-"));
  fs.writeFileSync(path.join(dir, "inventory.ini"), [
    "[lab]", ...lab.hosts.map((h) => `${h.name} ansible_host=${h.address} ansible_port=${h.port}`), "",
    "[lab:vars]", "ansible_user=root", `ansible_ssh_private_key_file=${lab.hosts[0].root.keyPath}`, "ansible_python_interpreter=/usr/bin/python3", "",
  ].join("\n"));
  fs.writeFileSync(path.join(dir, "ansible.cfg"), "[defaults]\nhost_key_checking = False\nretry_files_enabled = False\n");
  // the facts the audit reads: setup (kernel, distribution, CPUs, memory, interfaces), then one command for the rest
  fs.writeFileSync(path.join(dir, "audit.yml"), `- hosts: lab
  gather_facts: true
  tasks:
    - name: counters, ethtool, sysctls, boot files, records (what net-tuning audit reads)
      ansible.builtin.shell: |
        cat /proc/net/netstat /proc/net/snmp /proc/net/softnet_stat
        awk '$4 == "06"' /proc/net/tcp /proc/net/tcp6 | wc -l
        for i in $(ls /sys/class/net | grep -v '^lo$'); do ethtool -i $i; ethtool -l $i; ethtool -g $i; ethtool -k $i; ethtool -S $i; done 2>&1
        sysctl -a -r '^net\\.' 2>/dev/null
        cat /etc/sysctl.d/*.conf /etc/sysctl.conf 2>/dev/null
        cat /var/lib/pulumi-net-tuning-converged/* 2>/dev/null || true
      changed_when: false
      register: audit
`);
  return dir;
}

async function ansibleRun(lab: Lab, dir: string, parallel: number): Promise<Omit<Sample, "approach" | "repeat">> {
  const r = await run("ansible-playbook", ["-i", path.join(dir, "inventory.ini"), "--forks", String(parallel), path.join(dir, "audit.yml")], {
    env: { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", HOME: process.env.HOME ?? "/root", LANG: "C.UTF-8", ANSIBLE_CONFIG: path.join(dir, "ansible.cfg"), ANSIBLE_NOCOLOR: "1", ANSIBLE_LOCAL_TEMP: path.join(dir, "tmp") },
    cwd: dir, timeoutMs: 3_600_000,
  });
  const recap = r.stdout.slice(Math.max(0, r.stdout.lastIndexOf("PLAY RECAP")));
  let failed = 0;
  let ok = 0;
  for (const m of recap.matchAll(/ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)/g)) { failed += Number(m[3]) + Number(m[4]) > 0 ? 1 : 0; ok++; }
  return { hosts: lab.hosts.length, parallel, wallMs: r.ms, perHostMs: [], failed: failed + (lab.hosts.length - ok), load1: os.loadavg()[0], note: r.code === 0 ? undefined : `exit ${r.code}: ${(r.stdout + r.stderr).slice(-400)}` };
}

function markdown(samples: Sample[], startedAt: string): string {
  const by = (a: Sample["approach"]) => samples.filter((s) => s.approach === a);
  const med = (a: Sample["approach"]) => summarize(by(a).map((s) => s.wallMs)).median;
  const n = samples[0]?.hosts ?? 0;
  const p = samples[0]?.parallel ?? 0;
  const out = [
    "# Audit at scale (bench/audit.ts, issue #33)",
    "",
    `${n} lab hosts (network namespaces with their own sshd, one machine: ${os.cpus().length} CPUs, ${os.release()}), parallelism ${p} for every approach, ${startedAt}.`,
    "Each repeat runs the approaches side by side, in alternating order. Wall time of the whole fleet; per host: dial to answer (the audit: one handshake, which checks the host key, and its session).",
    "",
    "| approach | fleet wall time, ms (median [min–max]) | per host, ms | failed |",
    "|---|---|---|---|",
  ];
  for (const a of ["audit", "audit-no-hostkey", "live-read", "ansible"] as const) {
    const s = by(a);
    if (!s.length) continue;
    out.push(`| ${a} | ${fmtSummary(summarize(s.map((x) => x.wallMs)), 0)} | ${s[0].perHostMs.length ? fmtSummary(summarize(s.flatMap((x) => x.perHostMs)), 0) : "-"} | ${s.reduce((x, y) => x + y.failed, 0)} |`);
  }
  out.push("");
  if (by("live-read").length) out.push(`audit / live read: ${(med("audit") / med("live-read")).toFixed(2)} × (target ≤ 3 ×); without the host-key handshake ${(med("audit-no-hostkey") / med("live-read")).toFixed(2)} ×.`);
  if (by("ansible").length) out.push(`Ansible setup + command / audit: ${(med("ansible") / med("audit")).toFixed(1)} × (target ≥ 10 ×).`);
  const notes = samples.filter((s) => s.note).map((s) => `- ${s.approach} repeat ${s.repeat}: ${s.note}`);
  if (notes.length) out.push("", ...notes);
  out.push("", `1-minute load average during the runs: ${fmtSummary(summarize(samples.map((s) => s.load1)), 2)}.`, "");
  return out.join("\n");
}

/** What one audit bench run measures, and where it writes audit.json / audit.md. */
export interface AuditBenchOptions {
  hosts: number;
  parallel: number;
  repeats: number;
  withAnsible: boolean;
  outDir: string;
  log: (s: string) => void;
}

/** The options from the environment (BENCH_AUDIT_*, BENCH_OUT), as `npm run bench` and a direct run read them. */
export function auditBenchOptions(log: (s: string) => void): AuditBenchOptions {
  return {
    hosts: env("BENCH_AUDIT_HOSTS", 200),
    parallel: env("BENCH_AUDIT_PARALLEL", 32),
    repeats: env("BENCH_AUDIT_REPEATS", 2),
    withAnsible: process.env.BENCH_AUDIT_ANSIBLE !== "0",
    outDir: path.resolve(process.env.BENCH_OUT ?? path.join(__dirname, "results")),
    log,
  };
}

/**
 * The audit part of `npm run bench` (BENCH_PARTS=audit, issue #33's Scale test): its own lab of `hosts` hosts, the
 * approaches side by side per repeat, audit.json and audit.md written into `outDir`; returns the Markdown.
 */
export async function auditBench(o: AuditBenchOptions): Promise<string> {
  const { hosts, parallel, repeats, withAnsible, outDir, log } = o;
  const startedAt = new Date().toISOString();
  log(`audit bench: starting ${hosts} lab hosts`);
  const lab = await startLab({ hosts, tag: "baudit" });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "nt-bench-audit-"));
  const samples: Sample[] = [];
  try {
    const pub = fs.readFileSync(path.join(STATE_ROOT, lab.id, "keys", "host_ed25519_key.pub"), "utf8").trim().split(/\s+/).slice(0, 2).join(" ");
    const knownHosts = path.join(tmp, "known_hosts");
    fs.writeFileSync(knownHosts, lab.hosts.map((h) => `${h.address} ${pub}\n`).join(""));
    auditProgram(); // read once, outside the timings (as a CLI run does before its first host)
    const dir = withAnsible ? ansibleDir(lab, tmp) : "";
    for (let rep = 0; rep < repeats; rep++) {
      const order: Sample["approach"][] = ["audit", "audit-no-hostkey", "live-read", ...(withAnsible ? (["ansible"] as const) : [])];
      if (rep % 2 === 1) order.reverse();
      for (const a of order) {
        const s = a === "audit" ? await auditRun(lab, parallel, knownHosts)
          : a === "audit-no-hostkey" ? await auditRun(lab, parallel, undefined)
          : a === "live-read" ? await liveRun(lab, parallel)
          : await ansibleRun(lab, dir, parallel);
        samples.push({ approach: a, repeat: rep, ...s });
        log(`${a} (repeat ${rep}): ${s.wallMs} ms for ${s.hosts} hosts${s.perHostMs.length ? `, per host ${fmtSummary(summarize(s.perHostMs), 0, " ms")}` : ""}${s.failed ? `, ${s.failed} failed` : ""}`);
      }
    }
  } finally {
    await lab.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, "audit.json"), JSON.stringify({ startedAt, finishedAt: new Date().toISOString(), samples }, null, 2) + "\n");
  const md = markdown(samples, startedAt);
  fs.writeFileSync(path.join(outDir, "audit.md"), md);
  return md;
}

async function main(): Promise<void> {
  const md = await auditBench(auditBenchOptions((s) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${s}\n`)));
  process.stdout.write(md);
}

if (require.main === module) {
  main().catch((e) => {
    process.stderr.write(`${(e as Error).stack ?? e}\n`);
    process.exitCode = 1;
  });
}
