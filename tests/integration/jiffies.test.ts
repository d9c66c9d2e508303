/**
 * Keys the kernel keeps in jiffies but reads and writes in milliseconds (`*_ms_jiffies`: tcp_invalid_ratelimit,
 * icmp_ratelimit) on a real lab host, through the harness: a value chosen to round at this host's HZ (250 reads back
 * 252 at HZ=250) applies although it reads back rounded, the sysctl.d file keeps the declared value, `applied` shows what /proc/sys reads, the host's warning names the step,
 * a second up is no change (252 against 250 is not drift), and delete restores the originals.
 */
import { Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { fileOn, ok, readSysctl as sysctl, sysProgram as program, writeSysctl } from "../../testkit/host";
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

/**
 * A value that reads back rounded at this host's HZ, found by read-back (the lab host runs this machine's kernel):
 * 1 ms reads back as one jiffy (the step, ceil(1000/HZ) ms), then the first of 250…269 (not multiples of 20: those are
 * exact at every HZ) that reads back changed. Fails loudly at HZ=1000, where no value rounds and the test would prove
 * nothing. Restores the original before returning.
 */
async function roundingValue(host: LabHost, orig: string): Promise<{ value: number; step: number }> {
  try {
    await writeSysctl(host, RATE, 1);
    const step = Number(await sysctl(host, RATE));
    if (!(step > 1)) throw new Error(`${RATE} = 1 reads back ${step}: this kernel's HZ is 1000, where no *_ms_jiffies value rounds; run this test on a kernel with HZ=100, 250 or 300`);
    for (let v = 250; v < 270; v++) {
      if (v % 20 === 0) continue;
      await writeSysctl(host, RATE, v);
      if (Number(await sysctl(host, RATE)) !== v) return { value: v, step };
    }
    throw new Error(`no value of 250-269 reads back rounded for ${RATE} although 1 reads back ${step}`);
  } finally {
    await writeSysctl(host, RATE, orig);
  }
}

test("a value that rounds at this host's HZ applies; file keeps it, applied = /proc/sys, the step warning; no drift; delete restores", async () => {
  const orig = { rate: await sysctl(h0, RATE), icmp: await sysctl(h0, ICMP) };
  const { value: V, step } = await roundingValue(h0, orig.rate);
  expect(await sysctl(h0, RATE)).toBe(orig.rate);
  const stack = new Stack({ project: "it", stack: "jiffies" });
  const args = { sysctls: { [RATE]: V, [ICMP]: V } };
  const r1 = ok(await stack.up(program(h0, "jiffy", args)));
  const live = { rate: await sysctl(h0, RATE), icmp: await sysctl(h0, ICMP) };
  // The kernel's rounding: up to the next jiffy, so above V by less than one step — and never V itself (chosen so).
  for (const v of Object.values(live)) expect([v, Number(v) > V && Number(v) < V + step]).toEqual([v, true]);
  expect(r1.outputs!.applied).toEqual({ [RATE]: live.rate, [ICMP]: live.icmp });
  const file = await fileOn(h0, "/etc/sysctl.d/90-net-tuning-jiffy.conf");
  expect(file).toContain(`\n${ICMP} = ${V}\n${RATE} = ${V}\n`);
  expect(r1.outputs!.previous).toEqual({ [RATE]: orig.rate, [ICMP]: orig.icmp });
  const warnings = r1.outputs!.warnings as string[];
  // the host names what it read and the step, and its HZ agrees with the step read back for 1 ms
  const hostWarning = warnings.find((w) => w.includes(`${RATE} = ${V} reads back ${live.rate}`));
  expect(hostWarning).toBeDefined();
  const m = /a step of ([\d.]+) ms \(HZ=(\d+)\)/.exec(hostWarning!);
  expect(m).not.toBeNull();
  expect(Math.ceil(1000 / Number(m![2]))).toBe(step);
  // the preview's advice names the step sizes too
  expect(warnings.some((w) => w.startsWith(`${RATE} = ${V}`) && w.includes("4 ms at HZ=250"))).toBe(true);
  expect(sameValue(RATE, live.rate, String(V))).toBe(true);

  // The same declaration again: nothing to do (the rounded read-back is what V means).
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
