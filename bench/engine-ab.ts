/**
 * Engine A/B on one lab host: does a change to the host engine (provider/host/sh) keep every output, and what does it
 * save? The apply of a 40-key NetTuning (bench/keys.ts, the keys of bench §2) is run by two builds of the engine
 * alternately, in pairs, from the same host state:
 *   - outputs: the apply's exit code, stdout and stderr, every file under /var/lib/pulumi-net-tuning and the sysctl.d
 *     file, and the /proc/sys value of every key, compared byte for byte within each pair (generations, which are
 *     random, and temporary directory names masked); a difference stops the run and leaves both snapshots;
 *   - CPU: the engine's process tree (the engine's `sh` and every process it starts) in a cgroup of its own (cgroup v1
 *     cpuacct, else v2), entered through nsenter from this machine: no SSH session in the figure, so the noise of
 *     sshd's share (bench §2's empty session, about 25 ms) does not hide a change of a millisecond.
 * Each apply is undone by the resource's own restore (the -restore child's delete command and stdin from a real
 * create, with that apply's generation), so each run starts from the same host state. Another resource's journal (a
 * NicQueues) is on the host, as on a host with both kinds.
 *
 *   npx ts-node --transpile-only -P tsconfig.dev.json bench/engine-ab.ts
 * Environment:
 *   ENGINE_AB_OLD=<git revision>   the "old" engine: provider/host/sh at that revision (default HEAD)
 *   ENGINE_AB_NEW=<directory>      the "new" engine's sh sources (default: this checkout's provider/host/sh)
 *   ENGINE_AB_N=20                 pairs (the order alternates per pair)
 *   ENGINE_AB_OP=apply-create      or apply-update (each run preceded by an untimed create of the same build)
 *   ENGINE_AB_PHASES=1             also the new engine's CPU cut short after each phase of nt_apply_main
 *                                  (median of 21 runs each; a cut run ends with nt_cleanup, the host is reset
 *                                  by writing the keys' first values back and removing what the run wrote)
 *   ENGINE_AB_OUT=/tmp/engine-ab   where the snapshots of a difference are written
 * Exit code 1 when any pair differs. A measurement, not a test (not part of npm test). It covers the sysctl kind's
 * successful create / unchanged update of dotted keys without "/" (the /proc/sys snapshot maps keys with `tr . /`);
 * the nic kind, failures, rollbacks and restores are the lab suite's, which an engine change must pass as well.
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { NetTuning } from "../components/netTuning";
import { NicQueues } from "../components/nicQueues";
import { assembleEngine } from "../provider/host/engine";
import { readRestoreStdin } from "../provider/host/programs";
import { Stack } from "../testkit/harness";
import { startLab, type LabHost } from "../testkit/lab";
import { netTuningSysctls } from "./keys";
import { CG_PREFIX, cgroupRoots, fmtSummary, type Meter, readMeterNs, summarize } from "./lib";

const N = Number(process.env.ENGINE_AB_N ?? 20);
const OP = process.env.ENGINE_AB_OP ?? "apply-create";
const OLD_REV = process.env.ENGINE_AB_OLD ?? "HEAD";
const NEW_DIR = process.env.ENGINE_AB_NEW ?? path.join(__dirname, "..", "provider", "host", "sh");
const OUT = process.env.ENGINE_AB_OUT ?? path.join(os.tmpdir(), "engine-ab");
const FILE = "90-engine-ab.conf";
const DIR = "/root/engine-ab"; // on the lab host (its own mount namespace)

if (!["apply-create", "apply-update"].includes(OP)) throw new Error(`ENGINE_AB_OP: apply-create or apply-update, not ${OP}`);
if (!Number.isInteger(N) || N < 1 || N > 1000) throw new Error(`ENGINE_AB_N: 1..1000, not ${process.env.ENGINE_AB_N}`);

/** A cgroup on this machine for one measured process tree (bench/lib.ts's hierarchies and reader), CPU in ms. */
function makeMeter(): { dir: string; read: () => number; remove: () => void } {
  const c = cgroupRoots()[0];
  if (!c) throw new Error("engine-ab: no writable cpuacct or cgroup v2 hierarchy (run as root)");
  const m: Meter = { dir: path.join(c.root, `${CG_PREFIX}engine-ab-${process.pid}`), file: c.file, pid: process.pid };
  fs.mkdirSync(m.dir);
  return { dir: m.dir, read: () => readMeterNs(m, c.method) / 1e6, remove: () => fs.rmdirSync(m.dir) };
}

/** The sh sources of provider/host/sh at a git revision, in a temporary directory. */
function sourcesAt(rev: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "engine-ab-old-"));
  const root = execFileSync("git", ["rev-parse", "--show-toplevel"], { cwd: __dirname, encoding: "utf8" }).trim();
  const tar = execFileSync("git", ["archive", rev, "provider/host/sh"], { cwd: root, maxBuffer: 64 << 20 });
  execFileSync("tar", ["-x", "-C", dir], { input: tar });
  return path.join(dir, "provider", "host", "sh");
}

const mask = (s: string) =>
  s.replace(/g[0-9]+-[0-9]+(-[0-9a-f]+)*|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}(-[0-9a-f]{4}-[0-9a-f]{12})?/g, "<generation>")
    .replace(/net-tuning\.[A-Za-z0-9]{6,}/g, "net-tuning.<tmp>");
const median = (xs: number[]) => summarize(xs).median;

async function main() {
  const meter = makeMeter();
  const lab = await startLab({ hosts: 1, tag: "engine-ab" });
  const h: LabHost = lab.hosts[0];
  const put = async (p: string, text: string) => {
    const r = await h.exec(`base64 -d > ${p}`, { stdin: Buffer.from(text).toString("base64") });
    if (r.code !== 0) throw new Error(`cannot write ${p}: ${r.stderr}`);
  };
  const sh = async (cmd: string, timeoutMs = 60_000) => {
    const r = await h.exec(cmd, { timeoutMs });
    if (r.code !== 0) throw new Error(`${cmd}: exit ${r.code}: ${r.stdout}${r.stderr}`);
    return r.stdout;
  };
  try {
    // the plan and the restore of a real create, as the components write them
    const other = new Stack({ project: "ab", stack: "other" });
    if (!(await other.up(() => { new NicQueues("other", { connection: h.connection("root"), interface: h.iface, txQueueLength: 1500 }); })).ok) throw new Error("the other resource failed");
    const stack = new Stack({ project: "ab", stack: "nt" });
    const up = await stack.up(() => { new NetTuning("ab", { connection: h.connection("root"), sysctls: netTuningSysctls(), fileName: FILE, bootOverride: "warn" }); });
    if (!up.ok) throw new Error(`create failed: ${up.error}`);
    const apply = stack.resources().find((r) => r.name === "ab-apply");
    const restore = stack.resources().find((r) => r.name === "ab-restore");
    if (!apply || !restore) throw new Error("no ab-apply / ab-restore child");
    const plan = String(apply.inputs.stdin).split("\n").slice(1).join("\n"); // without the @engine line the bootstrap reads
    if (!(await stack.destroy()).ok) throw new Error("destroy failed");

    const builds = { old: assembleEngine(sourcesAt(OLD_REV)).text, new: assembleEngine(NEW_DIR).text };
    await sh(`mkdir -p ${DIR}`);
    await put(`${DIR}/plan`, plan);
    // the engine before issue #32 knows no @end line (an unknown directive): its copy of the plan goes without it
    await put(`${DIR}/plan.old`, plan.replace(/^@end [0-9a-f]{64}\n$/m, ""));
    await put(`${DIR}/plan.new`, plan);
    await put(`${DIR}/old.sh`, builds.old);
    await put(`${DIR}/new.sh`, builds.new);
    await put(`${DIR}/delete.sh`, `${restore.inputs.delete}\n`);
    await put(`${DIR}/restore.stdin`, readRestoreStdin(String(restore.inputs.stdin)));
    // undo OUT: the restore with the generation of the apply whose stdout is OUT (as the component passes it)
    await put(`${DIR}/undo.sh`, [
      `g=$(sed -n 's/^generation\\t//p' "$1"); [ -n "$g" ] || { echo "no generation in $1"; exit 9; }`,
      `sed "s/^@generation .*/@generation $g/" ${DIR}/restore.stdin | sh ${DIR}/delete.sh > ${DIR}/undo.out 2>&1 || { cat ${DIR}/undo.out; exit 8; }`,
      `if ls /var/lib/pulumi-net-tuning/sysctl/ | grep -q '^ab\\.nt\\.'; then echo "journal left"; cat ${DIR}/undo.out; exit 7; fi`,
    ].join("\n") + "\n");
    const snapshot = [
      `cd ${DIR}; echo "== stdout"; cat out; echo "== stderr"; cat err; echo "== files"`,
      `for f in /var/lib/pulumi-net-tuning/*/* /var/lib/pulumi-net-tuning-converged/* /etc/sysctl.d/${FILE}; do [ -f "$f" ] && { echo "-- $f"; cat "$f"; }; done`,
      `echo "== /proc/sys"; for k in $(sed -n 's/^\\([a-z0-9._-]*\\) = .*/\\1/p' plan); do printf '%s=%s\\n' "$k" "$(cat /proc/sys/$(echo "$k" | tr . /))"; done`,
    ].join("\n");
    // one measured run: the engine under nsenter, in the meter's cgroup (the shell that enters it moves itself there)
    const run = (build: string, op: string): { ms: number; rc: string } => {
      const before = meter.read();
      const rc = execFileSync("/bin/sh", ["-c",
        `echo $$ > ${meter.dir}/cgroup.procs; exec nsenter -t ${h.pid} -n -m -u -p -- /bin/sh -c 'cd ${DIR} && umask 022 && sh ${build}.sh sysctl ${op} < plan.${build} > out 2> err; echo $?'`,
      ], { encoding: "utf8" }).trim();
      return { ms: meter.read() - before, rc };
    };

    const cpu: Record<"old" | "new", number[]> = { old: [], new: [] };
    let diffs = 0;
    for (let i = 0; i < N; i++) {
      const got: Record<string, string> = {};
      for (const b of (i % 2 ? ["new", "old"] : ["old", "new"]) as ("old" | "new")[]) {
        if (OP === "apply-update") {
          const pre = run(b, "apply-create");
          if (pre.rc !== "0") throw new Error(`${b}: the create before the update exited ${pre.rc}: ${await sh(`cat ${DIR}/err`)}`);
        }
        const r = run(b, OP);
        cpu[b].push(r.ms);
        got[b] = mask(`exit ${r.rc}\n${await sh(snapshot)}`);
        await sh(`sh ${DIR}/undo.sh ${DIR}/out`);
      }
      if (got.old !== got.new) {
        diffs++;
        fs.mkdirSync(OUT, { recursive: true });
        fs.writeFileSync(path.join(OUT, `pair${i}.old`), got.old);
        fs.writeFileSync(path.join(OUT, `pair${i}.new`), got.new);
        console.log(`pair ${i}: outputs differ (${path.join(OUT, `pair${i}.{old,new}`)})`);
        break;
      }
    }
    const ratio = summarize(cpu.new.map((x, k) => x / cpu.old[k]));
    console.log(`${OP}, old = provider/host/sh at ${OLD_REV}, new = ${NEW_DIR}; ${cpu.new.length} pairs, ${diffs ? "OUTPUTS DIFFER" : "outputs byte-identical in every pair"}`);
    console.log(`engine CPU per run: old ${fmtSummary(summarize(cpu.old), 2, " ms")}, new ${fmtSummary(summarize(cpu.new), 2, " ms")}; new/old per pair ×${fmtSummary(ratio, 3)}`);

    if (process.env.ENGINE_AB_PHASES === "1" && !diffs) await phases(h, sh, put, run, builds.new);
    await other.destroy();
    if (diffs) process.exitCode = 1;
  } finally {
    await lab.stop();
    meter.remove();
  }
}

/**
 * Per-phase CPU of the new engine: a copy cut short ("nt_cleanup; exit 0") after each marked line of nt_apply_main;
 * the host is reset between runs by writing the keys' first values back and removing what the run wrote (a cut run
 * has no report to restore from). Cumulative medians and the step from the phase before.
 */
async function phases(h: LabHost, sh: (c: string, t?: number) => Promise<string>, put: (p: string, t: string) => Promise<void>,
  run: (b: string, op: string) => { ms: number; rc: string }, text: string) {
  const cuts: [string, string][] = [
    ["start-up, nt_init", "  nt_init"], ["plan read", "  nt_read_stdin"], ["lock", "  nt_lock"],
    ["snapshot", `[ "$NT_BATCH" = 1 ] && nt_snapshot`], ["preflight", "  kind_preflight"], ["owner check", "  nt_problems_exit"],
    ["owner file + journal", `nt_journal_write "$NT_TMP/journal.new"`], ["writes", "  NT_DEFER=0"],
    ["journal.final", `printf '%s' "$nt_jt" >> "$NT_TMP/journal.final"`], ["read-back", "  nt_verify_batch"],
    ["sysctl.d file", "  nt_commit_files"], ["report", `  nt_report "$NT_TMP/journal.final"`], ["converged record", "  nt_converged_write"],
  ];
  const lines = text.split("\n");
  const start = lines.indexOf("nt_apply_main() {");
  if (start < 0) throw new Error("phases: no nt_apply_main in the engine");
  for (const [k, [, pat]] of cuts.entries()) {
    const at = lines.findIndex((l, j) => j > start && l.includes(pat));
    if (at < 0) throw new Error(`phases: no line with ${JSON.stringify(pat)} in nt_apply_main`);
    await put(`${DIR}/cut${k}.sh`, [...lines.slice(0, at + 1), "  nt_cleanup; exit 0", ...lines.slice(at + 1)].join("\n"));
  }
  await put(`${DIR}/reset.sh`, [
    `while IFS='\t' read -r k v; do echo "$v" > /proc/sys/$(echo "$k" | tr . /); done < ${DIR}/first`,
    `rm -rf /var/lib/pulumi-net-tuning/sysctl/ab.nt.* /var/lib/pulumi-net-tuning/sysctl/.ab.nt.* /etc/sysctl.d/${FILE} /var/lib/pulumi-net-tuning-converged/ab.nt.* /tmp/net-tuning.*`,
  ].join("\n") + "\n");
  await sh(`cd ${DIR} && for k in $(sed -n 's/^\\([a-z0-9._-]*\\) = .*/\\1/p' plan); do printf '%s\\t%s\\n' "$k" "$(cat /proc/sys/$(echo "$k" | tr . /))"; done > first`);
  let prev = 0;
  console.log("phase (cumulative median of 21 runs, step)");
  for (let k = 0; k <= cuts.length; k++) {
    const xs: number[] = [];
    for (let i = 0; i < 21; i++) {
      await sh(`sh ${DIR}/reset.sh`);
      xs.push(run(k < cuts.length ? `cut${k}` : "new", "apply-create").ms);
    }
    const m = median(xs);
    const name = k < cuts.length ? cuts[k][0] : "rest, cleanup (whole run)";
    console.log(`  ${name.padEnd(26)} ${m.toFixed(2).padStart(6)} ms  (+${(m - prev).toFixed(2)})`);
    prev = m;
  }
  await sh(`sh ${DIR}/reset.sh`);
}

main().catch((e) => {
  console.error(e);
  process.exit(2);
});
