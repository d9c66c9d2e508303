/**
 * One Debian release's share of the VM tier, on ONE guest for all its tests (boots shared; reboots only where a
 * test needs one): the NetTuning and NicQueues lifecycles of lifecycle.ts, the three scenario examples applied
 * and destroyed with byte-identical host snapshots, and the messages for keys/features this kernel lacks.
 * bullseye also proves that procps 3.3.17's `sysctl -w` exits 0 on a refused write and that this is caught.
 * Used by bullseye.vm.test.ts and trixie.vm.test.ts (bookworm runs the full tier in the other files).
 * Prints a timing line per suite (image, boot, tests, total) at the end.
 */
import { Stack, UpResult } from "../../testkit/harness";
import { procPath, snapshot, SnapshotHost } from "../../testkit/host";
import { ensureImage, ImageInfo, startVm, Suite, VmHost } from "../../testkit/vm";
import { configFor, exampleProgram } from "../examples/load";
import { get, netTuningLifecycle, nicLifecycle, nicProgram, nicState, ok, sh, sysctlProgram } from "./lifecycle";

export interface SuiteExpectations {
  debianVersion: RegExp;
  kernel: RegExp;
  procps: RegExp;
  ethtool: RegExp;
  /** A sysctl this kernel does not have (newer than it). */
  missingKey: string;
}

export function debianSuite(suite: Suite, expect_: SuiteExpectations): void {
  jest.setTimeout(900_000);
  let vm: VmHost;
  let image: ImageInfo;
  const t0 = Date.now();
  let bootMs = 0;
  let testsStart = 0;
  const versions: Record<string, string> = {};

  beforeAll(async () => {
    jest.spyOn(console, "warn").mockImplementation(() => undefined); // examples print their warnings
    image = await ensureImage(suite);
    vm = await startVm({ suite });
    bootMs = vm.bootMs;
    testsStart = Date.now();
    const [debian, kernel, procps, ethtool] = (
      await sh(vm, "cat /etc/debian_version; uname -r; sysctl --version; ethtool --version")
    ).split("\n");
    Object.assign(versions, { debian, kernel, procps, ethtool });
  }, 1_800_000);

  afterAll(async () => {
    const testsMs = testsStart ? Date.now() - testsStart : 0;
    await vm?.stop();
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    // eslint-disable-next-line no-console
    console.log(
      `[vm timing] suite=${suite} debian=${versions.debian} kernel=${versions.kernel} ${versions.procps} ${versions.ethtool} | ` +
        `image ${image?.built ? "built" : "cached"} ${s(image?.buildMs ?? 0)}, boot ${s(bootMs)}, tests ${s(testsMs)}, total ${s(Date.now() - t0)}`,
    );
  }, 60_000);

  const vmHost = (): SnapshotHost => ({ name: `vm-${suite}`, iface: vm.iface.e1000e, exec: (c, o) => vm.ssh(c, o) });
  const project = `vm-${suite}`;

  test(`the guest runs Debian ${suite}'s own kernel, procps and ethtool`, () => {
    expect(versions.debian).toMatch(expect_.debianVersion);
    expect(versions.kernel).toBe(image.kernel); // booted the image's kernel
    expect(versions.kernel).toMatch(expect_.kernel);
    expect(versions.procps).toMatch(expect_.procps);
    expect(versions.ethtool).toMatch(expect_.ethtool);
    expect(vm.iface).toEqual({ e1000e: "eth0", virtio: "eth1" });
  });

  // One reboot per persistence proof; the post-delete reboots run on bookworm only (CI budget: ≤ 8 min a suite).
  describe("NetTuning lifecycle", () => netTuningLifecycle(() => vm, { project, rebootAfterDelete: false }));
  describe("NicQueues on e1000e", () => nicLifecycle(() => vm, { project, rebootAfterDelete: false }));

  describe("the scenario examples: up → values → destroy → byte-identical host snapshot", () => {
    const conn = () => vm.connection("root");
    /**
     * up → check → destroy → snapshot. `loadsModule`: a module the apply loads to reach its key (nf_conntrack for
     * nf_conntrack_max, tcp_bbr for the congestion control). Delete restores the value but does not unload the
     * module, so after delete the snapshot may differ from the one before in exactly the lines `sysctls` matches
     * (the module's own sysctls, tcp_available_congestion_control); everything else must be byte-identical.
     */
    const run = async (
      example: string, stack: string, values: Record<string, unknown>, check: (up: UpResult) => Promise<void>,
      loadsModule?: { name: string; sysctls: RegExp },
      expectError?: string,
    ) => {
      const before = await snapshot(vmHost());
      const projectName = `net-tuning-${example}`;
      const st = new Stack({
        project: projectName,
        stack,
        config: configFor(projectName, { ...values, privateKey: conn().privateKey }),
        secretConfigKeys: [`${projectName}:privateKey`],
      });
      let created = false;
      try {
        const up = await st.up(exampleProgram(example));
        created = st.resources().length > 0;
        if (expectError) {
          expect(up.ok).toBe(false);
          expect(up.error).toContain(expectError);
        } else ok(up);
        await check(up);
      } finally {
        if (created) ok(await st.destroy()); // also after a failed check, so the next test starts clean
      }
      const after = await snapshot(vmHost());
      if (loadsModule) {
        expect(await sh(vm, `lsmod | awk '$1 == "${loadsModule.name}" { print $1 }'`)).toBe(loadsModule.name);
        const strip = (snap: string) => snap.split("\n").filter((l) => !loadsModule.sysctls.test(l)).join("\n");
        expect(strip(after)).toBe(strip(before));
      } else {
        expect(after).toBe(before);
      }
    };

    test("edge-gateway (longFatFlows + NicQueues on e1000e, rc.local)", async () => {
      await run("edge-gateway", suite, { host: conn().host, port: conn().port, interface: vm.iface.e1000e }, async () => {
        expect(await get(vm, "net.core.rmem_max")).toBe("268435456");
        expect(await get(vm, "net.ipv4.tcp_rmem")).toBe("4096 16777216 134217728");
        expect(await sh(vm, `ethtool -c ${vm.iface.e1000e} | awk '$1 == "rx-usecs:" { print $2 }'`)).toBe("10");
        expect(await sh(vm, `ethtool -g ${vm.iface.e1000e} | sed -n '/^Current/,$p' | awk '$1 == "RX:" { print $2 }'`)).toBe("4096");
        expect(await sh(vm, "cat /etc/rc.local")).toContain("pulumi-net-tuning");
      });
    });
    test("web-fleet (webServer on one server, host-wide keys included)", async () => {
      const conntrackLoaded = (await vm.ssh("test -e /proc/sys/net/netfilter/nf_conntrack_max")).code === 0;
      await run("web-fleet", suite, { servers: [conn().host], port: conn().port }, async () => {
        expect(await get(vm, "net.core.somaxconn")).toBe("65535");
        expect(await get(vm, "net.ipv4.tcp_max_syn_backlog")).toBe("65535");
        expect(await get(vm, "net.netfilter.nf_conntrack_max")).toBe("1000000");
      }, conntrackLoaded ? undefined : { name: "nf_conntrack", sysctls: /^\/proc\/sys\/net\/(netfilter\/nf_(conntrack|flowtable)_|nf_conntrack_max:)/ });
    });
    test("nvme-tcp, throughput group with its NIC preset (rings max, RPS/RFS) on e1000e", async () => {
      await run("nvme-tcp", `${suite}-throughput`, { throughputHosts: [conn().host], port: conn().port, nicInterface: vm.iface.e1000e }, async (up) => {
        expect(await get(vm, "net.ipv4.tcp_autocorking")).toBe("1");
        expect(Object.keys(up.outputs!.nicApplied as object)).toEqual(["nvme-throughput-1"]);
        expect(await sh(vm, `ethtool -g ${vm.iface.e1000e} | sed -n '/^Current/,$p' | awk '$1 == "RX:" { print $2 }'`)).toBe("4096");
      });
    });
    test("nvme-tcp, latency group (sysctls: tcp_autocorking 0, BBR + fq)", async () => {
      await run("nvme-tcp", `${suite}-latency`, { latencyHosts: [conn().host], port: conn().port }, async () => {
        expect(await get(vm, "net.ipv4.tcp_autocorking")).toBe("0");
        expect(await get(vm, "net.ipv4.tcp_congestion_control")).toBe("bbr");
        // Making bbr the default also adds it to tcp_allowed_congestion_control (the kernel marks a default as
        // non-restricted); putting cubic back does not remove it, and the module stays loaded: both are left after delete.
      }, { name: "tcp_bbr", sysctls: /^\/proc\/sys\/net\/ipv4\/tcp_(available|allowed)_congestion_control:/ });
    });
    test("nvme-tcp, latency group's NIC preset on e1000e: adaptive-rx off is refused (e1000e has no adaptive-rx), nothing left changed", async () => {
      await run(
        "nvme-tcp", `${suite}-latency-nic`, { latencyHosts: [conn().host], port: conn().port, nicInterface: vm.iface.e1000e }, async () => undefined, undefined,
        `coalesce.adaptiveRx (adaptive-rx) is not supported by ${vm.iface.e1000e} (driver e1000e; ethtool -c ${vm.iface.e1000e} shows it as n/a); remove it`,
      );
    });
  });

  describe(`what Linux ${suite === "bullseye" ? "5.10" : "this kernel"} lacks: the message names the kernel version and what to do`, () => {
    test(`${expect_.missingKey} (newer than this kernel)`, async () => {
      const kernel = versions.kernel;
      const before = await snapshot(vmHost());
      expect((await vm.ssh(`test -e ${procPath(expect_.missingKey)}`)).code).not.toBe(0);
      const st = new Stack({ project, stack: "missing" });
      const r = await st.up(sysctlProgram(() => vm, "missing", { sysctls: { [expect_.missingKey]: 1, "net.core.somaxconn": 2222 } }));
      expect(r.ok).toBe(false);
      expect(r.error).toContain(`preflight refused the change on nt-vm (${kernel})`);
      expect(r.error).toContain(
        `these keys do not exist on this kernel (${kernel}): ${expect_.missingKey} — check the spelling, the kernel version, or load the module that provides them`,
      );
      expect(r.error).toContain("nothing was changed");
      expect(await snapshot(vmHost())).toBe(before);
    });
    test("a coalescing parameter e1000e does not have (rx-usecs-irq)", async () => {
      const before = await nicState(vm);
      const st = new Stack({ project, stack: "missing-nic" });
      const r = await st.up(nicProgram(() => vm, "missing-nic", { coalesce: { rxUsecsIrq: 5 } }));
      expect(r.ok).toBe(false);
      expect(r.error).toContain(`preflight refused the change on nt-vm (${versions.kernel})`);
      expect(r.error).toContain(
        `coalesce.rxUsecsIrq (rx-usecs-irq) is not supported by ${vm.iface.e1000e} (driver e1000e; ethtool -c ${vm.iface.e1000e} shows it as n/a); remove it`,
      );
      expect(await nicState(vm)).toBe(before);
    });
  });

  if (suite === "bullseye") {
    test("procps 3.3.17: sysctl -w exits 0 on a write the kernel refuses; NetTuning still reports it and leaves nothing changed", async () => {
      // The premise, on this guest: procps 3.3.17 prints the kernel's refusal and exits 0. tcp_min_snd_mss takes
      // 48-65535 (not in the catalogue: checked on the host only). (tcp_ecn_fallback, refused above 1 by newer
      // kernels, takes any int on 5.10.)
      const mss = await get(vm, "net.ipv4.tcp_min_snd_mss");
      const premise = await vm.ssh("sysctl -w net.ipv4.tcp_min_snd_mss=10; echo \"exit=$?\"; cat /proc/sys/net/ipv4/tcp_min_snd_mss");
      expect(premise.stderr).toBe('sysctl: setting key "net.ipv4.tcp_min_snd_mss": Invalid argument\n');
      expect(premise.stdout).toBe(`exit=0\n${mss}\n`); // exit 0, value unchanged
      const before = await snapshot(vmHost());
      const orig = { somaxconn: await get(vm, "net.core.somaxconn"), syn: await get(vm, "net.ipv4.tcp_max_syn_backlog") };
      const st = new Stack({ project, stack: "refused" });
      // somaxconn is written before tcp_min_snd_mss, tcp_max_syn_backlog after it: the first must be rolled back.
      const r = await st.up(
        sysctlProgram(() => vm, "refused", { sysctls: { "net.core.somaxconn": 5555, "net.ipv4.tcp_min_snd_mss": 10, "net.ipv4.tcp_max_syn_backlog": 7777 } }),
      );
      expect(r.ok).toBe(false);
      expect(r.error).toMatch(/net\.ipv4\.tcp_min_snd_mss = '10' was refused on nt-vm: sysctl: setting key "net\.ipv4\.tcp_min_snd_mss": Invalid argument; every change of this run was rolled back/);
      expect(await get(vm, "net.core.somaxconn")).toBe(orig.somaxconn);
      expect(await get(vm, "net.ipv4.tcp_max_syn_backlog")).toBe(orig.syn);
      expect(await snapshot(vmHost())).toBe(before);
    });
  }
}
