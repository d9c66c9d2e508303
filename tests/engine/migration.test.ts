/**
 * Migration from the landed 0.1.0 (commit 1954048: two children per resource, the program in every stdin): its
 * components, extracted from git, create a NetTuning and a NicQueues on a lab host through the harness; then this
 * version's components run on that same state. Child names and types are kept (`-apply`, `-restore`), so no alias
 * is needed: the apply is an in-place update (apply-update, the host's header-less 0.1.0 journal is read), the
 * restore an update without a command, plus a new engine delivery (one, shared by both). No delete runs, no host value
 * changes; destroy afterwards restores the true originals.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { NetTuning } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";
import { COMMAND_TYPE, COPY_TYPE, Stack } from "../../testkit/harness";
import { readRestoreStdin } from "../../provider/host/programs";
import { Lab, startLab } from "../../testkit/lab";
import { ok, snapshot, sysctl } from "../../testkit/host";

const V010 = "1954048";
const ROOT = path.join(__dirname, "../..");
// inside the worktree, so that the old sources resolve the same node_modules (one @pulumi/pulumi instance)
const OLD = path.join(ROOT, ".v010");

let lab: Lab;
beforeAll(async () => {
  fs.rmSync(OLD, { recursive: true, force: true });
  fs.mkdirSync(OLD);
  const ar = spawnSync("sh", ["-c", `git -C "${ROOT}" archive ${V010} components provider | tar -x -C "${OLD}"`], { encoding: "utf8" });
  if (ar.status !== 0) throw new Error(`cannot extract 0.1.0 (${V010}): ${ar.stderr}`);
  lab = await startLab({ hosts: 1, tag: "migrate" });
}, 120000);
afterAll(async () => {
  await lab?.stop();
  fs.rmSync(OLD, { recursive: true, force: true });
});

const noDelivery = (s: string) =>
  s.split("\n").filter((l) => !/\/usr\/local\/lib\/pulumi-net-tuning|\/var\/lib\/pulumi-net-tuning\/incoming/.test(l)).join("\n");
/** Without mtimes: the engine rewrites identical managed files today (see upgrade.test.ts). */
const content = (s: string) => noDelivery(s).split("\n").map((l) => l.replace(/^(\/\S+ \d+ \S* \d+) \d+\.\d+$/, "$1")).join("\n");

test("a 0.1.0 stack (NetTuning + NicQueues) upgrades without reverting, restoring or changing any host value", async () => {
  const host = lab.hosts[0];
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const old = require(path.join(OLD, "components/index.ts")) as { NetTuning: typeof NetTuning; NicQueues: typeof NicQueues };
  expect(old.NetTuning).not.toBe(NetTuning);
  const orig = { somaxconn: await sysctl(host, "net.core.somaxconn"), fin: await sysctl(host, "net.ipv4.tcp_fin_timeout") };
  const txq = (await host.exec(`cat /sys/class/net/${host.iface}/tx_queue_len`)).stdout.trim();
  const before = await snapshot(host);
  const args = (C: { NetTuning: typeof NetTuning; NicQueues: typeof NicQueues }) => () => {
    new C.NetTuning("t", { connection: host.connection("root"), sysctls: { "net.core.somaxconn": 8200, "net.ipv4.tcp_fin_timeout": 24 } });
    new C.NicQueues("q", { connection: host.connection("root"), interface: host.iface, txQueueLength: 1800, persistence: "rc.local" });
  };
  const stack = new Stack({ project: "mig", stack: "lab" });
  const r0 = ok(await stack.up(args(old)));
  expect(r0.runs.map((r) => r.name).sort()).toEqual(["q-apply", "t-apply"]);
  expect(String(stack.get("t-apply")!.inputs.stdin)).toContain("\n@program\n"); // the 0.1.0 layout
  const journal = (await host.exec("cat /var/lib/pulumi-net-tuning/sysctl/*.orig")).stdout;
  expect(journal.split("\n")[0]).toMatch(/^net\.[a-z0-9_.]+\t/); // header-less 0.1.0 journal
  const applied = await snapshot(host);
  const file010 = (await host.exec("cat /etc/sysctl.d/90-net-tuning-t.conf")).stdout;
  expect(file010).toMatch(/^# pulumi-net-tuning 0\.1\.0: managed by Pulumi resource /);
  expect(await sysctl(host, "net.core.somaxconn")).toBe("8200");

  const r1 = ok(await stack.up(args({ NetTuning, NicQueues })));
  const kinds = r1.steps.filter((s) => s.type === COMMAND_TYPE || s.type === COPY_TYPE).map((s) => `${s.urn.split("::").pop()} ${s.kind}`).sort();
  // one engine delivery for both (a stack-level resource named after the address)
  expect(kinds).toEqual([expect.stringMatching(/^net-tuning-engine-[0-9.]+-[0-9a-f]{8} create$/), "q-apply update", "q-restore update", "t-apply update", "t-restore update"]);
  expect(r1.runs.map((r) => [r.name, r.op]).sort()).toEqual([["q-apply", "update"], ["t-apply", "update"]]);
  expect(r1.runs.every((r) => r.cmd.includes(" apply-update "))).toBe(true);
  expect(r1.deleted).toEqual([]);
  expect(r1.sessions.total).toBe(3); // the delivery, and an apply per resource
  // the host: every value, file content and mode unchanged but the journals, which the new engine rewrites once in
  // the v2 format (header with owner id and generation) holding exactly the same first originals
  // and our sysctl.d file, whose header comment is shorter today (and names no version, so that later upgrades leave
  // the file alone): the same values and owner line, only the comment before it differs
  // and the converged records the new engine writes after every apply (/var/lib/pulumi-net-tuning-converged, issue #13)
  const FILE = "/etc/sysctl.d/90-net-tuning-t.conf";
  const noJournal = (s: string) =>
    content(s).split("\n").filter((l) => !/\/var\/lib\/pulumi-net-tuning\/(sysctl|nic)\/\S+\.orig( |$)/.test(l) && !l.includes(FILE) && !l.includes("/var/lib/pulumi-net-tuning-converged/")).join("\n");
  expect(noJournal(await snapshot(host))).toBe(noJournal(applied));
  expect((await host.exec(`cat ${FILE}`)).stdout).toBe(file010.replace(/^# pulumi-net-tuning 0\.1\.0: [^\n]*\n# Manual edits[^\n]*\n/, "# Managed by Pulumi: edits are overwritten.\n"));
  const v2 = (await host.exec("cat /var/lib/pulumi-net-tuning/sysctl/*.orig")).stdout.split("\n");
  expect(v2[0]).toMatch(/^net-tuning-journal v2\t\S+\t[A-Za-z0-9-]+$/);
  expect(v2.filter((l) => /^net\./.test(l)).sort()).toEqual(journal.split("\n").filter(Boolean).sort());
  expect(readRestoreStdin(String(stack.get("t-restore")!.inputs.stdin))).toContain(`@orig net.core.somaxconn\t${orig.somaxconn}`);
  expect(String(stack.get("t-apply")!.inputs.stdin)).not.toContain("@program");

  const d = ok(await stack.destroy());
  expect(d.runs.map((r) => r.name).sort()).toEqual(["q-restore", "t-restore"]);
  expect(await sysctl(host, "net.core.somaxconn")).toBe(orig.somaxconn);
  expect(await sysctl(host, "net.ipv4.tcp_fin_timeout")).toBe(orig.fin);
  expect((await host.exec(`cat /sys/class/net/${host.iface}/tx_queue_len`)).stdout.trim()).toBe(txq);
  expect(noDelivery(await snapshot(host))).toBe(noDelivery(before));
});
