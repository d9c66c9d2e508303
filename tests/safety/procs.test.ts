/**
 * Process count of a 40-key NetTuning apply (issue #12): at most 18 processes beyond the SSH session's own. /proc/sys
 * is read by one awk per batch (the snapshot, the read-back) and written with the shell's printf; journal, owner
 * and sysctl.d files cost dd + mv each. Counted with the lab host's own pid namespace counter
 * (/proc/sys/kernel/ns_last_pid: pids are handed out in order and nothing else runs there), minus an empty session
 * (`true`) through the same harness transport. A create also opens the engine delivery's SFTP session, counted as
 * an empty CopyToRemote of a small file; the apply bootstrap and the engine's first install (mkdir, cat, sha256sum,
 * mv) are included.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
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
  // the engine delivery of a create is its own session (SFTP as the SSH user): an empty CopyToRemote of a small file
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "nt-procs-"));
  fs.writeFileSync(path.join(tmp, "f"), "x\n");
  const copyStack = new Stack({ project: "procs", stack: "copy" });
  const copy = await procs(() => copyStack.up(() => {
    new remote.CopyToRemote("c", { connection: h0.connection("root"), source: new pulumi.asset.FileAsset(path.join(tmp, "f")), remotePath: "/tmp/nt-procs-copy" });
    return {};
  }));
  await h0.exec("rm -f /tmp/nt-procs-copy");
  fs.rmSync(tmp, { recursive: true, force: true });
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
  console.log(`processes: empty session ${session}; empty copy session ${copy}; create ${create} (${create - session - copy} beyond the copy and apply sessions, engine install included); update ${update} (${update - session}); destroy ${destroy} (${destroy - session})`);
  expect(session).toBeGreaterThan(0);
  expect(copy).toBeGreaterThan(0);
  expect(create - session - copy).toBeLessThanOrEqual(18);
  expect(update - session).toBeLessThanOrEqual(18);
});
