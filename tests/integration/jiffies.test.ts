/**
 * Keys the kernel keeps in jiffies but reads and writes in milliseconds (`*_ms_jiffies`: tcp_invalid_ratelimit,
 * icmp_ratelimit) on a real lab host, through the harness: 250 applies although it reads back rounded (252 at
 * HZ=250), the sysctl.d file keeps 250, `applied` shows what /proc/sys reads, the host's warning names the step,
 * a second up is no change (252 against 250 is not drift), and delete restores the originals.
 */
import { Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { fileOn, ok, readSysctl as sysctl, sysProgram as program } from "../../testkit/host";
import { sameValue } from "../../provider/sysctl/readback";

let lab: Lab;
let h0: LabHost;
beforeAll(async () => {
  lab = await startLab({ hosts: 1, tag: "jiffies" });
  [h0] = lab.hosts;
}, 120000);
afterAll(async () => {
  await lab?.stop();
});

const RATE = "net.ipv4.tcp_invalid_ratelimit";
const ICMP = "net.ipv4.icmp_ratelimit";

test("tcp_invalid_ratelimit = 250 and icmp_ratelimit = 250 apply; file keeps 250, applied = /proc/sys; no drift; delete restores", async () => {
  const orig = { rate: await sysctl(h0, RATE), icmp: await sysctl(h0, ICMP) };
  const stack = new Stack({ project: "it", stack: "jiffies" });
  const args = { sysctls: { [RATE]: 250, [ICMP]: 250 } };
  const r1 = ok(await stack.up(program(h0, "jiffy", args)));
  const live = { rate: await sysctl(h0, RATE), icmp: await sysctl(h0, ICMP) };
  // The kernel's rounding (252 at HZ=250, 250 at HZ=100/300/1000): whatever it is, within one jiffy above 250.
  for (const v of Object.values(live)) expect(Number(v) >= 250 && Number(v) < 260).toBe(true);
  expect(r1.outputs!.applied).toEqual({ [RATE]: live.rate, [ICMP]: live.icmp });
  const file = await fileOn(h0, "/etc/sysctl.d/90-net-tuning-jiffy.conf");
  expect(file).toContain(`\n${ICMP} = 250\n${RATE} = 250\n`);
  expect(r1.outputs!.previous).toEqual({ [RATE]: orig.rate, [ICMP]: orig.icmp });
  const warnings = r1.outputs!.warnings as string[];
  if (live.rate !== "250") {
    // the host names what it read and the step (this machine: HZ=250, 4 ms)
    expect(warnings.some((w) => w.includes(`${RATE} = 250 reads back ${live.rate}`) && /a step of [\d.]+ ms \(HZ=\d+\)/.test(w))).toBe(true);
  }
  // the preview's advice names the step sizes too
  expect(warnings.some((w) => w.startsWith(`${RATE} = 250`) && w.includes("4 ms at HZ=250"))).toBe(true);
  expect(sameValue(RATE, live.rate, "250")).toBe(true);

  // The same declaration again: nothing to do (the read-back 252 is what 250 means).
  const r2 = ok(await stack.up(program(h0, "jiffy", args)));
  expect(r2.runs).toHaveLength(0);

  // A changed value (a real change) still applies and reads back within the step.
  const r3 = ok(await stack.up(program(h0, "jiffy", { sysctls: { [RATE]: 1001, [ICMP]: 250 } })));
  const rate3 = await sysctl(h0, RATE);
  expect(Number(rate3) >= 1001 && Number(rate3) < 1011).toBe(true);
  expect((r3.outputs!.applied as Record<string, string>)[RATE]).toBe(rate3);

  ok(await stack.destroy());
  expect(await sysctl(h0, RATE)).toBe(orig.rate);
  expect(await sysctl(h0, ICMP)).toBe(orig.icmp);
  expect(await fileOn(h0, "/etc/sysctl.d/90-net-tuning-jiffy.conf")).toBeUndefined();
});
