import * as pulumi from "@pulumi/pulumi";
import { SYSCTL_REPORT } from "./fixtures/report";
import { mockCommands, promiseOf, settleAfterAll } from "../../testkit/mocks";

const optsByName = new Map<string, pulumi.CustomResourceOptions>();
// What the host program really printed for the first test's inputs (recorded on a lab host; checked there by
// tests/harness/harness.test.ts).
const { resources, byName, registered } = mockCommands(SYSCTL_REPORT.report);
settleAfterAll();
/** Resource options are not given to setMocks: record them through a transformation on the component. */
const record: pulumi.ResourceTransformation = (a) => {
  optsByName.set(a.name, a.opts);
  return undefined;
};

import { NetTuning } from "../../components/netTuning";
import { ENGINE_BOOT, engineCommand, readRestoreStdin, restoreCommand } from "../../provider/host/programs";
import { addressKey, sharedToken } from "../../components/delivery";
import { longFatFlows } from "../../provider/sizing";
import { InputError } from "../../provider/errors";
import { main as cli } from "../../bin/net-tuning";

const conn = { host: "198.18.0.2", user: "root", privateKey: pulumi.secret("-----BEGIN OPENSSH PRIVATE KEY-----\nSECRETKEY\n") };
/** One host per resource: two resources of one program setting one key (or interface) on one host are refused. */
let hosts = 10;
const another = () => ({ ...conn, host: `198.18.1.${hosts++}` });

describe("NetTuning resource graph", () => {
  test("one component with an -apply and a -restore command; outputs parsed from the report", async () => {
    const connection = another();
    const t = new NetTuning("web", {
      connection,
      sysctls: SYSCTL_REPORT.sysctls,
    });
    const applied = { "net.core.somaxconn": "65535", "net.ipv4.ip_local_port_range": "10000 65001", "net.ipv4.tcp_fin_timeout": "25" };
    expect(await promiseOf(t.applied)).toEqual(applied);
    expect(await promiseOf(t.previous)).toEqual({ "net.core.somaxconn": "4096", "net.ipv4.ip_local_port_range": "32768 60999", "net.ipv4.tcp_fin_timeout": "60" });
    expect(await promiseOf(t.filePath)).toBe("/etc/sysctl.d/90-net-tuning-web.conf");
    expect((await promiseOf(t.warnings)).join("\n")).toMatch(/tcp_fin_timeout only shortens orphaned FIN_WAIT_2/);
    const component = byName("web");
    expect(component.type).toBe("net-tuning:index:NetTuning");
    // Component args are stored in state since 3.202: nothing may reach super().
    expect(component.inputs).toEqual({});
    const apply = await registered("web-apply");
    const restore = await registered("web-restore");
    expect(apply.type).toBe("command:remote:Command");
    expect(restore.type).toBe("command:remote:Command");
    // create and update differ only in the engine operation (a create starts a new generation on the machine)
    expect(apply.inputs.update).toBe(apply.inputs.create.replace(" sysctl apply-create ", " sysctl apply-update "));
    expect(apply.inputs.create).not.toBe(apply.inputs.update);
    expect(apply.inputs.delete).toBeUndefined();
    expect(restore.inputs.create).toBeUndefined();
    expect(restore.inputs.update).toBeUndefined();
    // the engine delivery: a stack-level CopyToRemote named after the host, shared by the resources of the stack there
    const token = sharedToken("proj", "dev", addressKey(connection)!, false);
    expect(token).toMatch(/^198\.18\.1\.\d+-[0-9a-f]{8}$/);
    expect(restore.inputs.delete).toBe(restoreCommand(token));
    const delivery = await registered(`net-tuning-engine-${token}`);
    expect(delivery.type).toBe("command:remote:CopyToRemote");
    expect(delivery.inputs.remotePath).toBe(`/var/lib/pulumi-net-tuning/incoming/engine.${token}.sh`);
    expect(apply.inputs.create).toBe(engineCommand("sysctl", "create", token));
    // stdin: the @engine line, then the plan (what reviewers see in a diff); the restore carries its own program.
    // The host reported gzip and base64: the fallback restore program is stored compressed; the plan names the engine
    // that restores when installed and carries the generation. Only the restore choice stays plain; the rest (the
    // @engine line, the identifying lines, the originals and the program) is one gzip|base64 line.
    expect(restore.inputs.stdin).toMatch(/^@restore 1\n[A-Za-z0-9+/=]+\n$/);
    expect(readRestoreStdin(restore.inputs.stdin)).toMatch(/^@restore 1\n@engine \S+ [0-9a-f]{64}\n@net-tuning v1\n@kind sysctl\n@owner proj\/dev\/web\n@owner-id \S+\n@file \/etc\/sysctl\.d\/\S+\.conf\n@orig net\.core\.somaxconn\t[^]*\n@generation 00000000-0000-4000-8000-000000000000\n@program\nset -u\n/);
    expect(apply.inputs.stdin).toMatch(/^@engine \S+ [0-9a-f]{64}\n[^\n]+\n@net-tuning v1\n/);
    expect(String(apply.inputs.stdin).split("\n")[1]).toBe(ENGINE_BOOT);
    expect(apply.inputs.stdin).not.toContain("@program");
    expect(apply.inputs.addPreviousOutputInEnv).toBe(false);
    expect(apply.inputs.stdin).toContain("\n@content\n");
    expect(apply.inputs.stdin).toContain("\nnet.core.somaxconn = 65535\nnet.ipv4.ip_local_port_range = 10000 65001\nnet.ipv4.tcp_fin_timeout = 25\n");
    expect(apply.inputs.stdin).toContain("@owner proj/dev/web\n");
    // The restore command carries the originals from the report, so delete works without the host's journal.
    expect(readRestoreStdin(restore.inputs.stdin)).toContain("@orig net.core.somaxconn\t4096\n");
    expect(readRestoreStdin(restore.inputs.stdin)).toContain("@orig net.ipv4.ip_local_port_range\t32768 60999\n");
    expect(readRestoreStdin(restore.inputs.stdin)).toContain("@restore 1\n");
  });

  test("children: named from the component, replaced create-before-delete on a move, restore depends on apply", async () => {
    const t = new NetTuning("db", { connection: another(), sysctls: { "vm.swappiness": 10 } }, { transformations: [record] });
    await promiseOf(t.applied);
    // the engine delivery is no child: a stack-level resource shared by the resources of the stack on that address
    expect([...optsByName.keys()].filter((n) => n.startsWith("db-") || n.startsWith("net-tuning-engine")).sort()).toEqual(["db-apply", "db-restore"]);
    for (const child of ["db-apply", "db-restore"]) {
      const o = optsByName.get(child)!;
      expect(o.deleteBeforeReplace).toBeUndefined();
      // @pulumi/command adds "triggers[*]" itself; we never set triggers.
      // the whole connection: paths inside the secret `connection` never matched under the real engine
      // (tests/cli/harness.test.ts)
      expect(o.replaceOnChanges!.filter((p) => !p.startsWith("triggers"))).toEqual(["connection"]);
      expect((o.parent as any).__name ?? "db").toBe("db");
    }
    expect(optsByName.get("db-restore")!.dependsOn).toBeDefined();
  });

  test("no secret in command text, stdin or component inputs", async () => {
    const t = new NetTuning("sec", { connection: another(), sysctls: { "net.core.somaxconn": 1024 }, become: "sudo" });
    await promiseOf(t.applied);
    await registered("sec-restore");
    for (const r of resources.filter((x) => x.name.startsWith("sec"))) {
      for (const f of ["create", "update", "delete", "stdin"]) expect(String(r.inputs[f] ?? "")).not.toContain("SECRETKEY");
    }
    // the way to root is the stdin's (programs.ts sudoLine), not the command's
    expect(byName("sec-apply").inputs.stdin).toContain("sudo -n");
    expect(byName("sec-apply").inputs.create).not.toContain("sudo");
  });

  test("identical args render byte-identical inputs (a second up runs nothing)", async () => {
    const a = new NetTuning("same", { connection: conn, sysctls: { "net.ipv4.tcp_fin_timeout": 30, "net.core.somaxconn": 4096 } });
    await promiseOf(a.applied);
    const first = JSON.stringify((await registered("same-apply")).inputs);
    const b = new NetTuning("same", { connection: conn, sysctls: { "net.core.somaxconn": 4096, "net.ipv4.tcp_fin_timeout": 30 } });
    await promiseOf(b.applied);
    expect(JSON.stringify((await registered("same-apply", 2)).inputs)).toBe(first);
  });

  test("a profile is merged and sysctls override it", async () => {
    const t = new NetTuning("edge", {
      connection: another(),
      profile: longFatFlows({ bandwidth: "10Gbit", rtt: "40ms" }),
      sysctls: { "net.core.somaxconn": 4096 },
    });
    const content = await promiseOf(t.fileContent);
    expect(content).toContain("net.core.somaxconn = 4096\n");
    expect(content).toContain("net.ipv4.tcp_rmem = 4096 16777216 134217728\n");
  });

  test("persist false: no file path output, plan says @persist 0", async () => {
    const t = new NetTuning("rt", { connection: another(), sysctls: { "net.core.somaxconn": 4096 }, persist: false, restoreOnDelete: false });
    expect(await promiseOf(t.filePath)).toBeUndefined();
    expect((await registered("rt-apply")).inputs.stdin).toContain("@persist 0\n");
    expect(readRestoreStdin((await registered("rt-restore")).inputs.stdin)).toContain("@restore 0\n");
  });
});

describe("NetTuning validation at preview (no remote call)", () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ["tcp_nodelay", { "net.ipv4.tcp_nodelay": 1 }, /tcp_nodelay.*(per-socket|TCP_NODELAY)/s],
    ["tcp_init_cwnd", { "net.ipv4.tcp_init_cwnd": 10 }, /initcwnd/],
    ["tcp_tw_recycle", { "net.ipv4.tcp_tw_recycle": 1 }, /4\.12/],
    ["notsent_lowat 0", { "net.ipv4.tcp_notsent_lowat": 0 }, /never writable|stall/i],
    ["rmem order", { "net.ipv4.tcp_rmem": [4096, 33554432, 16777216] }, /tcp_rmem/],
    ["injection in value", { "net.core.default_qdisc": "fq; rm -rf /" }, /default_qdisc/],
    ["injection in key", { "net.core.somaxconn;reboot": 1 }, /somaxconn;reboot/],
  ];
  for (const [label, sysctls, msg] of cases) {
    test(`rejects ${label} with a message naming it`, async () => {
      expect(() => new NetTuning(`bad-${label.replace(/\W/g, "")}`, { connection: another(), sysctls: sysctls as any })).toThrow(msg);
    });
  }
  test("fileName with a path is rejected", async () => {
    expect(() => new NetTuning("badfile", { connection: another(), sysctls: { "net.core.somaxconn": 1 }, fileName: "../../etc/passwd" })).toThrow(
      /fileName "..\/..\/etc\/passwd"/,
    );
  });
});

describe("every route is validated before any remote call, with one message listing every problem", () => {
  const nothingRegistered = (name: string) => expect(resources.filter((r) => r.name.startsWith(`${name}-`))).toEqual([]);

  test("untyped JavaScript: become \"doas\", restoreOnDelete \"no\", persist \"yes\" are refused together", () => {
    let err: any;
    try {
      new NetTuning("js", { connection: another(), sysctls: { "net.core.somaxconn": 4096 }, become: "doas", restoreOnDelete: "no", persist: "yes" } as any);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect(err.message).toBe(
      'NetTuning "js": 3 invalid inputs:\n' +
        '  - become "doas" is not supported: use "sudo" (runs sudo -n, never prompts) or "none" (the SSH user is root); doas, su and others are not supported\n' +
        '  - persist "yes" must be true or false (a boolean, not a string or number)\n' +
        '  - restoreOnDelete "no" must be true or false (a boolean, not a string or number)',
    );
    // Also a pulumi.InputPropertiesError with a property path per problem (how the engine shows it for other languages).
    expect(pulumi.InputPropertiesError.isInstance(err)).toBe(true);
    expect(err.errors.map((e: any) => e.propertyPath)).toEqual(["become", "persist", "restoreOnDelete"]);
    nothingRegistered("js");
  });

  test("each problem's property path is the argument it is about, made where the problem is found (a sysctl key, a profile's field, a misspelt key, the file name)", () => {
    let err: any;
    try {
      new NetTuning("paths", {
        connection: another(),
        sysctls: { "net.core.somaxconn": -1, "net/ipv4/tcp_rmem": "4096 x 6291456", "net.core.somaxcon": 5 },
        profiles: [{ name: "webServer" }, { name: "nope" } as any],
        fileName: "../x.conf",
        verify: { soakSeconds: 0 } as any,
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    const byPath = err.errors.map((e: any) => [e.propertyPath, e.reason.slice(0, 24)]);
    expect(byPath).toEqual(
      expect.arrayContaining([
        ["profiles[1].name", 'profiles[1].name: "nope"'],
        ["verify", expect.stringMatching(/^verify/)],
        ["fileName", 'fileName "../x.conf" is '],
      ]),
    );
    // the key problems name the key as the validator canonicalised it
    expect(err.errors.map((e: any) => e.propertyPath)).toEqual(expect.arrayContaining(['sysctls["net.core.somaxconn"]', 'sysctls["net.ipv4.tcp_rmem"]', 'sysctls["net.core.somaxcon"]']));
    expect(err.errors.every((e: any) => e.propertyPath !== "")).toBe(true);
    nothingRegistered("paths");
  });

  test("become \"none\" means no sudo, like leaving it out", async () => {
    const connection = another();
    const t = new NetTuning("asroot", { connection, sysctls: { "net.core.somaxconn": 1024 }, become: "none" });
    await promiseOf(t.applied);
    expect((await registered("asroot-apply")).inputs.create).toBe(engineCommand("sysctl", "create", sharedToken("proj", "dev", addressKey(connection)!, false)));
  });

  test("a declarative profile spec renders the same file as the TypeScript helper", async () => {
    const opts = { bandwidth: "10Gbit", rtt: "40ms", concurrency: 2000, memory: "128GiB" };
    const a = new NetTuning("spec", { connection: another(), profile: { name: "longFatFlows", ...opts } });
    const b = new NetTuning("helper", { connection: another(), profile: longFatFlows(opts) });
    const [fa, fb] = await Promise.all([promiseOf(a.fileContent), promiseOf(b.fileContent)]);
    expect(fa.replace(/spec/g, "X")).toBe(fb.replace(/helper/g, "X"));
    expect(fa).toContain("net.ipv4.tcp_rmem = 4096 ");
  });

  test("profiles: a list of specs is combined; a conflict or an unknown name is listed with the fix", async () => {
    const t = new NetTuning("both", { connection: another(), profiles: [{ name: "webServer" }, { name: "nvmeTcpLatency" }] });
    expect(await promiseOf(t.fileContent)).toContain("net.core.somaxconn = 65535\n");
    expect(() => new NetTuning("unk", { connection: another(), profile: { name: "fastest" } as any, profiles: [{ name: "webServer", rtt: "x", colour: 1 } as any] })).toThrow(
      /NetTuning "unk": 2 invalid inputs:\n {2}- profile\.name: "fastest" is not a profile: use one of longFatFlows, manySmallFlows, webServer, database, proxyGateway, nvmeTcpLatency, nvmeTcpThroughput\n {2}- profiles\[0\]: unknown field "colour"/,
    );
    nothingRegistered("unk");
  });

  test("a resolved profile built in JavaScript is checked whole: warnings: 5 is one InputError naming profile.warnings", () => {
    const bad = { ...longFatFlows({ bandwidth: "10Gbit", rtt: "40ms" }), warnings: 5 } as any;
    let err: unknown;
    try {
      new NetTuning("badwarn", { connection: another(), profile: bad });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).problems).toEqual(['profile.warnings must be a list of strings, e.g. ["tcp_mem is sized for 64 GiB"] (or [])']);
    nothingRegistered("badwarn");
    // The keys analyseKey accepts (a VLAN interface's "/") pass the profile's schema.
    const vlan = { kind: "net-tuning/sysctl-profile", name: "vlan", sysctls: { "net.ipv4.conf.eth0/100.rp_filter": 2 }, rationale: {}, warnings: [] } as any;
    expect(() => new NetTuning("vlanprof", { connection: another(), profile: vlan })).not.toThrow();
  });

  test("profile and validator agree: no warning contradicts the profile's own choices; acknowledge moves advice aside", async () => {
    const profile = { name: "longFatFlows", bandwidth: "10Gbit", rtt: "40ms", concurrency: 2000, memory: "128GiB" } as const;
    const t = new NetTuning("agree", { connection: another(), profile });
    const warnings = await promiseOf(t.warnings);
    expect(warnings.filter((w) => /10,000 connections|tcp_fin_timeout only shortens/.test(w))).toEqual([]);
    expect((await promiseOf(t.acknowledged)).some((w) => w.startsWith("net.ipv4.tcp_fin_timeout (chosen by the profile"))).toBe(true);
    // A user's own value gets the advice, unless acknowledged.
    const own = new NetTuning("own", { connection: another(), sysctls: { "net.ipv4.tcp_fin_timeout": 15 } });
    expect((await promiseOf(own.warnings)).some((w) => w.startsWith("net.ipv4.tcp_fin_timeout = 15"))).toBe(true);
    const ack = new NetTuning("ack", { connection: another(), sysctls: { "net.ipv4.tcp_fin_timeout": 15 }, acknowledge: ["net.ipv4.tcp_fin_timeout", "net.core.somaxconn"] });
    const ws = await promiseOf(ack.warnings);
    expect(ws.some((w) => w.startsWith("net.ipv4.tcp_fin_timeout"))).toBe(false);
    expect(ws).toContain("acknowledge lists net.core.somaxconn, which has no advisory warning: remove it from acknowledge");
    expect(await promiseOf(ack.acknowledged)).toEqual([expect.stringMatching(/^net\.ipv4\.tcp_fin_timeout \(acknowledged\): net\.ipv4\.tcp_fin_timeout = 15/)]);
  });

  test("net-tuning plan prints the same warnings as the component for the same profile", async () => {
    const cases: Array<[string[], Record<string, unknown>]> = [
      [["--profile", "longFatFlows", "--bandwidth", "10Gbit", "--rtt", "40ms", "--concurrency", "2000", "--memory", "128GiB"], { name: "longFatFlows", bandwidth: "10Gbit", rtt: "40ms", concurrency: 2000, memory: "128GiB" }],
      [["--profile", "webServer"], { name: "webServer" }],
      [["--profile", "longFatFlows", "--bandwidth", "10Gbit", "--rtt", "40ms", "--concurrency", "20000", "--memory", "8GiB", "--guard", "warn"], { name: "longFatFlows", bandwidth: "10Gbit", rtt: "40ms", concurrency: 20000, memory: "8GiB" }],
    ];
    let nonEmpty = 0;
    for (const [argv, profile] of cases) {
      let out = "";
      const code = cli(["plan", ...argv], { stdout: { write: (s: string) => void (out += s) }, stderr: { write: () => undefined } } as any);
      expect(code).toBe(0);
      const cliWarnings = out.split("# Warnings\n")[1].trim().split("\n").filter((l) => l !== "(none)").map((l) => l.replace(/^- /, ""));
      const t = new NetTuning(`same-as-cli-${nonEmpty}-${argv.length}`, { connection: another(), profile: profile as any });
      const fromComponent = (await promiseOf(t.warnings)).filter((w) => w !== "from the host");
      expect(fromComponent).toEqual(cliWarnings); // the same strings in the same order (one function builds both)
      if (cliWarnings.length > 0) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThanOrEqual(1);
  });

  test("two NetTunings setting one key on one known host are refused at preview, naming the first", () => {
    const shared = { ...conn, host: "198.18.2.1" };
    new NetTuning("first", { connection: shared, sysctls: { "net.core.somaxconn": 4096, "vm.swappiness": 10 } });
    expect(() => new NetTuning("second", { connection: { ...shared, host: "198.18.2.1" }, sysctls: { "net.core.somaxconn": 8192 } })).toThrow(
      'NetTuning "second": 1 invalid input:\n  - net.core.somaxconn is also set by NetTuning "first" on the same host (198.18.2.1:22): a key belongs to one NetTuning per host; set it in only one of them',
    );
    // Another key on that host, or the same key on another port (another sshd, e.g. a container), is fine.
    new NetTuning("third", { connection: shared, sysctls: { "net.ipv4.tcp_fin_timeout": 30 } });
    new NetTuning("fourth", { connection: { ...shared, port: 2222 }, sysctls: { "net.core.somaxconn": 8192 } });
  });
});


describe("adoption in the preview", () => {
  test("NetTuning adopt and NicQueues adoptRcLocalLines log what they take over (info on the resource)", async () => {
    const info: string[] = [];
    const spy = jest.spyOn(pulumi.log, "info").mockImplementation(((m: string) => (info.push(m), Promise.resolve())) as never);
    try {
      const { NicQueues } = await import("../../components/nicQueues");
      const t = new NetTuning("adopter", { connection: another(), sysctls: { "net.core.somaxconn": 4096 }, adopt: ["99-hk-net-tuning.conf"] });
      const n = new NicQueues("rcadopter", {
        connection: another(), interface: "eth0", txQueueLength: 2500, persistence: "systemd",
        adoptRcLocalLines: ["ip link set dev eth0 txqueuelen 10000"],
      });
      await promiseOf(t.warnings);
      await promiseOf(n.warnings);
    } finally {
      spy.mockRestore();
    }
    expect(info.join("\n")).toContain('NetTuning "adopter" adopts /etc/sysctl.d/99-hk-net-tuning.conf: saved byte for byte');
    expect(info.join("\n")).toContain('NicQueues "rcadopter" takes over 1 rc.local entry (removed now, rc.local given back byte for byte on delete):\n  ip link set dev eth0 txqueuelen 10000');
  });
});
