/**
 * `npm run bench`: fleet convergence against Ansible, host-side cost, program scale, state size.
 * Writes bench/results/latest.{md,json} and prints the ratio figures last. Not part of `npm test`.
 *
 * Environment (defaults finish in about 40 minutes on the 2-vCPU machine, Ansible at forks 5 and forks = hosts):
 *   BENCH_HOSTS=10,50          fleet sizes (lab hosts; max 256)
 *   BENCH_REPEATS=2,1          fleet repeats: one number for every size or one per size (each repeat = the three
 *                              approaches side by side); 3 at 50 hosts: about 35 minutes in all
 *   BENCH_COST_REPEATS=5       host-cost repeats (each = all six variants side by side)
 *   BENCH_SCALE_HOSTS=1000     hosts in the program-scale benchmark
 *   BENCH_SCALE_REPEATS=5      program-scale repeats (child processes, alternating order)
 *   BENCH_PARTS=fleet,cost,scale,state   which parts to run (state: NetTuning + NicQueues on one lab host, root and sudo;
 *                              live: the live-read cost of previews at BENCH_HOSTS, bench/live.ts, not in the default;
 *                              cli: fleets under the real pulumi CLI at BENCH_CLI_HOSTS (default 10,50), bench/cli.ts,
 *                              not in the default; NT_COMMAND_PROVIDER selects the real command plugin;
 *                              audit: issue #33's Scale test, bench/audit.ts: BENCH_AUDIT_HOSTS (200) lab hosts audited
 *                              vs their live read vs Ansible setup + command, same parallelism BENCH_AUDIT_PARALLEL (32),
 *                              BENCH_AUDIT_REPEATS (2), BENCH_AUDIT_ANSIBLE=0 skips Ansible: audit.{json,md}; not in
 *                              the default, about 10 minutes at 200 hosts)
 *   BENCH_ANSIBLE_TIMEOUT_S=900    hard bound on one ansible-playbook run
 *   BENCH_OUT=bench/results        output directory
 *   BENCH_HOST_CPU=cpuacct|cgroup2|ticks   force one host-CPU method (default: the best that works, bench/lib.ts)
 *   BENCH_RERENDER=1               only re-render latest.md from latest.json
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { cleanupStaleLabs, Lab, startLab } from "../testkit/lab";
import { costBench, CostSample } from "./hostcost";
import { HostState, stateBench } from "./state";
import { APPROACHES, fleetBench, FleetSample } from "./fleet";
import { readValues, verifyKeys, SYSCTLS } from "./keys";
import { attachCpuMeters, calibratePidReader, CPU_METHOD_TEXT, CpuMethod, detachCpuMeters, mapLimit, run } from "./lib";
import { report } from "./report";
import { scaleBench, ScaleSample } from "./scale";
import { liveBench } from "./live";
import { cliFleetBench, renderCliFleet } from "./cli";
import { auditBench, auditBenchOptions } from "./audit";

function intList(name: string, def: string): number[] {
  const v = (process.env[name] ?? def).split(",").map((x) => x.trim()).filter(Boolean).map(Number);
  if (!v.length || v.some((x) => !Number.isInteger(x) || x < 1)) throw new Error(`${name} must be a comma-separated list of positive integers`);
  return v;
}

export interface BenchResults {
  startedAt: string;
  finishedAt?: string;
  machine: Record<string, unknown>;
  config: Record<string, unknown>;
  keys: Record<string, string>;
  fleet: FleetSample[];
  cost: CostSample[];
  state: HostState[];
  scale: ScaleSample[];
  log: string[];
  /** Remarks shown under the machine line (e.g. a part re-measured later and merged in). */
  notes?: string[];
}

async function main(): Promise<void> {
  if (process.env.BENCH_RERENDER) {
    // re-render latest.md and the ratios from an existing latest.json (no measurement)
    const dir = path.resolve(process.env.BENCH_OUT ?? path.join(__dirname, "results"));
    const res = JSON.parse(fs.readFileSync(path.join(dir, "latest.json"), "utf8")) as BenchResults;
    const { markdown, ratios } = report(res);
    fs.writeFileSync(path.join(dir, "latest.md"), markdown);
    console.log(ratios);
    return;
  }
  const sizes = intList("BENCH_HOSTS", "10,50");
  // one number for every size, or one per size
  const repeatList = intList("BENCH_REPEATS", "2,1");
  const repeats = sizes.map((_, i) => repeatList[Math.min(i, repeatList.length - 1)]);
  const costRepeats = intList("BENCH_COST_REPEATS", "5")[0];
  const scaleHosts = intList("BENCH_SCALE_HOSTS", "1000")[0];
  const scaleRepeats = intList("BENCH_SCALE_REPEATS", "5")[0];
  const ansibleTimeoutMs = intList("BENCH_ANSIBLE_TIMEOUT_S", "900")[0] * 1000;
  const parts = new Set((process.env.BENCH_PARTS ?? "fleet,cost,scale,state").split(",").map((s) => s.trim()));
  const outDir = path.resolve(process.env.BENCH_OUT ?? path.join(__dirname, "results"));
  fs.mkdirSync(outDir, { recursive: true });
  const t0 = Date.now();
  const log: string[] = [];
  const say = (s: string) => {
    const line = `[${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${s}`;
    log.push(line);
    console.log(line);
  };
  const ver = async (cmd: string, args: string[]) => (await run(cmd, args, { timeoutMs: 30_000 })).stdout.split("\n")[0].trim();
  const results: BenchResults = {
    startedAt: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      memGB: Math.round(os.totalmem() / 2 ** 30),
      kernel: os.release(),
      node: process.version,
      loadavgAtStart: os.loadavg(),
      ansible: parts.has("fleet") ? await ver("ansible", ["--version"]) : undefined,
      ansiblePosix: parts.has("fleet")
        ? (() => { try { return JSON.parse(fs.readFileSync("/usr/lib/python3/dist-packages/ansible_collections/ansible/posix/MANIFEST.json", "utf8")).collection_info.version; } catch { return "unknown"; } })()
        : undefined,
      openssh: (await run("ssh", ["-V"], { timeoutMs: 10_000 })).stderr.trim(),
    },
    config: { sizes, repeats, costRepeats, scaleHosts, scaleRepeats, parts: [...parts] },
    keys: SYSCTLS,
    fleet: [], cost: [], state: [], scale: [], log,
  };
  const save = () => {
    results.finishedAt = new Date().toISOString();
    fs.writeFileSync(path.join(outDir, "latest.json"), JSON.stringify(results, null, 2) + "\n");
    const { markdown, ratios } = report(results);
    fs.writeFileSync(path.join(outDir, "latest.md"), markdown);
    return ratios;
  };

  const needLab = parts.has("fleet") || parts.has("cost") || parts.has("state");
  let lab: Lab | undefined;
  try {
    if (needLab) {
      if (process.getuid?.() !== 0) throw new Error("the fleet and cost benchmarks need root (lab hosts)");
      await cleanupStaleLabs();
      const nHosts = Math.max(parts.has("fleet") ? Math.max(...sizes) : 1, 1);
      say(`starting ${nHosts} lab hosts`);
      lab = await startLab({ hosts: nHosts, tag: "bench" });
      const want = process.env.BENCH_HOST_CPU as CpuMethod | undefined;
      if (want && !(want in CPU_METHOD_TEXT)) throw new Error(`BENCH_HOST_CPU must be one of ${Object.keys(CPU_METHOD_TEXT).join(", ")}`);
      const cpu = attachCpuMeters(lab.id, lab.hosts, want);
      results.machine.hostCpu = cpu;
      say(`host CPU: ${CPU_METHOD_TEXT[cpu]}`);
      const h0 = lab.hosts[0];
      await verifyKeys(h0);
      say("the 40 keys are writable in a lab host and differ from its defaults");
      const orig = await mapLimit(lab.hosts, 10, (h) => readValues(h));
      const readerPids = await calibratePidReader(h0);
      say(`pid counter reader costs ${readerPids} pid(s) per reading`);
      if (parts.has("cost")) {
        const c = await costBench({ host: h0, repeats: costRepeats, orig: orig[0], readerPids, log: say });
        results.cost = c.samples;
        save();
      }
      if (parts.has("state")) {
        results.state = [];
        for (const who of ["root", "sudo"] as const) for (const v of ["confirm off", "default"] as const) results.state.push(await stateBench(h0, who, say, v));
        save();
      }
      if (parts.has("fleet")) {
        results.fleet = await fleetBench({
          lab, sizes, repeats, orig, readerPids, ansibleTimeoutMs, log: say,
          workDir: fs.mkdtempSync(path.join(os.tmpdir(), "nt-bench-")),
        });
        save();
      }
      await lab.stop();
      lab = undefined;
    }
    if (parts.has("scale")) {
      results.scale = await scaleBench({ hosts: scaleHosts, repeats: scaleRepeats, timeoutMs: 600_000, log: say });
    }
    if (parts.has("live")) await liveBench({ sizes, outDir, log: say }); // writes live.json and live.md (issue #13)
    if (parts.has("audit")) {
      // issue #33's Scale test: audit.json and audit.md (its own lab; the one above is stopped by now)
      if (process.getuid?.() !== 0) throw new Error("the audit benchmark needs root (lab hosts)");
      const md = await auditBench({ ...auditBenchOptions(say), outDir });
      say(md.split("\n").filter((l) => l.startsWith("audit / live read") || l.startsWith("Ansible setup")).join(" "));
    }
    if (parts.has("cli")) {
      // fleets under the real pulumi CLI (issue #30): cli.json and cli.md; bench/results/real-cli.md discusses a run
      const cliSizes = intList("BENCH_CLI_HOSTS", "10,50");
      const r = await cliFleetBench(cliSizes, say);
      fs.writeFileSync(path.join(outDir, "cli.json"), JSON.stringify({ at: new Date().toISOString(), machine: results.machine, results: r }, null, 2) + "\n");
      fs.writeFileSync(path.join(outDir, "cli.md"), renderCliFleet(r));
    }
  } finally {
    if (lab) await lab.stop().catch((e) => console.error(e));
    detachCpuMeters();
  }
  const ratios = save();
  say(`wrote ${path.join(outDir, "latest.md")} and latest.json`);
  console.log("\n" + ratios);
  void APPROACHES;
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
