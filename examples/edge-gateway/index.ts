// Scenario A: cross-border edge gateway (CentOS 7.9, kernel 3.10, Intel X520 / ixgbe 10G, RTT 20-60 ms).
//
// Few, long, fat flows over a 10 Gbit/s × 40 ms path: the buffers are sized from the bandwidth-delay product
// (template A of the gateway guide: tcp_rmem/tcp_wmem max 128 MiB, core maxima 256 MiB), and the NIC gets deeper
// rings, GRO/GSO/TSO on with LRO off, short fixed interrupt coalescing, a long transmit queue and RPS/RFS on
// every CPU. CentOS 7 hosts have systemd, but the gateway guide keeps its NIC settings in /etc/rc.d/rc.local, so this
// program does too (`persistence: "rc.local"`); both resources restore the originals on `pulumi destroy`.
//
//   pulumi config set host 203.0.113.10
//   pulumi config set --secret privateKey "$(cat ~/.ssh/id_ed25519)"
//   pulumi config set user centos && pulumi config set become true   # when not logging in as root
//   pulumi preview --diff
//   pulumi up
import * as pulumi from "@pulumi/pulumi";
import { longFatFlows, NetTuning, NicQueues } from "net-tuning";

const config = new pulumi.Config();
const user = config.get("user") ?? "root";
const connection = {
  host: config.require("host"),
  port: config.getNumber("port") ?? 22,
  user,
  privateKey: config.requireSecret("privateKey"),
};
// `sudo -n` (never prompts) when the SSH user is not root; forced on or off with `become`.
const become = (config.getBoolean("become") ?? user !== "root") ? "sudo" : undefined;

// 10 Gbit/s × 40 ms: BDP 50 MB → tcp_rmem/tcp_wmem "4096 16777216 134217728", rmem_max/wmem_max 268435456,
// plus the gateway guide's backlog, SYN queue, TCP option and port-range settings (template A, exactly).
const profile = longFatFlows({
  bandwidth: config.get("bandwidth") ?? "10Gbit",
  rtt: config.get("rtt") ?? "40ms",
});

const sysctls = new NetTuning("edge-gateway", {
  connection,
  become,
  profile,
  // CentOS 7 ships /etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf, read after this file at boot:
  // the default "error" refuses the change if /etc/sysctl.conf sets one of these keys to another value.
  bootOverride: "error",
});

// The NIC, as in the gateway guide (`ethtool -G/-K/-C`, `ip link … txqueuelen`, rps_cpus/rps_flow_cnt, rps_sock_flow_entries).
// `nicPresets.throughput()` (= `profile.nic`) gives the same without coalescing, and with RPS only where the NIC has
// fewer rx queues than CPUs; the gateway guide's settings are spelled out here so that the review shows every one of them.
const rings = config.getNumber("ringSize") ?? "max"; // the driver's maximum from `ethtool -g` (4096 on an X520)
const nic = new NicQueues(
  "edge-gateway-nic",
  {
    connection,
    become,
    interface: config.get("interface") ?? "eth0",
    rings: { rx: rings, tx: rings },
    features: { lro: false, gro: true, gso: true, tso: true },
    // The gateway guide's 8 µs is valid on ixgbe; e1000e accepts only 0, 1, 3, 4 or 10-10000, so the default is 10,
    // which every common driver (ixgbe, i40e, mlx5, e1000e) accepts. The host refuses a value the driver rejects
    // before changing anything.
    coalesce: { rxUsecs: config.getNumber("rxUsecs") ?? 10 },
    txQueueLength: 10000,
    rps: { cpus: "all", flowEntriesPerQueue: 4096, sockFlowEntries: 32768 },
    persistence: "rc.local",
  },
  // The NIC after the sysctls: one SSH session each, in a predictable order.
  { dependsOn: [sysctls] },
);

export const sysctlFile = sysctls.filePath;
export const appliedSysctls = sysctls.applied;
export const previousSysctls = sysctls.previous;
export const appliedNic = nic.applied;
export const previousNic = nic.previous;
export const nicPersistedAs = nic.persistedAs;
export const warnings = pulumi.all([sysctls.warnings, nic.warnings]).apply(([a, b]) => [...a, ...b]);
