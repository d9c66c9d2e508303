/**
 * Live previews on a real NIC driver (e1000e on a bookworm guest, 2 vCPUs): the settings the lab's veth cannot have —
 * rings, coalescing, IRQ affinity — and the systemd unit are read live, a hand change of each is drift (a pending
 * change of `-apply`), `up` repairs it in one session, and the next preview is clean with no session in the next `up`.
 * Read as root and as the sudo user (who reads without sudo).
 */
process.env.NET_TUNING_LIVE_PREVIEW = "1"; // the harness evaluates programs under setMocks, where live reads are off by default
import { NicQueues } from "../../components/nicQueues";
import { Stack, UpResult } from "../../testkit/harness";
import { withLogs } from "../../testkit/jest";
import type { VmHost } from "../../testkit/vm";
import { ok, sh as shOn, useGuest } from "./lifecycle";

let vm: VmHost;
useGuest("live.vm.test.ts", { suite: "bookworm", cpus: 2 }, (g) => (vm = g));
afterAll(() => {
  delete process.env.NET_TUNING_LIVE_PREVIEW; // jest runs other files in this worker
});
const sh = (cmd: string) => shOn(vm, cmd);

const logged = withLogs;
const driftOf = (r: UpResult, name: string) => r.resources.find((x) => !x.custom && x.name === name)?.outputs?.drift as Record<string, string> | undefined;
const stepOf = (r: UpResult, name: string) => r.steps.find((s) => s.urn.endsWith(`::${name}`))?.kind;

test.each([["root"], ["sudo"]] as const)(
  "e1000e rings, coalescing, IRQ affinity and the unit file: live → declared, drift after hand changes, repaired, then clean (%s)",
  async (who) => {
    const i = vm.iface.e1000e;
    const unit = `/etc/systemd/system/net-tuning-nic-${i}.service`;
    const stack = new Stack({ project: "vm-live", stack: `nic-${who}` });
    const program = () => {
      const n = new NicQueues("lq", {
        connection: vm.connection(who),
        interface: i,
        rings: { rx: 2048 },
        coalesce: { rxUsecs: 10 },
        irqAffinity: { cpus: [0] },
        persistence: "systemd",
        ...(who === "sudo" ? { become: "sudo" as const } : {}),
      });
      return { live: n.live, drift: n.drift };
    };
    const ringNow = await sh(`ethtool -g ${i} | sed -n '/^Current/,$p' | awk '$1 == "RX:" { print $2 }'`);
    const first = await logged(() => stack.preview(program));
    ok(first.r);
    expect(first.info.join("\n")).toContain(`  ${i}/ring.rx: ${ringNow} → 2048`);
    ok(await stack.up(program));
    expect(ok(await stack.up(program)).sessions.total).toBe(0);

    // hand changes: a ring, a coalescing value, one IRQ's affinity, an edit of our unit
    const irqs = (await sh(`ls /sys/class/net/${i}/device/msi_irqs`)).split(/\s+/).filter(Boolean);
    expect(irqs.length).toBeGreaterThan(0);
    await sh(`ethtool -G ${i} rx 1024 && ethtool -C ${i} rx-usecs 20 && echo 2 > /proc/irq/${irqs[0]}/smp_affinity && echo '# edited' >> ${unit}`);
    const p = await logged(() => stack.preview(program));
    ok(p.r);
    expect(stepOf(p.r, "lq-apply")).toBe("update"); // drift is a pending change
    const drift = driftOf(p.r, "lq") ?? {};
    expect(drift[`${i}/ring.rx`]).toBe("2048 → 1024");
    expect(drift[`${i}/coalesce.rx-usecs`]).toBe("10 → 20");
    expect(drift[`${i}/irq.${irqs[0]}`]).toBeDefined();
    expect(drift[unit]).toBe("content of the last apply → edited on the host");
    const u = ok(await stack.up(program));
    // the repair changes the ring back, which is confirmed by default: the apply, then the confirm (-restore's create)
    expect(u.runs.map((x) => [x.name, x.op])).toEqual([["lq-apply", "update"], ["lq-restore", "update"]]);
    expect(await sh(`ethtool -c ${i} | awk '$1 == "rx-usecs:" { print $2 }'`)).toBe("10");
    expect(await sh(`ethtool -g ${i} | sed -n '/^Current/,$p' | awk '$1 == "RX:" { print $2 }'`)).toBe("2048");
    expect(await sh(`grep -c '^# edited' ${unit} || true`)).toBe("0");
    const clean = await logged(() => stack.preview(program));
    expect(stepOf(ok(clean.r), "lq-apply")).toBe("same");
    expect(Object.keys(driftOf(clean.r, "lq") ?? {})).toEqual([]);
    expect(ok(await stack.up(program)).sessions.total).toBe(0);
    ok(await stack.destroy());
  },
);
