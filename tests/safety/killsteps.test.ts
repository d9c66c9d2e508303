/**
 * SIGKILL at every mutating step (issues #12, #18). The engine counts its mutating steps (nt_step); the lab-only hook
 * `kill-after-step k` SIGKILLs it right after step k. For k = 1..N of a 40-key NetTuning create and of a NicQueues
 * create (systemd persistence): the failed create stores nothing, the next `up` runs at once (no lock left behind:
 * flock dies with its holder), converges, reports the TRUE first originals, and `destroy` restores them (snapshot
 * byte-identical). The step table is printed (console.log) and recorded in README "Reliability".
 */
import { Stack, UpResult } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { snapshot } from "../../testkit/host";
import { netTuningSysctls, readValues, SYSCTLS } from "../../bench/keys";
import { nicProgram, sysProgram } from "../reliability/common";
import { clearHooks, setHooks } from "./hooks";

jest.setTimeout(900000);

let lab: Lab;
let h0: LabHost;
beforeAll(async () => {
  lab = await startLab({ hosts: 1, tag: "killsteps" });
  [h0] = lab.hosts;
}, 120000);
afterAll(async () => {
  await clearHooks(h0).catch(() => undefined);
  await lab?.stop();
});
function ok(r: UpResult): UpResult {
  if (!r.ok) throw new Error(`operation failed: ${r.error}`);
  return r;
}
const commands = (s: Stack) => s.resources().filter((e) => e.type === "command:remote:Command").length;
const noJournal = (s: string) => s.replace(/^[^\n]*\/var\/lib\/pulumi-net-tuning[^\n]*\n/gm, "");

/** Runs one create with the `steps` hook and returns the step names (1..N). */
async function steps(program: () => unknown, stack: Stack): Promise<string[]> {
  await h0.exec("rm -f /run/nt-steps");
  await setHooks(h0, ["steps /run/nt-steps"]);
  ok(await stack.up(program as never));
  await clearHooks(h0);
  ok(await stack.destroy());
  const out = (await h0.exec("cat /run/nt-steps")).stdout.trim().split("\n");
  return out.map((l) => l.split(" ").slice(2).join(" "));
}

async function everyStep(label: string, program: () => unknown, state: () => Promise<string>, expectPrevious: (p: Record<string, string>) => void): Promise<void> {
  const warm = new Stack({ project: "safety", stack: `${label}-warm` });
  const names = await steps(program, warm);
  const before = await snapshot(h0);
  const firstState = await state();
  const table: string[] = [`${label}: N = ${names.length}`];
  expect(names.length).toBeGreaterThan(3);
  for (let k = 1; k <= names.length; k++) {
    const stack = new Stack({ project: "safety", stack: `${label}-k${k}` });
    await setHooks(h0, [`kill-after-step ${k}`]);
    const r = await stack.up(program as never);
    expect(r.ok).toBe(false);
    expect(commands(stack)).toBe(0); // a failed create stores nothing
    const partial = (await state()) !== firstState;
    await clearHooks(h0);
    const t0 = Date.now();
    const up = ok(await stack.up(program as never));
    const waited = Date.now() - t0;
    expect(waited).toBeLessThan(20000); // no lock survives its holder (documented wait: 60 s)
    expectPrevious(up.outputs!.previous as Record<string, string>);
    ok(await stack.destroy());
    expect(await state()).toBe(firstState);
    expect(noJournal(await snapshot(h0))).toBe(noJournal(before));
    table.push(`k=${k} after "${names[k - 1]}": host ${partial ? "changed (partly or fully)" : "unchanged"} → next up converged (${waited} ms), destroy restored the first originals`);
  }
  console.log(table.join("\n"));
}

test("40-key NetTuning create: SIGKILL after each of its N mutating steps", async () => {
  const orig = await readValues(h0);
  const program = sysProgram(h0, "ks", { fileName: "90-bench.conf", sysctls: netTuningSysctls(), bootOverride: "warn" });
  await everyStep("NetTuning (40 keys)", program, async () => JSON.stringify(await readValues(h0)), (p) => {
    expect(Object.keys(p).sort()).toEqual(Object.keys(SYSCTLS).sort());
    for (const k of Object.keys(SYSCTLS)) expect(p[k]).toBe(orig[k]);
  });
});

test("NicQueues create (channels, gro, txqueuelen, systemd unit): SIGKILL after each of its N mutating steps", async () => {
  const NIC = { interface: "eth0", persistence: "systemd" as const, channels: { rx: 2 }, features: { gro: false }, txQueueLength: 3000 };
  const nicState = async () => (await h0.exec("ethtool -l eth0 | sed -n '/^Current/,$p'; ethtool -k eth0 | grep generic-receive; cat /sys/class/net/eth0/tx_queue_len")).stdout;
  await everyStep("NicQueues", nicProgram(h0, "kn", NIC), nicState, (p) => {
    expect(p["eth0/channel.rx"]).toBe("4");
    expect(p["eth0/txqueuelen"]).toBe("1000");
  });
});
