/**
 * NetTuning on a full Debian guest (systemd, default sshd): host-wide keys, boot-time loading, module loading at
 * boot, boot-order conflicts, and rollback from Pulumi state — across real reboots.
 */
import { Stack } from "../../testkit/harness";
import type { VmHost } from "../../testkit/vm";
import { get as getOn, netTuningLifecycle, ok, sysctlProgram, useGuest } from "./lifecycle";

let vm: VmHost;
useGuest("netTuning.vm.test.ts", { suite: "bookworm" }, (g) => (vm = g));
const get = (key: string) => getOn(vm, key);
const program = (name: string, args: Parameters<typeof sysctlProgram>[2]) => sysctlProgram(() => vm, name, args);

describe("lifecycle (shared with the bullseye and trixie suites)", () => netTuningLifecycle(() => vm));

test("fs.file-max below systemd's LONG_MAX is flagged: a preview warning and a host warning", async () => {
  const cur = await get("fs.file-max");
  const stack = new Stack({ project: "vm", stack: "filemax" });
  const r = ok(await stack.up(program("fm", { sysctls: { "fs.file-max": 1000000 } })));
  const warnings = (r.outputs!.warnings as string[]).join("\n");
  expect(warnings).toMatch(/fs\.file-max/);
  // systemd sets fs.file-max to LONG_MAX at boot: the declared 1000000 lowers it, and both warnings say so
  expect(BigInt(cur)).toBeGreaterThan(1000000n);
  expect(warnings).toContain(`LOWERS the current ${cur}`);
  ok(await stack.destroy());
  expect(await get("fs.file-max")).toBe(cur);
});

test("fileName renamed (90-b.conf → 90-a.conf): the old file goes in the same run; a real reboot yields the declared values", async () => {
  const SOMAX = "net.core.somaxconn";
  const FIN = "net.ipv4.tcp_fin_timeout";
  const orig = { somax: await get(SOMAX), fin: await get(FIN) };
  const ls = async () => (await vm.ssh("ls -A /etc/sysctl.d")).stdout.split("\n").filter(Boolean);
  const stack = new Stack({ project: "vm", stack: "rename" });
  ok(await stack.up(program("ren", { fileName: "90-b.conf", sysctls: { [SOMAX]: 5001, [FIN]: 31 } })));
  expect(await ls()).toContain("90-b.conf");
  // 90-b.conf sorts after 90-a.conf: left behind, it would win at boot with the old values
  const r = ok(await stack.up(program("ren", { fileName: "90-a.conf", sysctls: { [SOMAX]: 5002, [FIN]: 32 } })));
  expect(r.outputs!.filePath).toBe("/etc/sysctl.d/90-a.conf");
  expect(await ls()).toContain("90-a.conf");
  expect(await ls()).not.toContain("90-b.conf");
  await vm.reboot();
  expect(await get(SOMAX)).toBe("5002"); // systemd-sysctl at boot: only the declared file
  expect(await get(FIN)).toBe("32");
  ok(await stack.destroy());
  expect(await get(SOMAX)).toBe(orig.somax);
  expect(await get(FIN)).toBe(orig.fin);
  const left = await ls();
  expect(left).not.toContain("90-a.conf");
  expect(left).not.toContain("90-b.conf");
});
