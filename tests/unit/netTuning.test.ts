import * as pulumi from "@pulumi/pulumi";

interface Recorded {
  type: string;
  name: string;
  inputs: Record<string, any>;
  opts?: pulumi.ResourceOptions;
}
const resources: Recorded[] = [];
const optsByName = new Map<string, pulumi.CustomResourceOptions>();
const REPORT = [
  "net-tuning-report v1",
  "applied\tnet.core.somaxconn\t65535",
  "applied\tnet.ipv4.tcp_rmem\t4096 87380 16777216",
  "previous\tnet.core.somaxconn\t4096",
  "previous\tnet.ipv4.tcp_rmem\t4096 131072 6291456",
  "warning\tfrom the host",
  "file\t/etc/sysctl.d/90-net-tuning-web.conf",
  "end",
].join("\n");

pulumi.runtime.setMocks(
  {
    newResource(args) {
      resources.push({ type: args.type, name: args.name, inputs: args.inputs });
      const state = { ...args.inputs };
      if (args.type === "command:remote:Command" && args.name.endsWith("-apply")) state.stdout = REPORT;
      return { id: `${args.name}-id`, state };
    },
    call: (args) => args.inputs,
  },
  "proj",
  "dev",
  false,
);
/** Resource options are not given to setMocks: record them through a transformation on the component. */
const record: pulumi.ResourceTransformation = (a) => {
  optsByName.set(a.name, a.opts);
  return undefined;
};

import { NetTuning } from "../../components/netTuning";
import { engineCommand, restoreCommand } from "../../provider/host/programs";
import { ownerOf } from "../../provider/owner";
import { longFatFlows } from "../../provider/sizing";

function promiseOf<T>(o: pulumi.Output<T>): Promise<T> {
  // OutputImpl.promise() rejects when an apply throws (apply() alone would swallow it).
  return (o as any).promise();
}
const conn = { host: "198.18.0.2", user: "root", privateKey: pulumi.secret("-----BEGIN OPENSSH PRIVATE KEY-----\nSECRETKEY\n") };
const byName = (n: string) => resources.filter((r) => r.name === n).slice(-1)[0];
/** Registration is asynchronous (inputs resolve first): wait, bounded, until `n` resources named so exist. */
async function registered(name: string, count = 1): Promise<Recorded> {
  for (let i = 0; i < 200 && resources.filter((r) => r.name === name).length < count; i++) await new Promise((r) => setTimeout(r, 10));
  const r = byName(name);
  if (!r) throw new Error(`${name} was never registered`);
  return r;
}

describe("NetTuning resource graph", () => {
  test("one component with an -apply and a -restore command; outputs parsed from the report", async () => {
    const t = new NetTuning("web", {
      connection: conn,
      sysctls: { "net.core.somaxconn": 65535, "net/ipv4/tcp_rmem": [4096, 87380, 16777216] },
    });
    expect(await promiseOf(t.applied)).toEqual({ "net.core.somaxconn": "65535", "net.ipv4.tcp_rmem": "4096 87380 16777216" });
    expect(await promiseOf(t.previous)).toEqual({ "net.core.somaxconn": "4096", "net.ipv4.tcp_rmem": "4096 131072 6291456" });
    expect(await promiseOf(t.filePath)).toBe("/etc/sysctl.d/90-net-tuning-web.conf");
    expect(await promiseOf(t.warnings)).toContain("from the host");
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
    expect(restore.inputs.delete).toBe(restoreCommand("sysctl"));
    expect((await registered("web-engine")).type).toBe("command:remote:CopyToRemote");
    const engineUrn = "urn:pulumi:dev::proj::net-tuning:index:NetTuning$command:remote:CopyToRemote::web-engine";
    expect(apply.inputs.create).toBe(engineCommand("sysctl", "create", ownerOf("proj", "dev", "web").id, engineUrn));
    // stdin: the @engine line, then the plan (what reviewers see in a diff); the restore carries its own program.
    expect(restore.inputs.stdin).toMatch(/^@net-tuning v1\n[^]*\n@program\n[^]*\nnt_restore_main\n$/);
    expect(apply.inputs.stdin).toMatch(/^@engine \S+ [0-9a-f]{64}\n@net-tuning v1\n/);
    expect(apply.inputs.stdin).not.toContain("@program");
    expect(apply.inputs.addPreviousOutputInEnv).toBe(false);
    expect(apply.inputs.stdin).toContain("\n@content\n");
    expect(apply.inputs.stdin).toContain("\nnet.core.somaxconn = 65535\nnet.ipv4.tcp_rmem = 4096 87380 16777216\n");
    expect(apply.inputs.stdin).toContain("@owner proj/dev/web\n");
    // The restore command carries the originals from the report, so delete works without the host's journal.
    expect(restore.inputs.stdin).toContain("@orig net.core.somaxconn\t4096\n");
    expect(restore.inputs.stdin).toContain("@orig net.ipv4.tcp_rmem\t4096 131072 6291456\n");
    expect(restore.inputs.stdin).toContain("@restore 1\n");
  });

  test("children: named from the component, replaced create-before-delete on a move, restore depends on apply", async () => {
    const t = new NetTuning("db", { connection: conn, sysctls: { "vm.swappiness": 10 } }, { transformations: [record] });
    await promiseOf(t.applied);
    for (const child of ["db-engine", "db-apply", "db-restore"]) {
      const o = optsByName.get(child)!;
      expect(o.deleteBeforeReplace).toBeUndefined();
      // @pulumi/command adds "triggers[*]" itself; we never set triggers.
      expect(o.replaceOnChanges!.filter((p) => !p.startsWith("triggers"))).toEqual(["connection.host", "connection.port", "connection.user", "connection.proxy"]);
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
