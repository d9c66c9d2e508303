/**
 * Checked steps and the lock (issue #18): two runs never hold the lock at once (also right after a SIGKILLed holder),
 * a rollback or restore step that fails is reported by name, a signal during a restore says what was already
 * restored, a journal that cannot be removed fails the delete, a NicQueues delete whose commit fails keeps the unit
 * enabled, and a host without flock is refused in preflight. Faults come from the lab's fault-injection hooks
 * (./hooks.ts; for a failing undo the run pauses after setting the key, and the test makes its /proc/sys
 * directory read-only meanwhile) or from read-only bind mounts inside the lab host.
 */
import { Stack } from "../../testkit/harness";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";
import { ok, readSysctl as sysctl, snapshot } from "../../testkit/host";
import { nicProgram, sysProgram } from "../reliability/common";
import { clearHooks, hold, release, run, setHooks, waitNoProgram, waitPaused } from "./hooks";

jest.setTimeout(300000);

let h0: LabHost;
useLab("steps", 1, (hs) => {
  [h0] = hs;
});
const stacks: Stack[] = [];
function newStack(name: string): Stack {
  const s = new Stack({ project: "safety", stack: name });
  stacks.push(s);
  return s;
}
afterEach(async () => {
  await clearHooks(h0);
  await h0.exec("umount /var/lib/pulumi-net-tuning/sysctl /usr/local/libexec/net-tuning /proc/sys/net/core 2>/dev/null; true");
  for (const s of stacks.splice(0)) if (s.resources().length) await s.destroy().catch(() => undefined);
});
const SOMAX = "net.core.somaxconn";
const FIN = "net.ipv4.tcp_fin_timeout";
const SYN = "net.ipv4.tcp_max_syn_backlog";
// the journal directory, and the engine delivery (installed before the engine runs; a failed first apply keeps it)
const noJournalDir = (s: string) => s.replace(/^[^\n]*(\/var\/lib|\/usr\/local\/lib)\/pulumi-net-tuning[^\n]*\n/gm, "");

test("two concurrent runs right after a SIGKILLed lock holder: both succeed, one after the other, well within 60 s", async () => {
  const before = await snapshot(h0);
  const a = newStack("lockA");
  await setHooks(h0, ["pause-after-step 2 30"]);
  await hold(h0);
  const dead = a.up(sysProgram(h0, "la", { sysctls: { [SYN]: 3000 } }));
  await h0.exec(`kill -KILL ${await waitPaused(h0)}`);
  expect((await dead).ok).toBe(false);
  // Both new runs pause right after taking the lock (step 1) while /run/nt-hold exists: without the lock they would overlap.
  await setHooks(h0, ["pause-after-step 1 30", "trace /run/nt-trace"]);
  await h0.exec("rm -f /run/nt-trace");
  await hold(h0);
  const b = newStack("lockB");
  const c = newStack("lockC");
  const t0 = Date.now();
  const pb = b.up(sysProgram(h0, "lb", { sysctls: { [SOMAX]: 4100 } }));
  const pc = c.up(sysProgram(h0, "lc", { sysctls: { [FIN]: 41 } }));
  await waitPaused(h0);
  await new Promise((res) => setTimeout(res, 1500)); // the other run is now waiting for the lock
  const during = (await h0.exec("cat /run/nt-trace")).stdout.trim().split("\n");
  expect(during.filter((l) => l.startsWith("enter")).length).toBe(1);
  await release(h0);
  const [rb, rc] = await Promise.all([pb, pc]);
  ok(rb);
  ok(rc);
  expect(Date.now() - t0).toBeLessThan(30000);
  const trace = (await h0.exec("cat /run/nt-trace")).stdout.trim().split("\n").map((l) => l.split(" ")[0]);
  expect(trace).toEqual(["enter", "leave", "enter", "leave"]);
  expect(await sysctl(h0, SOMAX)).toBe("4100");
  expect(await sysctl(h0, FIN)).toBe("41");
  await clearHooks(h0);
  // The killed create converges on the next up (first originals from its journal) and everything restores.
  ok(await a.up(sysProgram(h0, "la", { sysctls: { [SYN]: 3000 } })));
  for (const s of [a, b, c]) ok(await s.destroy());
  expect(noJournalDir(await snapshot(h0))).toBe(noJournalDir(before));
});

test("a rollback step that fails is named; the message never claims a full rollback; the next up and destroy converge", async () => {
  const orig = { [SOMAX]: await sysctl(h0, SOMAX), [FIN]: await sysctl(h0, FIN) };
  const before = await snapshot(h0);
  const stack = newStack("undo");
  ok(await stack.up(sysProgram(h0, "ud", { sysctls: { [SOMAX]: 4321, [FIN]: 21 } })));
  // somaxconn and fin_timeout change, then the kernel refuses tcp_ecn_fallback = 7; undoing somaxconn fails: right
  // after it was set, net.core turns read-only (a read-only bind mount, from outside: the run's SSH session cannot mount)
  await setHooks(h0, [`pause-after-set ${SOMAX} 30`]);
  await hold(h0);
  const running = stack.up(sysProgram(h0, "ud", { sysctls: { [SOMAX]: 4322, [FIN]: 22, "net.ipv4.tcp_ecn_fallback": 7 } }));
  await waitPaused(h0);
  await run(h0, "mount --bind /proc/sys/net/core /proc/sys/net/core && mount -o remount,bind,ro /proc/sys/net/core");
  await release(h0);
  const u = await running;
  await run(h0, "umount /proc/sys/net/core");
  expect(u.ok).toBe(false);
  expect(u.error).toMatch(/tcp_ecn_fallback = '7' was refused on \S+: .*; ROLLBACK INCOMPLETE on \S+: could not undo: net\.core\.somaxconn \(wanted '4321' back: sysctl: permission denied on key "net\.core\.somaxconn"\)\. Everything else of this run was rolled back; the journal \S+ keeps the first originals/);
  expect(u.error).not.toMatch(/every change of this run was rolled back/);
  expect(await sysctl(h0, SOMAX)).toBe("4322"); // exactly what the message says
  expect(await sysctl(h0, FIN)).toBe("21");
  const j = (await h0.exec("cat /var/lib/pulumi-net-tuning/sysctl/*.orig")).stdout;
  expect(j).toContain(`${SOMAX}\t${orig[SOMAX]}\n`);
  await clearHooks(h0);
  const again = ok(await stack.up(sysProgram(h0, "ud", { sysctls: { [SOMAX]: 4323, [FIN]: 21 } })));
  expect(again.outputs!.previous).toEqual(orig);
  ok(await stack.destroy());
  expect(await snapshot(h0)).toBe(before);
});

test("the journal cannot be backed up before an update: refused before any change, the existing journal kept byte for byte", async () => {
  const stack = newStack("jbak");
  ok(await stack.up(sysProgram(h0, "jb", { sysctls: { [SOMAX]: 4700 } })));
  const mid = await snapshot(h0);
  await setHooks(h0, ["fail-journal-backup"]);
  const u = await stack.up(sysProgram(h0, "jb", { sysctls: { [SOMAX]: 4701 } }));
  expect(u.ok).toBe(false);
  expect(u.error).toMatch(/cannot copy the journal \S+ to \S+ on \S+ \(\/tmp full\?\); nothing was changed/);
  expect(await snapshot(h0)).toBe(mid);
  await clearHooks(h0);
  ok(await stack.destroy());
});

test("SIGTERM during a restore names what was already restored; the retried delete converges", async () => {
  const before = await snapshot(h0);
  const stack = newStack("rsig");
  ok(await stack.up(sysProgram(h0, "rs", { sysctls: { [SOMAX]: 4400, [FIN]: 44 } })));
  await setHooks(h0, ["pause-after-step 1 30"]);
  await hold(h0);
  const pending = stack.destroy();
  const pid = await waitPaused(h0);
  await h0.exec(`kill -TERM ${pid}`);
  await release(h0);
  const d = await pending;
  expect(d.ok).toBe(false);
  expect(d.error).toMatch(/interrupted while restoring on \S+; already restored by this run: net\.\S+=\S+; the journal and the boot files were kept: run the delete again/);
  expect(d.error).not.toMatch(/nothing was changed/);
  await waitNoProgram(h0);
  await clearHooks(h0);
  ok(await stack.destroy());
  expect(await snapshot(h0)).toBe(before);
});

test("the journal cannot be removed after a restore: the delete fails naming it, state keeps the resource, a retry converges", async () => {
  const before = await snapshot(h0);
  const stack = newStack("jrm");
  ok(await stack.up(sysProgram(h0, "jr", { sysctls: { [SOMAX]: 4500 } })));
  await h0.exec("mount --bind /var/lib/pulumi-net-tuning/sysctl /var/lib/pulumi-net-tuning/sysctl && mount -o remount,bind,ro /var/lib/pulumi-net-tuning/sysctl");
  const d = await stack.destroy();
  expect(d.ok).toBe(false);
  expect(d.error).toMatch(/every original was restored and every boot file removed on \S+, but the journal \S+\.orig could not be removed: remove it/);
  expect(stack.resources().some((e) => e.name === "jr-restore")).toBe(true);
  await h0.exec("umount /var/lib/pulumi-net-tuning/sysctl");
  ok(await stack.destroy());
  expect(await snapshot(h0)).toBe(before);
});

test("NicQueues delete whose file commit fails: values restored, unit and its wants link kept (still enabled), retry converges", async () => {
  const before = await snapshot(h0);
  const stack = newStack("nicdel");
  ok(await stack.up(nicProgram(h0, "nd", { interface: "eth0", persistence: "systemd", txQueueLength: 2600 })));
  const wants = "/etc/systemd/system/multi-user.target.wants/net-tuning-nic-eth0.service";
  await h0.exec("mount --bind /usr/local/libexec/net-tuning /usr/local/libexec/net-tuning && mount -o remount,bind,ro /usr/local/libexec/net-tuning");
  const d = await stack.destroy();
  expect(d.ok).toBe(false);
  expect(d.error).toMatch(/cannot remove \/usr\/local\/libexec\/net-tuning\/nic-eth0\.sh on \S+ after the values were restored; the boot files were put back as they were; already restored by this run: eth0\/txqueuelen=\d+/);
  expect((await h0.exec(`test -L ${wants} && test -f /etc/systemd/system/net-tuning-nic-eth0.service`)).code).toBe(0);
  expect((await h0.exec("test -L /etc/systemd/system/sys-subsystem-net-devices-eth0.device.wants/net-tuning-nic-eth0.service")).code).toBe(0); // the hotplug link too
  await h0.exec("umount /usr/local/libexec/net-tuning");
  ok(await stack.destroy());
  expect(await snapshot(h0)).toBe(before);
});

test("no flock on the host: refused before any change, naming the package", async () => {
  const before = await snapshot(h0);
  const stack = newStack("noflock");
  await h0.exec("mv /usr/bin/flock /usr/bin/flock.hidden");
  try {
    const r = await stack.up(sysProgram(h0, "nf", { sysctls: { [SOMAX]: 4600 } }));
    expect(r.ok).toBe(false);
    expect(r.runs[0].exitCode).toBe(2);
    expect(r.error).toMatch(/flock is not installed on \S+: install util-linux .*; nothing was changed/);
  } finally {
    await h0.exec("mv /usr/bin/flock.hidden /usr/bin/flock");
  }
  expect(noJournalDir(await snapshot(h0))).toBe(noJournalDir(before));
});
