/**
 * NetTuning on a full Debian guest (systemd, default sshd): host-wide keys, boot-time loading, module loading at
 * boot, boot-order conflicts, and rollback from Pulumi state — across real reboots.
 */
import { Stack } from "../../testkit/harness";
import { ok, readSysctl, SysArgs, sysProgram } from "../../testkit/host";
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

const get = (key: string) => readSysctl(vm, key);
const program = (name: string, args: SysArgs, who?: Who) => sysProgram(vm, name, args, who);

const HOSTWIDE = {
  "net.core.rmem_max": 268435456,
  "net.core.wmem_max": 268435456,
  "net.core.netdev_max_backlog": 250000,
  "net.ipv4.tcp_rmem": [4096, 16777216, 134217728],
  "net.ipv4.tcp_congestion_control": "bbr",
  "net.core.default_qdisc": "fq",
  "vm.swappiness": 10,
  "fs.aio-max-nr": 1048576,
};

test("host-wide keys + bbr as sudo: applied, present after reboot; delete → originals, still after reboot", async () => {
  const keys = Object.keys(HOSTWIDE);
  const orig: Record<string, string> = {};
  for (const k of keys) orig[k] = await get(k);
  expect(orig["net.ipv4.tcp_congestion_control"]).not.toBe("bbr");

  const stack = new Stack({ project: "vm", stack: "hostwide" });
  const r = ok(await stack.up(program("edge", { sysctls: HOSTWIDE, become: "sudo" }, "sudo")));
  expect(r.sessions.total).toBe(1);
  expect(r.outputs!.previous).toEqual(orig);
  for (const k of keys) expect(await get(k)).toBe(String((HOSTWIDE as Record<string, unknown>)[k]).replace(/,/g, " "));
  // bbr lives in a module: loaded now and listed for boot.
  const mods = await vm.ssh("cat /etc/modules-load.d/pulumi-net-tuning-*.conf");
  expect(mods.stdout).toContain("\ntcp_bbr\n");

  await vm.reboot();
  for (const k of keys) expect(await get(k)).toBe(String((HOSTWIDE as Record<string, unknown>)[k]).replace(/,/g, " "));

  const d = ok(await stack.destroy());
  expect(d.sessions.total).toBe(1);
  for (const k of keys) expect(await get(k)).toBe(orig[k]);
  expect((await vm.ssh("ls /etc/sysctl.d/ /etc/modules-load.d/")).stdout).not.toMatch(/net-tuning/);
  await vm.reboot();
  for (const k of keys) {
    if (k === "net.ipv4.tcp_congestion_control") continue; // the module stays loaded until reboot; after it: default
    expect(await get(k)).toBe(orig[k]);
  }
  expect(await get("net.ipv4.tcp_congestion_control")).toBe(orig["net.ipv4.tcp_congestion_control"]);
});

test("a conflicting /etc/sysctl.d/99-zz.conf is detected before any change, with file and line", async () => {
  await vm.ssh("printf '# local ops override\\nnet.core.somaxconn = 1024\\n' > /etc/sysctl.d/99-zz.conf");
  try {
    const before = await get("net.core.somaxconn");
    const stack = new Stack({ project: "vm", stack: "conflict" });
    const r = await stack.up(program("web", { sysctls: { "net.core.somaxconn": 65535, "vm.swappiness": 5 } }));
    expect(r.ok).toBe(false);
    expect(r.error).toContain("net.core.somaxconn = 65535 is overridden at boot by /etc/sysctl.d/99-zz.conf:2 which sets 1024");
    expect(await get("net.core.somaxconn")).toBe(before);
    expect((await vm.ssh("ls /etc/sysctl.d/")).stdout).not.toMatch(/net-tuning/);
  } finally {
    await vm.ssh("rm -f /etc/sysctl.d/99-zz.conf");
  }
});

test("the host's copy of the originals deleted, host rebooted → delete still restores from Pulumi state", async () => {
  const orig = await get("vm.swappiness");
  const origBacklog = await get("net.core.netdev_max_backlog");
  const stack = new Stack({ project: "vm", stack: "lost" });
  ok(await stack.up(program("db", { sysctls: { "vm.swappiness": 1, "net.core.netdev_max_backlog": 30000 } })));
  await vm.ssh("rm -rf /var/lib/pulumi-net-tuning");
  await vm.reboot();
  expect(await get("vm.swappiness")).toBe("1"); // persisted in /etc/sysctl.d
  ok(await stack.destroy());
  expect(await get("vm.swappiness")).toBe(orig);
  expect(await get("net.core.netdev_max_backlog")).toBe(origBacklog);
});

test("fs.file-max below systemd's LONG_MAX is flagged: a preview warning and a host warning", async () => {
  const cur = await get("fs.file-max");
  const stack = new Stack({ project: "vm", stack: "filemax" });
  const r = ok(await stack.up(program("fm", { sysctls: { "fs.file-max": 1000000 } })));
  const warnings = (r.outputs!.warnings as string[]).join("\n");
  expect(warnings).toMatch(/fs\.file-max/);
  if (BigInt(cur) > 1000000n) expect(warnings).toContain(`LOWERS the current ${cur}`);
  ok(await stack.destroy());
  expect(await get("fs.file-max")).toBe(cur);
});
