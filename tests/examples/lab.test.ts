/**
 * The example programs on real lab hosts (own netns + mount ns, default sshd) through the command-provider harness:
 * `up` → values on the hosts → identical `up` (no SSH session) → `destroy` → every original back.
 * Needs root: belongs to the "lab" jest project.
 *
 * What runs where:
 * - quickstart: up/destroy on one host, as root and as the sudo user.
 * - web-fleet: up/destroy on two hosts with `hostWideKeys: false` (lab hosts are network namespaces, where
 *   net.core.rmem_max/wmem_max, tcp_mem and nf_conntrack_max are read-only or absent).
 * - edge-gateway and nvme-tcp: preview only. Their profiles set host-wide keys (netdev_max_backlog, rmem_max,
 *   default_qdisc…) that a network namespace does not have, edge-gateway's NIC part needs rings and coalescing, which
 *   a veth does not support (`ethtool -G/-C`: "Operation not supported"), and nvme-tcp's BBR would load tcp_bbr into
 *   the machine's shared kernel. Their host programs are exercised by tests/integration and the VM tests.
 */
import { Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { ok, readSysctl as sysctl, snapshot } from "../../testkit/host";
import { configFor, exampleProgram } from "./load";
import { quickstartV2 } from "./readmeExcerpts";

let lab: Lab;
beforeAll(async () => {
  jest.spyOn(console, "warn").mockImplementation(() => undefined);
  lab = await startLab({ hosts: 2, tag: "examples" });
}, 120000);
afterAll(async () => {
  await lab?.stop();
});

function stackFor(project: string, stack: string, values: Record<string, unknown>): Stack {
  return new Stack({ project, stack, config: configFor(project, values), secretConfigKeys: [`${project}:privateKey`] });
}

function quickstartConfig(host: LabHost, who: "root" | "sudo") {
  const c = host.connection(who);
  return { host: c.host, port: c.port, user: c.user, privateKey: c.privateKey };
}

const QUICKSTART = {
  "net.core.somaxconn": "4096",
  "net.ipv4.tcp_max_syn_backlog": "8192",
  "net.ipv4.tcp_rmem": "4096 131072 16777216",
  "net.ipv4.tcp_wmem": "4096 65536 16777216",
  "net.ipv4.tcp_fin_timeout": "30",
  "net.ipv4.ip_local_port_range": "10000 65001",
};

describe("examples on lab hosts", () => {
  test.each(["root", "sudo"] as const)("quickstart as %s: up → values → no-op up → destroy → originals", async (who) => {
    const host = lab.hosts[0];
    const before = await snapshot(host);
    const originals: Record<string, string> = {};
    for (const k of Object.keys(QUICKSTART)) originals[k] = await sysctl(host, k);
    const stack = stackFor("net-tuning-quickstart", `lab-${who}`, quickstartConfig(host, who));
    const program = exampleProgram("quickstart");

    const up = ok(await stack.up(program));
    // create: the engine delivery (one SFTP session) and the apply
    expect(up.sessions.total).toBe(2);
    for (const [k, v] of Object.entries(QUICKSTART)) expect(await sysctl(host, k)).toBe(v);
    expect(up.outputs!.applied).toEqual(QUICKSTART);
    expect(up.outputs!.previous).toEqual(originals);
    expect((await host.exec("cat /etc/sysctl.d/90-net-tuning-quickstart.conf")).stdout).toContain("net.core.somaxconn = 4096\n");

    const again = ok(await stack.up(program));
    expect(again.sessions.total).toBe(0);

    const d = ok(await stack.destroy());
    expect(d.sessions.total).toBe(1);
    for (const [k, v] of Object.entries(originals)) expect(await sysctl(host, k)).toBe(v);
    expect(await snapshot(host)).toBe(before);
  });

  test("the README's change: preview updates -apply and -restore without SSH; up opens 1 session and restores the dropped key", async () => {
    const host = lab.hosts[1];
    const before = await snapshot(host);
    const fin = await sysctl(host, "net.ipv4.tcp_fin_timeout");
    const stack = stackFor("net-tuning-quickstart", "lab-readme", quickstartConfig(host, "root"));
    ok(await stack.up(exampleProgram("quickstart")));
    expect(await sysctl(host, "net.ipv4.tcp_fin_timeout")).toBe("30");
    const p = ok(await stack.preview(quickstartV2));
    expect(p.sessions.total).toBe(0);
    expect(p.updated.map((u) => u.split("::").pop()).sort()).toEqual(["quickstart-apply", "quickstart-restore"]);
    const up = ok(await stack.up(quickstartV2));
    expect(up.sessions.total).toBe(1);
    expect(await sysctl(host, "net.core.somaxconn")).toBe("16384");
    expect(await sysctl(host, "net.ipv4.tcp_rmem")).toBe("4096 131072 33554432");
    expect(await sysctl(host, "net.ipv4.tcp_fin_timeout")).toBe(fin);
    ok(await stack.destroy());
    expect(await snapshot(host)).toBe(before);
  });

  test("web-fleet on two hosts: one session per server, values on both, destroy restores both", async () => {
    const hosts = lab.hosts;
    const befores = await Promise.all(hosts.map((h) => snapshot(h)));
    const keys = ["net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog", "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_rmem", "net.ipv4.tcp_tw_reuse"];
    const originals = await Promise.all(hosts.map(async (h) => Object.fromEntries(await Promise.all(keys.map(async (k) => [k, await sysctl(h, k)])))));
    const stack = stackFor("net-tuning-web-fleet", "lab", {
      servers: hosts.map((h) => h.address),
      port: 22,
      user: "root",
      privateKey: hosts[0].root.privateKey,
      hostWideKeys: false,
    });
    const program = exampleProgram("web-fleet");

    const up = ok(await stack.up(program));
    // per server: the engine delivery and the apply
    expect(up.sessions.total).toBe(4);
    expect(Object.values(up.sessions.byHost)).toEqual([2, 2]);
    for (const h of hosts) {
      expect(await sysctl(h, "net.core.somaxconn")).toBe("65535");
      expect(await sysctl(h, "net.ipv4.tcp_max_syn_backlog")).toBe("65535");
      expect(await sysctl(h, "net.ipv4.tcp_keepalive_time")).toBe("600");
      expect(await sysctl(h, "net.ipv4.tcp_rmem")).toBe("4096 87380 16777216");
      expect(await sysctl(h, "net.ipv4.tcp_tw_reuse")).toBe("1");
    }
    const applied = up.outputs!.applied as Record<string, Record<string, string>>;
    expect(Object.keys(applied)).toEqual(["web-1", "web-2"]);
    expect(applied["web-2"]["net.core.somaxconn"]).toBe("65535");
    expect((up.outputs!.previous as Record<string, Record<string, string>>)["web-1"]["net.core.somaxconn"]).toBe(originals[0]["net.core.somaxconn"]);

    expect(ok(await stack.up(program)).sessions.total).toBe(0);

    const d = ok(await stack.destroy());
    expect(d.sessions.total).toBe(2);
    for (let i = 0; i < hosts.length; i++) {
      for (const k of keys) expect(await sysctl(hosts[i], k)).toBe(originals[i][k]);
      expect(await snapshot(hosts[i])).toBe(befores[i]);
    }
  });

  test("edge-gateway and nvme-tcp: preview against lab addresses opens no session and plans every create", async () => {
    const [h0, h1] = lab.hosts;
    const edge = stackFor("net-tuning-edge-gateway", "lab", { ...quickstartConfig(h0, "root") });
    const pe = ok(await edge.preview(exampleProgram("edge-gateway")));
    expect(pe.sessions.total).toBe(0);
    expect(pe.created.map((u) => u.split("::").pop())).toEqual(
      ["edge-gateway-apply", "edge-gateway-restore", "edge-gateway-nic-apply", "edge-gateway-nic-restore"],
    );
    const nvme = stackFor("net-tuning-nvme-tcp", "lab", {
      latencyHosts: [h0.address], throughputHosts: [h1.address], privateKey: h0.root.privateKey,
    });
    const pn = ok(await nvme.preview(exampleProgram("nvme-tcp")));
    expect(pn.sessions.total).toBe(0);
    expect(pn.created).toHaveLength(4);
  });
});
