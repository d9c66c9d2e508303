/**
 * `net-tuning audit` on a real NIC driver (issue #33): QEMU guests (testkit/vm: systemd, e1000e and virtio-net,
 * 2 vCPUs, irqbalance) of bullseye (5.10, procps 3.3.17, ethtool 5.9), bookworm (6.1, procps 4.0.2, ethtool 6.1) and
 * trixie (6.12, procps 4.0.4, ethtool 6.14); NT_AUDIT_VM_SUITES picks some. The report holds the drivers, rings current/max (e1000e: 4096), channels, the
 * e1000e's own `ethtool -S` counters (rx_no_buffer_count, rx_missed_errors) with the values the guest reads, and
 * irqbalance running; the audit leaves the guest unchanged (/etc, /var/lib, /proc/sys/net byte for byte).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { ensureImage, startVm, Suite, VmHost } from "../../testkit/vm";
import { main } from "../../bin/net-tuning";
import { AuditDocument } from "../../provider/audit/report";

jest.setTimeout(1_800_000);

const SUITES = (process.env.NT_AUDIT_VM_SUITES ?? "bullseye,bookworm,trixie").split(",") as Suite[];

describe.each(SUITES)("audit on a %s guest", (suite) => {
  let vm: VmHost;
  let dir: string;

  beforeAll(async () => {
    const image = await ensureImage(suite);
    vm = await startVm({ suite, cpus: 2 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "nt-audit-vm-"));
    fs.writeFileSync(path.join(dir, "id_root"), fs.readFileSync(path.join(image.path, "id_root")), { mode: 0o600 });
    const pub = fs.readFileSync(path.join(image.path, "ssh_host_ed25519_key.pub"), "utf8").trim().split(/\s+/).slice(0, 2).join(" ");
    fs.writeFileSync(path.join(dir, "known_hosts"), `[127.0.0.1]:${vm.port} ${pub}\n`);
  }, 1_800_000);

  afterAll(async () => {
    await vm?.stop();
  }, 60_000);

  async function root(cmd: string): Promise<string> {
    const r = await vm.ssh(cmd, { timeoutMs: 120_000 });
    if (r.code !== 0) throw new Error(`${cmd}: exit ${r.code}: ${r.stderr}`);
    return r.stdout;
  }

  const SNAPSHOT = `find /etc /var/lib -xdev ! -path '/var/lib/systemd/timers/*' ! -path '/var/lib/systemd/random-seed' -printf '%p %m %U %s %T@\\n' 2>/dev/null | sort
  find /etc /var/lib -xdev -type f ! -path '/var/lib/systemd/*' -exec md5sum {} + 2>/dev/null | sort
  find /proc/sys/net -type f -perm /444 ! -name flush ! -name nf_conntrack_count -exec grep -H '' {} + 2>/dev/null | sort`;

  test("e1000e and virtio-net: drivers, rings and channels, the driver's ethtool -S counters, irqbalance; read-only", async () => {
    await root("systemctl start irqbalance");
    const e = vm.iface.e1000e;
    const v = vm.iface.virtio;
    // a NicQueues that pinned one of the e1000e's IRQs (its record, as an apply leaves it), while irqbalance runs unbanned
    const irq = (await root(`ls /sys/class/net/${e}/device/msi_irqs | head -n 1`)).trim();
    await root(`mkdir -p /var/lib/pulumi-net-tuning-converged && printf 'net-tuning-converged v1\\tnt-vmirq\\t0\\tNicQueues vm\\nvalue\\t${e}/irq.${irq}\\t1\\n' > /var/lib/pulumi-net-tuning-converged/nt-vmirq`);
    const before = await root(SNAPSHOT);
    let stdout = "";
    const code = await main(["audit", "--host", `root@127.0.0.1:${vm.port}`, "-i", path.join(dir, "id_root"), "--known-hosts", path.join(dir, "known_hosts"), "--json", "--timeout", "120"],
      { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: () => true } });
    const after = await root(SNAPSHOT);
    const doc = JSON.parse(stdout) as AuditDocument;
    const h = doc.hosts[0] as Record<string, any>;
    expect(h.error).toBeUndefined();
    expect(code).toBe(0);
    expect(after).toBe(before);
    expect(h.kernel).toBe((await root("uname -r")).trim());
    expect(h.distribution).toMatchObject({ id: "debian", versionId: { bullseye: "11", bookworm: "12", trixie: "13" }[suite] });
    expect(h.cpus).toBe(2);
    expect(h.tools.init).toBe("systemd");
    const nic = (name: string) => h.nics.find((n: { name: string }) => n.name === name);
    expect(nic(e)).toMatchObject({ driver: "e1000e", physical: true, rings: { max: { RX: 4096, TX: 4096 } } });
    expect(nic(e).rings.current.RX).toBe(Number(/Current hardware settings:[\s\S]*?\nRX:\s+(\d+)/.exec(await root(`ethtool -g ${e}`))![1]));
    expect(nic(v)).toMatchObject({ driver: "virtio_net", channels: { current: { Combined: 1 } } });
    // the e1000e's own statistics, as the guest reads them (counters that do not move on an idle NIC)
    const stats = await root(`ethtool -S ${e}`);
    for (const name of ["rx_no_buffer_count", "rx_missed_errors", "rx_crc_errors"]) {
      const want = Number(new RegExp(`\\s${name}: (\\d+)`).exec(stats)![1]);
      expect(h.allCounters[`ethtool.${e}.${name}`]).toBe(want);
    }
    expect(h.counters[`ethtool.${e}.rx_no_buffer_count`]).toBeDefined(); // a headline counter of the report
    expect(h.counters[`ethtool.${e}.rx_missed_errors`]).toBeDefined();
    expect(h.irqbalance.running).toBe(true);
    expect(h.records.map((r: { ownerId: string; kind: string }) => [r.ownerId, r.kind])).toEqual([["nt-vmirq", "nic"]]);
    expect(h.findings).toContainEqual(expect.objectContaining({ level: "warning", rule: "irqbalance" }));
    // the host-wide keys a lab namespace lacks are read here
    expect(h.sysctls.find((s: { key: string }) => s.key === "net.core.netdev_max_backlog")).toMatchObject({ value: (await root("cat /proc/sys/net/core/netdev_max_backlog")).trim(), kernelDefault: "1000" });
    expect(h.sysctls.find((s: { key: string }) => s.key === "net.ipv4.tcp_mem").state).toBe("value");
  });

  test("--concurrency: the memory guard on the guest's tcp_rmem/tcp_wmem defaults, memory and tcp_mem (error, exit 1)", async () => {
    let stdout = "";
    const code = await main(["audit", "--host", `root@127.0.0.1:${vm.port}`, "-i", path.join(dir, "id_root"), "--known-hosts", path.join(dir, "known_hosts"), "--json", "--timeout", "120", "--concurrency", "100000"],
      { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: () => true } });
    const h = (JSON.parse(stdout) as AuditDocument).hosts[0] as Record<string, any>;
    const [, rmemDefault] = (await root("cat /proc/sys/net/ipv4/tcp_rmem")).trim().split(/\s+/).map(Number);
    const [, wmemDefault] = (await root("cat /proc/sys/net/ipv4/tcp_wmem")).trim().split(/\s+/).map(Number);
    const tcpMemMax = Number((await root("cat /proc/sys/net/ipv4/tcp_mem")).trim().split(/\s+/)[2]);
    const worst = (rmemDefault + wmemDefault) * 100000;
    const memory = h.findings.find((f: { rule: string }) => f.rule === "memory");
    expect(memory.level).toBe("error");
    expect(memory.message).toContain(`(tcp_rmem default ${rmemDefault} + tcp_wmem default ${wmemDefault} bytes) × 100000 connections = ${worst} bytes`);
    expect(memory.message).toContain(`tcp_mem max ${tcpMemMax} pages × 4096`);
    expect(code).toBe(1);
  });
});
