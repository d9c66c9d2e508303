/**
 * Proves the VM test host: a real Debian bookworm guest (systemd, default sshd, e1000e + virtio-net)
 * that later lifecycle tests can treat like a lab host. One guest is shared by all tests here; the
 * order matters (reboot before reset, reset last).
 */
import { Client } from "ssh2";
import { ensureImage, startVm, VmHost } from "../../testkit/vm";

const SYSCTL_FILE = "/etc/sysctl.d/90-nt-vm-test.conf";
const RMEM_TEST = "7340032";
const WMEM_TEST = "6291456";

// The project-level testTimeout in jest.config.js is not applied by Jest (it is a global option), so
// the bounds are set here: image build (cold cache) + boot, and per test (a reboot/reset is a boot).
jest.setTimeout(600_000);

let vm: VmHost;
const times: Record<string, number | string> = {};

beforeAll(async () => {
  const image = await ensureImage("bookworm");
  times.image = image.built ? "built" : "cached";
  times.imageMs = image.buildMs;
  vm = await startVm({ suite: "bookworm" });
  times.bootMs = vm.bootMs;
  // eslint-disable-next-line no-console
  console.log(
    `VM image ${image.path} (${image.built ? `built in ${image.buildMs} ms` : `cached, checked in ${image.buildMs} ms`}); ` +
      `booted to SSH in ${vm.bootMs} ms on 127.0.0.1:${vm.port}; e1000e=${vm.iface.e1000e} virtio=${vm.iface.virtio}`,
  );
}, 1_800_000);

afterAll(async () => {
  await vm?.stop();
  // eslint-disable-next-line no-console
  console.log(`VM timings: ${JSON.stringify(times)}`);
}, 60_000);

const ok = async (cmd: string, who: "root" | "sudo" = "root") => {
  const r = await vm.ssh(cmd, { who });
  if (r.code !== 0) throw new Error(`${cmd}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
};

describe("guest basics", () => {
  test("boots and answers SSH as root", async () => {
    expect(vm.address).toBe("127.0.0.1");
    expect((await ok("id -u")).trim()).toBe("0");
    expect(await ok("cat /etc/debian_version")).toMatch(/^12\./);
  });

  test("the sudo user logs in with its own key and has passwordless sudo", async () => {
    expect(vm.connection("sudo").user).toBe("ntsudo");
    expect((await ok("id -un", "sudo")).trim()).toBe("ntsudo");
    expect((await ok("sudo -n id -u", "sudo")).trim()).toBe("0");
  });

  test("connection() carries what command:remote needs", () => {
    const c = vm.connection();
    expect(c).toEqual({ host: "127.0.0.1", port: vm.port, user: "root", privateKey: expect.stringContaining("OPENSSH PRIVATE KEY") });
  });

  test("stdin reaches the remote command", async () => {
    const r = await vm.ssh("wc -l", { stdin: "a\nb\nc\n" });
    expect(r).toEqual({ code: 0, stdout: "3\n", stderr: "" });
    const f = await vm.ssh("exit 7");
    expect(f.code).toBe(7);
  });

  test("default sshd refuses PULUMI_COMMAND_STDOUT sent with SetEnv (AcceptEnv LANG LC_*)", async () => {
    expect(await ok("sshd -T | grep -i '^acceptenv'")).toBe("acceptenv LANG\nacceptenv LC_*\n");
    const c = vm.connection();
    const out = await new Promise<string>((resolve, reject) => {
      const conn = new Client();
      const timer = setTimeout(() => {
        conn.end();
        reject(new Error("timeout"));
      }, 60_000);
      conn.on("error", reject);
      conn.on("ready", () =>
        conn.exec(
          'echo "stdout=${PULUMI_COMMAND_STDOUT-unset} lang=${LC_NT_PROBE-unset}"',
          { env: { PULUMI_COMMAND_STDOUT: "from-state", LC_NT_PROBE: "accepted" } },
          (err, stream) => {
            if (err) return reject(err);
            let s = "";
            stream.on("data", (d: Buffer) => (s += d.toString()));
            stream.on("close", () => {
              clearTimeout(timer);
              conn.end();
              resolve(s.trim());
            });
          },
        ),
      );
      conn.connect({ host: c.host, port: c.port, username: c.user, privateKey: c.privateKey, readyTimeout: 30_000 });
    });
    // LC_* is accepted, so the env request really was sent; PULUMI_COMMAND_STDOUT is dropped.
    expect(out).toBe("stdout=unset lang=accepted");
  });

  test("systemd is PID 1 and is-system-running answers", async () => {
    expect((await ok("cat /proc/1/comm")).trim()).toBe("systemd");
    const r = await vm.ssh("timeout 120 systemctl is-system-running --wait", { timeoutMs: 150_000 });
    expect(r.stdout.trim()).toMatch(/^(running|degraded)$/);
    if (r.stdout.trim() === "degraded") {
      // eslint-disable-next-line no-console
      console.log(`degraded units: ${await ok("systemctl --failed --no-legend --plain")}`);
    }
  });
});

describe("NICs", () => {
  test("interface names are the documented ones", async () => {
    expect(vm.iface).toEqual({ e1000e: "eth0", virtio: "eth1" });
    expect(await ok(`ethtool -i ${vm.iface.e1000e} | head -1`)).toBe("driver: e1000e\n");
    expect(await ok(`ethtool -i ${vm.iface.virtio} | head -1`)).toBe("driver: virtio_net\n");
  });

  test("e1000e: ring maximum 4096, -G rx 4096 applies and reads back", async () => {
    const e = vm.iface.e1000e;
    const before = await ok(`ethtool -g ${e}`);
    const [max, cur] = before.split(/Current hardware settings:/);
    expect(max).toMatch(/^RX:\s+4096$/m);
    expect(max).toMatch(/^TX:\s+4096$/m);
    expect(cur).toMatch(/^RX:\s+256$/m);
    await ok(`ethtool -G ${e} rx 4096`);
    const after = (await ok(`ethtool -g ${e}`)).split(/Current hardware settings:/)[1];
    expect(after).toMatch(/^RX:\s+4096$/m);
  });

  test("e1000e refuses -C rx-usecs 8 (accepts 0, 1, 3, 4 or 10-10000)", async () => {
    const e = vm.iface.e1000e;
    const r = await vm.ssh(`ethtool -C ${e} rx-usecs 8`);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/netlink error: Invalid argument/);
    expect(await ok(`ethtool -c ${e}`)).toMatch(/^rx-usecs: 3$/m); // unchanged default
    await ok(`ethtool -C ${e} rx-usecs 10`);
    expect(await ok(`ethtool -c ${e}`)).toMatch(/^rx-usecs: 10$/m);
  });

  test("virtio-net: ethtool -l works", async () => {
    const out = await ok(`ethtool -l ${vm.iface.virtio}`);
    expect(out).toMatch(/^Channel parameters for eth1:/);
    expect(out).toMatch(/^Combined:\s+\d+$/m);
  });
});

describe("sysctls, reboot and reset", () => {
  test("sysctl -w works (and reads back)", async () => {
    await ok(`sysctl -w net.core.rmem_max=${RMEM_TEST}`);
    expect((await ok("cat /proc/sys/net/core/rmem_max")).trim()).toBe(RMEM_TEST);
  });

  test("a file in /etc/sysctl.d is applied at boot; reboot keeps the disk", async () => {
    const w = await vm.ssh(`cat > ${SYSCTL_FILE}`, { stdin: `net.core.wmem_max = ${WMEM_TEST}\n` });
    expect(w.code).toBe(0);
    expect((await ok("cat /proc/sys/net/core/wmem_max")).trim()).not.toBe(WMEM_TEST);
    const bootBefore = (await ok("cat /proc/sys/kernel/random/boot_id")).trim();
    await vm.reboot();
    times.rebootMs = vm.bootMs;
    expect((await ok("cat /proc/sys/kernel/random/boot_id")).trim()).not.toBe(bootBefore);
    expect((await ok("cat /proc/sys/net/core/wmem_max")).trim()).toBe(WMEM_TEST);
    // runtime-only values do not survive a reboot
    expect((await ok("cat /proc/sys/net/core/rmem_max")).trim()).toBe("212992");
  });

  test("reset() throws away every change (files, sysctls, NIC settings)", async () => {
    await ok(`sysctl -w net.core.rmem_max=${RMEM_TEST}`);
    await ok(`ethtool -G ${vm.iface.e1000e} rx 4096`);
    await ok("touch /root/marker");
    await vm.reset();
    times.resetBootMs = vm.bootMs;
    expect((await ok("cat /proc/sys/net/core/rmem_max")).trim()).toBe("212992");
    expect((await ok("cat /proc/sys/net/core/wmem_max")).trim()).toBe("212992");
    expect((await vm.ssh(`test -e ${SYSCTL_FILE} || test -e /root/marker`)).code).toBe(1);
    expect((await ok(`ethtool -g ${vm.iface.e1000e}`)).split(/Current hardware settings:/)[1]).toMatch(/^RX:\s+256$/m);
    expect((await ok("id -un", "sudo")).trim()).toBe("ntsudo");
  });
});
