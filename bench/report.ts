/** Renders bench results as markdown tables and the ratio summary printed last. */
import { HostState, STATE_FIELDS } from "./state";
import type { BenchResults } from "./index";
import { APPROACHES, Approach, FleetSample } from "./fleet";
import { COST_VARIANTS, CostSample } from "./hostcost";
import { CPU_METHOD_TEXT, CpuMethod, fmtSummary, summarize } from "./lib";
import type { ScaleSample } from "./scale";
type ScaleSampleT = ScaleSample;
type ScaleVariant = ScaleSample["variant"];

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);
const NAMES: Record<Approach, string> = {
  nettuning: "NetTuning (harness, parallel unbounded)",
  "ansible-sysctl": "Ansible ansible.posix.sysctl × 40 (forks 5)",
  "ansible-copy": "Ansible copy + `sysctl -p` handler (forks 5)",
  "ansible-sysctl-forks-n": "Ansible ansible.posix.sysctl × 40 (forks = hosts)",
  "ansible-copy-forks-n": "Ansible copy + `sysctl -p` handler (forks = hosts)",
};

function perRepeatRatios<T>(samples: T[], key: (s: T) => number, group: (s: T) => number, num: (s: T) => boolean, den: (s: T) => boolean): number[] {
  const reps = [...new Set(samples.map(group))];
  const out: number[] = [];
  for (const r of reps) {
    const a = samples.find((s) => group(s) === r && num(s));
    const b = samples.find((s) => group(s) === r && den(s));
    if (a && b && key(b) > 0) out.push(key(a) / key(b));
  }
  return out;
}

export function report(res: BenchResults): { markdown: string; ratios: string } {
  const md: string[] = [];
  const ratios: string[] = [];
  const m = res.machine;
  md.push(`# Benchmark results (${res.startedAt})`, "");
  md.push(`Machine: ${m.cpus} vCPU (${m.cpuModel}), ${m.memGB} GB, kernel ${m.kernel}, Node ${m.node}, ${m.openssh}` +
    (m.ansible ? `, ${m.ansible}, ansible.posix ${m.ansiblePosix}` : "") +
    `. Load average at start: ${(m.loadavgAtStart as number[]).map((x) => x.toFixed(2)).join(" ")} (the machine is shared).`, "");
  // host CPU: µs precision from a cgroup (machine.hostCpu); results from before it (or without a cgroup) are in 10 ms ticks
  const cpuMethod = (m.hostCpu as CpuMethod | undefined) ?? "ticks";
  const fmtCpu = (xs: number[], tickDigits = 0) => (cpuMethod === "ticks" ? fmtSummary(summarize(xs), tickDigits) : fmtSummary(summarize(xs), 3, "", true));
  const cpuText = m.hostCpu === undefined ? "cutime+cstime of the host's sshd (10 ms ticks)" : CPU_METHOD_TEXT[cpuMethod];
  if (res.cost.length || res.fleet.length) md.push(`Host CPU: ${cpuText}${cpuMethod === "ticks" ? "" : "; figures in ms with µs precision"}.`, "");
  for (const n of res.notes ?? []) md.push(`Note: ${n}`, "");
  md.push("Figures are `median (min–max)` over repeats; ratios are computed per repeat (approaches run side by side in rotated order) and then summarised. See bench/README.md for the method.", "");

  // ---------------------------------------------------------------- fleet
  if (res.fleet.length) {
    md.push("## 1. Fleet apply: 40 sysctls persisted in /etc/sysctl.d/90-bench.conf", "");
    for (const n of [...new Set(res.fleet.map((s) => s.hosts))]) {
      const S = res.fleet.filter((s) => s.hosts === n);
      md.push(`### ${n} hosts (${Math.max(...S.map((s) => s.repeat)) + 1} repeats)`, "");
      md.push("| approach | first run: wall s | SSH sessions / host | TCP logins / host | processes / host | host CPU ms / host | second run (no change): wall s | sessions / host | processes / host | changed | failed runs |");
      md.push("|---|---|---|---|---|---|---|---|---|---|---|");
      for (const a of APPROACHES) {
        const xs = S.filter((s) => s.approach === a);
        if (!xs.length) continue;
        const okFirst = xs.filter((s) => s.first.ok);
        const okSecond = xs.filter((s) => s.second.ok);
        const fails = xs.length - okFirst.length + (xs.length - okSecond.length);
        const perHost = (f: (s: FleetSample) => number[]) => fmtSummary(summarize(okFirst.map((s) => mean(f(s)))), 1);
        md.push(`| ${NAMES[a]} | ${fmtSummary(summarize(okFirst.map((s) => s.first.ms / 1000)))} | ${perHost((s) => s.first.sessionsPerHost)} | ${perHost((s) => s.first.loginsPerHost)} | ${perHost((s) => s.first.procsPerHost)} | ${fmtCpu(okFirst.map((s) => mean(s.first.hostCpuMsPerHost)), 1)} | ` +
          `${fmtSummary(summarize(okSecond.map((s) => s.second.ms / 1000)))} | ${fmtSummary(summarize(okSecond.map((s) => mean(s.second.sessionsPerHost))), 1)} | ${fmtSummary(summarize(okSecond.map((s) => mean(s.second.procsPerHost))), 1)} | ${fmtSummary(summarize(okSecond.map((s) => s.second.changed ?? NaN)), 0)} | ${fails} |`);
      }
      md.push("");
      const ok = S.filter((s) => s.first.ok && s.second.ok);
      for (const a of APPROACHES.filter((x) => x !== "nettuning")) {
        const r1 = summarize(perRepeatRatios(ok, (s) => s.first.ms, (s) => s.repeat, (s) => s.approach === a, (s) => s.approach === "nettuning"));
        const r2 = summarize(perRepeatRatios(ok, (s) => s.second.ms, (s) => s.repeat, (s) => s.approach === a, (s) => s.approach === "nettuning"));
        const sess = summarize(perRepeatRatios(ok, (s) => mean(s.first.sessionsPerHost), (s) => s.repeat, (s) => s.approach === a, (s) => s.approach === "nettuning"));
        const line = `${n} hosts: ${NAMES[a]} / NetTuning — wall ×${fmtSummary(r1)}, no-change run ×${fmtSummary(r2)}, SSH sessions ×${fmtSummary(sess, 0)}`;
        md.push(`- ${line}`);
        ratios.push(line);
      }
      md.push("");
    }
  }

  // ---------------------------------------------------------------- cost
  if (res.cost.length) {
    const C = res.cost;
    md.push("## 2. Host-side cost of one create (one lab host)", "");
    md.push("| variant | wall ms | SSH ms | sessions | processes on host | host CPU ms | failed |");
    md.push("|---|---|---|---|---|---|---|");
    const label: Record<string, string> = {
      "ssh-true": "empty SSH session (`true`): SSH/sshd share",
      nettuning: "NetTuning create, 40 keys (+journal, file, read-back, report), engine delivery included",
      "nettuning-apply": "NetTuning apply alone as root, 40 keys, engine installed",
      "nettuning-apply-sudo": "NetTuning apply alone with become sudo, 40 keys, engine installed",
      "nicqueues-apply": "NicQueues apply alone as root, engine installed",
      "naive-sysctl": "naive: 40 × `sysctl -w` + `cat` the file, one session",
      "naive-sysctl-sudo": "naive as the sudo user: the same loop under `sudo -n /bin/sh -s`, one session",
      "naive-sysctl-40-ssh": "naive: 40 × `ssh host sysctl -w k=v` + 1 × `ssh host cat > file`",
      nicqueues: "NicQueues create (gro, txqueuelen, RPS ×4 queues, rc.local)",
      "naive-nic": "naive: ethtool -K + ip link + RPS writes + rc.local block",
    };
    for (const v of COST_VARIANTS) {
      const xs = C.filter((s) => s.variant === v);
      const ok = xs.filter((s) => s.ok);
      if (!xs.length) continue;
      md.push(`| ${label[v]} | ${fmtSummary(summarize(ok.map((s) => s.ms)), 0)} | ${fmtSummary(summarize(ok.map((s) => s.sshMs)), 0)} | ${fmtSummary(summarize(ok.map((s) => s.sessions)), 0)} | ${fmtSummary(summarize(ok.map((s) => s.procs)), 0)} | ${fmtCpu(ok.map((s) => s.hostCpuMs))} | ${xs.length - ok.length} |`);
    }
    md.push("");
    const pair = (a: string, b: string, f: (s: CostSample) => number) =>
      summarize(perRepeatRatios(C.filter((s) => s.ok), f, (s) => s.repeat, (s) => s.variant === a, (s) => s.variant === b));
    const net = (v: string, f: (s: CostSample) => number): number[] => {
      // per repeat: variant minus its sessions × the empty session
      const out: number[] = [];
      for (const r of [...new Set(C.map((s) => s.repeat))]) {
        const x = C.find((s) => s.repeat === r && s.variant === v && s.ok);
        const e = C.find((s) => s.repeat === r && s.variant === "ssh-true" && s.ok);
        if (x && e) out.push(f(x) - x.sessions * f(e));
      }
      return out;
    };
    for (const [a, b] of [["nettuning", "naive-sysctl"], ["nettuning-apply", "naive-sysctl"], ["nettuning-apply-sudo", "naive-sysctl"], ["nettuning-apply-sudo", "naive-sysctl-sudo"], ["nettuning", "naive-sysctl-40-ssh"], ["nicqueues", "naive-nic"], ["nicqueues-apply", "naive-nic"]]) {
      const line = `${label[a].split(" (")[0].split(",")[0]} / ${label[b]} — wall ×${fmtSummary(pair(a, b, (s) => s.sshMs))} (SSH part), processes ×${fmtSummary(pair(a, b, (s) => s.procs))}, host CPU ×${fmtSummary(pair(a, b, (s) => s.hostCpuMs))}`;
      md.push(`- ${line}`);
      ratios.push(line);
    }
    md.push("");
    md.push("Beyond the SSH session itself (each figure minus its sessions × the empty session, per repeat):", "");
    md.push("| variant | processes | SSH ms | host CPU ms |", "|---|---|---|---|");
    for (const v of COST_VARIANTS.filter((x) => x !== "ssh-true")) {
      md.push(`| ${label[v]} | ${fmtSummary(summarize(net(v, (s) => s.procs)), 0)} | ${fmtSummary(summarize(net(v, (s) => s.sshMs)), 0)} | ${fmtCpu(net(v, (s) => s.hostCpuMs))} |`);
    }
    md.push("");
  }

  // ---------------------------------------------------------------- scale
  if (res.scale.length) {
    const S = res.scale.filter((s) => s.ok);
    const n = res.scale[0].hosts;
    md.push(`## 3. Program scale: ${n} hosts under setMocks (harness \`capture\`)`, "");
    md.push("| program | resources | wall s | CPU s | peak RSS MB | RSS before evaluation MB | failed |", "|---|---|---|---|---|---|---|");
    const label = {
      components: `${n} × (NetTuning + NicQueues)`,
      bare: `${n} × 4 bare remote.Command (same commands, plan-only stdin, no engine delivery)`,
      "bare-same": `${n} × the same resource graph bare (the 4 Commands as above + the CopyToRemote of the shared engine delivery + 2 empty components, with the package's classes)`,
    } as const;
    for (const v of ["components", "bare", "bare-same"] as const) {
      const xs = S.filter((s) => s.variant === v);
      if (!xs.length && v === "bare-same") continue;
      const cpu = xs.filter((s) => s.cpuMs !== undefined).map((s) => s.cpuMs! / 1000);
      md.push(`| ${label[v]} | ${xs[0]?.resources ?? "n/a"} | ${fmtSummary(summarize(xs.map((s) => s.wallMs / 1000)))} | ${cpu.length ? fmtSummary(summarize(cpu)) : "n/a"} | ${fmtSummary(summarize(xs.map((s) => s.maxRssKB / 1024)), 0)} | ${fmtSummary(summarize(xs.map((s) => s.rssBeforeKB / 1024)), 0)} | ${res.scale.filter((s) => s.variant === v && !s.ok).length} |`);
    }
    md.push("");
    const vs = (a: ScaleVariant, b: ScaleVariant, f: (s: ScaleSampleT) => number) => summarize(perRepeatRatios(S, f, (s) => s.repeat, (s) => s.variant === a, (s) => s.variant === b));
    const line = `${n} hosts under setMocks: components / bare Commands — wall ×${fmtSummary(vs("components", "bare", (s) => s.wallMs))}, peak RSS ×${fmtSummary(vs("components", "bare", (s) => s.maxRssKB))} (growth during evaluation ×${fmtSummary(vs("components", "bare", (s) => s.maxRssKB - s.rssBeforeKB))})`;
    md.push(`- ${line}`);
    if (S.some((s) => s.variant === "bare-same")) {
      const floor = `${n} hosts under setMocks: the same resource graph bare / bare Commands (the SDK's own cost of the extra resources) — wall ×${fmtSummary(vs("bare-same", "bare", (s) => s.wallMs))}, peak RSS ×${fmtSummary(vs("bare-same", "bare", (s) => s.maxRssKB))}; components / same graph bare — wall ×${fmtSummary(vs("components", "bare-same", (s) => s.wallMs))}, peak RSS ×${fmtSummary(vs("components", "bare-same", (s) => s.maxRssKB))}`;
      md.push(`- ${floor}`);
      ratios.push(floor);
    }
    md.push("");
    ratios.push(line);
  }
  // ---------------------------------------------------------------- state
  if (res.state.length && "resources" in res.state[0]) {
    md.push("## 4. State per host: NetTuning (40 keys) + NicQueues, inputs + outputs of every child (harness state after the create)", "");
    md.push(`| connection | resource | child | ${STATE_FIELDS.join(" | ")} | child total |`, `|---|---|---|${STATE_FIELDS.map(() => "---|").join("")}---|`);
    const tag = (h: HostState) => `${h.who}, ${h.variant ?? "confirm off"}`;
    for (const h of res.state) {
      for (const r of h.resources) {
        for (const c of r.children) md.push(`| ${tag(h)} | ${r.resource} | ${c.name} | ${STATE_FIELDS.map((f) => c.fields[f]).join(" | ")} | ${c.totalBytes} |`);
        if (r.resource !== "host") md.push(`| ${tag(h)} | ${r.resource} | component outputs | ${STATE_FIELDS.map(() => "").join(" | ")} | ${r.componentBytes} |`);
      }
    }
    md.push("", "| connection | per host, plain JSON | per host, connection stored encrypted (as a secret) | largest string input of a child |", "|---|---|---|---|");
    for (const h of res.state) {
      const big = h.resources.map((r) => r.largestInput).sort((x, y) => y.bytes - x.bytes)[0];
      md.push(`| ${tag(h)} | ${(h.totalBytes / 1024).toFixed(1)} KiB | ${(h.checkpointBytes / 1024).toFixed(1)} KiB | ${big.bytes} B (${big.child} ${big.field}) |`);
      ratios.push(`state per host (${tag(h)}): ${(h.totalBytes / 1024).toFixed(1)} KiB plain, ${(h.checkpointBytes / 1024).toFixed(1)} KiB with the connection encrypted; largest string input ${big.bytes} B`);
    }
    md.push("", "Fields: bytes of the JSON of each property, inputs and outputs together (a Command's outputs repeat its inputs). `program` = the -restore stdin's gzip|base64 stream after its `@restore` line (`@engine`, the identifying lines, the originals, `@generation` and the fallback restore program together, when the host has both tools; else the plain fallback program after `@program`); `originals` = the plain lines before it (`@restore`; the whole restore plan when stored plain); `engine` = the CopyToRemote asset (path + sha256) and remotePath. Resource `host`: the engine delivery shared by both resources (a stack-level resource, one per stack and address).", "");
  }

  md.push("## Log", "", "```", ...res.log, "```", "");
  return { markdown: md.join("\n"), ratios: ["Ratios (median (min–max) of per-repeat ratios):", ...ratios.map((r) => `  ${r}`)].join("\n") };
}
