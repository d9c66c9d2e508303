/**
 * Process count of a 40-key NetTuning apply (issue #12): at most 18 processes beyond the SSH session's own. /proc/sys
 * is read by one awk per batch (the snapshot, the read-back) and written with the shell's printf; journal, owner
 * and sysctl.d files cost dd + mv each. Counted with the lab host's own pid namespace counter
 * (/proc/sys/kernel/ns_last_pid: pids are handed out in order and nothing else runs there), minus an empty session
 * (`true`) through the same harness transport. Today's bootstrap (mktemp, cat, sed) is included.
 */
import { remote } from "@pulumi/command";
import { Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { netTuningSysctls } from "../../bench/keys";
import { sysProgram } from "../reliability/common";

jest.setTimeout(300000);

let lab: Lab;
let h0: LabHost;
beforeAll(async () => {
  lab = await startLab({ hosts: 1, tag: "procs" });
  [h0] = lab.hosts;
}, 120000);
afterAll(async () => {
  await lab?.stop();
});

async function lastPid(): Promise<number> {
  return Number((await h0.exec("cat /proc/sys/kernel/ns_last_pid")).stdout.trim());
}
/** Processes created on the host by `op` (the reader's own `cat` subtracted). */
async function procs(op: () => Promise<unknown>): Promise<number> {
  const a = await lastPid();
  await op();
  return (await lastPid()) - a - 1;
}

test("a 40-key NetTuning create and update take at most 18 processes beyond the SSH session's own (root)", async () => {
  const empty = new Stack({ project: "procs", stack: "empty" });
  const session = await procs(() => empty.up(() => { new remote.Command("t", { connection: h0.connection("root"), create: "true" }); return {}; }));
  const stack = new Stack({ project: "procs", stack: "nt" });
  const args = { fileName: "90-bench.conf", sysctls: netTuningSysctls(), bootOverride: "warn" as const };
  let ok = false;
  const create = await procs(async () => { ok = (await stack.up(sysProgram(h0, "pc", args))).ok; });
  expect(ok).toBe(true);
  const update = await procs(async () => { ok = (await stack.up(sysProgram(h0, "pc", { ...args, sysctls: { ...args.sysctls, "net.core.somaxconn": 8000 } }))).ok; });
  expect(ok).toBe(true);
  let err: string | undefined;
  const destroy = await procs(async () => { const d = await stack.destroy(); ok = d.ok; err = d.error; });
  expect(err).toBeUndefined();
  expect(ok).toBe(true);
  console.log(`processes: empty session ${session}; create ${create} (${create - session} beyond the session); update ${update} (${update - session}); destroy ${destroy} (${destroy - session})`);
  expect(session).toBeGreaterThan(0);
  expect(create - session).toBeLessThanOrEqual(18);
  expect(update - session).toBeLessThanOrEqual(18);
});
