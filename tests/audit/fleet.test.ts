/**
 * `net-tuning audit` / `show` / `diff` (issue #33) against a fleet of real lab hosts, each tuned differently by hand:
 * values, boot files that override each other, a record of a last apply with drift since, an induced ListenOverflows
 * rise (a listener with backlog 1 and a burst of connects inside the host's namespace), a host whose sshd was stopped,
 * and a host whose key is not the one in known_hosts. The JSON is compared host by host with what the test made; the
 * audit leaves every host byte for byte as it was (/proc/sys/net, /etc, /var/lib, /usr/local, /tmp).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { cli, overflowListener, timeWaitSockets, writeKnownHosts } from "./helpers";
import { AUDIT_SCHEMA, AuditDocument } from "../../provider/audit/report";

jest.setTimeout(300_000);

const HOSTS = Number(process.env.NT_AUDIT_HOSTS ?? 20);
let lab: Lab;
let dir: string;
let knownHosts: string;

async function root(h: LabHost, cmd: string): Promise<string> {
  const r = await h.exec(cmd, { timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`${h.name}: ${cmd}: exit ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/** Everything the audit must not change: file metadata and contents under /etc, /var/lib, /usr/local, /tmp; every /proc/sys/net value. */
const SNAPSHOT = `
find /etc /var/lib /usr/local /tmp -xdev -printf '%p %m %U %G %s %T@ %l\\n' 2>/dev/null | sort
find /etc /var/lib /usr/local /tmp -xdev -type f -exec md5sum {} + 2>/dev/null | sort
find /proc/sys/net -type f -perm /444 ! -name nf_conntrack_count ! -name flush -exec grep -H '' {} + 2>/dev/null | sort
`;

const RECORD_ID = "nt-audittest-0123456789abcdef";

function hostsOf(doc: AuditDocument) {
  return Object.fromEntries(doc.hosts.map((h) => [h.name, h]));
}

beforeAll(async () => {
  lab = await startLab({ hosts: HOSTS, tag: "audit" });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "nt-audit-"));
  knownHosts = writeKnownHosts(lab, path.join(dir, "known_hosts"));
  const [h0, h1, h2, h3] = lab.hosts;
  // h0: values by hand (no file): somaxconn and a small tcp_rmem max
  await root(h0, "sysctl -q -w net.core.somaxconn=1024 'net.ipv4.tcp_rmem=4096 131072 1048576'");
  // h1: two boot files setting somaxconn differently (the later one wins at boot), and the value of neither now
  await root(h1, "printf 'net.core.somaxconn = 2048\\n' > /etc/sysctl.d/60-app.conf && printf 'net.core.somaxconn = 512\\n' > /etc/sysctl.d/70-legacy.conf && sysctl -q -w net.core.somaxconn=3000");
  // h2: the record of a last apply (somaxconn 4096, tcp_fin_timeout 20) and a hand change since (drift)
  await root(h2, [
    "mkdir -m 755 -p /var/lib/pulumi-net-tuning-converged",
    `printf 'net-tuning-converged v1\\t${RECORD_ID}\\t0\\tNetTuning web\\nvalue\\tnet.core.somaxconn\\t4096\\nvalue\\tnet.ipv4.tcp_fin_timeout\\t20\\n' > /var/lib/pulumi-net-tuning-converged/${RECORD_ID}`,
    "chmod 644 /var/lib/pulumi-net-tuning-converged/" + RECORD_ID,
    "sysctl -q -w net.core.somaxconn=4096 net.ipv4.tcp_fin_timeout=45",
  ].join(" && "));
  // h3: a listener with backlog 1 that never accepts, and a burst of 40 connects (ListenOverflows rises, in the test)
  await root(h3, `sysctl -q -w net.ipv4.tcp_fin_timeout=30`);
  // h4 …: each its own somaxconn and tcp_keepalive_time (the last host's sshd is stopped in the test)
  await Promise.all(lab.hosts.slice(4, HOSTS - 1).map((h, i) => root(h, `sysctl -q -w net.core.somaxconn=${1000 + i} net.ipv4.tcp_keepalive_time=${600 + i}`)));
});

afterAll(async () => {
  await lab?.stop();
});

function counterOf(h: LabHost, name: string): Promise<number> {
  const [group, field] = name.split(".");
  return root(h, `awk -v g='${group}:' -v f='${field}' '$1 == g && !n { for (i = 2; i <= NF; i++) k[i] = $i; n = 1; next } $1 == g && n { for (i = 2; i <= NF; i++) if (k[i] == f) print $i }' /proc/net/netstat /proc/net/snmp`).then((t) => Number(t.trim()));
}

describe("net-tuning audit on a lab fleet", () => {
  it("reports every host as the test made it, leaves each byte for byte unchanged, and names an unreachable host (exit 3)", async () => {
    const [h0, h1, h2, h3] = lab.hosts;
    const down = lab.hosts[HOSTS - 1];
    const first = await cli("audit", ...lab.hosts.slice(0, HOSTS - 1).flatMap((h) => ["--host", `root@${h.address}`]), "-i", h0.root.keyPath, "--known-hosts", knownHosts, "--json");
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const before = path.join(dir, "before.json");
    fs.writeFileSync(before, first.stdout);

    const snapshots = await Promise.all(lab.hosts.slice(0, HOSTS - 1).map((h) => root(h, SNAPSHOT)));
    await overflowListener(h3);
    const overflows = await counterOf(h3, "TcpExt.ListenOverflows");
    expect(overflows).toBeGreaterThan(0);
    await root(down, "kill -TERM 1").catch(() => undefined); // sshd is pid 1 of the host: the host stops answering
    const snapshotsAfterSetup = await Promise.all(lab.hosts.slice(0, HOSTS - 1).map((h) => root(h, SNAPSHOT)));

    // counters that move with any traffic (the audit's own session too): read just before and just after the audit
    const live = lab.hosts.slice(0, HOSTS - 1);
    const twCount = (h: LabHost) => root(h, "awk '$4 == \"06\"' /proc/net/tcp /proc/net/tcp6 | wc -l").then((t) => Number(t.trim()));
    await timeWaitSockets(h0, 5);
    const retransBefore = await Promise.all(live.map((h) => counterOf(h, "Tcp.RetransSegs")));
    const twBefore = await Promise.all(live.map(twCount));
    const r = await cli("audit", ...lab.hosts.flatMap((h) => ["--host", `root@${h.address}`]), "-i", h0.root.keyPath, "--known-hosts", knownHosts, "--json",
      "--before", before, "--bandwidth", "1Gbit", "--rtt", "20ms", "--parallel", "4");
    expect(r.code).toBe(3);
    const retransAfter = await Promise.all(live.map((h) => counterOf(h, "Tcp.RetransSegs")));
    const twAfter = await Promise.all(live.map(twCount));
    const doc = JSON.parse(r.stdout) as AuditDocument;
    expect(doc.schema).toBe(AUDIT_SCHEMA);
    expect(doc.summary).toMatchObject({ hosts: HOSTS, reachable: HOSTS - 1, unreachable: 1 });
    const by = hostsOf(doc);

    // read-only: after the audit, every host is as it was before it (the overflow's sockets are closed: /tmp etc. unchanged)
    const after = await Promise.all(lab.hosts.slice(0, HOSTS - 1).map((h) => root(h, SNAPSHOT)));
    after.forEach((s, i) => {
      expect(s.length).toBeGreaterThan(10_000);
      expect(s).toBe(snapshotsAfterSetup[i]);
    });
    // and the first audit changed nothing either (h3's overflow writes no file)
    snapshots.forEach((s, i) => expect(snapshotsAfterSetup[i]).toBe(s));

    // each reachable host: facts as the machine knows them
    const kernel = os.release();
    for (const [i, h] of live.entries()) {
      const j = by[`root@${h.address}`] as Record<string, any>;
      expect(j.reachable).toBe(true);
      expect(j.hostKey).toBe("known");
      expect(j.kernel).toBe(kernel);
      expect(j.hostname).toBe(h.netns);
      expect(j.cpus).toBe(os.cpus().length);
      expect(j.memTotalBytes).toBe(Number(/MemTotal:\s+(\d+)/.exec(fs.readFileSync("/proc/meminfo", "utf8"))![1]) * 1024);
      expect(j.distribution.id).toBe("debian");
      const eth0 = j.nics.find((n: { name: string }) => n.name === "eth0");
      expect(eth0).toMatchObject({ driver: "veth", speedMbps: 10000, queues: { rx: 4, tx: 4 }, channels: { max: { RX: 4, TX: 4 }, current: { RX: 4, TX: 4 } } });
      expect(eth0.rings).toBeUndefined(); // veth: ethtool -g is not supported
      expect(eth0.offloads["large-receive-offload"]).toBe("off [fixed]");
      const somaxconn = (await root(h, "cat /proc/sys/net/core/somaxconn")).trim();
      expect(j.sysctls.find((s: { key: string }) => s.key === "net.core.somaxconn")).toMatchObject({ value: somaxconn, kernelDefault: "4096", status: somaxconn === "4096" ? "default" : "non-default" });
      // TIME_WAIT: between the counts just before and just after (± the audit's own connection)
      expect(j.counters["sockets.timeWait"]).toBeGreaterThanOrEqual(Math.min(twBefore[i], twAfter[i]) - 1);
      expect(j.counters["sockets.timeWait"]).toBeLessThanOrEqual(Math.max(twBefore[i], twAfter[i]) + 1);
      expect(j.counters["Tcp.RetransSegs"]).toBeGreaterThanOrEqual(retransBefore[i]);
      expect(j.counters["Tcp.RetransSegs"]).toBeLessThanOrEqual(retransAfter[i]);
      expect(Object.keys(j.allCounters).some((k) => k.startsWith("ethtool.eth0."))).toBe(true);
    }
    lab.hosts.slice(4, HOSTS - 1).forEach((h, i) => {
      const j = by[`root@${h.address}`] as Record<string, any>;
      const row = (k: string) => j.sysctls.find((x: { key: string }) => x.key === k);
      expect(row("net.core.somaxconn")).toMatchObject({ value: String(1000 + i), status: "non-default", kernelDefault: "4096" });
      expect(row("net.ipv4.tcp_keepalive_time")).toMatchObject({ value: String(600 + i), status: "non-default", kernelDefault: "7200" });
    });
    const j0 = by[`root@${h0.address}`] as Record<string, any>;
    expect(j0.counters["sockets.timeWait"]).toBeGreaterThanOrEqual(5); // the 5 closed by timeWaitSockets()
    expect(j0.sysctls.find((s: { key: string }) => s.key === "net.ipv4.tcp_rmem").value).toBe("4096 131072 1048576");
    // BDP 1Gbit × 20ms / 8 = 2,500,000 bytes: tcp_rmem max 1 MiB < 2 × BDP on h0 only (the others keep the kernel's 6 MiB)
    const bdp = doc.advice.filter((a) => a.rule === "bdp" && a.subject === "net.ipv4.tcp_rmem");
    expect(bdp).toHaveLength(1);
    expect(bdp[0].hosts).toEqual([`root@${h0.address}`]);
    expect(bdp[0].message).toMatch(/^net\.ipv4\.tcp_rmem max 1048576 \(1 MiB\) < 2 × BDP = 5000000 bytes/);

    const j1 = by[`root@${h1.address}`] as Record<string, any>;
    expect(j1.bootFiles.filter((b: { path: string }) => /\/(60-app|70-legacy)\.conf$/.test(b.path))).toEqual([
      { path: "/etc/sysctl.d/60-app.conf", state: "read", sets: { "net.core.somaxconn": "2048" } },
      { path: "/etc/sysctl.d/70-legacy.conf", state: "read", sets: { "net.core.somaxconn": "512" } },
    ]);
    expect(j1.findings).toEqual(expect.arrayContaining([
      { level: "warning", rule: "boot-override", subject: "net.core.somaxconn", message: "net.core.somaxconn: /etc/sysctl.d/60-app.conf sets 2048, overridden at boot by /etc/sysctl.d/70-legacy.conf which sets 512" },
      { level: "info", rule: "boot-override", subject: "net.core.somaxconn", message: "net.core.somaxconn = 3000 now, but the boot files set 512 (/etc/sysctl.d/70-legacy.conf): the next boot changes it" },
    ]));

    const j2 = by[`root@${h2.address}`] as Record<string, any>;
    expect(j2.records).toEqual([{ ownerId: RECORD_ID, kind: "sysctl", state: "ok", owner: "NetTuning web", drift: [{ key: "net.ipv4.tcp_fin_timeout", applied: "20", live: "45" }] }]);
    expect(j2.findings).toContainEqual({ level: "warning", rule: "drift", subject: "net.ipv4.tcp_fin_timeout", message: "drift since the last apply of NetTuning web: net.ipv4.tcp_fin_timeout = 45 (last applied 20)" });
    for (const other of [h0, h1, h3]) expect((by[`root@${other.address}`] as Record<string, any>).records).toEqual([]);

    const j3 = by[`root@${h3.address}`] as Record<string, any>;
    expect(j3.counters["TcpExt.ListenOverflows"]).toBe(overflows);
    const rise = doc.advice.find((a) => a.rule === "counter" && a.subject === "TcpExt.ListenOverflows");
    expect(rise).toMatchObject({ level: "warning", hosts: [`root@${h3.address}`], message: `TcpExt.ListenOverflows rose by ${overflows} since the previous read` });

    const jd = by[`root@${down.address}`];
    expect(jd.reachable).toBe(false);
    expect(jd.error).toMatch(/connection refused|no answer|no route/);
    expect(doc.advice).toContainEqual(expect.objectContaining({ level: "error", rule: "reachability", hosts: [`root@${down.address}`] }));
  });

  it("Markdown, the terminal table, show and --fail-on warning on the same fleet", async () => {
    const [h0, h1, h2] = lab.hosts;
    const args = [h0, h1, h2].flatMap((h) => ["--host", `root@${h.address}`]);
    const ssh = ["-i", h0.root.keyPath, "--known-hosts", knownHosts];
    const md = await cli("audit", ...args, ...ssh, "--markdown");
    expect(md.code).toBe(0);
    expect(md.stdout).toMatch(/^## net-tuning audit \(/);
    expect(md.stdout).toContain("| HOST | KERNEL | DISTRIBUTION | CPUS |");
    expect(md.stdout).toContain(`| root@${h0.address} | ${os.release()} | Debian GNU/Linux 12 (bookworm) |`);
    expect(md.stdout.match(/<details><summary>/g)).toHaveLength(3);

    const text = await cli("audit", ...args, ...ssh);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^HOST\s+KERNEL\s+DISTRIBUTION/);
    expect(text.stdout).toContain("3 hosts: 3 audited, 0 unreachable;");
    // the same advice for several hosts is one line naming them
    const lines = text.stdout.split("\n").filter((l) => l.startsWith("WARNING") || l.startsWith("INFO"));
    expect(new Set(lines).size).toBe(lines.length);

    const warn = await cli("audit", ...args, ...ssh, "--fail-on", "warning");
    expect(warn.code).toBe(1); // h1's boot override, h2's drift

    const show = await cli("show", "--host", `root@${h2.address}`, ...ssh);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`# root@${h2.address}`);
    expect(show.stdout).toContain(`${RECORD_ID} (sysctl, NetTuning web): net.ipv4.tcp_fin_timeout 20 → 45`);
    expect(show.stdout).toMatch(/net\.core\.somaxconn\s+4096\s+4096\s+default\s/);
  });

  it("known_hosts: an unknown host is refused (exit 3) unless --accept-new, which records its key; a changed key is refused", async () => {
    const h0 = lab.hosts[0];
    const empty = path.join(dir, "empty_known_hosts");
    fs.writeFileSync(empty, "");
    const refused = await cli("audit", "--host", `root@${h0.address}`, "-i", h0.root.keyPath, "--known-hosts", empty, "--json");
    expect(refused.code).toBe(3);
    expect(JSON.parse(refused.stdout).hosts[0].error).toBe(`${h0.address} is not in known_hosts (ssh-ed25519): add its key (ssh-keyscan, or a first ssh), or give --accept-new to trust it on first use`);
    const accepted = await cli("audit", "--host", `root@${h0.address}`, "-i", h0.root.keyPath, "--known-hosts", empty, "--accept-new", "--json");
    expect(accepted.code).toBe(0);
    expect(JSON.parse(accepted.stdout).hosts[0].hostKey).toBe("accepted-new");
    expect(fs.readFileSync(empty, "utf8")).toBe(fs.readFileSync(knownHosts, "utf8").split("\n")[0] + "\n");
    const again = await cli("audit", "--host", `root@${h0.address}`, "-i", h0.root.keyPath, "--known-hosts", empty, "--json");
    expect(JSON.parse(again.stdout).hosts[0].hostKey).toBe("known");

    const changed = path.join(dir, "changed_known_hosts");
    fs.writeFileSync(changed, `${h0.address} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDJcJ1CqvKtqv0IvXhmRpWG6yaOQ3HXNS5DB+aCbZi7S\n`);
    const bad = await cli("audit", "--host", `root@${h0.address}`, "-i", h0.root.keyPath, "--known-hosts", changed, "--accept-new", "--json");
    expect(bad.code).toBe(3);
    expect(JSON.parse(bad.stdout).hosts[0].error).toMatch(/is not the one in known_hosts \(REMOTE HOST IDENTIFICATION HAS CHANGED\)/);
  });

  it("--sudo as the sudo user reads the same; the plain user without sudo still gets a report", async () => {
    const h2 = lab.hosts[2];
    const viaSudo = await cli("audit", "--host", `ntsudo@${h2.address}`, "-i", h2.sudoUser.keyPath, "--known-hosts", knownHosts, "--sudo", "--json");
    expect(viaSudo.code).toBe(0);
    const s = JSON.parse(viaSudo.stdout).hosts[0];
    expect(s.records[0].drift).toEqual([{ key: "net.ipv4.tcp_fin_timeout", applied: "20", live: "45" }]);
    const plain = await cli("audit", "--host", `ntplain@${h2.address}`, "-i", h2.plainUser.keyPath, "--known-hosts", knownHosts, "--json");
    expect(plain.code).toBe(0);
    const p = JSON.parse(plain.stdout).hosts[0];
    expect(p.nics[0].driver).toBe("veth"); // ethtool found without /usr/sbin in the user's PATH
    expect(p.records[0].drift).toEqual(s.records[0].drift);
    const sudoRefused = await cli("audit", "--host", `ntplain@${h2.address}`, "-i", h2.plainUser.keyPath, "--known-hosts", knownHosts, "--sudo", "--json");
    expect(sudoRefused.code).toBe(3);
    expect(JSON.parse(sudoRefused.stdout).hosts[0].error).toMatch(/^sudo refused: /);
  });
  it("--inventory (static Ansible INI and YAML: groups, ansible_host/port/user) and -J through a bastion", async () => {
    const [h0, h1, h2] = lab.hosts;
    const ini = path.join(dir, "hosts.ini");
    fs.writeFileSync(ini, [
      "[web]", `web0 ansible_host=${h0.address}`, `web1 ansible_host=${h1.address} ansible_port=22`,
      "[db]", `${h2.address} ansible_user=ntsudo`,
      "[web:vars]", "ansible_user=root", "",
    ].join("\n"));
    const ssh = ["--known-hosts", knownHosts];
    const a = await cli("audit", "--inventory", ini, "-i", h0.root.keyPath, ...ssh, "--json");
    const doc = JSON.parse(a.stdout) as AuditDocument;
    // web0/web1 as root (group vars); the db host as ntsudo, whose key is not root's: refused login, reported
    expect(doc.hosts.map((h) => [h.name, h.target, h.reachable])).toEqual([
      ["web0", `root@${h0.address}:22`, true], ["web1", `root@${h1.address}:22`, true], [h2.address, `ntsudo@${h2.address}:22`, false],
    ]);
    expect(doc.hosts[2].error).toBe(`${h2.address}:22: login as ntsudo refused (check the key, password or agent)`);
    expect(a.code).toBe(3);

    const yml = path.join(dir, "hosts.yml");
    fs.writeFileSync(yml, [
      "all:", "  vars:", "    ansible_user: root", "  children:", "    web:", "      hosts:",
      `        web0:`, `          ansible_host: ${h0.address}`, `        web1:`, `          ansible_host: "${h1.address}"`, "",
    ].join("\n"));
    const y = await cli("audit", "--inventory", yml, "-i", h0.root.keyPath, ...ssh, "--json");
    expect(y.code).toBe(0);
    expect((JSON.parse(y.stdout) as AuditDocument).hosts.map((h) => [h.name, h.target, (h as Record<string, any>).hostname])).toEqual([
      ["web0", `root@${h0.address}:22`, h0.netns], ["web1", `root@${h1.address}:22`, h1.netns],
    ]);

    // -J: the bastion h1 forwards to its own sshd on 127.0.0.1 (lab hosts reach only the machine, not each other)
    const j = await cli("audit", "--host", "root@127.0.0.1", "-J", `root@${h1.address}`, "-i", h0.root.keyPath, ...ssh, "--json");
    expect(j.code).toBe(0);
    const via = (JSON.parse(j.stdout) as AuditDocument).hosts[0] as Record<string, any>;
    expect(via.hostname).toBe(h1.netns);
    expect(via.hostKey).toBe("not-checked"); // only the bastion's key is checked (docs/audit.md)
  });
});

