/**
 * Renames (issue #18): the journal lists every artefact a resource persisted (`artefact<TAB>path`). An apply whose
 * plan persists other paths removes the old ones in the same run (and puts them back when the run fails), so the
 * next boot applies only what is declared. Boot simulated with `sysctl --system` limited to net.* (per network
 * namespace: the lab host's keys only, never the machine's kernel.* keys).
 */
import { Stack } from "../../testkit/harness";
import type { LabHost } from "../../testkit/lab";
import { stacksDestroyedAfterEach, useLab } from "../../testkit/jest";
import { ok, readSysctl as sysctl, snapshot, writeSysctl } from "../../testkit/host";
import { nicProgram, sysProgram } from "../reliability/common";

jest.setTimeout(300000);

let h0: LabHost;
useLab("renames", 1, (hs) => {
  [h0] = hs;
});
const newStack = stacksDestroyedAfterEach("safety");
const SOMAX = "net.core.somaxconn";
const FIN = "net.ipv4.tcp_fin_timeout";

/** A boot of this lab host as far as sysctls go: values back to `orig`, then every sysctl.d file in boot order. */
async function boot(host: LabHost, orig: Record<string, string>): Promise<void> {
  for (const [k, v] of Object.entries(orig)) await writeSysctl(host, k, v);
  await host.exec("sysctl -q --system --pattern '^net\\.' >/dev/null 2>&1; true");
}
async function ls(host: LabHost, dir: string): Promise<string[]> {
  return (await host.exec(`ls -A ${dir} 2>/dev/null`)).stdout.split("\n").filter(Boolean).sort();
}
const journalOf = async (host: LabHost, kind: string) => (await host.exec(`cat /var/lib/pulumi-net-tuning/${kind}/*.orig 2>/dev/null`)).stdout;

describe("NetTuning fileName renamed", () => {
  test("90-b.conf → 90-a.conf: 90-b.conf removed in the same run; a boot yields the declared values; destroy leaves nothing", async () => {
    const orig = { [SOMAX]: await sysctl(h0, SOMAX), [FIN]: await sysctl(h0, FIN) };
    const before = await snapshot(h0);
    const stack = newStack("ren");
    ok(await stack.up(sysProgram(h0, "ren", { fileName: "90-b.conf", sysctls: { [SOMAX]: 5001, [FIN]: 31 } })));
    expect(await ls(h0, "/etc/sysctl.d")).toContain("90-b.conf");
    expect(await journalOf(h0, "sysctl")).toMatch(/^artefact\t\/etc\/sysctl\.d\/90-b\.conf$/m);
    // 90-b.conf would be read after 90-a.conf at boot and win: it must be gone.
    const r = ok(await stack.up(sysProgram(h0, "ren", { fileName: "90-a.conf", sysctls: { [SOMAX]: 5002, [FIN]: 32 } })));
    expect(r.outputs!.filePath).toBe("/etc/sysctl.d/90-a.conf");
    const files = await ls(h0, "/etc/sysctl.d");
    expect(files).toContain("90-a.conf");
    expect(files).not.toContain("90-b.conf");
    const j = await journalOf(h0, "sysctl");
    expect(j).toMatch(/^artefact\t\/etc\/sysctl\.d\/90-a\.conf$/m);
    expect(j).not.toMatch(/90-b\.conf/);
    await boot(h0, orig);
    expect(await sysctl(h0, SOMAX)).toBe("5002");
    expect(await sysctl(h0, FIN)).toBe("32");
    ok(await stack.destroy());
    expect(await sysctl(h0, SOMAX)).toBe(orig[SOMAX]);
    expect(await snapshot(h0)).toBe(before);
  });

  test("a rename in an update that fails: the old file stays byte for byte, the new one is never left behind", async () => {
    const before = await snapshot(h0);
    const stack = newStack("renfail");
    ok(await stack.up(sysProgram(h0, "rf", { fileName: "90-old.conf", sysctls: { [SOMAX]: 5003 } })));
    const mid = await snapshot(h0);
    // tcp_ecn_fallback accepts 0-1 only: the kernel refuses 7 after somaxconn was changed.
    const u = await stack.up(sysProgram(h0, "rf", { fileName: "90-new.conf", sysctls: { [SOMAX]: 5004, "net.ipv4.tcp_ecn_fallback": 7 } }));
    expect(u.ok).toBe(false);
    expect(u.error).toMatch(/tcp_ecn_fallback = '7' was refused .*; every change of this run was rolled back/);
    expect(await snapshot(h0)).toBe(mid);
    ok(await stack.destroy());
    expect(await snapshot(h0)).toBe(before);
  });

  test("persist true → false removes the file, false → true writes it again; boot follows", async () => {
    const orig = { [SOMAX]: await sysctl(h0, SOMAX) };
    const before = await snapshot(h0);
    const stack = newStack("renpersist");
    ok(await stack.up(sysProgram(h0, "rp", { sysctls: { [SOMAX]: 5005 } })));
    expect(await ls(h0, "/etc/sysctl.d")).toContain("90-net-tuning-rp.conf");
    ok(await stack.up(sysProgram(h0, "rp", { sysctls: { [SOMAX]: 5005 }, persist: false, bootOverride: "warn" })));
    expect(await ls(h0, "/etc/sysctl.d")).not.toContain("90-net-tuning-rp.conf");
    expect(await journalOf(h0, "sysctl")).not.toMatch(/^artefact/m);
    await boot(h0, orig);
    expect(await sysctl(h0, SOMAX)).toBe(orig[SOMAX]); // runtime only: a boot does not re-apply it
    ok(await stack.up(sysProgram(h0, "rp", { sysctls: { [SOMAX]: 5006 } })));
    await boot(h0, orig);
    expect(await sysctl(h0, SOMAX)).toBe("5006");
    ok(await stack.destroy());
    expect(await snapshot(h0)).toBe(before);
  });
});

test("a 0.1.0 journal (no header, no artefacts) is read: first originals kept, rewritten as v2 on the next apply", async () => {
  const orig = { [SOMAX]: await sysctl(h0, SOMAX) };
  const before = await snapshot(h0);
  const stack = newStack("v010");
  ok(await stack.up(sysProgram(h0, "v1", { sysctls: { [SOMAX]: 5010 } })));
  // Rewrite the journal as 0.1.0 wrote it: key<TAB>original lines only.
  await h0.exec("cd /var/lib/pulumi-net-tuning/sysctl && for j in *.orig; do grep -v -e '^net-tuning-journal' -e '^artefact' \"$j\" > \"$j.v1\" && mv \"$j.v1\" \"$j\"; done");
  expect(await journalOf(h0, "sysctl")).toBe(`${SOMAX}\t${orig[SOMAX]}\n`);
  const u = ok(await stack.up(sysProgram(h0, "v1", { sysctls: { [SOMAX]: 5011 } })));
  expect(u.outputs!.previous).toEqual(orig);
  const j = await journalOf(h0, "sysctl");
  expect(j).toMatch(/^net-tuning-journal v2\tsafety\.v010\.v1-[0-9a-f]{8}\t[0-9a-f-]+\n/);
  expect(j).toContain(`${SOMAX}\t${orig[SOMAX]}\n`);
  expect(j).toMatch(/^artefact\t\/etc\/sysctl\.d\/90-net-tuning-v1\.conf$/m);
  ok(await stack.destroy());
  expect(await snapshot(h0)).toBe(before);
});

describe("NicQueues persistence changed", () => {
  const NIC = { interface: "eth0", txQueueLength: 2500 };
  const unit = "/etc/systemd/system/net-tuning-nic-eth0.service";
  const wants = "/etc/systemd/system/multi-user.target.wants/net-tuning-nic-eth0.service";
  const script = "/usr/local/libexec/net-tuning/nic-eth0.sh";
  const exists = async (p: string) => (await h0.exec(`test -e ${p} || test -L ${p}`)).code === 0;
  const block = async () => (await h0.exec("grep -c '^# BEGIN pulumi-net-tuning ' /etc/rc.local 2>/dev/null")).stdout.trim();

  test("systemd → rc.local → systemd: the other mechanism's files go in the same run; a failed switch keeps them", async () => {
    const before = await snapshot(h0);
    const stack = newStack("nicpersist");
    ok(await stack.up(nicProgram(h0, "np", { ...NIC, persistence: "systemd" })));
    for (const p of [unit, wants, script]) expect(await exists(p)).toBe(true);
    ok(await stack.up(nicProgram(h0, "np", { ...NIC, persistence: "rc.local" })));
    for (const p of [unit, wants, script]) expect(await exists(p)).toBe(false);
    expect(await block()).toBe("1");
    expect(await journalOf(h0, "nic")).toMatch(/^artefact\t\/etc\/rc\.local$/m);
    const mid = await snapshot(h0);
    // A switch back that fails while writing the unit (read-only unit directory): rc.local keeps its block.
    await h0.exec("mount --bind /etc/systemd/system /etc/systemd/system && mount -o remount,bind,ro /etc/systemd/system");
    try {
      const f = await stack.up(nicProgram(h0, "np", { ...NIC, persistence: "systemd" }));
      expect(f.ok).toBe(false);
      expect(f.error).toMatch(/cannot write \S+ on \S+ \(read-only or full filesystem\?\); every change of this run was rolled back/);
      expect(await snapshot(h0)).toBe(mid);
    } finally {
      await h0.exec("umount /etc/systemd/system");
    }
    ok(await stack.up(nicProgram(h0, "np", { ...NIC, persistence: "systemd" })));
    for (const p of [unit, wants, script]) expect(await exists(p)).toBe(true);
    expect(await exists("/etc/rc.local")).toBe(before.includes("/etc/rc.local ") ? true : false);
    ok(await stack.destroy());
    expect(await snapshot(h0)).toBe(before);
  });
});
