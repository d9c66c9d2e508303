/** Shared helpers for lifecycle tests on lab hosts: read values, snapshot a host, run programs. */
import type { LabHost } from "./lab";

/** What `snapshot` needs: a lab host, or a VM guest adapted with `{ name, iface, exec: (c, o) => vm.ssh(c, o) }`. */
export type SnapshotHost = Pick<LabHost, "name" | "iface" | "exec">;

/** The value of a sysctl on a lab host as the kernel reads it back, whitespace collapsed. */
export async function sysctl(host: LabHost, key: string): Promise<string> {
  const path = "/proc/sys/" + key.split(".").join("/");
  const r = await host.exec(`cat ${path}`);
  if (r.code !== 0) throw new Error(`cannot read ${key} on ${host.name}: ${r.stderr}`);
  return r.stdout.trim().split(/\s+/).join(" ");
}

export async function writeSysctl(host: LabHost, key: string, value: string | number): Promise<void> {
  const r = await host.exec(`echo '${value}' > /proc/sys/${key.split(".").join("/")}`);
  if (r.code !== 0) throw new Error(`cannot write ${key} on ${host.name}: ${r.stderr}`);
}

/**
 * Everything a NetTuning or NicQueues run may touch, as text: every readable value under /proc/sys/net (minus
 * counters that move by themselves), /sys/class/net/<iface> settings, and the content, mode and name of every file
 * under /etc/sysctl.d, /etc/modules-load.d, /etc/systemd/system, rc.local files, /usr/local and /var/lib
 * (size and mtime for all but the package manager's databases, which the lab's copy-on-write root shares with
 * the machine; content hashes where this project writes); for a NIC with a driver, also its rings, coalescing and
 * the affinity of its IRQs.
 */
export async function snapshot(host: SnapshotHost): Promise<string> {
  const i = host.iface;
  const script = `
    grep -r . /proc/sys/net 2>/dev/null | grep -v -e '_count:' -e '/nf_conntrack_buckets:' -e '/stable_secret:' | LC_ALL=C sort
    grep -r . /sys/class/net/${i}/tx_queue_len /sys/class/net/${i}/queues/*/rps_cpus /sys/class/net/${i}/queues/*/rps_flow_cnt 2>/dev/null | LC_ALL=C sort
    ethtool -k ${i} 2>/dev/null; ethtool -l ${i} 2>/dev/null; ethtool -g ${i} 2>/dev/null; ethtool -c ${i} 2>/dev/null
    for n in $(awk -v i="${i}" '$NF == i || index($NF, i "-") == 1 { sub(":", "", $1); print $1 }' /proc/interrupts); do echo "irq $n $(cat /proc/irq/$n/smp_affinity_list)"; done
    # Every file: path, mode, link target, size, mtime; content hashes where this project writes.
    for d in /etc/sysctl.d /etc/modules-load.d /etc/systemd/system /usr/local /var/lib /etc/rc.local /etc/rc.d; do
      [ -e "$d" ] && find "$d" \\( -path /var/lib/dpkg -o -path /var/lib/apt -o -path /var/lib/ucf \\) -prune -o \\( -type f -o -type l \\) -printf '%p %m %l %s %T@\\n'
    done | LC_ALL=C sort
    for d in /etc/sysctl.d /etc/modules-load.d /etc/systemd/system /usr/local/libexec /var/lib/pulumi-net-tuning /etc/rc.local /etc/rc.d; do
      [ -e "$d" ] && find "$d" -type f -exec md5sum {} +
    done | LC_ALL=C sort
    true`;
  const r = await host.exec(script, { timeoutMs: 60000 });
  if (r.code !== 0) throw new Error(`snapshot of ${host.name} failed: ${r.stderr}`);
  return r.stdout;
}

export async function fileOn(host: LabHost, path: string): Promise<string | undefined> {
  const r = await host.exec(`cat ${path}`);
  return r.code === 0 ? r.stdout : undefined;
}
