/**
 * Moves (issue #18): a change of connection.host/port/user/proxy replaces both children, create-before-delete. The
 * new apply (NT_APPLY_MODE=create) starts a new generation in the host's journal; the old restore then runs with the
 * OLD connection and its `@generation`: on the same machine (another port, a proxy to 127.0.0.1) it sees the newer
 * generation and changes nothing; on another machine it restores that machine. Real components (the wiring is in components/common.ts; see
 * tests/safety/wiring.ts for the negative control).
 */
import { Stack, UpResult } from "../../testkit/harness";
import { readRestoreStdin } from "../../provider/host/programs";
import type { LabHost } from "../../testkit/lab";
import { stacksDestroyedAfterEach, useLab } from "../../testkit/jest";
import { ok, readSysctl as sysctl, snapshot } from "../../testkit/host";
import { Conn, nicMoveProgram, sysMoveProgram, withoutGeneration } from "./wiring";

jest.setTimeout(300000);

let h0: LabHost;
let h1: LabHost;
useLab("moves", 2, async (hs) => {
  [h0, h1] = hs;
  // A second sshd on port 2222 of h0: the same machine under a second address.
  const r = await h0.exec("/usr/sbin/sshd -p 2222 -o PidFile=/run/sshd-2222.pid -f /etc/ssh/sshd_config -h /etc/ssh/ssh_host_ed25519_key");
  if (r.code !== 0) throw new Error(`second sshd: ${r.stderr}`);
});
const newStack = stacksDestroyedAfterEach("safety");

const K = { somax: "net.core.somaxconn", fin: "net.ipv4.tcp_fin_timeout" };
const ARGS = { sysctls: { [K.somax]: 8191, [K.fin]: 19 } };
const FILE = (name: string) => `/etc/sysctl.d/90-net-tuning-${name}.conf`;

/** A snapshot without the journal files (their generation changes on a move) and the state directory itself. */
const withoutJournal = (s: string) => s.replace(/^[^\n]*\/var\/lib\/pulumi-net-tuning[^\n]*\n/gm, "");
async function journal(host: LabHost): Promise<string> {
  return (await host.exec("cat /var/lib/pulumi-net-tuning/sysctl/*.orig 2>/dev/null")).stdout;
}
const gen = (j: string) => /^net-tuning-journal v2\t\S+\t(\S+)$/m.exec(j)?.[1];
const allOut = (r: UpResult) => r.runs.map((x) => `${x.stdout}\n${x.stderr}`).join("\n");

async function tuned(host: LabHost, name: string): Promise<void> {
  expect(await sysctl(host, K.somax)).toBe("8191");
  expect(await sysctl(host, K.fin)).toBe("19");
  expect((await host.exec(`cat ${FILE(name)}`)).stdout).toContain(`${K.somax} = 8191`);
}

/** Same machine, two connections: the machine stays tuned, state says applied, and destroy restores it. */
async function sameMachine(stackName: string, name: string, from: Conn, to: Conn): Promise<void> {
  const before = await snapshot(h0);
  const stack = newStack(stackName);
  const first = ok(await stack.up(sysMoveProgram(name, from, ARGS)));
  await tuned(h0, name);
  const mid = await snapshot(h0);
  const g1 = gen(await journal(h0));
  expect(g1).toBeDefined();
  expect(first.outputs!.applied).toEqual({ [K.somax]: "8191", [K.fin]: "19" });
  const moved = ok(await stack.up(sysMoveProgram(name, to, ARGS)));
  expect(moved.replaced.length).toBeGreaterThan(0);
  // The old restore ran on this same machine and saw the newer generation: nothing reverted.
  expect(allOut(moved)).toMatch(/not restoring anything on \S+: a newer apply of this resource \(generation \S+\) took this machine over/);
  await tuned(h0, name);
  expect(withoutJournal(await snapshot(h0))).toBe(withoutJournal(mid));
  const g2 = gen(await journal(h0));
  expect(g2).toBeDefined();
  expect(g2).not.toBe(g1);
  expect(moved.outputs!.applied).toEqual({ [K.somax]: "8191", [K.fin]: "19" });
  expect(moved.outputs!.previous).toEqual(first.outputs!.previous); // the first originals, never the tuned values
  // The new restore carries the new generation: destroy restores the machine.
  const restore = stack.resources().find((e) => e.name === `${name}-restore`)!;
  expect(readRestoreStdin(String(restore.inputs.stdin))).toContain(`@generation ${g2}\n`);
  ok(await stack.destroy());
  expect(await snapshot(h0)).toBe(before);
}

describe("same machine under another connection: never reverted", () => {
  test("port 22 → port 2222", async () => {
    await sameMachine("port", "mvport", h0.connection("root"), { ...h0.connection("root"), port: 2222 });
  });
  test("direct → through a proxy (the same machine's 127.0.0.1)", async () => {
    await sameMachine("proxy", "mvproxy", h0.connection("root"), { ...h0.connection("root"), host: "127.0.0.1", proxy: h0.connection("root") });
  });
  test("NicQueues: port 22 → port 2222 keeps rings/channels and the rc.local block", async () => {
    const before = await snapshot(h0);
    const stack = newStack("nicport");
    const NIC = { interface: "eth0", persistence: "rc.local" as const, channels: { rx: 2 }, txQueueLength: 3000 };
    ok(await stack.up(nicMoveProgram("mvnic", h0.connection("root"), NIC)));
    const mid = await snapshot(h0);
    const moved = ok(await stack.up(nicMoveProgram("mvnic", { ...h0.connection("root"), port: 2222 }, NIC)));
    expect(allOut(moved)).toMatch(/not restoring anything on \S+: a newer apply/);
    expect(withoutJournal(await snapshot(h0))).toBe(withoutJournal(mid));
    ok(await stack.destroy());
    expect(await snapshot(h0)).toBe(before);
  });
});

test("negative control: the same port move WITHOUT @generation in the restore plan reverts the machine (issue #18's bug)", async () => {
  const before = await snapshot(h0);
  const stack = newStack("nogen");
  ok(await stack.up(sysMoveProgram("nogen", h0.connection("root"), ARGS, [withoutGeneration])));
  await tuned(h0, "nogen");
  const moved = ok(await stack.up(sysMoveProgram("nogen", { ...h0.connection("root"), port: 2222 }, ARGS, [withoutGeneration])));
  expect(moved.replaced.length).toBeGreaterThan(0);
  expect(await sysctl(h0, K.somax)).not.toBe("8191"); // reverted while state says applied
  expect(moved.outputs!.applied).toEqual({ [K.somax]: "8191", [K.fin]: "19" });
  ok(await stack.destroy());
  expect(withoutJournal(await snapshot(h0))).toBe(withoutJournal(before));
});

describe("another machine: the new one is tuned, the old one restored", () => {
  test("host h0 → h1", async () => {
    const [b0, b1] = [await snapshot(h0), await snapshot(h1)];
    const stack = newStack("host");
    ok(await stack.up(sysMoveProgram("mvhost", h0.connection("root"), ARGS)));
    await tuned(h0, "mvhost");
    const moved = ok(await stack.up(sysMoveProgram("mvhost", h1.connection("root"), ARGS)));
    expect(moved.replaced.length).toBeGreaterThan(0);
    await tuned(h1, "mvhost");
    expect(await snapshot(h0)).toBe(b0);
    ok(await stack.destroy());
    expect(await snapshot(h1)).toBe(b1);
  });
  test("proxy change alone (127.0.0.1 through h0 → 127.0.0.1 through h1): a replace, h0 restored", async () => {
    const [b0, b1] = [await snapshot(h0), await snapshot(h1)];
    const via = (h: LabHost): Conn => ({ ...h.connection("root"), host: "127.0.0.1", proxy: h.connection("root") });
    const stack = newStack("proxy2");
    ok(await stack.up(sysMoveProgram("mvpx", via(h0), ARGS)));
    await tuned(h0, "mvpx");
    const moved = ok(await stack.up(sysMoveProgram("mvpx", via(h1), ARGS)));
    expect(moved.replaced.length).toBeGreaterThan(0);
    await tuned(h1, "mvpx");
    expect(await snapshot(h0)).toBe(b0);
    ok(await stack.destroy());
    expect(await snapshot(h1)).toBe(b1);
  });
});

test("double fault: the journal is gone when a restore runs → it restores from Pulumi state and warns", async () => {
  const before = await snapshot(h0);
  const stack = newStack("dbl");
  ok(await stack.up(sysMoveProgram("dbl", h0.connection("root"), ARGS)));
  await h0.exec("rm -f /var/lib/pulumi-net-tuning/sysctl/*.orig /var/lib/pulumi-net-tuning/sysctl/*.owner");
  const d = ok(await stack.destroy());
  expect(allOut(d)).toMatch(/warning: the host's journal \S+ is missing on \S+; restoring the originals kept in Pulumi state/);
  expect(withoutJournal(await snapshot(h0))).toBe(withoutJournal(before));
});
