/**
 * Migration from the landed 0.2.0 (commit 06682b5: three children per resource, `<name>-engine` a CopyToRemote child
 * of the component that staged `engine-<sha256>.<owner id>.sh`) to one stack-level engine delivery per stack and
 * address (`net-tuning-engine-<token>`, staged as `engine.<token>.sh`). 0.2.0's components, extracted from git, create
 * a NetTuning and a NicQueues on a lab host through the harness (as root with rc.local, and as a sudo user with a
 * systemd unit; each with live previews off, as in migration.test.ts, and on, as `pulumi up` runs by default); then
 * this version's components run on that same state:
 * - the two `-engine` children are no longer registered: Pulumi deletes them, and a CopyToRemote has no delete, so
 *   nothing runs for them; the shared delivery is created (one SFTP copy);
 * - each `-apply` is updated in place (apply-update with the new engine: the host's 0.2.0 journal is read and kept
 *   as it is, no value changes), each `-restore` is updated without a command (its stdin follows the new report);
 * - 0.2.0's staged copies stay until the new engine's restore of their owner removes them (runtime.sh
 *   nt_clean_engine), so a destroy afterwards restores the true originals and leaves the host as before the first
 *   0.2.0 create: staged copies of both versions, both installed engines and the directories gone.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { NetTuning } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";
import { engine } from "../../provider/host/engine";
import { APPLY_RUN, ENGINE_BOOT, readRestoreStdin, RESTORE_BOOT, sudoLine } from "../../provider/host/programs";
import { COMMAND_TYPE, COPY_TYPE, Stack, UpResult } from "../../testkit/harness";
import { Lab, LabHost, startLab, Who } from "../../testkit/lab";
import { ok, snapshot, sysctl } from "../../testkit/host";
import * as liveSsh from "../../provider/live/ssh";

const V020 = "06682b5";
const ROOT = path.join(__dirname, "../..");
// inside the worktree, so that the old sources resolve the same node_modules (one @pulumi/pulumi instance)
const OLD = path.join(ROOT, ".v020");
const LIVE_ENV = "NET_TUNING_LIVE_PREVIEW";

type Components = { NetTuning: typeof NetTuning; NicQueues: typeof NicQueues };
const NEW: Components = { NetTuning, NicQueues };
let v020: Components;
/** 0.2.0's inverse of its restore stdin compression (`@gzip-base64` after the plain head lines). */
let readRestoreStdin020: (stdin: string) => string;

let lab: Lab;
beforeAll(async () => {
  fs.rmSync(OLD, { recursive: true, force: true });
  fs.mkdirSync(OLD);
  const ar = spawnSync("sh", ["-c", `git -C "${ROOT}" archive ${V020} components provider | tar -x -C "${OLD}"`], { encoding: "utf8" });
  if (ar.status !== 0) throw new Error(`cannot extract 0.2.0 (${V020}): ${ar.stderr}`);
  /* eslint-disable @typescript-eslint/no-var-requires */
  v020 = require(path.join(OLD, "components/index.ts")) as Components;
  readRestoreStdin020 = (require(path.join(OLD, "provider/host/programs.ts")) as { readRestoreStdin: (s: string) => string }).readRestoreStdin;
  /* eslint-enable @typescript-eslint/no-var-requires */
  expect(v020.NetTuning).not.toBe(NetTuning);
  lab = await startLab({ hosts: 2, tag: "mig020" });
}, 120000);
afterAll(async () => {
  delete process.env[LIVE_ENV];
  await lab?.stop();
  fs.rmSync(OLD, { recursive: true, force: true });
});

const E = engine();
const SOMAXCONN = "net.core.somaxconn";
const FIN = "net.ipv4.tcp_fin_timeout";
const RMEM = "net.ipv4.tcp_rmem";
const FILE = "/etc/sysctl.d/90-net-tuning-t.conf";
const INSTALL = "/usr/local/lib/pulumi-net-tuning";
const CONVERGED = "/var/lib/pulumi-net-tuning-converged";

/**
 * NetTuning (3 keys, one multi-value, persisted: the default) and NicQueues (channels, features, txqueuelen,
 * RPS/RFS, persisted by rc.local or a systemd unit) on one host as `who`, with the components `C`; the stack outputs
 * are the components' `previous` (the originals as the components report them).
 */
function program(C: Components, host: LabHost, who: Who, persistence: "rc.local" | "systemd") {
  const become = who === "sudo" ? ("sudo" as const) : undefined;
  return () => {
    const t = new C.NetTuning("t", { connection: host.connection(who), become, sysctls: { [SOMAXCONN]: 8123, [FIN]: 17, [RMEM]: "4096 99999 6291456" } });
    const q = new C.NicQueues("q", {
      connection: host.connection(who), become, interface: host.iface, persistence,
      channels: { rx: 2 }, features: { gro: true, tso: false }, txQueueLength: 2345, rps: { cpus: [1], flowEntriesPerQueue: 2048 },
    });
    return { tPrevious: t.previous, qPrevious: q.previous };
  };
}

/** `<name> <step kind>` of every Command and CopyToRemote step (the shared delivery's token as `<token>`). */
const changes = (r: UpResult) =>
  r.steps
    .filter((s) => s.type === COMMAND_TYPE || s.type === COPY_TYPE)
    .map((s) => `${s.urn.split("::").pop()!.replace(/^net-tuning-engine-.*$/, "net-tuning-engine-<token>")} ${s.kind}`)
    .sort();
const restoredBy = (out: string | undefined) => /^restored-by\t(.*)$/m.exec(out ?? "")?.[1];

/** A line diff as a reviewer reads it (`-old`, `+new`, in order; unchanged lines left out): LCS over lines. */
function lineDiff(a: string, b: string): string[] {
  const [x, y] = [a.split("\n"), b.split("\n")];
  const l: number[][] = Array.from({ length: x.length + 1 }, () => new Array<number>(y.length + 1).fill(0));
  for (let i = x.length - 1; i >= 0; i--) for (let j = y.length - 1; j >= 0; j--) l[i][j] = x[i] === y[j] ? l[i + 1][j + 1] + 1 : Math.max(l[i + 1][j], l[i][j + 1]);
  const out: string[] = [];
  let [i, j] = [0, 0];
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) [i, j] = [i + 1, j + 1];
    else if (i < x.length && (j === y.length || l[i + 1][j] >= l[i][j + 1])) out.push(`-${x[i++]}`);
    else out.push(`+${y[j++]}`);
  }
  return out;
}
/** The paths of the snapshot lines that differ between two snapshots (md5 lines name their path last). */
function changedPaths(a: string, b: string): string[] {
  const [x, y] = [new Set(a.split("\n")), new Set(b.split("\n"))];
  const differ = [...a.split("\n").filter((s) => !y.has(s)), ...b.split("\n").filter((s) => !x.has(s))];
  return [...new Set(differ.map((s) => (/^[0-9a-f]{32}  (\S+)$/.exec(s)?.[1] ?? s.split(" ")[0])))].sort();
}
const journals = async (host: LabHost) => (await host.exec("for f in /var/lib/pulumi-net-tuning/*/*.orig; do printf '== %s\\n' $f; cat $f; done")).stdout;

describe.each<[Who, "rc.local" | "systemd", boolean]>([
  ["root", "rc.local", false],
  ["sudo", "systemd", false],
  ["root", "rc.local", true],
  ["sudo", "systemd", true],
])("a 0.2.0 stack as %s (NicQueues persistence %s, live previews %s)", (who, persistence, live) => {
  test("upgrades without reverting, restoring or rewriting any host value; destroy then restores the true originals", async () => {
    if (live) process.env[LIVE_ENV] = "1"; // the harness runs programs under mocks, where live reads are off by default
    else delete process.env[LIVE_ENV];
    const host = lab.hosts[who === "root" ? 0 : 1];
    const home = `/home/${host.sudoUser.user}`;
    const stage = who === "root" ? "/var/lib/pulumi-net-tuning/incoming" : `${home}/.cache/pulumi-net-tuning`;
    const ls = async (dir: string) => (await host.exec(`ls -A ${dir} 2>/dev/null`)).stdout.split("\n").filter(Boolean).sort();
    const full = await snapshot(host, { delivery: true });
    expect(await ls(`${home}/.cache/pulumi-net-tuning`)).toEqual([]);
    const orig = { somaxconn: await sysctl(host, SOMAXCONN), fin: await sysctl(host, FIN), rmem: await sysctl(host, RMEM) };
    const txq = (await host.exec(`cat /sys/class/net/${host.iface}/tx_queue_len`)).stdout.trim();
    const stack = new Stack({ project: "mig", stack: `v020-${who}${live ? "-live" : ""}` });
    try {
      // ---- 0.2.0 creates: three children per resource, one staged copy per resource
      const r0 = ok(await stack.up(program(v020, host, who, persistence)), "0.2.0 create");
      expect(changes(r0)).toEqual(["q-apply create", "q-engine create", "q-restore create", "t-apply create", "t-engine create", "t-restore create"]);
      expect(r0.sessions.total).toBe(4);
      const old = stack.resources();
      const oldOf = (name: string) => old.find((e) => e.name === name)!.inputs;
      const oldSha = /^@engine 0\.2\.0 ([0-9a-f]{64})$/.exec(String(oldOf("t-apply").stdin).split("\n")[0])![1];
      expect(oldSha).not.toBe(E.sha256);
      const ids = {
        t: /^@owner-id (\S+)$/m.exec(String(oldOf("t-apply").stdin))![1],
        q: /^@owner-id (\S+)$/m.exec(String(oldOf("q-apply").stdin))![1],
      };
      const staged020 = [`engine-${oldSha}.${ids.q}.sh`, `engine-${oldSha}.${ids.t}.sh`];
      expect(await ls(stage)).toEqual(staged020);
      expect(await ls(INSTALL)).toEqual([`engine-${oldSha}.sh`]);
      const journal020 = await journals(host);
      // v2 journals with the true originals
      expect(journal020).toContain(`\n${SOMAXCONN}\t${orig.somaxconn}\n`);
      expect(journal020).toContain(`\neth0/txqueuelen\t${txq}\n`);
      const gen = (id: string) => new RegExp(`^net-tuning-journal v2\\t${id.replace(/\./g, "\\.")}\\t(\\S+)$`, "m").exec(journal020)![1];
      const generations = { t: gen(ids.t), q: gen(ids.q) };
      const converged020 = (await host.exec(`cat ${CONVERGED}/${ids.t}`)).stdout;
      const file020 = (await host.exec(`cat ${FILE}`)).stdout;
      const cksum = async () => (await host.exec(`cksum < ${FILE}`)).stdout.trim(); // the record's digest of a file
      const cksum020 = await cksum();
      expect(converged020).toContain(`\nfile\t${FILE}\t${cksum020}\n`);
      const applied = await snapshot(host, { delivery: true });
      expect(await sysctl(host, SOMAXCONN)).toBe("8123");

      // ---- the upgrade as previewed: the old -engine children deleted, the shared delivery created, -apply and
      // -restore updated; nothing reaches the host
      const expected = [
        "net-tuning-engine-<token> create", "q-apply update", "q-engine delete", "q-restore update",
        "t-apply update", "t-engine delete", "t-restore update",
      ];
      const p = ok(await stack.preview(program(NEW, host, who, persistence)), "preview");
      expect(changes(p)).toEqual(expected);
      expect([p.sessions.total, p.runs.length, p.copies.length]).toEqual([0, 0, 0]);
      expect(await snapshot(host, { delivery: true })).toBe(applied);

      // ---- the upgrade
      const r1 = ok(await stack.up(program(NEW, host, who, persistence)), "upgrade");
      expect(changes(r1)).toEqual(expected);
      // one SFTP copy (the shared delivery), one session per -apply (apply-update), nothing for the deleted -engine
      // children (CopyToRemote has no delete) nor for the -restore children (no update command): 3 sessions
      expect(r1.copies.map((c) => [c.name.replace(/-[^-]+-[0-9a-f]{8}$/, "-<host>-<hash>"), c.op, c.ok])).toEqual([["net-tuning-engine-<host>-<hash>", "create", true]]);
      const token = r1.copies[0].name.slice("net-tuning-engine-".length);
      expect(token).toMatch(new RegExp(`^${host.address.replace(/\./g, "\\.")}-[0-9a-f]{8}$`));
      expect(r1.copies[0].remotePath).toBe(`${who === "root" ? stage : ".cache/pulumi-net-tuning"}/engine.${token}.sh`);
      expect(r1.runs.map((r) => [r.name, r.op]).sort()).toEqual([["q-apply", "update"], ["t-apply", "update"]]);
      expect(r1.runs.every((r) => r.cmd.includes(" apply-update ") && r.ok)).toBe(true);
      expect(r1.runs.filter((r) => r.op === "delete")).toEqual([]);
      expect(r1.deleted).toEqual([]); // no Command deleted (the two deletes are the -engine CopyToRemotes)
      expect(r1.sessions.total).toBe(3);
      expect(Object.keys(r1.sessions.byResource).map((u) => u.split("::").pop()!.replace(token, "<token>")).sort()).toEqual(["net-tuning-engine-<token>", "q-apply", "t-apply"]);
      expect(stack.resources().filter((e) => e.type === COPY_TYPE).map((e) => e.name)).toEqual([`net-tuning-engine-${token}`]);

      // the host: every value, journal (byte for byte, not even rewritten), rc.local / unit + script as after the
      // 0.2.0 create. What changes: the new engine installed and (root) its staged copy, our sysctl.d file (its header
      // comment only: this version writes a shorter one) and therefore the file's cksum in the NetTuning's converged
      // record, and both converged records' new `plan` line (the sha256 of the plan applied, issue #32 item 3).
      // 0.2.0's staged copies stay until the restore of their owner.
      const upgraded = await snapshot(host, { delivery: true });
      expect(changedPaths(applied, upgraded)).toEqual(
        [FILE, `${CONVERGED}/${ids.q}`, `${CONVERGED}/${ids.t}`, `${INSTALL}/engine-${E.sha256}.sh`, ...(who === "root" ? [`${stage}/engine.${token}.sh`] : [])].sort(),
      );
      expect((await host.exec(`cat ${CONVERGED}/${ids.q}`)).stdout).toMatch(/^plan\t[0-9a-f]{64}$/m);
      expect(await journals(host)).toBe(journal020);
      expect(await sysctl(host, SOMAXCONN)).toBe("8123");
      expect(await sysctl(host, RMEM)).toBe("4096 99999 6291456");
      expect((await host.exec(`cat /sys/class/net/${host.iface}/tx_queue_len`)).stdout.trim()).toBe("2345");
      expect(lineDiff(file020, (await host.exec(`cat ${FILE}`)).stdout)).toEqual([
        `-# pulumi-net-tuning: managed by Pulumi resource mig/${stack.stack}/t.`,
        "-# Manual edits are overwritten; deleting the resource restores the previous values.",
        "+# Managed by Pulumi: edits are overwritten.",
      ]);
      expect(lineDiff(converged020, (await host.exec(`cat ${CONVERGED}/${ids.t}`)).stdout)).toEqual([
        expect.stringMatching(/^\+plan\t[0-9a-f]{64}$/),
        `-file\t${FILE}\t${cksum020}`,
        `+file\t${FILE}\t${await cksum()}`,
      ]);
      expect(await ls(stage)).toEqual([...staged020, `engine.${token}.sh`].sort());
      expect(await ls(INSTALL)).toEqual([`engine-${oldSha}.sh`, `engine-${E.sha256}.sh`].sort());

      // the plan diff a reviewer sees for each -apply (stdin): the @engine line (another version and sha256);
      // NetTuning: the default @persist 1 / @boot-override error lines dropped (the engine's defaults) and the file's
      // two header comment lines replaced by one; NicQueues: the group comment lines shortened. Nothing else: every
      // directive and value line stays.
      const newOf = (name: string) => stack.get(name)!.inputs;
      // with become "sudo", the way to root after the first @engine line (programs.ts engineStdin)
      const sudoHead = who === "root" ? [] : [`+${sudoLine(APPLY_RUN)}`, `+@engine ${E.version} ${E.sha256}`];
      expect(lineDiff(String(oldOf("t-apply").stdin), String(newOf("t-apply").stdin))).toEqual([
        `-@engine 0.2.0 ${oldSha}`,
        `+@engine ${E.version} ${E.sha256}`,
        ...sudoHead,
        `+${ENGINE_BOOT}`, // the apply bootstrap, in the stdin since it left the command (the same line in every apply)
        "-@persist 1",
        "-@boot-override error",
        `-# pulumi-net-tuning: managed by Pulumi resource mig/${stack.stack}/t.`,
        "-# Manual edits are overwritten; deleting the resource restores the previous values.",
        "+# Managed by Pulumi: edits are overwritten.",
        // the end line with the plan's sha256 (issue #32: a plan cut on the way is refused)
        expect.stringMatching(/^\+@end [0-9a-f]{64}$/),
      ]);
      expect(lineDiff(String(oldOf("q-apply").stdin), String(newOf("q-apply").stdin))).toEqual([
        `-@engine 0.2.0 ${oldSha}`,
        `+@engine ${E.version} ${E.sha256}`,
        ...sudoHead,
        `+${ENGINE_BOOT}`,
        "-# channels (ethtool -L), applied first: they change the number of queues",
        "+# channels (ethtool -L), applied first (they change the queues)",
        "-# offload features (ethtool -K), by the name ethtool -k shows",
        "+# offload features (ethtool -K)",
        "-# transmit queue length (ip link set dev IF txqueuelen N), packets",
        "+# txqueuelen (ip link), packets",
        "-# RPS/RFS on every rx queue; the CPU mask is computed on the host from its possible CPUs",
        "+# RPS/RFS on every rx queue",
        expect.stringMatching(/^\+@end [0-9a-f]{64}$/),
      ]);
      // the plan the preview showed is the one applied
      for (const name of ["t-apply", "q-apply"]) expect(p.resources.find((r) => r.name === name)!.inputs.stdin).toBe(newOf(name).stdin);
      // the commands change too (the bootstrap takes the delivery token instead of staging dir, owner id and URN)
      // (with live previews on, this also shows that the new read understood 0.2.0's converged record: a failed read
      // registers -apply with ignoreChanges ["update"], which keeps 0.2.0's stored update: see the last test)
      for (const name of ["t-apply", "q-apply"]) {
        expect(newOf(name).create).not.toBe(oldOf(name).create);
        expect(String(newOf(name).update)).toContain(` apply-update ${token}`);
      }

      // the -restore children: a state-only update (no session above). Raw, a reviewer sees 0.2.0's plain head lines
      // (@engine, @net-tuning, @kind, @owner, @owner-id, @file / @interface, @restore, @gzip-base64) give way to
      // `@restore 1` and one base64 line; the plan inside keeps every original and the 0.2.0 journal's generation.
      for (const [name, kind, id] of [["t-restore", "sysctl", ids.t], ["q-restore", "nic", ids.q]] as const) {
        const [a, b] = [String(oldOf(name).stdin), String(newOf(name).stdin)];
        expect(a.split("\n").slice(0, 7)).toEqual([
          `@engine 0.2.0 ${oldSha}`, "@net-tuning v1", `@kind ${kind}`, `@owner mig/${stack.stack}/${name[0]}`, `@owner-id ${id}`,
          kind === "sysctl" ? `@file ${FILE}` : `@interface ${host.iface}`, "@restore 1",
        ]);
        // (with become "sudo" after the way to root: programs.ts restoreStdin)
        expect(b).toBe(`${who === "root" ? "" : `${sudoLine(RESTORE_BOOT)}\n`}${b.slice(b.indexOf("@restore 1\n"))}`);
        expect(b.slice(b.indexOf("@restore 1\n"))).toMatch(/^@restore 1\n[A-Za-z0-9+/=]+\n$/);
        const plan = (s: string) => s.slice(0, s.indexOf("\n@program\n")).split("\n");
        const [pa, pb] = [plan(readRestoreStdin020(a)), plan(readRestoreStdin(b))];
        expect(pb[0]).toBe("@restore 1");
        expect(pb[1]).toBe(`@engine ${E.version} ${E.sha256}`);
        const origs = (l: string[]) => l.filter((s) => s.startsWith("@orig ")).sort();
        expect(origs(pb)).toEqual(origs(pa));
        expect(pb).toContain(`@generation ${generations[name[0] as "t" | "q"]}`);
        expect(pa).toContain(`@generation ${generations[name[0] as "t" | "q"]}`);
        // every plan line but @engine kept; the NIC plan gains @feature-args (the fallback's -K names)
        const rest = (l: string[]) => l.filter((s) => !s.startsWith("@engine ") && !s.startsWith("@feature-args ")).sort();
        expect(rest(pb)).toEqual(rest(pa));
        expect(pb.filter((s) => s.startsWith("@feature-args "))).toEqual(kind === "nic" ? ["@feature-args generic-receive-offload=gro tcp-segmentation-offload=tso"] : []);
      }
      expect(readRestoreStdin(String(newOf("t-restore").stdin))).toContain(`\n@orig ${SOMAXCONN}\t${orig.somaxconn}\n`);
      expect(readRestoreStdin(String(newOf("q-restore").stdin))).toContain(`\n@orig eth0/txqueuelen\t${txq}\n`);
      expect(newOf("t-restore").delete).toContain(` net-tuning ${token}`);
      // the components report the true originals
      expect(r1.outputs!.tPrevious).toEqual({ [FIN]: orig.fin, [SOMAXCONN]: orig.somaxconn, [RMEM]: orig.rmem });
      expect((r1.outputs!.qPrevious as Record<string, string>)["eth0/txqueuelen"]).toBe(txq);

      // ---- the next up is quiet
      const r2 = ok(await stack.up(program(NEW, host, who, persistence)), "unchanged up");
      expect(r2.sessions.total).toBe(0);
      expect(changes(r2).every((s) => s.endsWith(" same"))).toBe(true);

      // ---- destroy: the new engine restores (the plans name it), the true originals come back, and the host is as
      // before the 0.2.0 create: 0.2.0's staged copies, the shared staged copy, both installed engines and the
      // directories gone
      const d = ok(await stack.destroy(), "destroy");
      expect(d.runs.map((r) => [r.name, r.op, restoredBy(r.stdout)]).sort()).toEqual([
        ["q-restore", "delete", `engine ${E.fileName}`],
        ["t-restore", "delete", `engine ${E.fileName}`],
      ]);
      // no warning: every removal succeeded
      for (const r of d.runs) expect(r.stdout).toBe(`net-tuning-report v1\nrestored-by\tengine ${E.fileName}\nend`);
      expect(d.copies).toEqual([]);
      expect(d.sessions.total).toBe(2);
      expect(await sysctl(host, SOMAXCONN)).toBe(orig.somaxconn);
      expect(await sysctl(host, FIN)).toBe(orig.fin);
      expect(await sysctl(host, RMEM)).toBe(orig.rmem);
      expect((await host.exec(`cat /sys/class/net/${host.iface}/tx_queue_len`)).stdout.trim()).toBe(txq);
      expect(await snapshot(host, { delivery: true })).toBe(full);
      expect(await ls(stage)).toEqual([]);
      expect((await host.exec(`test -e ${home}/.cache/pulumi-net-tuning`)).code).not.toBe(0);
      expect((await host.exec(`test -e ${INSTALL} || test -e /var/lib/pulumi-net-tuning`)).code).not.toBe(0);
      expect(stack.resources()).toEqual([]);
    } finally {
      // a failed check leaves the host to the next test as it found it (whatever the state holds is destroyed)
      if (stack.resources().length) await stack.destroy();
    }
  }, 300000);
});

/**
 * A KNOWN EDGE (reported to the lead, not fixed here): the host read of a live preview fails during the upgrade run
 * (a timeout at scale, sshd refusing a second session, ...). The components then register `-apply` with
 * `ignoreChanges: ["create", "update"]` (components/common.ts: an unreadable host keeps the stored repair token), which also
 * keeps 0.2.0's stored `update` command: its bootstrap gets the new plan, looks for the new engine under 0.2.0's
 * staging name `engine-<new sha256>.<owner id>.sh` (the new delivery staged `engine.<token>.sh`), finds nothing and
 * exits 6 before any change, naming as the recovery `pulumi up --replace '<URN of the -engine child>'`: a child this
 * version no longer registers, so that recovery does not help. The host is unharmed and nothing is deleted or
 * restored; an up that reads the host, or one with live previews off (NET_TUNING_LIVE_PREVIEW=0: nothing is ignored),
 * completes the upgrade. The assertions pin today's behaviour so that a fix shows up here.
 */
test("a live read that fails during the upgrade: 0.2.0's stored update runs and exits 6 with no change; an up with live previews off completes it", async () => {
  process.env[LIVE_ENV] = "1";
  const host = lab.hosts[0];
  const full = await snapshot(host, { delivery: true });
  const orig = await sysctl(host, SOMAXCONN);
  const stack = new Stack({ project: "mig", stack: "v020-readfail" });
  const spy = jest.spyOn(liveSsh, "readOverSshLimited");
  try {
    ok(await stack.up(program(v020, host, "root", "rc.local")), "0.2.0 create");
    const old = stack.resources();
    const oldSha = /^@engine 0\.2\.0 ([0-9a-f]{64})$/.exec(String(old.find((e) => e.name === "t-apply")!.inputs.stdin).split("\n")[0])![1];
    const applied = await snapshot(host, { delivery: true });
    const journal020 = await journals(host);

    spy.mockResolvedValue({ ok: false, reason: "simulated: no answer within 10 s", ms: 10000 });
    const r1 = await stack.up(program(NEW, host, "root", "rc.local"));
    expect(r1.ok).toBe(false);
    expect(changes(r1)).toEqual(["net-tuning-engine-<token> create"]); // both applies failed: no other step, no delete
    const token = r1.copies[0].name.slice("net-tuning-engine-".length);
    expect(r1.runs.map((r) => [r.name, r.op, r.exitCode]).sort()).toEqual([["q-apply", "update", 6], ["t-apply", "update", 6]]);
    for (const [n, type] of [["t", "NetTuning"], ["q", "NicQueues"]] as const) {
      const run = r1.runs.find((r) => r.name === `${n}-apply`)!;
      // the stored 0.2.0 command (staging dir, owner id, -engine URN), not this version's (delivery token)
      expect(run.cmd).toBe(old.find((e) => e.name === `${n}-apply`)!.inputs.update);
      const id = /^@owner-id (\S+)$/m.exec(run.stdin!)![1];
      expect(run.stdin!.split("\n")[0]).toBe(`@engine ${E.version} ${E.sha256}`);
      expect(run.stderr).toContain(
        `net-tuning: cannot install engine ${E.version} from /var/lib/pulumi-net-tuning/incoming/engine-${E.sha256}.${id}.sh on ${(await host.exec("uname -n")).stdout.trim()} (missing or sha256 differs): ` +
          `run pulumi up --replace 'urn:pulumi:v020-readfail::mig::net-tuning:index:${type}$command:remote:CopyToRemote::${n}-engine'`,
      );
    }
    // nothing changed on the host but the new staged copy; the -apply children keep their 0.2.0 state
    expect(changedPaths(applied, await snapshot(host, { delivery: true }))).toEqual([`/var/lib/pulumi-net-tuning/incoming/engine.${token}.sh`]);
    expect(await journals(host)).toBe(journal020);
    expect(await sysctl(host, SOMAXCONN)).toBe("8123");
    for (const name of ["t-apply", "q-apply", "t-restore", "q-restore", "t-engine", "q-engine"]) {
      expect(stack.get(name)!.inputs).toEqual(old.find((e) => e.name === name)!.inputs);
    }

    // the workaround while the host still cannot be read: live previews off for the run
    process.env[LIVE_ENV] = "0";
    const r2 = ok(await stack.up(program(NEW, host, "root", "rc.local")), "upgrade with live previews off");
    expect(changes(r2)).toEqual([
      "net-tuning-engine-<token> same", "q-apply update", "q-engine delete", "q-restore update", "t-apply update", "t-engine delete", "t-restore update",
    ]);
    expect([r2.copies.length, r2.sessions.total]).toEqual([0, 2]);
    expect(await journals(host)).toBe(journal020);
    expect(await sysctl(host, SOMAXCONN)).toBe("8123");
    expect((await host.exec("ls /usr/local/lib/pulumi-net-tuning")).stdout.split("\n").filter(Boolean).sort()).toEqual([`engine-${oldSha}.sh`, `engine-${E.sha256}.sh`].sort());
    // and once the host answers again, the next up with live previews on is quiet
    spy.mockRestore();
    process.env[LIVE_ENV] = "1";
    expect(ok(await stack.up(program(NEW, host, "root", "rc.local"))).sessions.total).toBe(0);

    const d = ok(await stack.destroy(), "destroy");
    expect(d.runs.map((r) => [r.name, restoredBy(r.stdout)]).sort()).toEqual([["q-restore", `engine ${E.fileName}`], ["t-restore", `engine ${E.fileName}`]]);
    expect(await sysctl(host, SOMAXCONN)).toBe(orig);
    expect(await snapshot(host, { delivery: true })).toBe(full);
  } finally {
    spy.mockRestore();
    delete process.env[LIVE_ENV];
    if (stack.resources().length) await stack.destroy();
  }
}, 300000);
