/**
 * Test bodies shared by the VM tier's files (not a test file itself: jest only runs `*.test.ts`). Each function
 * registers its tests against the guest returned by `vm()` — bookworm in netTuning.vm.test.ts / nicQueues.vm.test.ts,
 * bullseye and trixie in their suite files — so every Debian release runs the same assertions.
 */
import { Stack } from "../../testkit/harness";
import { NicArgs, nicProgram as nicProgramOn, ok, readSysctl, sh as shOn, SysArgs, sysProgram } from "../../testkit/host";
import { ensureImage, startVm, Suite, VmHost } from "../../testkit/vm";

/** The `[vm timing]` line each VM test file prints at the end (per suite: image, boot, tests, total). */
export function timingLine(vm: VmHost | undefined, file: string, startedMs: number, testsStartMs: number): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const img = vm?.image;
  return (
    `[vm timing] suite=${vm?.suite ?? "?"} file=${file} kernel=${img?.kernel ?? "?"} | image ${img?.built ? "built" : "cached"} ` +
    `${s(img?.buildMs ?? 0)}, image + boot ${s(testsStartMs ? testsStartMs - startedMs : 0)}, ` +
    `tests ${s(testsStartMs ? Date.now() - testsStartMs : 0)}, total ${s(Date.now() - startedMs)}`
  );
}

/**
 * One guest for a whole test file: built image (cached), booted in beforeAll, stopped in afterAll with the file's
 * `[vm timing]` line; `use` receives the guest once it is up. Sets the file's jest timeout (900 s a test).
 */
export function useGuest(file: string, opts: { suite: Suite; cpus?: number }, use: (vm: VmHost) => void): void {
  jest.setTimeout(900_000);
  let vm: VmHost | undefined;
  const startedMs = Date.now();
  let testsStartMs = 0;
  beforeAll(async () => {
    await ensureImage(opts.suite);
    vm = await startVm(opts);
    use(vm);
    testsStartMs = Date.now();
  }, 1_800_000);
  afterAll(async () => {
    await vm?.stop();
    // eslint-disable-next-line no-console
    console.log(timingLine(vm, file, startedMs, testsStartMs));
  }, 60_000);
}

export { ok };

/** A sysctl as the guest's kernel reads it back, whitespace collapsed (testkit/host's readSysctl). */
export const get = (vm: VmHost, key: string): Promise<string> => readSysctl(vm, key);

/** A root command on the guest; its stdout trimmed. */
export const sh = async (vm: VmHost, cmd: string): Promise<string> => (await shOn(vm, cmd)).trim();

/** testkit/host's programs for the guest `vm()` (resolved when the program runs: the guest starts in beforeAll). */
export function sysctlProgram(vm: () => VmHost, name: string, args: SysArgs, who: "root" | "sudo" = "root") {
  return () => sysProgram(vm(), name, args, who)();
}

export function nicProgram(vm: () => VmHost, name: string, args: Omit<NicArgs, "interface">, who: "root" | "sudo" = "root") {
  return () => nicProgramOn(vm(), name, args, who)();
}

/** Current (not maximum) ring sizes, rx-usecs, txqueuelen and two offloads of the e1000e NIC, as one string. */
export async function nicState(vm: VmHost): Promise<string> {
  const i = vm.iface.e1000e;
  return sh(
    vm,
    `ethtool -g ${i} | sed -n '/^Current/,$p' | grep -E '^(RX|TX):'; ethtool -c ${i} | grep -E '^(rx-usecs|Adaptive)'; ` +
      `cat /sys/class/net/${i}/tx_queue_len; ethtool -k ${i} | grep -E '^(generic-receive-offload|tcp-segmentation-offload):'`,
  );
}
export const ringRx = (vm: VmHost) => sh(vm, `ethtool -g ${vm.iface.e1000e} | sed -n '/^Current/,$p' | awk '$1 == "RX:" { print $2 }'`);
export const rxUsecs = (vm: VmHost) => sh(vm, `ethtool -c ${vm.iface.e1000e} | awk '$1 == "rx-usecs:" { print $2 }'`);
export const txqlen = (vm: VmHost) => sh(vm, `cat /sys/class/net/${vm.iface.e1000e}/tx_queue_len`);

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

/**
 * How much rebooting a suite affords. `rebootAfterDelete: false` (the extra suites, to stay within their CI budget)
 * keeps the reboot that proves persistence and drops the second one that proves delete left nothing for the next
 * boot; the files that would act at boot are still checked to be gone. Bookworm runs both.
 */
export interface LifecycleOptions {
  project?: string;
  rebootAfterDelete?: boolean;
}

/** NetTuning lifecycle: host-wide keys, bbr across a reboot, a boot-order conflict, restore after the journal is lost. */
export function netTuningLifecycle(vm: () => VmHost, { project = "vm", rebootAfterDelete = true }: LifecycleOptions = {}): void {
  const program = (name: string, args: SysArgs, who: "root" | "sudo" = "root") => sysctlProgram(vm, name, args, who);

  test(`host-wide keys + bbr as sudo: applied, present after reboot; delete → originals${rebootAfterDelete ? ", still after reboot" : ""}`, async () => {
    const keys = Object.keys(HOSTWIDE);
    const orig: Record<string, string> = {};
    for (const k of keys) orig[k] = await get(vm(), k);
    expect(orig["net.ipv4.tcp_congestion_control"]).not.toBe("bbr");

    const stack = new Stack({ project, stack: "hostwide" });
    const r = ok(await stack.up(program("edge", { sysctls: HOSTWIDE, become: "sudo" }, "sudo")));
    expect(r.sessions.total).toBe(2); // the engine delivery (SFTP) and the apply
    expect(r.outputs!.previous).toEqual(orig);
    for (const k of keys) expect(await get(vm(), k)).toBe(String((HOSTWIDE as Record<string, unknown>)[k]).replace(/,/g, " "));
    // bbr lives in a module: loaded now and listed for boot.
    const mods = await vm().ssh("cat /etc/modules-load.d/pulumi-net-tuning-*.conf");
    expect(mods.stdout).toContain("\ntcp_bbr\n");

    await vm().reboot();
    for (const k of keys) expect(await get(vm(), k)).toBe(String((HOSTWIDE as Record<string, unknown>)[k]).replace(/,/g, " "));

    const d = ok(await stack.destroy());
    expect(d.sessions.total).toBe(1);
    for (const k of keys) expect(await get(vm(), k)).toBe(orig[k]);
    expect((await vm().ssh("ls /etc/sysctl.d/ /etc/modules-load.d/")).stdout).not.toMatch(/net-tuning/);
    if (!rebootAfterDelete) return;
    await vm().reboot();
    for (const k of keys) expect(await get(vm(), k)).toBe(orig[k]);
  });

  test("a conflicting /etc/sysctl.d/99-zz.conf is detected before any change, with file and line", async () => {
    await vm().ssh("printf '# local ops override\\nnet.core.somaxconn = 1024\\n' > /etc/sysctl.d/99-zz.conf");
    try {
      const before = await get(vm(), "net.core.somaxconn");
      const stack = new Stack({ project, stack: "conflict" });
      const r = await stack.up(program("web", { sysctls: { "net.core.somaxconn": 65535, "vm.swappiness": 5 } }));
      expect(r.ok).toBe(false);
      expect(r.error).toContain("net.core.somaxconn = 65535 is overridden at boot by /etc/sysctl.d/99-zz.conf:2 which sets 1024");
      expect(await get(vm(), "net.core.somaxconn")).toBe(before);
      expect((await vm().ssh("ls /etc/sysctl.d/")).stdout).not.toMatch(/net-tuning/);
    } finally {
      await vm().ssh("rm -f /etc/sysctl.d/99-zz.conf");
    }
  });

  test("the host's copy of the originals deleted, host rebooted → delete still restores from Pulumi state", async () => {
    const orig = await get(vm(), "vm.swappiness");
    const origBacklog = await get(vm(), "net.core.netdev_max_backlog");
    const stack = new Stack({ project, stack: "lost" });
    ok(await stack.up(program("db", { sysctls: { "vm.swappiness": 1, "net.core.netdev_max_backlog": 30000 } })));
    await vm().ssh("rm -rf /var/lib/pulumi-net-tuning");
    await vm().reboot();
    expect(await get(vm(), "vm.swappiness")).toBe("1"); // persisted in /etc/sysctl.d
    ok(await stack.destroy());
    expect(await get(vm(), "vm.swappiness")).toBe(orig);
    expect(await get(vm(), "net.core.netdev_max_backlog")).toBe(origBacklog);
  });
}

/** NicQueues on e1000e: the article's bad values refused before any change; systemd and rc.local persistence across reboots. */
export function nicLifecycle(vm: () => VmHost, { project = "vm", rebootAfterDelete = true }: LifecycleOptions = {}): void {
  const program = (name: string, args: Omit<NicArgs, "interface">, who: "root" | "sudo" = "root") => nicProgram(vm, name, args, who);

  test("the article's rx-usecs 8 and rings above the e1000e maximum are refused before any change", async () => {
    const before = await nicState(vm());
    const i = vm().iface.e1000e;
    const stack = new Stack({ project, stack: "nic-bad" });
    const r = await stack.up(program("bad", { rings: { rx: 8192, tx: 4096 }, coalesce: { rxUsecs: 8 }, txQueueLength: 5000 }));
    expect(r.ok).toBe(false);
    expect(r.error).toContain(`rings.rx 8192 exceeds ${i} maximum 4096`);
    expect(r.error).toContain(`coalesce.rxUsecs 8 is refused by the e1000e driver of ${i}: it accepts 0, 1, 3, 4 (0 off, 1, 3 and 4 dynamic modes) or 10-10000 microseconds`);
    expect(r.error).toContain("nothing was changed");
    expect(await nicState(vm())).toBe(before);
  });

  test.each([["systemd"], ["rc.local"]] as const)(
    `%s persistence: applied, present after reboot; delete → originals${rebootAfterDelete ? ", still after reboot" : ""}`,
    async (persistence) => {
      const before = await nicState(vm());
      const i = vm().iface.e1000e;
      const stack = new Stack({ project, stack: `nic-${persistence}` });
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
      // the engine delivery (SFTP), the apply and its confirm: a ring and feature change is confirmed by default, here
      // through a transient systemd timer (systemd-run), stopped by the confirm
      expect(r.sessions.total).toBe(3);
      expect(await sh(vm(), "systemctl list-timers --all --no-legend 'net-tuning-revert-*' | wc -l")).toBe("0");
      // the revert was armed as a transient timer (not the detached process) and the confirm stopped it; systemd logs
      // "Started UNIT - DESCRIPTION" (249 and later) or "Started DESCRIPTION" (bullseye's 247): the description is
      // the command line, which names the operation revert:<owner id>:<token>
      const timers = await sh(vm(), `journalctl --no-pager -q -o cat | grep -E '^(Started|Stopped) .*revert:${project}\\.nic-${persistence}\\.edge-${persistence}-' | cut -d' ' -f1 | sort | uniq -c | tr -s ' '`);
      expect(timers.trim().split("\n").map((l) => l.trim().split(" ")[1])).toEqual(["Started", "Stopped"]);
      const unit = `/etc/systemd/system/net-tuning-nic-${i}.service`;
      if (persistence === "systemd") {
        expect(r.outputs!.persistedAs).toBe(unit);
        expect(await sh(vm(), `systemctl is-enabled net-tuning-nic-${i}.service`)).toBe("enabled");
      } else {
        expect(String(r.outputs!.persistedAs)).toMatch(/^\/etc\/rc\.local \(/);
      }
      const check = async () => {
        expect(await ringRx(vm())).toBe("2048");
        expect(await rxUsecs(vm())).toBe("10");
        expect(await txqlen(vm())).toBe("5000");
      };
      await check();
      await vm().reboot();
      await check(); // restored at boot by the unit / rc.local
      ok(await stack.destroy());
      expect(await nicState(vm())).toBe(before);
      expect((await vm().ssh(`test -e ${unit}`)).code).not.toBe(0);
      expect(await sh(vm(), "cat /etc/rc.local 2>/dev/null || echo absent")).not.toContain("pulumi-net-tuning");
      expect(await sh(vm(), "ls /etc/systemd/system/multi-user.target.wants/")).not.toMatch(/net-tuning/);
      if (!rebootAfterDelete) return;
      await vm().reboot();
      expect(await nicState(vm())).toBe(before);
    },
  );
}
