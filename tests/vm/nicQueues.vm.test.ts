/**
 * NicQueues on a full Debian guest with real NIC drivers: e1000e (rings, coalescing) and systemd / rc.local
 * persistence across real reboots, delete → originals back at boot too. eth0 = e1000e (no SSH on it), eth1 = virtio.
 */
import { Stack } from "../../testkit/harness";
import { NicArgs, nicProgram, ok, sh as rootSh } from "../../testkit/host";
import { ensureImage, startVm, VmHost, Who } from "../../testkit/vm";

jest.setTimeout(900_000);
let vm: VmHost;
beforeAll(async () => {
  await ensureImage();
  vm = await startVm();
}, 1_800_000);
afterAll(async () => {
  await vm?.stop();
}, 60_000);

const program = (name: string, args: NicArgs, who?: Who) => nicProgram(vm, name, args, who);
const sh = async (cmd: string) => (await rootSh(vm, cmd)).trim();
/** Current (not maximum) ring sizes, rx-usecs and txqueuelen of the e1000e NIC, as one comparable string. */
async function nicState(): Promise<string> {
  const i = vm.iface.e1000e;
  return sh(
    `ethtool -g ${i} | sed -n '/^Current/,$p' | grep -E '^(RX|TX):'; ethtool -c ${i} | grep -E '^(rx-usecs|Adaptive)'; ` +
      `cat /sys/class/net/${i}/tx_queue_len; ethtool -k ${i} | grep -E '^(generic-receive-offload|tcp-segmentation-offload):'`,
  );
}
const ringRx = async () => sh(`ethtool -g ${vm.iface.e1000e} | sed -n '/^Current/,$p' | awk '$1 == "RX:" { print $2 }'`);
const rxUsecs = async () => sh(`ethtool -c ${vm.iface.e1000e} | awk '$1 == "rx-usecs:" { print $2 }'`);
const txqlen = async () => sh(`cat /sys/class/net/${vm.iface.e1000e}/tx_queue_len`);

test("the article's rx-usecs 8 and rings above the e1000e maximum are refused before any change", async () => {
  const before = await nicState();
  const stack = new Stack({ project: "vm", stack: "nic-bad" });
  const r = await stack.up(program("bad", { rings: { rx: 8192, tx: 4096 }, coalesce: { rxUsecs: 8 }, txQueueLength: 5000 }));
  expect(r.ok).toBe(false);
  expect(r.error).toMatch(/rings\.rx 8192 exceeds eth0 maximum 4096/);
  expect(r.error).toMatch(/coalesce\.rxUsecs 8 is refused by the e1000e driver of eth0: it accepts 0-3 .* or 10-10000/);
  expect(r.error).toContain("nothing was changed");
  expect(await nicState()).toBe(before);
});

test.each([["systemd"], ["rc.local"]] as const)(
  "%s persistence: applied, present after reboot; delete → originals, still after reboot",
  async (persistence) => {
    const before = await nicState();
    const stack = new Stack({ project: "vm", stack: `nic-${persistence}` });
    const r = ok(
      await stack.up(
        program(`edge-${persistence}`, {
          rings: { rx: 2048, tx: "max" },
          coalesce: { rxUsecs: 10 },
          txQueueLength: 5000,
          features: { gro: true, tso: true },
          persistence,
          become: "sudo",
        }, "sudo"),
      ),
    );
    expect(r.sessions.total).toBe(1);
    const unit = `/etc/systemd/system/net-tuning-nic-${vm.iface.e1000e}.service`;
    if (persistence === "systemd") {
      expect(r.outputs!.persistedAs).toBe(unit);
      expect(await sh(`systemctl is-enabled net-tuning-nic-${vm.iface.e1000e}.service`)).toBe("enabled");
    } else {
      expect(String(r.outputs!.persistedAs)).toMatch(/^\/etc\/rc\.local \(/);
    }
    const check = async () => {
      expect(await ringRx()).toBe("2048");
      expect(await rxUsecs()).toBe("10");
      expect(await txqlen()).toBe("5000");
    };
    await check();
    await vm.reboot();
    await check(); // restored at boot by the unit / rc.local
    ok(await stack.destroy());
    expect(await nicState()).toBe(before);
    expect((await vm.ssh(`test -e ${unit}`)).code).not.toBe(0);
    expect(await sh("cat /etc/rc.local 2>/dev/null || echo absent")).not.toContain("pulumi-net-tuning");
    await vm.reboot();
    expect(await nicState()).toBe(before);
  },
);

test("net.core.rps_sock_flow_entries has one owner across NicQueues and NetTuning", async () => {
  const { NetTuning } = await import("../../components/netTuning");
  const nic = new Stack({ project: "vm", stack: "rfs-nic" });
  ok(await nic.up(program("rfs", { rps: { cpus: "all", flowEntriesPerQueue: 4096, sockFlowEntries: 32768 }, persistence: "none" })));
  expect(await sh("cat /proc/sys/net/core/rps_sock_flow_entries")).toBe("32768");
  const sys = new Stack({ project: "vm", stack: "rfs-sysctl" });
  const r = await sys.up(() => {
    new NetTuning("rfs-too", { connection: vm.connection(), sysctls: { "net.core.rps_sock_flow_entries": 65536 } });
  });
  expect(r.ok).toBe(false);
  expect(r.error).toContain("net.core.rps_sock_flow_entries is already managed by vm/rfs-nic/rfs");
  expect(await sh("cat /proc/sys/net/core/rps_sock_flow_entries")).toBe("32768");
  ok(await nic.destroy());
  expect(await sh("cat /proc/sys/net/core/rps_sock_flow_entries")).toBe("0");
});
