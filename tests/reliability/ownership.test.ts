/**
 * Ownership (issue #8): a setting has one owner per host. A second NetTuning (same stack or another stack) or a
 * second NicQueues on one interface is refused with an error naming the other owner — never last-writer-wins — and
 * once the first owner is deleted the second takes the setting over with the TRUE original as its rollback value.
 */
import { Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { snapshot } from "../../testkit/host";
import * as pulumi from "@pulumi/pulumi";
import { NetTuning } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";
import { commands, nicProgram, ok, readSysctl, sh, sysProgram, trackedStacks } from "./common";
import { readRestoreStdin } from "../../provider/host/programs";

jest.setTimeout(300000);

let lab: Lab;
let host: LabHost;
beforeAll(async () => {
  lab = await startLab({ hosts: 1, tag: "owner" });
  host = lab.hosts[0];
}, 120000);
afterAll(async () => {
  await lab?.stop();
});

const SOMAX = "net.core.somaxconn";
const FIN = "net.ipv4.tcp_fin_timeout";
const newStack = trackedStacks();

test("different stacks, one key: refused naming the owner; the owner's value stays; after its delete the second takes over with the true original", async () => {
  const orig = await readSysctl(host, SOMAX);
  const before = await snapshot(host);
  const a = newStack("rel", "stackA");
  const b = newStack("rel", "stackB");
  ok(await a.up(sysProgram(host, "first", { sysctls: { [SOMAX]: 1111 } })));
  const mid = await snapshot(host);
  const rb = await b.up(sysProgram(host, "second", { sysctls: { [SOMAX]: 2222, [FIN]: 22 } }));
  expect(rb.ok).toBe(false);
  expect(rb.runs[0].exitCode).toBe(2);
  expect(rb.error).toMatch(/net\.core\.somaxconn is already managed by rel\/stackA\/first on this host \(journal \S+\): manage it in one resource only, or remove it there first/);
  expect(await readSysctl(host, SOMAX)).toBe("1111"); // not last-writer-wins
  expect(await snapshot(host)).toBe(mid); // and the other key of the refused resource was not touched either
  expect(commands(b)).toBe(0);
  // Retrying does not wear the owner down.
  for (let i = 0; i < 3; i++) expect((await b.up(sysProgram(host, "second", { sysctls: { [SOMAX]: 2222 } }))).ok).toBe(false);
  expect(await readSysctl(host, SOMAX)).toBe("1111");

  ok(await a.destroy());
  expect(await readSysctl(host, SOMAX)).toBe(orig);
  const taken = ok(await b.up(sysProgram(host, "second", { sysctls: { [SOMAX]: 2222, [FIN]: 22 } })));
  expect(await readSysctl(host, SOMAX)).toBe("2222");
  expect((taken.outputs!.previous as Record<string, string>)[SOMAX]).toBe(orig); // never the first owner's 1111
  ok(await b.destroy());
  expect(await snapshot(host)).toBe(before);
});

test("the slash form of a key is the same key: refused", async () => {
  const before = await snapshot(host);
  const a = newStack("rel", "dotted");
  const b = newStack("rel", "slashed");
  ok(await a.up(sysProgram(host, "dot", { sysctls: { [SOMAX]: 1212 } })));
  const rb = await b.up(sysProgram(host, "slash", { sysctls: { "net/core/somaxconn": 2121 } }));
  expect(rb.ok).toBe(false);
  expect(rb.error).toContain("is already managed by rel/dotted/dot");
  expect(await readSysctl(host, SOMAX)).toBe("1212");
  ok(await a.destroy());
  expect(await snapshot(host)).toBe(before);
});

test("one stack, two resources claiming one key: exactly one wins, the other names it; removing the winner frees the key", async () => {
  const orig = await readSysctl(host, SOMAX);
  const before = await snapshot(host);
  const s = newStack("rel", "same");
  // The connection as an Output (host known only at apply, as from a server resource): the program cannot refuse
  // the pair at preview (it does when the host is a plain value), so the host arbitrates.
  const both = () => {
    new NetTuning("alpha", { connection: pulumi.output(host.connection()), sysctls: { [SOMAX]: 3001 } });
    new NetTuning("beta", { connection: pulumi.output(host.connection()), sysctls: { [SOMAX]: 3002, [FIN]: 33 } });
  };
  const r = await s.up(both);
  expect(r.ok).toBe(false);
  const applies = r.runs.filter((x) => x.name.endsWith("-apply"));
  expect(applies).toHaveLength(2); // both creates ran (unbounded parallelism), serialised by the host lock
  const winner = applies.find((x) => x.ok)!;
  const loser = applies.find((x) => !x.ok)!;
  expect(winner).toBeDefined();
  expect(loser).toBeDefined();
  const w = winner.name.replace(/-apply$/, "");
  expect(loser.exitCode).toBe(2);
  expect(loser.error).toContain(`net.core.somaxconn is already managed by rel/same/${w} on this host`);
  expect(await readSysctl(host, SOMAX)).toBe(w === "alpha" ? "3001" : "3002");
  if (w === "alpha") expect(await readSysctl(host, FIN)).not.toBe("33");
  // Declaring only the loser does not work in one step: its create runs before the winner's delete (engine order).
  const l = loser.name.replace(/-apply$/, "");
  const only = (name: string) => () => {
    new NetTuning(name, { connection: host.connection(), sysctls: name === "alpha" ? { [SOMAX]: 3001 } : { [SOMAX]: 3002, [FIN]: 33 } });
  };
  const step = await s.up(only(l));
  expect(step.ok).toBe(false);
  expect(step.error).toContain(`already managed by rel/same/${w}`);
  // Remove the winner first (an up without it), then the loser takes the key over with the true original.
  ok(await s.up(() => undefined));
  expect(await readSysctl(host, SOMAX)).toBe(orig);
  const t = ok(await s.up(only(l)));
  expect(t.ok).toBe(true);
  expect(readRestoreStdin(s.get(`${l}-restore`)!.inputs.stdin as string)).toContain(`@orig ${SOMAX}\t${orig}\n`);
  ok(await s.destroy());
  expect(await snapshot(host)).toBe(before);
});

test("same resource name in two projects: different owners, refused", async () => {
  const before = await snapshot(host);
  const a = newStack("projA", "prod");
  const b = newStack("projB", "prod");
  ok(await a.up(sysProgram(host, "web", { sysctls: { [FIN]: 44 }, fileName: "90-a.conf" })));
  const rb = await b.up(sysProgram(host, "web", { sysctls: { [FIN]: 45 }, fileName: "90-b.conf" }));
  expect(rb.ok).toBe(false);
  expect(rb.error).toContain("net.ipv4.tcp_fin_timeout is already managed by projA/prod/web");
  expect(await readSysctl(host, FIN)).toBe("44");
  ok(await a.destroy());
  expect(await snapshot(host)).toBe(before);
});

test("another resource's sysctl.d file (same fileName, other keys) is never overwritten", async () => {
  const before = await snapshot(host);
  const a = newStack("rel", "fileA");
  const b = newStack("rel", "fileB");
  ok(await a.up(sysProgram(host, "fa", { sysctls: { [FIN]: 46 }, fileName: "90-shared.conf" })));
  const file = await sh(host, "cat /etc/sysctl.d/90-shared.conf");
  const rb = await b.up(sysProgram(host, "fb", { sysctls: { [SOMAX]: 4646 }, fileName: "90-shared.conf" }));
  expect(rb.ok).toBe(false);
  expect(rb.error).toContain("/etc/sysctl.d/90-shared.conf exists and was not written by this resource (rel/fileB/fb)");
  expect(await sh(host, "cat /etc/sysctl.d/90-shared.conf")).toBe(file);
  ok(await a.destroy());
  expect(await snapshot(host)).toBe(before);
});

test("two resources whose owner labels sanitise alike (\"a;b\" and \"a%b\") are still different owners", async () => {
  // Owner labels replace unsafe characters with "_", so both read rel/lbl/a_b (their owner ids differ by the hash);
  // safeName() gives both the default file name 90-net-tuning-a-b.conf.
  const before = await snapshot(host);
  const s1 = newStack("rel", "lbl");
  const s2 = newStack("rel", "lbl");
  ok(await s1.up(sysProgram(host, "a;b", { sysctls: { [FIN]: 47 } })));
  const r = await s2.up(sysProgram(host, "a%b", { sysctls: { [SOMAX]: 4747 } }));
  expect(r.ok).toBe(false);
  // Must say the file belongs to another resource, not treat it as its own file with a lost journal.
  expect(r.error).toContain("/etc/sysctl.d/90-net-tuning-a-b.conf exists and was not written by this resource");
  expect(r.error).not.toContain("journal of original values");
  expect(await readSysctl(host, SOMAX)).not.toBe("4747");
  ok(await s1.destroy());
  expect(await snapshot(host)).toBe(before);
});

describe("NicQueues: one per interface", () => {
  test("a second NicQueues on eth0 (other stack) is refused naming the first; after the first is deleted it applies with the true originals", async () => {
    const origTxq = (await sh(host, "cat /sys/class/net/eth0/tx_queue_len")).trim();
    const before = await snapshot(host);
    const a = newStack("rel", "nicA");
    const b = newStack("rel", "nicB");
    ok(await a.up(nicProgram(host, "q1", { interface: "eth0", persistence: "none", txQueueLength: 1500 })));
    const mid = await snapshot(host);
    const rb = await b.up(nicProgram(host, "q2", { interface: "eth0", persistence: "none", txQueueLength: 2500, features: { gro: true } }));
    expect(rb.ok).toBe(false);
    expect(rb.runs[0].exitCode).toBe(2);
    expect(rb.error).toMatch(/eth0 is already managed by rel\/nicA\/q1 \(journal \S+\): one NicQueues per interface; manage it there, or delete that resource first/);
    expect(await snapshot(host)).toBe(mid);
    expect((await sh(host, "cat /sys/class/net/eth0/tx_queue_len")).trim()).toBe("1500");
    ok(await a.destroy());
    const t = ok(await b.up(nicProgram(host, "q2", { interface: "eth0", persistence: "none", txQueueLength: 2500, features: { gro: true } })));
    expect((t.outputs!.previous as Record<string, string>)["eth0/txqueuelen"]).toBe(origTxq);
    ok(await b.destroy());
    expect(await snapshot(host)).toBe(before);
  });

  test("two NicQueues on eth0 in one stack: exactly one wins; rc.local never holds two blocks for eth0", async () => {
    const before = await snapshot(host);
    const s = newStack("rel", "nicSame");
    // Connection as an Output (host known only at apply): the host arbitrates (a plain host is refused at preview).
    const r = await s.up(() => {
      new NicQueues("n1", { connection: pulumi.output(host.connection()), interface: "eth0", persistence: "rc.local", txQueueLength: 1600 });
      new NicQueues("n2", { connection: pulumi.output(host.connection()), interface: "eth0", persistence: "rc.local", txQueueLength: 2600 });
    });
    expect(r.ok).toBe(false);
    const applies = r.runs.filter((x) => x.name.endsWith("-apply"));
    expect(applies.filter((x) => x.ok)).toHaveLength(1);
    const w = applies.find((x) => x.ok)!.name.replace(/-apply$/, "");
    expect(applies.find((x) => !x.ok)!.error).toContain(`eth0 is already managed by rel/nicSame/${w}`);
    expect((await sh(host, "grep -c '^# BEGIN pulumi-net-tuning' /etc/rc.local")).trim()).toBe("1");
    ok(await s.destroy());
    expect(await snapshot(host)).toBe(before);
  });
});
