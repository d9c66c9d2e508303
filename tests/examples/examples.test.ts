/**
 * The example programs (examples/<name>/index.ts) evaluated under Pulumi mocks with stack config, exactly as
 * `pulumi preview` would run them: which resources they declare, with which key inputs and options.
 * No SSH, no root: belongs to the "unit" jest project.
 */
import { capture, RegisteredResource } from "../../testkit/harness";
import { configFor, exampleProgram } from "./load";
import * as fs from "fs";
import * as path from "path";
import { readmeExcerpts } from "./readmeExcerpts";
import { lineDiff, planPart, table } from "./render";
import { readRestoreStdin } from "../../provider/host/programs";

const COMMAND = "command:remote:Command";
const KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nEXAMPLEKEY\n-----END OPENSSH PRIVATE KEY-----\n";

beforeAll(() => {
  // The components log every validation warning with pulumi.log.warn; the tests assert them through outputs instead.
  jest.spyOn(console, "warn").mockImplementation(() => undefined);
});

async function run(example: string, project: string, values: Record<string, unknown>) {
  const c = await capture(exampleProgram(example), {
    project,
    stack: "dev",
    config: configFor(project, values),
    secretConfigKeys: [`${project}:privateKey`],
  });
  const find = (name: string): RegisteredResource => {
    const r = c.resources.find((x) => x.name === name);
    if (!r) throw new Error(`${name} not registered; have: ${c.resources.map((x) => x.name).join(", ")}`);
    return r;
  };
  const named = (type: string) => c.resources.filter((r) => r.type === type).map((r) => r.name);
  return { ...c, find, named, project };
}

/** The reviewable part of an apply Command's stdin: everything before the host program. */
function plan(r: RegisteredResource): string {
  return planPart(r.inputs.stdin);
}

/** Whether a child gains root through sudo: its stdin carries the way (programs.ts sudoLine), its command does not. */
function viaSudo(r: RegisteredResource): boolean {
  const [stdin, cmd] = [String(r.inputs.stdin), String(r.inputs.create ?? r.inputs.delete)];
  expect(cmd).not.toContain("sudo");
  return /^(@engine [^\n]*\n)?p=sudo\\ -n;/.test(stdin);
}

function expectWiring(c: Awaited<ReturnType<typeof run>>, name: string, host: string, user: string) {
  const apply = c.find(`${name}-apply`);
  const restore = c.find(`${name}-restore`);
  // the engine delivery the apply depends on: a stack-level CopyToRemote (shared by the resources of the stack on one
  // address when the address is a plain value, else the resource's own, replaced when the address changes)
  expect(apply.options.dependsOn.length).toBe(1);
  const delivery = c.resources.find((x) => x.urn === apply.options.dependsOn[0])!;
  expect(delivery.type).toBe("command:remote:CopyToRemote");
  expect(delivery.name).toMatch(/^net-tuning-engine-/);
  expect(delivery.parent).toMatch(/::pulumi:pulumi:Stack::/);
  for (const r of [apply, restore, delivery]) {
    expect(r.inputs.connection).toMatchObject({ host, user, privateKey: KEY });
    expect(r.secretInputs).toContain("connection"); // the key never appears in plain state
    expect(r.options.deleteBeforeReplace).toBe(false);
    // what replaces on a move: the whole connection (components/delivery.ts MOVE_KEYS: paths inside the secret
    // connection never matched under the real engine); a shared delivery is named after the address instead
    if (r !== delivery || delivery.name.startsWith(`net-tuning-engine-${c.project}.`)) {
      expect(r.options.replaceOnChanges).toEqual(expect.arrayContaining(["connection"]));
    }
  }
  for (const r of [apply, restore]) expect(r.type).toBe(COMMAND);
  expect(apply.inputs.addPreviousOutputInEnv).toBe(false);
  // the apply runs the delivered engine named by the plan's first line; the restore names it too (it restores when
  // installed) and carries the fallback restore program
  // (with become "sudo" the @engine line and the sudo line first: programs.ts engineStdin)
  expect(String(apply.inputs.stdin)).toMatch(/^(@engine \S+ [0-9a-f]{64}\np=sudo[^\n]+\n)?@engine \S+ [0-9a-f]{64}\n[^\n]+\n@net-tuning v1\n/);
  expect(readRestoreStdin(String(restore.inputs.stdin))).toMatch(/^@restore 1\n@engine \S+ [0-9a-f]{64}\n@net-tuning v1\n[^]*\n@program\nset -u\n/);
  expect(typeof apply.inputs.create).toBe("string");
  expect(apply.inputs.update).toBe(String(apply.inputs.create).replace(" apply-create ", " apply-update "));
  expect(apply.inputs.delete).toBeUndefined();
  expect(restore.inputs.create).toBeUndefined();
  expect(restore.inputs.update).toBeUndefined();
  expect(typeof restore.inputs.delete).toBe("string");
  expect(restore.options.dependsOn).toEqual([apply.urn]);
  return { apply, restore };
}

describe("examples/quickstart", () => {
  const P = "net-tuning-quickstart";
  test("one NetTuning on the configured host; the file content is the reviewable stdin", async () => {
    const c = await run("quickstart", P, { host: "203.0.113.10", privateKey: KEY });
    expect(c.error).toBeUndefined();
    expect(c.named("net-tuning:index:NetTuning")).toEqual(["quickstart"]);
    const { apply } = expectWiring(c, "quickstart", "203.0.113.10", "root");
    expect(apply.inputs.connection).toMatchObject({ port: 22 });
    expect(viaSudo(apply)).toBe(false); // root: no become
    const p = plan(apply);
    expect(p).toContain("@file /etc/sysctl.d/90-net-tuning-quickstart.conf\n");
    expect(p).toMatch(/\nnet\.core\.somaxconn = 4096\n(.*\n)*net\.ipv4\.tcp_rmem = 4096 131072 16777216\n/);
    expect(c.outputs!.filePath).toBe("/etc/sysctl.d/90-net-tuning-quickstart.conf");
    expect(c.outputs!.warnings).toEqual([expect.stringContaining("tcp_fin_timeout only shortens orphaned FIN_WAIT_2")]);
  });

  test("a non-root user turns on become: sudo", async () => {
    const c = await run("quickstart", P, { host: "203.0.113.10", user: "admin", port: 2222, privateKey: KEY });
    const { apply, restore } = expectWiring(c, "quickstart", "203.0.113.10", "admin");
    expect(apply.inputs.connection).toMatchObject({ port: 2222 });
    expect(viaSudo(apply)).toBe(true);
    expect(viaSudo(restore)).toBe(true);
  });

  test("missing host: the program fails with Pulumi's config error", async () => {
    const c = await run("quickstart", P, { privateKey: KEY });
    expect(String(c.error)).toMatch(/Missing required configuration variable 'net-tuning-quickstart:host'/);
  });
});

describe("examples/edge-gateway (Scenario A)", () => {
  const P = "net-tuning-edge-gateway";
  test("template A sysctls from longFatFlows(10Gbit, 40ms) and the article's NIC settings in rc.local", async () => {
    const c = await run("edge-gateway", P, { host: "198.51.100.7", user: "centos", privateKey: KEY });
    expect(c.error).toBeUndefined();
    expect(c.named("net-tuning:index:NetTuning")).toEqual(["edge-gateway"]);
    expect(c.named("net-tuning:index:NicQueues")).toEqual(["edge-gateway-nic"]);
    const sys = expectWiring(c, "edge-gateway", "198.51.100.7", "centos");
    const nic = expectWiring(c, "edge-gateway-nic", "198.51.100.7", "centos");
    for (const r of [sys.apply, sys.restore, nic.apply, nic.restore]) expect(viaSudo(r)).toBe(true);

    const file = plan(sys.apply);
    for (const line of [
      "net.core.rmem_max = 268435456",
      "net.core.wmem_max = 268435456",
      "net.core.rmem_default = 262144",
      "net.core.wmem_default = 262144",
      "net.ipv4.tcp_rmem = 4096 16777216 134217728",
      "net.ipv4.tcp_wmem = 4096 16777216 134217728",
      "net.core.netdev_max_backlog = 250000",
      "net.core.somaxconn = 65535",
      "net.ipv4.tcp_max_syn_backlog = 262144",
      "net.ipv4.tcp_window_scaling = 1",
      "net.ipv4.tcp_sack = 1",
      "net.ipv4.tcp_timestamps = 1",
      "net.ipv4.tcp_mtu_probing = 1",
      "net.ipv4.ip_local_port_range = 10000 65535",
      "net.ipv4.tcp_fin_timeout = 15",
    ]) expect(file).toContain(`\n${line}\n`);
    // the defaults (persist, bootOverride "error") are the engine's: no line of the plan
    expect(file).not.toMatch(/^@(persist|boot-override) /m);

    const nicPlan = plan(nic.apply);
    for (const line of [
      "@interface eth0",
      "@persistence rc.local",
      "@set ring.rx max",
      "@set ring.tx max",
      "@set feature.large-receive-offload off",
      "@set feature.generic-receive-offload on",
      "@set feature.generic-segmentation-offload on",
      "@set feature.tcp-segmentation-offload on",
      "@set coalesce.rx-usecs 10",
      "@set txqueuelen 10000",
      "@rps-cpus all",
      "@rps-flow-cnt 4096",
      "@set net.core.rps_sock_flow_entries 32768",
    ]) expect(nicPlan).toContain(`${line}\n`);
    // the NIC is tuned after the sysctls
    expect(c.find("edge-gateway-nic").options.dependsOn).toEqual([c.find("edge-gateway").urn]);
    expect(c.outputs!.sysctlFile).toBe("/etc/sysctl.d/90-net-tuning-edge-gateway.conf");
  });

  test("config: ring size, rx-usecs, interface, root without sudo, another path", async () => {
    const c = await run("edge-gateway", P, {
      host: "198.51.100.7", privateKey: KEY, ringSize: 4096, rxUsecs: 8, interface: "ens1f0", bandwidth: "25Gbit", rtt: "20ms",
    });
    expect(c.error).toBeUndefined();
    const nicPlan = plan(c.find("edge-gateway-nic-apply"));
    expect(nicPlan).toContain("@interface ens1f0\n");
    expect(nicPlan).toContain("@set ring.rx 4096\n@set ring.tx 4096\n");
    expect(nicPlan).toContain("@set coalesce.rx-usecs 8\n");
    expect(viaSudo(c.find("edge-gateway-apply"))).toBe(false);
    // 25 Gbit/s × 20 ms: BDP 62.5 MB → 2 × BDP = 125 MB → tcp max 128 MiB
    expect(plan(c.find("edge-gateway-apply"))).toContain("\nnet.ipv4.tcp_rmem = 4096 16777216 134217728\n");
  });

  test("become can be forced off for a non-root user", async () => {
    const c = await run("edge-gateway", P, { host: "198.51.100.7", user: "netops", become: false, privateKey: KEY });
    expect(viaSudo(c.find("edge-gateway-apply"))).toBe(false);
  });
});

describe("examples/web-fleet (Scenario B)", () => {
  const P = "net-tuning-web-fleet";
  const servers = ["203.0.113.21", "203.0.113.22", "203.0.113.23"];

  test("one NetTuning per server, connected through the server's outputs, depending on the server", async () => {
    const c = await run("web-fleet", P, { servers, privateKey: KEY });
    expect(c.error).toBeUndefined();
    expect(c.named("example:index:Server")).toEqual(["web-1", "web-2", "web-3"]);
    expect(c.named("net-tuning:index:NetTuning")).toEqual(["web-1-tuning", "web-2-tuning", "web-3-tuning"]);
    servers.forEach((address, i) => {
      const name = `web-${i + 1}`;
      const { apply } = expectWiring(c, `${name}-tuning`, address, "root");
      expect(c.find(`${name}-tuning`).options.dependsOn).toEqual([c.find(name).urn]);
      const file = plan(apply);
      for (const line of [
        "net.core.somaxconn = 65535",
        "net.ipv4.tcp_max_syn_backlog = 65535",
        "net.netfilter.nf_conntrack_max = 1000000",
        "net.ipv4.tcp_max_tw_buckets = 200000",
        "net.ipv4.tcp_tw_reuse = 1",
        "net.ipv4.tcp_syncookies = 1",
        "net.ipv4.tcp_fin_timeout = 30",
        "net.ipv4.tcp_keepalive_time = 600",
        "net.ipv4.tcp_keepalive_intvl = 60",
        "net.ipv4.tcp_keepalive_probes = 3",
        "net.ipv4.tcp_rmem = 4096 87380 16777216",
        "net.ipv4.tcp_wmem = 4096 65536 16777216",
        "net.ipv4.tcp_mem = 786432 1048576 1572864",
        "net.core.rmem_max = 16777216",
        "net.core.wmem_max = 16777216",
      ]) expect(file).toContain(`\n${line}\n`);
      expect(file).not.toContain("fs.file-max");
    });
    expect(c.outputs!.servers).toEqual(servers);
    expect((c.outputs!.warnings as string[]).join("\n")).toContain("fs.file-max is not set");
  });

  test("memory scales tcp_mem; a non-root user gets sudo", async () => {
    const c = await run("web-fleet", P, { servers: servers.slice(0, 1), privateKey: KEY, memory: "32GB", user: "deploy" });
    expect(c.error).toBeUndefined();
    const apply = c.find("web-1-tuning-apply");
    expect(viaSudo(apply)).toBe(true);
    const tcpMem = /\nnet\.ipv4\.tcp_mem = (\d+) (\d+) (\d+)\n/.exec(plan(apply))!.slice(1).map(Number);
    expect(tcpMem[2]).toBeLessThan(1572864);
  });

  test("hostWideKeys false keeps only per-namespace keys (containers, network namespaces)", async () => {
    const c = await run("web-fleet", P, { servers: servers.slice(0, 2), privateKey: KEY, hostWideKeys: false });
    expect(c.error).toBeUndefined();
    const file = plan(c.find("web-2-tuning-apply"));
    for (const k of ["net.core.rmem_max", "net.core.wmem_max", "net.ipv4.tcp_mem", "net.netfilter.nf_conntrack_max"]) {
      expect(file).not.toContain(`\n${k} =`);
    }
    expect(file).toContain("\nnet.core.somaxconn = 65535\n");
    expect(file).toContain("\nnet.ipv4.tcp_keepalive_time = 600\n");
  });

  test("changing one server's address replaces only that server's children (restore the old host first)", async () => {
    const a = await run("web-fleet", P, { servers, privateKey: KEY });
    const b = await run("web-fleet", P, { servers: [servers[0], "203.0.113.99", servers[2]], privateKey: KEY });
    expect(plan(a.find("web-1-tuning-apply"))).toBe(plan(b.find("web-1-tuning-apply")));
    expect((b.find("web-2-tuning-apply").inputs.connection as { host: string }).host).toBe("203.0.113.99");
  });
});

describe("examples/fleet-rollout (safe rollout)", () => {
  const P = "net-tuning-fleet-rollout";
  const servers = Array.from({ length: 10 }, (_, i) => `203.0.113.${21 + i}`);

  test("a canary and three waves: each wave's resources and engine deliveries wait for the previous budget check", async () => {
    const c = await run("fleet-rollout", P, { servers, privateKey: KEY, soakSeconds: 30, bakeSeconds: 120 });
    expect(c.error).toBeUndefined();
    expect(c.outputs!.waves).toEqual([servers.slice(0, 1), servers.slice(1, 5), servers.slice(5, 9), servers.slice(9)]);
    const checks = c.resources.filter((r) => r.type === "command:local:Command");
    expect(checks.map((r) => r.name)).toEqual(["rollout-check-canary", "rollout-check-wave-1", "rollout-check-wave-2", "rollout-check-wave-3"]);
    for (const k of checks) expect(k.inputs.interpreter).toEqual(["node", "-e"]);
    (c.outputs!.waves as string[][]).forEach((wave, w) => {
      for (const address of wave) {
        const tuning = c.find(`web-${address}`);
        const delivery = c.resources.find((r) => r.urn === c.find(`web-${address}-apply`).options.dependsOn[0])!;
        const after = w === 0 ? [] : [checks[w - 1].urn];
        expect(tuning.options.dependsOn).toEqual(after);
        expect(delivery.options.dependsOn).toEqual(after);
        // the wave's own check depends on it
        expect(checks[w].options.dependsOn).toContain(tuning.urn);
        const file = plan(c.find(`web-${address}-apply`));
        for (const line of ["@on-failure report", "@verify-soak 30", "@verify-max-increase TcpExt.ListenOverflows 0", "@verify-max-increase TcpExt.ListenDrops 0", "net.core.somaxconn = 4096", "net.ipv4.tcp_max_syn_backlog = 8192"]) {
          expect(file).toContain(`${line}\n`);
        }
      }
    });
    // every host applied (under mocks): each check bakes 120 s
    for (const k of checks) expect(k.inputs.create).toMatch(/^\/\*[0-9a-f]{16}\*\/setTimeout\(\(\)=>\{\},120000\)$/);
    expect(c.outputs!.statuses).toEqual(Object.fromEntries(servers.map((s) => [s, "applied"])));
  });
});

describe("examples/nvme-tcp (Scenario C)", () => {
  const P = "net-tuning-nvme-tcp";
  test("latency group: autocorking 0, BBR + fq; throughput group: autocorking 1, larger send buffers", async () => {
    const c = await run("nvme-tcp", P, { latencyHosts: ["10.0.0.11", "10.0.0.12"], throughputHosts: ["10.0.0.21"], privateKey: KEY });
    expect(c.error).toBeUndefined();
    expect(c.named("net-tuning:index:NetTuning")).toEqual(["nvme-latency-1", "nvme-latency-2", "nvme-throughput-1"]);
    expect(c.named("net-tuning:index:NicQueues")).toEqual([]);
    const lat = plan(expectWiring(c, "nvme-latency-2", "10.0.0.12", "root").apply);
    expect(lat).toContain("\nnet.ipv4.tcp_autocorking = 0\n");
    expect(lat).toContain("\nnet.ipv4.tcp_congestion_control = bbr\n");
    expect(lat).toContain("\nnet.core.default_qdisc = fq\n");
    for (const wrong of ["tcp_nodelay", "tcp_notsent_lowat", "tcp_sack"]) expect(lat).not.toContain(wrong);
    const thr = plan(expectWiring(c, "nvme-throughput-1", "10.0.0.21", "root").apply);
    expect(thr).toContain("\nnet.ipv4.tcp_autocorking = 1\n");
    expect(thr).toContain("\nnet.ipv4.tcp_wmem = 4096 262144 16777216\n");
    expect(thr).toContain("\nnet.core.wmem_max = 33554432\n");
    expect(thr).toContain("\nnet.core.wmem_default = 262144\n");
    for (const wrong of ["tcp_init_cwnd", "tcp_cwnd_clamp", "tcp_sack"]) expect(thr).not.toContain(wrong);
    expect(c.outputs!.hosts).toEqual({
      "nvme-latency-1": { host: "10.0.0.11", group: "latency" },
      "nvme-latency-2": { host: "10.0.0.12", group: "latency" },
      "nvme-throughput-1": { host: "10.0.0.21", group: "throughput" },
    });
  });

  test("bandwidth + rtt size the throughput group's tcp_wmem max; nicInterface adds each profile's NIC preset", async () => {
    const c = await run("nvme-tcp", P, {
      latencyHosts: ["10.0.0.11"], throughputHosts: ["10.0.0.21"], privateKey: KEY, bandwidth: "100Gbit", rtt: "1ms", nicInterface: "ens5",
    });
    expect(c.error).toBeUndefined();
    // 100 Gbit/s × 1 ms = 12.5 MB → 2 × BDP = 25 MB → 32 MiB
    expect(plan(c.find("nvme-throughput-1-apply"))).toContain("\nnet.ipv4.tcp_wmem = 4096 262144 33554432\n");
    expect(c.named("net-tuning:index:NicQueues")).toEqual(["nvme-latency-1-nic", "nvme-throughput-1-nic"]);
    const latNic = plan(c.find("nvme-latency-1-nic-apply"));
    expect(latNic).toContain("@interface ens5\n");
    expect(latNic).toContain("@set coalesce.adaptive-rx off\n");
    expect(latNic).toContain("@set coalesce.rx-usecs 10\n");
    const thrNic = plan(c.find("nvme-throughput-1-nic-apply"));
    expect(thrNic).toContain("@set ring.rx max\n");
    expect(thrNic).toContain("@rps-cpus all\n");
    expect(c.find("nvme-latency-1-nic").options.dependsOn).toEqual([c.find("nvme-latency-1").urn]);
  });

  test("a host in both groups, or no host at all, is refused", async () => {
    const both = await run("nvme-tcp", P, { latencyHosts: ["10.0.0.11"], throughputHosts: ["10.0.0.11"], privateKey: KEY });
    expect(String(both.error)).toContain("hosts in both latencyHosts and throughputHosts: 10.0.0.11");
    const none = await run("nvme-tcp", P, { privateKey: KEY });
    expect(String(none.error)).toContain("no hosts");
  });
});

describe("docs/operations.md generated excerpts", () => {
  /** The page that shows rendered inputs (the review section, "Previews in pull-request review"). */
  const DOC = path.resolve(__dirname, "../../docs/operations.md");
  test("its preview excerpts are exactly what the components render today", async () => {
    const doc = fs.readFileSync(DOC, "utf8");
    const block = (id: string) => {
      const m = new RegExp(`<!-- generated:${id} -->\\n([\\s\\S]*?)<!-- /generated -->`).exec(doc);
      if (!m) throw new Error(`no generated:${id} block in ${DOC}`);
      return m[1];
    };
    const e = await readmeExcerpts();
    expect(block("preview-create")).toBe(e.create);
    expect(block("preview-diff")).toBe(e.diff);
  });
});

describe("render helpers", () => {
  test("planPart cuts at @program; lineDiff shows removals before additions with context", () => {
    expect(planPart("a\nb\n@program\nprog\n")).toBe("a\nb\n");
    expect(planPart("a\n")).toBe("a\n");
    expect(lineDiff("1\n2\n3\n4\n5\n6\n", "1\n2\n3\n4\nX\n6\n", 1)).toEqual(["  …", "  4", "- 5", "+ X", "  6"]);
    expect(lineDiff("a\n", "a\n")).toEqual(["  …"]); // no change: all context, collapsed
  });
  test("table pads columns", () => {
    expect(table([["k", "v"], ["long-key", "1"]], "")).toBe("k         v\n--------  -\nlong-key  1");
  });
});
