/**
 * Issue #32 item 11: the preview refuses what `up` refuses, on a real lab host through the harness, in the host
 * preflight's own words (provider/host/messages.ts, the one text both use):
 * - channels above the veth's pre-set maximum (real `ethtool -l`: 4 rx, 4 tx);
 * - rings above the maximum: a veth has no ring parameters, so this host's ethtool answers `-g`/`-G` for eth0 as a
 *   driver with 4096-descriptor rings would (a wrapper in the host's private root; everything else goes to the real
 *   ethtool); "max" and values within pass, and `up` applies them;
 * - the veth as it is: rings and coalescing declared (its `ethtool -g` / `-c` fail: "does not support ring
 *   parameters", "interrupt coalescing is not supported", with what ethtool said), a `[fixed]` feature set to the other
 *   value and a feature name `ethtool -k` does not list are refused; a feature that can change (and a `[fixed]` one at
 *   its own value) passes, and `up` applies it;
 * - a host-wide sysctl (net.core.netdev_max_backlog) in the lab host's network namespace: refused with the hint to set
 *   it on the host itself (its initial network namespace), at preview and at up alike.
 * Each refusal: the preview through the harness (with the real read) fails with no child registered and nothing on the
 * host changed, and ends (bounded: a refusal once left the harness's preview waiting forever, issue #30); `up` through
 * the harness with the live preview off reaches the host preflight, which refuses with the same message.
 */
process.env.NET_TUNING_LIVE_PREVIEW = "1"; // the harness evaluates programs under setMocks, where live reads are off by default
import { NetTuning } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";
import { CHILD_NETNS_NOTE, HOST_WIDE_FIX } from "../../provider/host/messages";
import type { LabHost } from "../../testkit/lab";
import { previewLab } from "./previewLab";
import { snapshot } from "../../testkit/host";

jest.setTimeout(180_000);
const lab = previewLab("limits");
let host: LabHost;
beforeAll(() => {
  host = lab.host();
});

const nicArgs = (x: Record<string, unknown>) => ({ interface: host.iface, persistence: "none", ...x });


test("channels above the veth's maximum (real ethtool -l): refused at preview as at up, in the same words", async () => {
  await lab.refusedAlike("NicQueues", nicArgs({ channels: { rx: 8, tx: 4 } }), ["channels.rx 8 exceeds eth0 maximum 4 (driver veth, ethtool -l eth0); use at most 4"]);
});

describe("the veth as it is (real ethtool): no ring parameters, no coalescing, [fixed] features", () => {
  /** What this host's ethtool says on stderr for `opt` on eth0 (it fails on a veth), lines joined as the preflight's nn_said. */
  const said = async (opt: string) => (await host.exec(`ethtool ${opt} eth0 2>&1 >/dev/null; true`)).stdout.replace(/\n/g, " ").replace(/ +$/, "");
  /** A feature of eth0 by `ethtool -k`: the first [fixed] one, or generic-receive-offload (a veth can change it). */
  const feature = async (fixed: boolean) => {
    const k = (await host.exec("ethtool -k eth0")).stdout;
    const m = new RegExp(`^(${fixed ? "\\S+" : "generic-receive-offload"}): (on|off)${fixed ? " \\[fixed\\]" : ""}$`, "m").exec(k);
    if (!m) throw new Error(`no ${fixed ? "[fixed]" : "changeable"} feature in ethtool -k eth0:\n${k}`);
    return { name: m[1], value: m[2] as "on" | "off" };
  };

  test("rings and coalescing declared: ethtool -g / -c fail on a veth, refused at preview as at up, in the same words", async () => {
    const [g, c] = [await said("-g"), await said("-c")];
    expect(g).not.toBe("");
    expect(c).not.toBe("");
    await lab.refusedAlike("NicQueues", nicArgs({ rings: { rx: 512, tx: "max" }, coalesce: { rxUsecs: 50 } }), [
      `rings cannot be changed: eth0 (driver veth) does not support ring parameters (ethtool -g eth0 says: ${g}); remove rings`,
      `coalesce: interrupt coalescing is not supported by eth0 (driver veth; ethtool -c eth0 says: ${c}); remove coalesce`,
    ]);
  });

  test("a [fixed] feature set to the other value, and a feature name ethtool -k does not list: refused at preview as at up", async () => {
    const f = await feature(true);
    const other = f.value === "on" ? "off" : "on";
    await lab.refusedAlike("NicQueues", nicArgs({ features: { [f.name]: other === "on", "zz-no-such-feature": true } }), [
      `features: ${f.name} is [fixed] ${f.value} on eth0 (driver veth): it cannot be turned ${other}; remove it`,
      "features: zz-no-such-feature does not exist on eth0 (driver veth; ethtool -k eth0 lists the features); check the name",
    ]);
  });

  test("a feature that can change, and a [fixed] one at its own value: the preview passes, up applies, destroy puts it back", async () => {
    const f = await feature(false);
    const fixed = await feature(true);
    const other = f.value === "on" ? "off" : "on";
    const args = nicArgs({ features: { [f.name]: other === "on", [fixed.name]: fixed.value === "on" } });
    const before = await snapshot(host);
    const p = await lab.preview("NicQueues", "feat", args);
    expect([p.ok, p.error]).toEqual([true, undefined]);
    expect(p.registered).toEqual(expect.arrayContaining(["command:remote:Command::feat-apply", "command:remote:Command::feat-restore"]));
    expect(p.logs.find((m) => m.startsWith('info: NicQueues "feat" on '))?.split("\n")).toEqual(expect.arrayContaining([`  eth0/feature.${f.name}: ${f.value} → ${other}`]));
    expect(await snapshot(host)).toBe(before);
    const s = lab.newStack("feat");
    const up = await s.up(lab.program("NicQueues", "feat", args));
    expect([up.ok, up.error]).toEqual([true, undefined]);
    expect((await host.exec(`ethtool -k eth0 | grep "^${f.name}:"`)).stdout.trim()).toBe(`${f.name}: ${other}`);
    expect((await s.destroy()).ok).toBe(true);
    expect((await host.exec(`ethtool -k eth0 | grep "^${f.name}:"`)).stdout.trim()).toBe(`${f.name}: ${f.value}`);
  });
});

describe("rings (an ethtool that answers -g/-G for eth0 with 4096-descriptor rings)", () => {
  const FAKE = [
    "#!/bin/sh",
    "# lab-only: ring parameters for eth0 (maxima 4096, current values kept in /var/lib/ntfake); the rest: the real ethtool",
    "d=/var/lib/ntfake",
    'case "$1 $2" in',
    '  "-g eth0")',
    '    rx=$(cat $d/rx 2>/dev/null || echo 512); tx=$(cat $d/tx 2>/dev/null || echo 512)',
    "    printf 'Ring parameters for eth0:\\nPre-set maximums:\\nRX:\\t\\t\\t4096\\nRX Mini:\\t\\tn/a\\nRX Jumbo:\\t\\tn/a\\nTX:\\t\\t\\t4096\\nCurrent hardware settings:\\nRX:\\t\\t\\t%s\\nRX Mini:\\t\\tn/a\\nRX Jumbo:\\t\\tn/a\\nTX:\\t\\t\\t%s\\n' \"$rx\" \"$tx\"",
    "    exit 0 ;;",
    '  "-G eth0")',
    '    shift 2; mkdir -p $d; echo "-G $*" >> $d/calls',
    '    while [ $# -ge 2 ]; do case $1 in rx|tx) [ "$2" -le 4096 ] || { echo "netlink error: Invalid argument" >&2; exit 1; }; echo "$2" > $d/$1 ;; *) exit 1 ;; esac; shift 2; done',
    "    exit 0 ;;",
    "esac",
    'exec /usr/sbin/ethtool.real "$@"',
  ].join("\n");
  beforeAll(async () => {
    const r = await host.exec(`mv /usr/sbin/ethtool /usr/sbin/ethtool.real && cat > /usr/sbin/ethtool && chmod 755 /usr/sbin/ethtool && ethtool -g eth0`, { stdin: `${FAKE}\n` });
    expect(r.stdout).toContain("Pre-set maximums:");
  });
  afterAll(async () => {
    await host?.exec("mv -f /usr/sbin/ethtool.real /usr/sbin/ethtool; rm -rf /var/lib/ntfake");
  });

  test("above the maximum: refused at preview as at up, in the same words; no -G ran", async () => {
    await lab.refusedAlike("NicQueues", nicArgs({ rings: { rx: 8192, tx: "max" } }), ['rings.rx 8192 exceeds eth0 maximum 4096 (driver veth, ethtool -g eth0); use at most 4096 or "max"']);
    expect((await host.exec("cat /var/lib/ntfake/calls 2>/dev/null")).stdout).toBe("");
  });

  test("\"max\" and a value within the maximum: the preview passes (live → declared), up applies them, destroy puts 512 back", async () => {
    const args = nicArgs({ rings: { rx: "max", tx: 2048 } });
    const p = await lab.preview("NicQueues", "within", args);
    expect([p.ok, p.error]).toEqual([true, undefined]);
    expect(p.registered).toEqual(expect.arrayContaining(["command:remote:Command::within-apply", "command:remote:Command::within-restore"]));
    const line = p.logs.find((m) => m.startsWith('info: NicQueues "within" on '));
    expect(line?.split("\n")).toEqual(expect.arrayContaining(["  eth0/ring.tx: 512 → 2048", "  eth0/ring.rx: 512 → max (resolved on the host)"]));
    const s = lab.newStack("within");
    const up = await s.up(lab.program("NicQueues", "within", args));
    expect([up.ok, up.error]).toEqual([true, undefined]);
    expect((await host.exec("cat /var/lib/ntfake/rx /var/lib/ntfake/tx")).stdout).toBe("4096\n2048\n");
    expect((await s.destroy()).ok).toBe(true);
    expect((await host.exec("cat /var/lib/ntfake/rx /var/lib/ntfake/tx")).stdout).toBe("512\n512\n");
  });
});

test("a host-wide key in the lab host's network namespace: refused at preview as at up, with the hint to set it on the host itself", async () => {
  const { stdout: kernel } = await host.exec("uname -r");
  await lab.refusedAlike("NetTuning", { sysctls: { "net.core.netdev_max_backlog": 250000, "net.core.somaxconn": 4096 } }, [
    `these keys do not exist on this kernel (${kernel.trim()}${CHILD_NETNS_NOTE}): net.core.netdev_max_backlog (host-wide: absent inside a network namespace or container) — ` +
      `check the spelling, the kernel version, or load the module that provides them${HOST_WIDE_FIX}`,
  ]);
});

describe("NicQueues: RPS and IRQ declarations the host cannot take (nic.sh nn_rps_refusals, nn_irq_refusals: one rule for the preflight and the read)", () => {
  const hostname = async () => (await host.exec("cat /proc/sys/kernel/hostname")).stdout.trim();
  const possible = async () => (await host.exec("cat /sys/devices/system/cpu/possible")).stdout.trim();

  test("rps.cpus naming a CPU the host does not have: refused at preview as at up, in the same words", async () => {
    await lab.refusedAlike("NicQueues", nicArgs({ rps: { cpus: [0, 63] } }), [
      `rps.cpus: CPU(s) 63 do not exist on ${await hostname()} (possible CPUs: ${await possible()}); use CPUs in that range or "all"`,
    ]);
  });

  test("irqAffinity on a veth (no IRQs of its own), and rps.sockFlowEntries inside a network namespace: both refused at preview as at up", async () => {
    await lab.refusedAlike("NicQueues", nicArgs({ irqAffinity: { cpus: "spread" }, rps: { cpus: "all", sockFlowEntries: 32768 } }), [
      "irqAffinity: eth0 (driver veth) has no IRQs of its own (a virtual interface such as veth, bridge or a VLAN has none; its MSI IRQs are in /sys/class/net/eth0/device/msi_irqs on real NICs); remove irqAffinity or set it on the physical NIC",
      "rps.sockFlowEntries: net.core.rps_sock_flow_entries does not exist or is read-only here: it is host-wide and absent inside a network namespace or container; set it on the host, or remove sockFlowEntries",
    ]);
  });

  test("rps over the host's CPUs (\"all\", and CPUs it has): the read refuses nothing, up applies", async () => {
    const p = await lab.preview("NicQueues", "rpsok", nicArgs({ rps: { cpus: [0, 1] } }));
    expect([p.ok, p.error]).toEqual([true, undefined]);
    const up = await lab.newStack("rpsok").up(lab.program("NicQueues", "rpsok", nicArgs({ rps: { cpus: "all" } })));
    expect([up.ok, up.error]).toEqual([true, undefined]);
  });
});
