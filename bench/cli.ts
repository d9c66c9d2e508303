/**
 * 5. Fleets under the real `pulumi` CLI (BENCH_PARTS=cli; not in the default parts): for each fleet size in
 * BENCH_CLI_HOSTS (default 10,50), one stack with a NetTuning of the 40 keys (bench/keys.ts) and a NicQueues per lab
 * host (7 resources per host with the stack's engine delivery), run by the CLI v3.248.0 built by
 * scripts/pulumi-toolchain.sh. Side by side, on the same hosts, in this order:
 *   - `pulumi preview` of the new stack, `pulumi up --skip-preview` (the first apply), `pulumi up` with nothing changed
 *     (its preview and its update: the program runs twice), `pulumi preview` with nothing changed, and the unchanged
 *     `pulumi up` again with PULUMI_SKIP_CHECKPOINTS=true (the engine writes no checkpoint at each step);
 *   - the same number of bare `command:remote:Command`s (`create: true`, the same connection; 5 per host):
 *     `pulumi up --skip-preview`, then `pulumi up` unchanged: where the engine's own time goes;
 *   - Ansible, copy + `sysctl -p` of the same 40 keys (bench/ansible.ts) at forks = hosts, the CLI's parallelism
 *     being unbounded by default (its first run, then a second with nothing to change).
 * Each timing is wall time of the command; peak RSS is GNU time's %M for the `pulumi` process (the largest of it and
 * the plugins it waited for); the checkpoint bytes are `pulumi stack export`'s. The command provider is the one
 * testkit/cli runs (NT_COMMAND_PROVIDER: the real plugin; else the Node stand-in), named in the results.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CliProject, CliResult, languageLabel, providerLabel, toolchain } from "../testkit/cli";
import { startLab } from "../testkit/lab";
import { AnsibleBench } from "./ansible";
import { FILE_NAME, netTuningSysctls, readValues, resetHost } from "./keys";
import { mapLimit } from "./lib";

export interface CliStep {
  what: string;
  ok: boolean;
  ms: number;
  peakRssMb?: number;
}
export interface CliFleetResult {
  hosts: number;
  provider: string;
  language: string;
  cli: string;
  steps: CliStep[];
  checkpointBytes: number;
  checkpointBytesPerHost: number;
}

const FLEET_PROGRAM = (bare: boolean) => `"use strict";
const pulumi = require("@pulumi/pulumi");
const { NetTuning, NicQueues } = require("net-tuning");
const command = require("@pulumi/command");
const cfg = new pulumi.Config();
const key = cfg.requireSecret("privateKey");
const sysctls = JSON.parse(cfg.require("sysctls"));
for (const h of JSON.parse(cfg.require("fleet"))) {
  const connection = { host: h.host, port: h.port, user: "root", privateKey: key };
  ${bare
    ? `for (let i = 0; i < 5; i++) new command.remote.Command(\`\${h.name}-\${i}\`, { connection, create: "true" });`
    : `new NetTuning(\`\${h.name}-sys\`, { connection, sysctls, fileName: ${JSON.stringify(FILE_NAME)} });
  new NicQueues(\`\${h.name}-nic\`, { connection, interface: "eth0", persistence: "rc.local", features: { gro: true }, txQueueLength: 2000, rps: { cpus: "all" } });`}
}
`;

/** Runs `f` with `pulumi` wrapped in GNU time; returns the step with its wall time and peak RSS. */
async function timed(p: CliProject, what: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliStep & { r: CliResult }> {
  const rssFile = path.join(p.dir, `rss-${Date.now()}`);
  const r = await p.withProgram(args, 1_800_000, ["/usr/bin/time", "-f", "%M", "-o", rssFile], env);
  const kb = fs.existsSync(rssFile) ? Number(fs.readFileSync(rssFile, "utf8").trim().split("\n").pop()) : NaN;
  const step = { what, ok: r.code === 0, ms: r.ms, peakRssMb: Number.isFinite(kb) ? Math.round(kb / 1024) : undefined, r };
  if (!step.ok) process.stderr.write(`[cli bench] ${what} failed (exit ${r.code}):\n${(r.stdout + r.stderr).slice(-3000)}\n`);
  return step;
}

export async function cliFleetBench(sizes: number[], log: (s: string) => void): Promise<CliFleetResult[]> {
  const tc = toolchain();
  const out: CliFleetResult[] = [];
  for (const n of sizes) {
    const lab = await startLab({ hosts: n, tag: `clib${n}` });
    try {
      const hosts = lab.hosts;
      const originals = await mapLimit(hosts, 10, (h) => readValues(h));
      const fleet = JSON.stringify(hosts.map((h) => ({ name: h.name.replace(/[^a-z0-9-]/gi, "-"), host: h.address, port: h.port })));
      const make = (bare: boolean) =>
        new CliProject({
          name: bare ? `clibare${n}` : `clifleet${n}`,
          program: FLEET_PROGRAM(bare),
          config: { fleet, sysctls: JSON.stringify(netTuningSysctls()) },
          secrets: { privateKey: hosts[0].connection("root").privateKey },
        });
      const steps: CliStep[] = [];
      const push = (s: CliStep & { r?: CliResult }) => {
        steps.push({ what: s.what, ok: s.ok, ms: s.ms, peakRssMb: s.peakRssMb });
        log(`[cli bench] ${n} hosts: ${s.what}: ${s.ok ? "ok" : "FAILED"} ${(s.ms / 1000).toFixed(1)} s, peak RSS ${s.peakRssMb ?? "?"} MB`);
      };
      const stack = (p: CliProject) => ["--non-interactive", "--stack", p.stack];
      const p = make(false);
      await p.init();
      push(await timed(p, "preview (new stack)", ["preview", ...stack(p)]));
      push(await timed(p, "up --skip-preview (first apply)", ["up", "--yes", "--skip-preview", ...stack(p)]));
      push(await timed(p, "up, nothing changed (preview + update)", ["up", "--yes", ...stack(p)]));
      push(await timed(p, "preview, nothing changed", ["preview", ...stack(p)]));
      // how much of an unchanged up is the engine writing its checkpoint at every step (PULUMI_SKIP_CHECKPOINTS)
      push(await timed(p, "up, nothing changed, PULUMI_SKIP_CHECKPOINTS=true", ["up", "--yes", ...stack(p)], { PULUMI_SKIP_CHECKPOINTS: "true" }));
      const exported = Buffer.byteLength((await p.export()).text);
      push(await timed(p, "destroy --skip-preview", ["destroy", "--yes", "--skip-preview", ...stack(p)]));
      const empty = Buffer.byteLength((await p.export()).text);
      p.remove();

      const b = make(true);
      await b.init();
      push(await timed(b, "bare Commands: up --skip-preview (5 per host)", ["up", "--yes", "--skip-preview", ...stack(b)]));
      push(await timed(b, "bare Commands: up, nothing changed", ["up", "--yes", ...stack(b)]));
      await b.withProgram(["destroy", "--yes", "--skip-preview", ...stack(b)]);
      b.remove();

      await mapLimit(hosts, 10, (h, i) => resetHost(h, originals[i]));
      const ans = new AnsibleBench(lab, hosts, os.tmpdir());
      for (const what of ["first", "nothing changed"]) {
        const a = await ans.play("copy-reload", 1_800_000, n);
        push({ what: `Ansible copy + sysctl -p, forks = ${n}: ${what}`, ok: a.ok, ms: a.ms });
      }
      await mapLimit(hosts, 10, (h, i) => resetHost(h, originals[i]));
      out.push({ hosts: n, provider: providerLabel(), language: languageLabel(), cli: tc.version, steps, checkpointBytes: exported, checkpointBytesPerHost: Math.round((exported - empty) / n) });
    } finally {
      await lab.stop();
    }
  }
  return out;
}

export function renderCliFleet(results: CliFleetResult[]): string {
  const lines = [
    "## Fleets under the real pulumi CLI",
    "",
    ...(results[0] ? [`pulumi ${results[0].cli}; programs served by ${results[0].language}; command provider: ${results[0].provider}.`, ""] : []),
    "| hosts | step | wall | peak RSS (pulumi) |",
    "|---|---|---|---|",
  ];
  for (const r of results) for (const s of r.steps) lines.push(`| ${r.hosts} | ${s.what}${s.ok ? "" : " (FAILED)"} | ${(s.ms / 1000).toFixed(1)} s | ${s.peakRssMb === undefined ? "" : `${s.peakRssMb} MB`} |`);
  lines.push("", "| hosts | checkpoint bytes | per host |", "|---|---|---|");
  for (const r of results) lines.push(`| ${r.hosts} | ${r.checkpointBytes.toLocaleString("en")} | ${r.checkpointBytesPerHost.toLocaleString("en")} |`);
  return lines.join("\n") + "\n";
}

if (require.main === module) {
  const sizes = (process.env.BENCH_CLI_HOSTS ?? "10,50").split(",").map(Number);
  const dir = process.env.BENCH_OUT ?? path.join(__dirname, "results");
  cliFleetBench(sizes, (s) => process.stdout.write(`${s}\n`)).then(
    (r) => {
      fs.writeFileSync(path.join(dir, "cli.json"), JSON.stringify({ at: new Date().toISOString(), machine: { cpus: os.cpus().length, load: os.loadavg() }, results: r }, null, 2));
      fs.writeFileSync(path.join(dir, "cli.md"), renderCliFleet(r));
      process.stdout.write(renderCliFleet(r));
    },
    (e: Error) => {
      process.stderr.write(`${e.stack}\n`);
      process.exit(1);
    },
  );
}
