import * as pulumi from "@pulumi/pulumi";
import { SYSCTL_REPORT } from "./fixtures/report";
import { mockCommands, promiseOf } from "../../testkit/mocks";

const optsByName = new Map<string, pulumi.CustomResourceOptions>();
// What the host program really printed for the first test's inputs (recorded on a lab host; checked there by
// tests/harness/harness.test.ts).
const { resources, byName, registered } = mockCommands(SYSCTL_REPORT.report);
/** Resource options are not given to setMocks: record them through a transformation on the component. */
const record: pulumi.ResourceTransformation = (a) => {
  optsByName.set(a.name, a.opts);
  return undefined;
};

import { NetTuning } from "../../components/netTuning";
import { hostCommand } from "../../provider/host/programs";
import { longFatFlows } from "../../provider/sizing";

const conn = { host: "198.18.0.2", user: "root", privateKey: pulumi.secret("-----BEGIN OPENSSH PRIVATE KEY-----\nSECRETKEY\n") };

describe("NetTuning resource graph", () => {
  test("one component with an -apply and a -restore command; outputs parsed from the report", async () => {
    const t = new NetTuning("web", {
      connection: conn,
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
    expect(apply.inputs.create).toBe(apply.inputs.update);
    expect(apply.inputs.delete).toBeUndefined();
    expect(restore.inputs.create).toBeUndefined();
    expect(restore.inputs.update).toBeUndefined();
    expect(restore.inputs.delete).toBe(hostCommand("sysctl", "restore"));
    expect(apply.inputs.create).toBe(hostCommand("sysctl", "apply"));
    // stdin: the plan first (what reviewers see in a diff), then "@program" and the host program.
    expect(restore.inputs.stdin).toMatch(/^@net-tuning v1\n[^]*\n@program\n[^]*\nnt_restore_main\n$/);
    expect(apply.inputs.stdin).toMatch(/^@net-tuning v1\n[^]*\n@program\n[^]*\nnt_apply_main\n$/);
    expect(apply.inputs.addPreviousOutputInEnv).toBe(false);
    expect(apply.inputs.stdin).toContain("\n@content\n");
    expect(apply.inputs.stdin).toContain("\nnet.core.somaxconn = 65535\nnet.ipv4.ip_local_port_range = 10000 65001\nnet.ipv4.tcp_fin_timeout = 25\n");
    expect(apply.inputs.stdin).toContain("@owner proj/dev/web\n");
    // The restore command carries the originals from the report, so delete works without the host's journal.
    expect(restore.inputs.stdin).toContain("@orig net.core.somaxconn\t4096\n");
    expect(restore.inputs.stdin).toContain("@orig net.ipv4.ip_local_port_range\t32768 60999\n");
    expect(restore.inputs.stdin).toContain("@restore 1\n");
  });

  test("children: named from the component, delete-before-replace on a host move, restore depends on apply", async () => {
    const t = new NetTuning("db", { connection: conn, sysctls: { "vm.swappiness": 10 } }, { transformations: [record] });
    await promiseOf(t.applied);
    for (const child of ["db-apply", "db-restore"]) {
      const o = optsByName.get(child)!;
      expect(o.deleteBeforeReplace).toBe(true);
      // @pulumi/command adds "triggers[*]" itself; we never set triggers (they replace create-before-delete).
      expect(o.replaceOnChanges).toEqual(expect.arrayContaining(["connection.host", "connection.port"]));
      expect((o.parent as any).__name ?? "db").toBe("db");
    }
    expect(optsByName.get("db-restore")!.dependsOn).toBeDefined();
  });

  test("no secret in command text, stdin or component inputs", async () => {
    const t = new NetTuning("sec", { connection: conn, sysctls: { "net.core.somaxconn": 1024 }, become: "sudo" });
    await promiseOf(t.applied);
    await registered("sec-restore");
    for (const r of resources.filter((x) => x.name.startsWith("sec"))) {
      for (const f of ["create", "update", "delete", "stdin"]) expect(String(r.inputs[f] ?? "")).not.toContain("SECRETKEY");
    }
    expect(byName("sec-apply").inputs.create).toContain("sudo -n");
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
      connection: conn,
      profile: longFatFlows({ bandwidth: "10Gbit", rtt: "40ms" }),
      sysctls: { "net.core.somaxconn": 4096 },
    });
    const content = await promiseOf(t.fileContent);
    expect(content).toContain("net.core.somaxconn = 4096\n");
    expect(content).toContain("net.ipv4.tcp_rmem = 4096 16777216 134217728\n");
  });

  test("persist false: no file path output, plan says @persist 0", async () => {
    const t = new NetTuning("rt", { connection: conn, sysctls: { "net.core.somaxconn": 4096 }, persist: false, restoreOnDelete: false });
    expect(await promiseOf(t.filePath)).toBeUndefined();
    expect((await registered("rt-apply")).inputs.stdin).toContain("@persist 0\n");
    expect((await registered("rt-restore")).inputs.stdin).toContain("@restore 0\n");
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
      expect(() => new NetTuning(`bad-${label.replace(/\W/g, "")}`, { connection: conn, sysctls: sysctls as any })).toThrow(msg);
    });
  }
  test("fileName with a path is rejected", async () => {
    expect(() => new NetTuning("badfile", { connection: conn, sysctls: { "net.core.somaxconn": 1 }, fileName: "../../etc/passwd" })).toThrow(
      /fileName "..\/..\/etc\/passwd"/,
    );
  });
});
