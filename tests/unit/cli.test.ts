/**
 * `net-tuning plan` (issue #5): output, options, exit codes; in-process through `main`, and once as a
 * real subprocess.
 */
import { spawnSync } from "child_process";
import * as path from "path";
import { USAGE, main } from "../../bin/net-tuning";
import { AUDIT_USAGE } from "../../provider/audit/cli";
import { PACKAGE_VERSION } from "../../provider/version";
import { SysctlProfile, longFatFlows, lowLatency, renderSysctlFile, webServer } from "../../provider/sizing";

function run(...argv: string[]): { code: number; stdout: string; stderr: string } {
  let stdout = "";
  let stderr = "";
  const code = main(argv, {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
  });
  if (typeof code !== "number") throw new Error(`${argv[0]} answered asynchronously: use runAsync`);
  return { code, stdout, stderr };
}

const TEMPLATE_A_FILE = `# net-tuning profile: longFatFlows(10Gbit, 40ms)
net.core.netdev_max_backlog = 250000
net.core.rmem_default = 262144
net.core.rmem_max = 268435456
net.core.somaxconn = 65535
net.core.wmem_default = 262144
net.core.wmem_max = 268435456
net.ipv4.ip_local_port_range = 10000 65535
net.ipv4.tcp_fin_timeout = 15
net.ipv4.tcp_max_syn_backlog = 262144
net.ipv4.tcp_mtu_probing = 1
net.ipv4.tcp_rmem = 4096 16777216 134217728
net.ipv4.tcp_sack = 1
net.ipv4.tcp_timestamps = 1
net.ipv4.tcp_window_scaling = 1
net.ipv4.tcp_wmem = 4096 16777216 134217728
`;

describe("net-tuning --help / --version", () => {
  it.each([["--help"], ["-h"], ["plan", "--profile", "webServer", "--help"]])("%s prints usage to stdout, exit 0", (...argv) => {
    const r = run(...argv);
    expect(r).toEqual({ code: 0, stdout: USAGE, stderr: "" });
    expect(USAGE).toMatch(/^Usage: net-tuning plan --profile NAME/);
  });

  it("--version", () => {
    expect(run("--version")).toEqual({ code: 0, stdout: `net-tuning ${PACKAGE_VERSION} (pulumi-net-tuning)\n`, stderr: "" });
  });
});

describe("net-tuning plan", () => {
  it("prints the sysctl.d file (sorted, multi-values space-separated), NicQueues, rationale and warnings", () => {
    const r = run("plan", "--profile", "longFatFlows", "--bandwidth", "10Gbit", "--rtt", "40ms");
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout.startsWith(`# sysctl.d file\n${TEMPLATE_A_FILE}\n# NicQueues: throughput\nrings: rx max, tx max\n`)).toBe(true);
    expect(r.stdout).toContain("features: gro on, gso on, lro off, tso on\ntxqueuelen: 10000\n");
    expect(r.stdout).toContain("\n# Rationale\nnet.core.netdev_max_backlog: packets queued per CPU");
    expect(r.stdout).toContain("\nnet.ipv4.tcp_rmem: min 4096; max 134217728 (128 MiB) ≥ 2 × BDP 50000000 bytes (50 MB = 10Gbit × 40ms / 8)");
    expect(r.stdout).toContain("\nnic.rps: RPS/RFS spreads softirq work");
    expect(r.stdout.endsWith("\n# Warnings\n(none)\n")).toBe(true);
  });

  it("accepts kebab-case names and --opt=value", () => {
    const a = run("plan", "--profile=long-fat-flows", "--bandwidth=10Gbit", "--rtt=40ms");
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(run("plan", "--profile", "longFatFlows", "--bandwidth", "10Gbit", "--rtt", "40ms").stdout);
    for (const [kebab, camel] of [
      ["many-small-flows", "manySmallFlows"],
      ["web-server", "webServer"],
      ["proxy-gateway", "proxyGateway"],
      ["nvme-tcp-latency", "nvmeTcpLatency"],
      ["nvme-tcp-throughput", "nvmeTcpThroughput"],
    ]) {
      const extra = kebab === "many-small-flows" ? ["--bandwidth", "1Gbit", "--rtt", "10ms"] : [];
      const k = run("plan", "--profile", kebab, ...extra);
      expect(k.code).toBe(0);
      expect(k.stdout).toBe(run("plan", "--profile", camel, ...extra).stdout);
    }
  });

  it("--json prints the profile and the file", () => {
    const r = run("plan", "--profile", "longFatFlows", "--bandwidth", "10Gbit", "--rtt", "40ms", "--json");
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { profile: SysctlProfile; sysctlFile: string; guard?: unknown };
    expect(doc.profile).toEqual(longFatFlows({ bandwidth: "10Gbit", rtt: "40ms" }));
    expect(doc.sysctlFile).toBe(TEMPLATE_A_FILE);
    expect(doc.guard).toBeUndefined();
  });

  it("--nic replaces the profile's suggested preset; warnings are listed", () => {
    const r = run("plan", "--profile", "webServer", "--nic", "low-latency");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("# NicQueues: lowLatency\nfeatures: gro on, gso on, lro off, tso on\ncoalesce: adaptive-rx off, rx-usecs 10\n");
    expect(r.stdout).toContain(`nic.coalesce: ${lowLatency().rationale.coalesce}`);
    expect(r.stdout).toContain(`\n# Warnings\n- profile ${webServer().name}: ${webServer().warnings[0]}\n`); // as NetTuning logs it
    expect(r.stdout).not.toContain("fs.file-max =");
    // --json carries the same warnings as the text
    const doc = JSON.parse(run("plan", "--profile", "webServer", "--nic", "low-latency", "--json").stdout) as { warnings: string[] };
    expect(doc.warnings).toEqual(r.stdout.split("# Warnings\n")[1].trim().split("\n").map((l) => l.replace(/^- /, "")));
    expect(doc.warnings.length).toBeGreaterThan(0);
  });

  it("sizes from --concurrency and --memory and runs the memory guard", () => {
    const r = run("plan", "--profile", "longFatFlows", "--bandwidth", "10Gbit", "--rtt", "40ms", "--concurrency", "10000", "--memory", "128GiB", "--json");
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { profile: SysctlProfile; guard: { level: string; worstCaseBytes: number } };
    expect(doc.profile.sysctls["net.ipv4.tcp_rmem"]).toEqual([4096, 2097152, 134217728]);
    expect(doc.guard).toMatchObject({ level: "ok", worstCaseBytes: 2 * 2097152 * 10000 });
    expect(run("plan", "--profile", "database", "--memory", "68719476736", "--concurrency", "10").code).toBe(0);
  });

  it("combines several profiles (repeated or comma-separated) and checks the combination as a whole", () => {
    const r = run("plan", "--profile", "proxyGateway,nvmeTcpLatency", "--json");
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { profile: SysctlProfile }).profile.name).toBe("proxyGateway() + nvmeTcpLatency()");
    const both = run("plan", "--profile", "longFatFlows", "--profile", "proxyGateway", "--bandwidth", "10Gbit", "--rtt", "40ms");
    expect(both.code).toBe(1);
    expect(both.stderr).toBe(
      "net-tuning: plan refused: combine: 2 invalid inputs:\n" +
        "  - net.ipv4.tcp_max_syn_backlog: conflicting values 262144 (longFatFlows(10Gbit, 40ms)) vs 65535 (proxyGateway()); combine profiles that agree, or drop one\n" +
        "  - net.ipv4.ip_local_port_range: conflicting values 10000 65535 (longFatFlows(10Gbit, 40ms)) vs 1024 65535 (proxyGateway()); combine profiles that agree, or drop one\n",
    );
    expect(both.stdout).toBe("");
  });

  it("memory guard at level error: exit 1 with the formula on stderr; --guard warn prints the plan", () => {
    const argv = ["plan", "--profile", "manySmallFlows", "--bandwidth", "10Gbit", "--rtt", "40ms", "--concurrency", "300000", "--memory", "16GiB"];
    const r = run(...argv);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(
      /^net-tuning: plan refused by the memory guard: manySmallFlows\(10Gbit, 40ms, 300000 connections, 16GiB\): worst case = \(tcp_rmem default 262144 \+ tcp_wmem default 262144 bytes\) × 300000 connections = 157286400000 bytes/,
    );
    expect(r.stderr).toContain("\n(--guard warn prints the plan anyway)\n");
    const w = run(...argv, "--guard", "warn");
    expect(w.code).toBe(0);
    expect(w.stdout).toMatch(/\n# Warnings\n- profile manySmallFlows\([^\n]*\): memory guard \(error\): manySmallFlows/);
  });

  it.each([
    [[], "missing command: plan, audit, show or diff"],
    [["apply"], 'unknown command "apply": use plan, audit, show or diff'],
    [["plan"], "--profile is required"],
    [["plan", "--profile", "webServer", "--foo"], "unknown option --foo"],
    [["plan", "--profile", "webServer", "-x"], "unknown option -x"],
    [["plan", "--profile", "webServer", "extra"], 'unexpected argument "extra"'],
    [["plan", "--profile"], "--profile needs a value"],
    [["plan", "--profile", "--json"], "--profile needs a value"],
    [["plan", "--profile="], "--profile needs a value"],
    [["plan", "--profile", "turbo"], 'unknown profile "turbo"; use one of longFatFlows, manySmallFlows, webServer, database, proxyGateway, nvmeTcpLatency, nvmeTcpThroughput'],
    [["plan", "--profile", "webServer,web-server"], "--profile lists a profile twice"],
    [["plan", "--profile", "longFatFlows", "--rtt", "40ms"], "--profile longFatFlows needs --bandwidth and --rtt"],
    [["plan", "--profile", "webServer", "--bandwidth", "10Gbit"], "--bandwidth and --rtt are used only by longFatFlows, manySmallFlows and nvmeTcpThroughput"],
    [["plan", "--profile", "webServer", "--memory", "1GiB", "--memory", "2GiB"], "--memory given twice"],
    [["plan", "--profile", "webServer", "--concurrency", "many"], '--concurrency "many": use a positive integer (concurrent connections)'],
    [["plan", "--profile", "webServer", "--concurrency", "0"], '--concurrency "0": use a positive integer (concurrent connections)'],
    [["plan", "--profile", "webServer", "--memory", "lots"], '--memory "lots": not a number followed by a unit; use a number of bytes or a string like "64GiB", "512MiB", "128GB" (KiB/MiB/GiB/TiB = 1024^n, kB/MB/GB/TB = 1000^n)'],
    [["plan", "--profile", "webServer", "--guard", "maybe"], '--guard "maybe": use error or warn'],
    [["plan", "--profile", "webServer", "--nic", "fast"], 'unknown NIC preset "fast"; use one of throughput, lowLatency'],
  ])("usage error %j: stderr, exit 2", (argv, message) => {
    const r = run(...argv);
    expect(r).toEqual({ code: 2, stdout: "", stderr: `net-tuning: ${message}\nRun 'net-tuning --help' for usage.\n` });
  });

  it("invalid values: every problem with the accepted formats, exit 2", () => {
    const r = run("plan", "--profile", "longFatFlows", "--bandwidth", "10Gb", "--rtt", "40");
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "net-tuning: longFatFlows: 2 invalid inputs:\n" +
        '  - bandwidth "10Gb": "Gb" is ambiguous (bits or bytes?); use a number of bits/s or a string like "10Gbit", "500Mbit", "1.5Gbit/s", "1Gbps", "100Mbit/s" (decimal prefixes k, M, G, T: 10Gbit = 10^10 bits/s)\n' +
        '  - rtt "40": missing unit (ms?); use a number of seconds or a string like "40ms", "800us", "0.04s"\n' +
        "Run 'net-tuning --help' for usage.\n",
    );
  });

  it("runs as a real program (ts-node)", () => {
    const root = path.resolve(__dirname, "../..");
    const ok = spawnSync("npx", ["ts-node", "--transpile-only", "-P", "tsconfig.dev.json", "bin/net-tuning.ts", "plan", "--profile", "longFatFlows", "--bandwidth", "10Gbit", "--rtt", "40ms"], {
      cwd: root,
      encoding: "utf8",
      timeout: 60000,
    });
    expect(ok.stderr).toBe("");
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain(renderSysctlFile(longFatFlows({ bandwidth: "10Gbit", rtt: "40ms" })));
    const bad = spawnSync("npx", ["ts-node", "--transpile-only", "-P", "tsconfig.dev.json", "bin/net-tuning.ts", "plan", "--bogus"], { cwd: root, encoding: "utf8", timeout: 60000 });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe("net-tuning: unknown option --bogus\nRun 'net-tuning --help' for usage.\n");
  }, 90000);
});

async function runAsync(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } });
  return { code, stdout, stderr };
}

describe("net-tuning audit / show / diff: usage (no host is contacted)", () => {
  it("audit --help prints the audit usage, exit 0", async () => {
    const r = await runAsync("audit", "--help");
    expect(r).toEqual({ code: 0, stdout: AUDIT_USAGE, stderr: "" });
    expect(AUDIT_USAGE).toContain("Exit codes: 0 fine, 1 findings at or above --fail-on (diff: a difference), 2 usage error, 3 hosts unreachable.");
  });

  it.each([
    [["audit"], "no host given: use --host, --inventory or --stack"],
    [["audit", "--host", "root@10.0.0.1", "--bogus"], "unknown option --bogus"],
    [["audit", "--host"], "--host needs a value"],
    [["audit", "--host", "root@10.0.0.1", "--fail-on", "info"], '--fail-on "info": use warning or error'],
    [["audit", "--host", "root@10.0.0.1", "--parallel", "0"], '--parallel "0": use a positive integer'],
    [["audit", "--host", "root@10.0.0.1", "--bandwidth", "10Gbit"], "--bandwidth and --rtt go together"],
    [["audit", "--host", "root@10.0.0.1", "--json", "--markdown"], "--json and --markdown exclude each other"],
    [["audit", "--host", "root@bad host"], 'host "root@bad host": use user@address[:port]'],
    [["audit", "--host", "root@10.0.0.1:70000"], 'host "root@10.0.0.1:70000": port 70000 is out of range'],
    [["audit", "--inventory", "/nonexistent/inventory"], "--inventory /nonexistent/inventory: ENOENT"],
    [["show"], "show takes exactly one --host"],
    [["show", "--host", "a@b", "--host", "c@d"], "show takes exactly one --host"],
    [["diff", "--host", "a@b"], "diff needs --stack FILE|-"],
  ])("%j → exit 2: %s", async (argv, message) => {
    const r = await runAsync(...argv);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(`net-tuning: ${message}\nRun 'net-tuning ${argv[0]} --help' for usage.\n`);
  });

  it("--stack of an export without endpoint outputs or secrets names what it needs, exit 2", async () => {
    const fs = await import("fs");
    const os = await import("os");
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "nt-audit-")), "stack.json");
    const secret = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", ciphertext: "v1:abc" };
    fs.writeFileSync(file, JSON.stringify({ version: 3, deployment: { resources: [
      { urn: "urn:pulumi:dev::p::net-tuning:index:NetTuning::web", type: "net-tuning:index:NetTuning", outputs: {} },
      { urn: "urn:pulumi:dev::p::net-tuning:index:NetTuning$command:remote:Command::web-apply", type: "command:remote:Command", parent: "urn:pulumi:dev::p::net-tuning:index:NetTuning::web", inputs: { connection: secret, stdin: "x" } },
    ] } }));
    const r = await runAsync("audit", "--stack", file);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('NetTuning "web": the export names no host (no endpoint output, connection is secret): export with `pulumi stack export --show-secrets`');
    expect(r.stderr).toContain("net-tuning: no host to audit");
  });
});

describe("audit targets and known_hosts (provider/audit/targets.ts, knownHosts.ts)", () => {
  it("parses INI inventories: groups, children, group and host vars, [all:vars]", async () => {
    const { parseInventory } = await import("../../provider/audit/targets");
    const ini = "[all:vars]\nansible_port=2200\n[web]\nw1 ansible_host=10.0.0.1\nw2 ansible_host=10.0.0.2 ansible_port=22 # comment\n[edge:children]\nweb\n[edge:vars]\nansible_user=ops\n[db]\ndb1.example.net\n";
    expect(parseInventory(ini, "hosts", "me").map((t) => `${t.name} ${t.user}@${t.host}:${t.port}`)).toEqual([
      "w1 ops@10.0.0.1:2200", "w2 ops@10.0.0.2:22", "db1.example.net me@db1.example.net:2200",
    ]);
    expect(parseInventory("root@10.0.0.9:2222\n# c\n\n10.0.0.8\n", "list.txt", "me").map((t) => `${t.user}@${t.host}:${t.port}`)).toEqual(["root@10.0.0.9:2222", "me@10.0.0.8:22"]);
    const yml = "all:\n  hosts:\n    a:\n      ansible_host: 10.1.0.1\n  children:\n    g:\n      vars:\n        ansible_user: admin\n      hosts:\n        b:\n          ansible_port: 2022\n";
    expect(parseInventory(yml, "inv.yaml", "me").map((t) => `${t.name} ${t.user}@${t.host}:${t.port}`)).toEqual(["a me@10.1.0.1:22", "b admin@b:2022"]);
    expect(() => parseInventory("all:\n  hosts:\n    - a\n", "x.yml", "me")).toThrow(/static mappings only/);
  });

  it("checks host keys against a known_hosts file hashed by ssh-keygen -H, with [host]:port names and @revoked", async () => {
    const fs = await import("fs");
    const os = await import("os");
    const { parseKnownHosts, verifyHostKey } = await import("../../provider/live/knownHosts");
    const d = fs.mkdtempSync(path.join(os.tmpdir(), "nt-kh-"));
    spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", path.join(d, "k")]);
    spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", path.join(d, "other")]);
    const [type, b64] = fs.readFileSync(path.join(d, "k.pub"), "utf8").split(" ");
    const other = Buffer.from(fs.readFileSync(path.join(d, "other.pub"), "utf8").split(" ")[1], "base64");
    const blob = Buffer.from(b64, "base64");
    fs.writeFileSync(path.join(d, "kh"), `10.0.0.1 ${type} ${b64}\n[10.0.0.2]:2222 ${type} ${b64}\n`);
    expect(spawnSync("ssh-keygen", ["-H", "-f", path.join(d, "kh")]).status).toBe(0);
    const text = fs.readFileSync(path.join(d, "kh"), "utf8");
    expect(text).not.toContain("10.0.0.1");
    const lines = parseKnownHosts(text);
    expect(verifyHostKey(lines, "10.0.0.1", 22, blob, false)).toEqual({ ok: true, how: "known" });
    expect(verifyHostKey(lines, "10.0.0.2", 2222, blob, false)).toEqual({ ok: true, how: "known" });
    expect(verifyHostKey(lines, "10.0.0.2", 22, blob, false)).toMatchObject({ ok: false, reason: expect.stringMatching(/^10\.0\.0\.2 is not in known_hosts/) });
    expect(verifyHostKey(lines, "10.0.0.2", 22, blob, true)).toEqual({ ok: true, how: "accepted-new" });
    expect(verifyHostKey(lines, "10.0.0.1", 22, other, true)).toMatchObject({ ok: false, reason: expect.stringContaining("REMOTE HOST IDENTIFICATION HAS CHANGED") });
    const revoked = parseKnownHosts(`@revoked * ${type} ${b64}\n10.0.0.1 ${type} ${b64}\n`);
    expect(verifyHostKey(revoked, "10.0.0.1", 22, blob, true)).toMatchObject({ ok: false, reason: expect.stringContaining("@revoked") });
    expect(verifyHostKey(parseKnownHosts(`10.0.0.*,!10.0.0.5 ${type} ${b64}\n`), "10.0.0.5", 22, blob, false).ok).toBe(false);
    expect(verifyHostKey(parseKnownHosts(`10.0.0.*,!10.0.0.5 ${type} ${b64}\n`), "10.0.0.6", 22, blob, false).ok).toBe(true);
  });
});

describe("audit: a host that refuses the connection (127.0.0.1 port 1)", () => {
  it("is reported, exit 3; a progress line on a TTY stderr only", async () => {
    for (const tty of [true, false]) {
      let stdout = "";
      let stderr = "";
      const code = await main(["audit", "--host", "root@127.0.0.1:1", "--known-hosts", "/dev/null", "--json"], {
        stdout: { write: (t: string) => (stdout += t) },
        stderr: { write: (t: string) => (stderr += t), isTTY: tty },
      });
      expect(code).toBe(3);
      const doc = JSON.parse(stdout);
      expect(doc.summary).toMatchObject({ hosts: 1, reachable: 0, unreachable: 1 });
      expect(doc.hosts[0]).toMatchObject({ name: "root@127.0.0.1:1", target: "root@127.0.0.1:1", reachable: false, error: "127.0.0.1:1: connection refused" });
      expect(stderr).toBe(tty ? "\r\x1b[Kaudit: 1/1 hosts (root@127.0.0.1:1)\r\x1b[K" : "");
    }
  });
});

describe("plan --pacing / --congestion-control (issue #33)", () => {
  test("set the keys, shown in the file and the name; without them the plan is template A byte for byte", () => {
    const r = run("plan", "--profile", "longFatFlows", "--bandwidth", "10Gbit", "--rtt", "40ms", "--pacing", "fq", "--congestion-control", "bbr");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("# net-tuning profile: longFatFlows(10Gbit, 40ms, pacing fq, bbr)\n");
    expect(r.stdout.split("\n")).toEqual(expect.arrayContaining(["net.core.default_qdisc = fq", "net.ipv4.tcp_congestion_control = bbr"]));
    expect(run("plan", "--profile", "longFatFlows", "--bandwidth", "10Gbit", "--rtt", "40ms").stdout.startsWith(`# sysctl.d file\n${TEMPLATE_A_FILE}\n`)).toBe(true);
  });
  test("a bad value is a usage error naming it", () => {
    const p = run("plan", "--profile", "webServer", "--pacing", "cake");
    expect([p.code, p.stderr]).toEqual([2, expect.stringContaining('pacing "cake": use "fq"')]);
    const c = run("plan", "--profile", "webServer", "--congestion-control", "b;b");
    expect([c.code, c.stderr]).toEqual([2, expect.stringContaining('congestionControl "b;b": must be a congestion-control name')]);
  });
});
