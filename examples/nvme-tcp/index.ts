// Scenario C: NVMe over TCP initiators/targets, tuned per workload.
//
//   latency group    (4k random read):     nvmeTcpLatency()    — tcp_autocorking 0, BBR + fq
//   throughput group (1M sequential write): nvmeTcpThroughput() — tcp_autocorking 1, larger send buffers
//
// A host is in one group only (the two profiles set tcp_autocorking differently; two resources claiming one key on a
// host are refused). With `nicInterface` set, each host also gets the NIC preset its profile suggests
// (lowLatency: fixed rx-usecs 10, adaptive-rx off; throughput: rings at max, RPS/RFS).
//
//   pulumi config set --path 'latencyHosts[0]' 10.0.0.11
//   pulumi config set --path 'throughputHosts[0]' 10.0.0.21
//   pulumi config set --secret privateKey "$(cat ~/.ssh/id_ed25519)"
//   pulumi config set bandwidth 25Gbit && pulumi config set rtt 200us   # optional: BDP-sized tcp_wmem max
//   pulumi preview --diff && pulumi up
import * as pulumi from "@pulumi/pulumi";
import { NetTuning, NicQueues, nvmeTcpLatency, nvmeTcpThroughput, SysctlProfile } from "net-tuning";

const config = new pulumi.Config();
const port = config.getNumber("port") ?? 22;
const user = config.get("user") ?? "root";
const privateKey = config.requireSecret("privateKey");
const become = user === "root" ? undefined : ("sudo" as const);
const nicInterface = config.get("nicInterface");

const bandwidth = config.get("bandwidth");
const rtt = config.get("rtt");
const groups: Array<{ group: string; hosts: string[]; profile: SysctlProfile }> = [
  { group: "latency", hosts: config.getObject<string[]>("latencyHosts") ?? [], profile: nvmeTcpLatency() },
  {
    group: "throughput",
    hosts: config.getObject<string[]>("throughputHosts") ?? [],
    profile: nvmeTcpThroughput(bandwidth && rtt ? { bandwidth, rtt } : undefined),
  },
];

const both = groups[0].hosts.filter((h) => groups[1].hosts.includes(h));
if (both.length > 0) throw new Error(`hosts in both latencyHosts and throughputHosts: ${both.join(", ")}; a host takes one profile`);
if (groups.every((g) => g.hosts.length === 0)) throw new Error("no hosts: set latencyHosts and/or throughputHosts");

const tuned = groups.flatMap(({ group, hosts, profile }) =>
  hosts.map((host, i) => {
    const name = `nvme-${group}-${i + 1}`;
    const connection = { host, port, user, privateKey };
    const sysctls = new NetTuning(name, { connection, become, profile });
    const nic = nicInterface && profile.nic
      ? new NicQueues(`${name}-nic`, { connection, become, interface: nicInterface, preset: profile.nic }, { dependsOn: [sysctls] })
      : undefined;
    return { name, group, host, sysctls, nic };
  }),
);

export const hosts = Object.fromEntries(tuned.map((t) => [t.name, { host: t.host, group: t.group }]));
export const applied = pulumi.all(Object.fromEntries(tuned.map((t) => [t.name, t.sysctls.applied])));
export const previous = pulumi.all(Object.fromEntries(tuned.map((t) => [t.name, t.sysctls.previous])));
export const nicApplied = pulumi.all(Object.fromEntries(tuned.filter((t) => t.nic).map((t) => [t.name, t.nic!.applied])));
export const warnings = pulumi.all(Object.fromEntries(tuned.map((t) => [t.name, t.sysctls.warnings])));
