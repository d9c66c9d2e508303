/**
 * NicQueues on a full Debian guest with real NIC drivers: e1000e (rings, coalescing) and systemd / rc.local
 * persistence across real reboots, delete → originals back at boot too; the e1000e coalescing rule against the
 * real driver; IRQ affinity of the e1000e's MSI-X IRQs on 2 vCPUs and the irqbalance warning.
 * eth0 = e1000e (no SSH on it), eth1 = virtio.
 */
import { Stack } from "../../testkit/harness";
import type { VmHost } from "../../testkit/vm";
import { nicLifecycle, nicProgram, nicState, ok, rxUsecs, sh as shOn, useGuest, txqlen } from "./lifecycle";

let vm: VmHost;
useGuest("nicQueues.vm.test.ts", { suite: "bookworm", cpus: 2 }, (g) => (vm = g));

const program = (name: string, args: Parameters<typeof nicProgram>[2], who: "root" | "sudo" = "root") => nicProgram(() => vm, name, args, who);
const sh = (cmd: string) => shOn(vm, cmd);

describe("lifecycle (shared with the bullseye and trixie suites)", () => nicLifecycle(() => vm));

describe("e1000e coalescing: the preflight rule is the driver's (e1000_set_coalesce)", () => {
  const REFUSED = [2, 5, 6, 7, 8, 9, 10001];
  const ACCEPTED = [0, 1, 3, 4, 10, 10000];

  test("the real driver refuses exactly 2, 5-9 and > 10000 and takes 0, 1, 3, 4, 10-10000 (ethtool -C directly)", async () => {
    const i = vm.iface.e1000e;
    const orig = await rxUsecs(vm);
    const out = await sh(
      `for v in ${[...REFUSED, ...ACCEPTED].join(" ")}; do ethtool -C ${i} rx-usecs $v >/dev/null 2>&1; rc=$?; ` +
        `echo "$v $rc $(ethtool -c ${i} | awk '$1 == "rx-usecs:" { print $2 }')"; done; ethtool -C ${i} rx-usecs ${orig}`,
    );
    const rows = out.split("\n").map((l) => l.split(" "));
    for (const [v, rc] of rows) expect({ v, refused: rc !== "0" }).toEqual({ v, refused: REFUSED.includes(Number(v)) });
    for (const [v, rc, now] of rows) if (rc === "0") expect(now).toBe(v); // read back as written
    expect(await rxUsecs(vm)).toBe(orig);
  });

  test.each([2, 5, 6, 7, 8, 9])("rxUsecs %i is refused before any change, naming driver, value and the accepted values", async (v) => {
    const before = await nicState(vm);
    const stack = new Stack({ project: "vm", stack: `coal-bad-${v}` });
    const r = await stack.up(program("coal", { coalesce: { rxUsecs: v }, txQueueLength: 4321 }));
    expect(r.ok).toBe(false);
    expect(r.error).toContain(
      `coalesce.rxUsecs ${v} is refused by the e1000e driver of ${vm.iface.e1000e}: it accepts 0, 1, 3, 4 (0 off, 1, 3 and 4 dynamic modes) or 10-10000 microseconds`,
    );
    expect(r.error).toContain("nothing was changed");
    expect(await nicState(vm)).toBe(before); // txqueuelen 4321 not applied either
  });

  test("rxUsecs 0, 1, 3, 4 and 10 are applied by the driver and read back; delete → the original", async () => {
    const orig = await rxUsecs(vm);
    const before = await nicState(vm);
    const stack = new Stack({ project: "vm", stack: "coal-ok" });
    for (const v of [0, 1, 3, 4, 10]) {
      ok(await stack.up(program("coal", { coalesce: { rxUsecs: v }, persistence: "none" })));
      expect(await rxUsecs(vm)).toBe(String(v));
    }
    ok(await stack.destroy());
    expect(await rxUsecs(vm)).toBe(orig);
    expect(await nicState(vm)).toBe(before);
  });
});

describe("IRQ affinity on a real driver (e1000e MSI-X IRQs, 2 vCPUs)", () => {
  const irqs = async () => (await sh(`awk '$NF ~ /^${vm.iface.e1000e}(-|$)/ { sub(":", "", $1); print $1 }' /proc/interrupts`)).split("\n").map(Number).sort((a, b) => a - b);
  const affinity = async (list: number[]) => Promise.all(list.map((n) => sh(`cat /proc/irq/${n}/smp_affinity_list`)));

  test("spread: one CPU per IRQ round-robin, read from /proc/irq/N/smp_affinity_list; delete → originals", async () => {
    expect(await sh("nproc")).toBe("2");
    const list = await irqs();
    expect(list.length).toBeGreaterThanOrEqual(3); // eth0-rx-0, eth0-tx-0, eth0 (link/other)
    expect(await sh(`ls /sys/class/net/${vm.iface.e1000e}/device/msi_irqs | sort -n | tr '\\n' ' '`)).toBe(list.join(" "));
    const before = await affinity(list);
    expect(await sh("pidof irqbalance || echo none")).toBe("none");
    const stack = new Stack({ project: "vm", stack: "irq" });
    const r = ok(await stack.up(program("irq", { irqAffinity: { cpus: "spread" }, persistence: "none" })));
    expect(await affinity(list)).toEqual(list.map((_, k) => String(k % 2)));
    expect((r.outputs!.warnings as string[]).join("\n")).not.toContain("irqbalance");
    const pinned = ok(await stack.up(program("irq", { irqAffinity: { cpus: [1] }, persistence: "none" })));
    expect(pinned.ok).toBe(true);
    expect(await affinity(list)).toEqual(list.map(() => "1"));
    ok(await stack.destroy());
    expect(await affinity(list)).toEqual(before);
  });

  test("a running irqbalance that has not banned the IRQs gives the warning; banned with --banirq → none", async () => {
    const list = await irqs();
    await sh("systemctl start irqbalance && sleep 2 && pidof irqbalance");
    try {
      const stack = new Stack({ project: "vm", stack: "irqbal" });
      const r = ok(await stack.up(program("irqbal", { irqAffinity: { cpus: [0] }, persistence: "none" })));
      expect((r.outputs!.warnings as string[]).join("\n")).toContain(
        `irqAffinity: irqbalance is running and has not banned IRQ(s) ${list.join(" ")} of ${vm.iface.e1000e}: it may move them again`,
      );
      ok(await stack.destroy());
      await sh(`cp /etc/default/irqbalance /root/irqbalance.orig && echo 'IRQBALANCE_ARGS="${list.map((n) => `--banirq=${n}`).join(" ")}"' >> /etc/default/irqbalance && systemctl restart irqbalance && sleep 2 && pidof irqbalance`);
      const banned = new Stack({ project: "vm", stack: "irqbal-banned" });
      const b = ok(await banned.up(program("irqbal", { irqAffinity: { cpus: [0] }, persistence: "none" })));
      expect((b.outputs!.warnings as string[]).join("\n")).not.toContain("irqbalance");
      expect(await affinity(list)).toEqual(list.map(() => "0"));
      ok(await banned.destroy());
    } finally {
      await vm.ssh("systemctl stop irqbalance; [ -f /root/irqbalance.orig ] && mv /root/irqbalance.orig /etc/default/irqbalance; true");
    }
  });
});

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

test("persistence moved systemd → rc.local: the unit goes in the same run; a real reboot re-applies from rc.local only", async () => {
  const before = await nicState(vm);
  const i = vm.iface.e1000e;
  const unit = `/etc/systemd/system/net-tuning-nic-${i}.service`;
  const stack = new Stack({ project: "vm", stack: "nic-move" });
  ok(await stack.up(program("mv", { txQueueLength: 5001, persistence: "systemd" })));
  expect(await sh(`systemctl is-enabled net-tuning-nic-${i}.service`)).toBe("enabled");
  const r = ok(await stack.up(program("mv", { txQueueLength: 5002, persistence: "rc.local" })));
  expect(String(r.outputs!.persistedAs)).toMatch(/^\/etc\/rc\.local \(/);
  // a unit left behind would re-apply 5001 at boot (before or after rc.local)
  expect((await vm.ssh(`test -e ${unit} || test -L /etc/systemd/system/multi-user.target.wants/net-tuning-nic-${i}.service`)).code).not.toBe(0);
  expect(await sh("grep -c '^# BEGIN pulumi-net-tuning ' /etc/rc.local")).toBe("1");
  await vm.reboot();
  expect(await txqlen(vm)).toBe("5002");
  ok(await stack.destroy());
  expect(await nicState(vm)).toBe(before);
  expect(await sh("cat /etc/rc.local 2>/dev/null || echo absent")).not.toContain("pulumi-net-tuning");
});

test("hotplug: after an e1000e driver reload (the interface disappears and comes back) the unit applies again; delete removes both links", async () => {
  const before = await nicState(vm);
  const i = vm.iface.e1000e;
  const svc = `net-tuning-nic-${i}.service`;
  const devWants = `/etc/systemd/system/sys-subsystem-net-devices-${i}.device.wants`;
  const stack = new Stack({ project: "vm", stack: "nic-hotplug" });
  ok(await stack.up(program("hp", { txQueueLength: 5003, persistence: "systemd" })));
  expect(await sh(`readlink ${devWants}/${svc}`)).toBe(`/etc/systemd/system/${svc}`);
  // eth1 (virtio) carries SSH: reloading the e1000e driver only takes eth0 away and back (txqueuelen back to 1000)
  const ifindex = await sh(`cat /sys/class/net/${i}/ifindex`);
  await sh(`modprobe -r e1000e && modprobe e1000e`);
  const deadline = Date.now() + 60_000;
  let now = "";
  while (Date.now() < deadline) {
    now = await sh(`cat /sys/class/net/${i}/tx_queue_len 2>/dev/null; systemctl is-active ${svc} 2>/dev/null; true`);
    if (now.startsWith("5003")) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  expect(await sh(`cat /sys/class/net/${i}/ifindex`)).not.toBe(ifindex); // a new netdev: it really went away (txqueuelen 1000 again)
  expect(now.split("\n")[0]).toBe("5003"); // re-applied by the unit the device's wants link started
  expect(now.split("\n")[1]).toBe("active");
  ok(await stack.destroy());
  expect((await vm.ssh(`test -e ${devWants} || test -e /etc/systemd/system/${svc}`)).code).not.toBe(0);
  expect(await nicState(vm)).toBe(before);
});
