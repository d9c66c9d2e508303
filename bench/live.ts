/**
 * Live-read cost (issue #13): `pulumi preview` of a NetTuning (40 keys) + NicQueues per host, through the harness,
 * with live previews on and off, at each fleet size. Per host: SSH sessions of the read (one, shared by both
 * resources), its wall time (connect + read, from ssh2), the bytes sent; per program run: preview wall time with and
 * without the read (the difference is what the read adds to a preview). Writes live.json and live.md into the output
 * directory. Hosts are lab hosts (network namespaces with their own sshd, loopback latency).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { NetTuning } from "../components/netTuning";
import { NicQueues } from "../components/nicQueues";
import { liveStats, LIVE_PREVIEW_ENV } from "../components/live";
import { Stack } from "../testkit/harness";
import { startLab } from "../testkit/lab";
import { netTuningSysctls } from "./keys";
import { fmtSummary, summarize } from "./lib";

export interface LiveSample {
  hosts: number;
  repeat: number;
  live: boolean;
  ok: boolean;
  /** preview wall time (program evaluation, plus the reads when live) */
  ms: number;
  /** read sessions opened (one per host when live) */
  sessions: number;
  /** per-host read time: connect + run + answer (ms) */
  readMs: number[];
  /** stdin of one read (the program and the requests) */
  stdinBytes: number;
  /** TCP bytes this machine sent per read (SSH handshake, login, command, stdin), per host */
  sentBytes: number[];
  failed: number;
  /** the machine's 1-minute load average after the preview (the machine is shared: other work slows the reads) */
  load1: number;
}

export async function liveBench(opts: { sizes: number[]; repeats?: number; outDir: string; log: (s: string) => void }): Promise<LiveSample[]> {
  const samples: LiveSample[] = [];
  const prev = process.env[LIVE_PREVIEW_ENV];
  try {
    for (const n of opts.sizes) {
      opts.log(`live: starting ${n} lab hosts`);
      const lab = await startLab({ hosts: n, tag: "blive" });
      try {
        const program = () => {
          for (const [i, h] of lab.hosts.entries()) {
            const connection = h.connection("root");
            new NetTuning(`s${i}`, { connection, sysctls: netTuningSysctls() });
            new NicQueues(`n${i}`, { connection, interface: h.iface, persistence: "none", txQueueLength: 2000, features: { gro: true } });
          }
          return {};
        };
        for (let rep = 0; rep < (opts.repeats ?? 3); rep++) {
          for (const live of rep % 2 === 0 ? [true, false] : [false, true]) {
            process.env[LIVE_PREVIEW_ENV] = live ? "1" : "0";
            const s0 = liveStats.samples.length;
            const r0 = liveStats.reads;
            const t0 = Date.now();
            const r = await new Stack({ project: "blive", stack: `p${n}` }).preview(program);
            const ms = Date.now() - t0;
            const reads = liveStats.samples.slice(s0);
            const sample: LiveSample = {
              hosts: n, repeat: rep, live, ok: r.ok, ms, sessions: liveStats.reads - r0,
              readMs: reads.map((x) => x.ms), stdinBytes: reads[0]?.stdinBytes ?? 0, sentBytes: reads.map((x) => x.sentBytes), failed: reads.filter((x) => !x.ok).length, load1: os.loadavg()[0],
            };
            samples.push(sample);
            opts.log(`live: ${n} hosts, live ${live ? "on " : "off"}: preview ${ms} ms, ${sample.sessions} read sessions, read per host ${fmtSummary(summarize(sample.readMs), 0, " ms")}, sent ${fmtSummary(summarize(sample.sentBytes), 0, " B")}${sample.failed ? `, ${sample.failed} failed` : ""}`);
          }
        }
      } finally {
        await lab.stop();
      }
    }
  } finally {
    if (prev === undefined) delete process.env[LIVE_PREVIEW_ENV];
    else process.env[LIVE_PREVIEW_ENV] = prev;
  }
  fs.mkdirSync(opts.outDir, { recursive: true });
  fs.writeFileSync(path.join(opts.outDir, "live.json"), JSON.stringify(samples, null, 2) + "\n");
  fs.writeFileSync(path.join(opts.outDir, "live.md"), liveMarkdown(samples));
  return samples;
}

export function liveMarkdown(samples: LiveSample[]): string {
  const md = [
    "# Live-read cost (BENCH_PARTS=live)",
    "",
    "`pulumi preview` (harness) of NetTuning (40 keys) + NicQueues on every host, live previews on vs off. Lab hosts on",
    "one machine (loopback); median [min–max] over the repeats. At most 32 reads in flight (`LIVE_READ_CONCURRENCY`);",
    "a read's time counts from its dial, not from its wait for a slot. stdin = the tree-shaken read program and the",
    "requests; sent = TCP bytes this machine wrote per read (SSH handshake, login, command, stdin).",
    "",
    "| hosts | read sessions per host | read per host (connect + read), ms | stdin per read, bytes | sent per read, bytes | preview, live off, ms | preview, live on, ms | added per preview, ms |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const n of [...new Set(samples.map((s) => s.hosts))]) {
    const on = samples.filter((s) => s.hosts === n && s.live && s.ok);
    const off = samples.filter((s) => s.hosts === n && !s.live && s.ok);
    const per = on.map((s) => s.sessions / n);
    const added = summarize(on.map((s) => s.ms)).median - summarize(off.map((s) => s.ms)).median;
    md.push(`| ${n} | ${fmtSummary(summarize(per), 2)} | ${fmtSummary(summarize(on.flatMap((s) => s.readMs)), 0)} | ${on[0]?.stdinBytes ?? 0} | ${fmtSummary(summarize(on.flatMap((s) => s.sentBytes ?? [])), 0)} | ${fmtSummary(summarize(off.map((s) => s.ms)), 0)} | ${fmtSummary(summarize(on.map((s) => s.ms)), 0)} | ${Math.round(added)} |`);
  }
  const failed = samples.reduce((a, s) => a + s.failed, 0);
  const load = summarize(samples.map((s) => s.load1 ?? NaN));
  md.push("", failed ? `${failed} reads failed.` : "Every read succeeded.", "");
  if (load.n) md.push(`1-minute load average of the machine during the runs: ${fmtSummary(load, 2)} (${os.cpus().length} CPUs).`, "");
  return md.join("\n");
}
