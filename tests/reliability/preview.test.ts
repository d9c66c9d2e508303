/**
 * Issue #32 items 11 and 12 on a real lab host, through the harness (pulumi-command 1.2.1 semantics): the preview
 * refuses what `up` refuses when the input alone shows it, before any SSH session, and an explicit NicQueues group
 * object replaces the preset's.
 * - a misspelt key (net.core.somaxcon): refused at preview; let through by `acknowledge` it reaches the host, whose
 *   preflight refuses it as a key this kernel does not have (what `up` did with it before);
 * - a connection with no key, password or agent: refused at preview (before: `up` failed at the SSH login);
 * - the throughput preset (without its rings: the lab's veth has none) with `rps: { cpus: "all" }` on a NIC with at least as many rx queues as CPUs: RPS is applied
 *   (before, the preset's onlyWhenQueuesBelowCpus was carried into the explicit rps and RPS was skipped).
 */
import { Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { snapshot } from "../../testkit/host";
import { NetTuning } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";
import { nicPresets } from "../../provider/sizing";

jest.setTimeout(180_000);
let lab: Lab;
let host: LabHost;
beforeAll(async () => {
  lab = await startLab({ hosts: 1, tag: "pvw" });
  host = lab.hosts[0];
}, 120_000);
afterAll(async () => {
  await lab?.stop();
});
/** The throughput preset without its rings (the lab's veth has no ring parameters): its rps and txqueuelen stay. */
const { rings: _rings, ...throughputWithoutRings } = nicPresets.throughput();
const stacks: Stack[] = [];
function newStack(name: string): Stack {
  const s = new Stack({ project: "pvw", stack: name });
  stacks.push(s);
  return s;
}
afterEach(async () => {
  for (const s of stacks.splice(0)) if (s.resources().length) await s.destroy();
});

test("a misspelt key: refused at preview with no session; acknowledged, the host's preflight refuses it (nothing changes)", async () => {
  const before = await snapshot(host);
  const s = newStack("typo");
  const p = await s.preview(() => {
    new NetTuning("typo", { connection: host.connection(), sysctls: { "net.core.somaxcon": 4096 } });
  });
  expect(p.ok).toBe(false);
  expect(p.error).toContain("net.core.somaxcon = 4096 is not a catalogued key; it looks like net.core.somaxconn, and the host preflight refuses keys that do not exist");
  expect(p.sessions.total).toBe(0);
  const up = await s.up(() => {
    new NetTuning("typo", { connection: host.connection(), sysctls: { "net.core.somaxcon": 4096 }, acknowledge: ["net.core.somaxcon"] });
  });
  expect(up.ok).toBe(false);
  expect(up.error).toMatch(/these keys do not exist on this kernel .*net\.core\.somaxcon/);
  expect(await snapshot(host)).toBe(before);
});

test("a connection with no private key, password or agent: refused at preview, no session", async () => {
  const saved = process.env.SSH_AUTH_SOCK;
  delete process.env.SSH_AUTH_SOCK;
  try {
    const { privateKey: _unused, ...noKey } = host.connection();
    const s = newStack("nokey");
    const p = await s.up(() => {
      new NetTuning("nokey", { connection: noKey, sysctls: { "net.core.somaxconn": 4096 } });
    });
    expect(p.ok).toBe(false);
    expect(p.error).toContain("connection has no privateKey, password or agentSocketPath (and SSH_AUTH_SOCK is not set)");
    expect(p.sessions.total).toBe(0);
    expect(s.resources().filter((r) => r.type.startsWith("command:"))).toEqual([]);
  } finally {
    if (saved !== undefined) process.env.SSH_AUTH_SOCK = saved;
  }
});

test("a preset's rps (throughput's, with onlyWhenQueuesBelowCpus) and an explicit rps: { cpus: \"all\" }: RPS is applied on every queue", async () => {
  const { stdout } = await host.exec(`nproc; ls -d /sys/class/net/${host.iface}/queues/rx-* | wc -l; cat /sys/class/net/${host.iface}/queues/rx-0/rps_cpus`);
  const [cpus, queues, rps0] = stdout.trim().split("\n");
  // the case the issue names: at least as many rx queues as CPUs, so the preset's rule would skip RPS
  expect(Number(queues)).toBeGreaterThanOrEqual(Number(cpus));
  const s = newStack("rps");
  const up = await s.up(() => {
    new NicQueues("rps", {
      connection: host.connection(), interface: host.iface, persistence: "none", preset: throughputWithoutRings,
      rps: { cpus: "all" },
    });
  });
  expect(up.error).toBeUndefined();
  expect(up.ok).toBe(true);
  const after = await host.exec(`for q in /sys/class/net/${host.iface}/queues/rx-*; do cat $q/rps_cpus; done`);
  const mask = (2 ** Number(cpus) - 1).toString(16);
  for (const m of after.stdout.trim().split("\n")) expect(m.replace(/^0+(?=.)/, "").replace(/,/g, "")).toBe(mask);
  await s.destroy();
  expect((await host.exec(`cat /sys/class/net/${host.iface}/queues/rx-0/rps_cpus`)).stdout.trim()).toBe(rps0);
});
