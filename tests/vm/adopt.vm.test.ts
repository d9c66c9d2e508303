/**
 * Issue #16 on a real Debian bookworm guest (systemd-sysctl at boot): the article's /etc/sysctl.d/99-hk-net-tuning.conf,
 * written and loaded with the article's own commands, adopted WHOLE by a NetTuning that declares its 15 keys (the
 * lab cannot: five of them are host-wide). Reboot after adoption: our values. Destroy, reboot: the hand values are
 * back, from the hand file, which is byte-identical (content, mode, owner, mtime) to before. Then the article's
 * rc.local (at Debian's /etc/rc.local, which rc-local.service runs) and the NicQueues case: its txqueuelen
 * line refused as a boot override, adopted; reboot → our value; destroy, reboot → the hand value, rc.local identical.
 */
import { Stack } from "../../testkit/harness";
import { snapshot, SnapshotHost } from "../../testkit/host";
import type { VmHost } from "../../testkit/vm";
import { hkRcLocal, HK_PATH, HK_VALUES, norm, OURS, writeHkConf } from "../adopt/fixtures";
import { get as getOn, nicProgram, ok, sh, sysctlProgram, useGuest, txqlen } from "./lifecycle";

let vm: VmHost;
useGuest("adopt.vm.test.ts", { suite: "bookworm" }, (g) => (vm = g));
const get = (key: string) => getOn(vm, key);


test("the article's 99-hk-net-tuning.conf adopted whole: reboot → our values; destroy, reboot → the hand values, the file byte-identical", async () => {
  expect(Object.keys(OURS).sort()).toEqual(Object.keys(HK_VALUES).sort());
  await sh(vm, writeHkConf());
  for (const [k, v] of Object.entries(HK_VALUES)) expect([k, await get(k)]).toEqual([k, v]);
  const host: SnapshotHost = { name: "vm-adopt", iface: vm.iface.e1000e, exec: (c, o) => vm.ssh(c, o) };
  const stack = new Stack({ project: "vm", stack: "adopt" });
  const program = sysctlProgram(() => vm, "edge", { adopt: ["99-hk-net-tuning.conf"], sysctls: OURS });
  // without adopt: refused, naming the file
  const refused = await stack.up(sysctlProgram(() => vm, "edge", { sysctls: OURS }));
  expect(refused.ok).toBe(false);
  expect(refused.error).toContain(`is overridden at boot by ${HK_PATH}:`);
  const before = await snapshot(host);
  ok(await stack.up(program));
  expect(await sh(vm, `test -e ${HK_PATH}; echo $?`)).toBe("1");
  await vm.reboot();
  for (const [k, v] of Object.entries(OURS)) expect([k, await get(k)]).toEqual([k, norm(v)]);
  ok(await stack.destroy());
  for (const [k, v] of Object.entries(HK_VALUES)) expect([k, await get(k)]).toEqual([k, v]);
  await vm.reboot();
  for (const [k, v] of Object.entries(HK_VALUES)) expect([k, await get(k)]).toEqual([k, v]);
  // the sysctl files of the snapshot (path, mode, owner, size, mtime, md5; other /etc files move with a boot)
  const etc = (s: string) => s.split("\n").filter((l) => /^(?:[0-9a-f]{32} {2})?\/etc\/sysctl\./.test(l)).join("\n");
  expect(etc(before)).toContain(HK_PATH);
  expect(etc(await snapshot(host))).toBe(etc(before));
});

test("the article's rc.local: txqueuelen line refused as a boot override, adopted; reboot → 2500; destroy, reboot → 10000 from rc.local", async () => {
  const iface = vm.iface.e1000e;
  await sh(vm, `cat > /etc/rc.local <<'EOF'\n${hkRcLocal(iface)}EOF\nchmod +x /etc/rc.local`);
  // rc-local.service runs the article's lines as a boot would (the boot itself is proved by the last reboot below:
  // a reboot here cost about 100 s of the VM tier under TCG)
  await sh(vm, "systemctl daemon-reload && systemctl start rc-local.service");
  expect(await txqlen(vm)).toBe("10000");
  const rc = async () => sh(vm, "md5sum /etc/rc.local; stat -c '%a %U:%G %s %.9Y' /etc/rc.local");
  const before = await rc();
  const stack = new Stack({ project: "vm", stack: "adoptnic" });
  const refused = await stack.up(nicProgram(() => vm, "q", { txQueueLength: 2500, persistence: "systemd" }));
  expect(refused.ok).toBe(false);
  expect(refused.error).toContain(`/etc/rc.local:4 re-applies txqueuelen settings of ${iface} at boot ('ip link set dev ${iface} txqueuelen 10000')`);
  ok(await stack.up(nicProgram(() => vm, "q", { txQueueLength: 2500, persistence: "systemd", adoptRcLocalLines: [`ip link set dev ${iface} txqueuelen 10000`] })));
  expect(await sh(vm, "grep -c txqueuelen /etc/rc.local || true")).toBe("0");
  await vm.reboot();
  expect(await txqlen(vm)).toBe("2500");
  ok(await stack.destroy());
  expect(await txqlen(vm)).toBe("10000");
  expect(await rc()).toBe(before);
  await vm.reboot();
  expect(await txqlen(vm)).toBe("10000");
  await sh(vm, "rm -f /etc/rc.local");
});
