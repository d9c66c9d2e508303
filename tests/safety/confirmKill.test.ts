/**
 * SIGKILL at every mutating step of a NicQueues create that is confirmed by default (a channel change, issue #34):
 * the killed create stores nothing, the next `up` applies and confirms (a second engine run), and `destroy` puts the
 * host back. Step 2 is the journal of an uncommitted generation: the next create starts a new generation, which the
 * confirm must commit (it committed the journal's old one, so the destroy's restore skipped: channels stayed 2).
 */
import { Stack } from "../../testkit/harness";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";
import { ok } from "../../testkit/host";
import { nicProgram } from "../reliability/common";
import { clearHooks, setHooks } from "./hooks";

jest.setTimeout(600_000);

let h0: LabHost;
useLab("confirmkill", 1, (hs) => {
  [h0] = hs;
}, () => clearHooks(h0));

const NIC = { interface: "eth0", persistence: "systemd" as const, channels: { rx: 2 }, txQueueLength: 3000 };
const state = async () => (await h0.exec("ethtool -l eth0 | sed -n '/Current/,$p'; cat /sys/class/net/eth0/tx_queue_len; ls /var/lib/pulumi-net-tuning/nic 2>/dev/null; ps -eo args | grep -c 'revert:[s]afety'")).stdout;

test("a NicQueues create with the default confirm: SIGKILL after each step of its apply, the next up confirms, destroy restores", async () => {
  const first = await state();
  await h0.exec("rm -f /run/nt-steps");
  await setHooks(h0, ["steps /run/nt-steps"]);
  const warm = new Stack({ project: "safety", stack: "ck-warm" });
  ok(await warm.up(nicProgram(h0, "ck", NIC) as never));
  await clearHooks(h0);
  ok(await warm.destroy());
  // the apply's steps (up to "arm revert" and the sets), then the confirm's own (numbered from 1 again)
  const names = (await h0.exec("cat /run/nt-steps")).stdout.trim().split("\n").map((l) => l.split(" ").slice(2).join(" "));
  const applySteps = names.findIndex((n) => /^(write|enable) /.test(n));
  expect(applySteps).toBeGreaterThan(3);
  expect(names.slice(0, 3)).toEqual(["owner file", "journal before the changes", "arm revert"]);
  expect(await state()).toBe(first);
  for (let k = 1; k <= applySteps; k++) {
    const s = new Stack({ project: "safety", stack: `ck-k${k}` });
    await setHooks(h0, [`kill-after-step ${k}`]);
    expect([k, (await s.up(nicProgram(h0, "ck", NIC) as never)).ok]).toEqual([k, false]);
    await clearHooks(h0);
    const up = ok(await s.up(nicProgram(h0, "ck", NIC) as never));
    expect([k, up.outputs!.previous]).toEqual([k, { "eth0/channel.rx": "4", "eth0/txqueuelen": "1000" }]);
    ok(await s.destroy());
    expect([k, await state()]).toEqual([k, first]);
  }
});
