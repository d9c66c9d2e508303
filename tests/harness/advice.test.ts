/**
 * Issue #33, "one advice per finding", through the harness on real lab hosts: a program of 3 NetTuning resources on 3
 * hosts that give the same advice logs it ONCE per program run, one line naming the 3 resources and their hosts
 * (components/advice.ts), in the preview and in the up; the up applies all three.
 */
import { NetTuning } from "../../components/netTuning";
import { Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";

jest.setTimeout(180_000);
let lab: Lab;
let hosts: LabHost[];
beforeAll(async () => {
  lab = await startLab({ hosts: 3, tag: "advice" });
  hosts = lab.hosts;
}, 120_000);
afterAll(async () => {
  await lab?.stop();
});

test("3 resources with the same advice: one line naming all 3 in the preview and in each run of the up", async () => {
  const lines: string[] = [];
  const spy = jest.spyOn(console, "warn").mockImplementation((...a: unknown[]) => {
    lines.push(a.map(String).join(" "));
  });
  const program = () => {
    hosts.forEach((h, i) => new NetTuning(`adv-${i}`, { connection: h.connection(), sysctls: { "net.core.somaxconn": 100000 } }));
  };
  const s = new Stack({ project: "advice", stack: "dev" });
  try {
    const p = await s.preview(program);
    expect([p.ok, p.error]).toEqual([true, undefined]);
    const names = hosts.map((h, i) => `NetTuning "adv-${i}" (${h.connection().host})`).join(", ");
    const somax = () => lines.filter((l) => l.includes("net.core.somaxconn = 100000 wraps"));
    expect(somax()).toEqual([expect.stringContaining(`3 resources (${names}): net.core.somaxconn = 100000 wraps to 34464 on pre-4.1 kernels`)]);
    lines.length = 0;
    const up = await s.up(program);
    expect([up.ok, up.error]).toEqual([true, undefined]);
    expect(somax().length).toBeGreaterThanOrEqual(1);
    for (const l of somax()) expect(l).toContain(`3 resources (${names}): `);
    for (const h of hosts) expect((await h.exec("cat /proc/sys/net/core/somaxconn")).stdout.trim()).toBe("100000");
  } finally {
    spy.mockRestore();
    expect((await s.destroy()).ok).toBe(true);
  }
});
