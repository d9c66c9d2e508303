/** NicQueues resource graph under Pulumi mocks: children, their inputs, outputs parsed from the report. */
import * as pulumi from "@pulumi/pulumi";
import { NIC_REPORT } from "./fixtures/report";
import { mockCommands, promiseOf, settleAfterAll } from "../../testkit/mocks";

// What the host program really printed for the first test's inputs (recorded on a lab host; checked there by
// tests/harness/harness.test.ts).
const { resources, byName, registered } = mockCommands(NIC_REPORT.report);
settleAfterAll();

import { NicQueues, SETTINGS } from "../../components/nicQueues";
import { NIC_GROUPS, NIC_GROUP_SPECS, NIC_SETTINGS } from "../../provider/nic/spec";
import { nicSettingsSchema } from "../../provider/nic/schema";
import { APPLY_RUN, engineCommand, engineStdin, planOfStdin, readRestoreStdin, RESTORE_BOOT, restoreCommand, restoreStdin, sudoLine } from "../../provider/host/programs";
import { engine } from "../../provider/host/engine";
import { addressKey, sharedToken } from "../../components/delivery";
import { throughput } from "../../provider/sizing/nic";
import { NetTuning } from "../../components/netTuning";

const conn = { host: "198.18.0.2", user: "root", privateKey: pulumi.secret("-----BEGIN OPENSSH PRIVATE KEY-----\nSECRETKEY\n") };
/** One host per resource: two resources of one program setting one key (or interface) on one host are refused. */
let hosts = 10;
const another = () => ({ ...conn, host: `198.18.1.${hosts++}` });

describe("NicQueues resource graph", () => {
  test("one component with -apply (create = update, stdin = plan) and -restore (delete only, stdin = originals)", async () => {
    const connection = another();
    const n = new NicQueues(NIC_REPORT.name, { connection, interface: "eth0", ...NIC_REPORT.args });
    expect(await promiseOf(n.applied)).toEqual({
      "eth0/channel.rx": "2", "eth0/txqueuelen": "3000", "eth0/rps.rx-0": "1", "eth0/rps.rx-1": "1", "eth0/rfs.rx-0": "256", "eth0/rfs.rx-1": "256",
    });
    expect(await promiseOf(n.previous)).toEqual({
      "eth0/channel.rx": "4", "eth0/txqueuelen": "1000", "eth0/rps.rx-0": "0", "eth0/rps.rx-1": "0", "eth0/rfs.rx-0": "0", "eth0/rfs.rx-1": "0",
    });
    expect(await promiseOf(n.persistedAs)).toBe("/etc/systemd/system/net-tuning-nic-eth0.service");
    expect(await promiseOf(n.warnings)).toEqual([
      "rps.flowEntriesPerQueue: RFS also needs net.core.rps_sock_flow_entries > 0 (it is 0 or absent here); set rps.sockFlowEntries on the host",
    ]);
    const component = byName("nq");
    expect(component.type).toBe("net-tuning:index:NicQueues");
    expect(component.inputs).toEqual({});
    const apply = await registered("nq-apply");
    const restore = await registered("nq-restore");
    const token = sharedToken("proj", "dev", addressKey(connection)!, false);
    expect(apply.inputs.create).toBe(engineCommand("nic", "create", token));
    expect(apply.inputs.update).toBe(apply.inputs.create.replace(" nic apply-create ", " nic apply-update "));
    expect(apply.inputs.delete).toBeUndefined();
    expect(apply.inputs.addPreviousOutputInEnv).toBe(false);
    expect(apply.inputs.stdin).toContain("@kind nic\n@owner proj/dev/nq\n");
    expect(apply.inputs.stdin).toContain("@set channel.rx 2\n");
    expect(restore.inputs.create).toBeUndefined();
    expect(restore.inputs.update).toBeUndefined();
    expect(restore.inputs.delete).toBe(restoreCommand(token));
    // a command with only a delete has no previous output to put into its environment
    expect(restore.inputs.addPreviousOutputInEnv).toBeUndefined();
    // apply stdin = the @engine line and the plan; restore stdin = @restore, then (compressed) the @engine line, the
    // originals, "@program" and the fallback restore program.
    expect(apply.inputs.stdin).toBe(engineStdin(planOfStdin(apply.inputs.stdin)));
    const plain = readRestoreStdin(restore.inputs.stdin);
    expect(restore.inputs.stdin).toMatch(/^@restore 1\n[A-Za-z0-9+/=]+\n$/);
    expect(plain.split("@program\n")[0]).toMatch(/^@restore 1\n@engine [^\n]+\n@net-tuning v1\n@kind nic\n@owner proj\/dev\/nq\n@owner-id \S+\n@interface eth0\n@orig eth0\/channel\.rx\t4\n@orig eth0\/txqueuelen\t1000\n@orig eth0\/rps\.rx-0\t0\n@orig eth0\/rps\.rx-1\t0\n@orig eth0\/rfs\.rx-0\t0\n@orig eth0\/rfs\.rx-1\t0\n@generation 00000000-0000-4000-8000-000000000000\n$/);
    // (the @engine line is restoreStdin's own)
    expect(restore.inputs.stdin).toBe(restoreStdin("nic", plain.split("@program\n")[0].split("\n").filter((l) => !l.startsWith("@engine ")).join("\n"), true));
  });

  test("become sudo: both stdins carry the way to root, not the commands; restoreOnDelete false; a preset is merged", async () => {
    const connection = another();
    const n = new NicQueues("s", { connection, interface: "ens1", become: "sudo", restoreOnDelete: false, preset: throughput() });
    await promiseOf(n.applied);
    const apply = await registered("s-apply");
    const restore = await registered("s-restore");
    // root stages under /var/lib/pulumi-net-tuning whatever `become` says (another user: in its home, below)
    const token = sharedToken("proj", "dev", addressKey(connection)!, false);
    expect(apply.inputs.create).toBe(engineCommand("nic", "create", token, undefined, false));
    expect(String(apply.inputs.stdin).split("\n").slice(0, 3).join("\n")).toBe(`@engine ${engine().version} ${engine().sha256}\n${sudoLine(APPLY_RUN)}\n@engine ${engine().version} ${engine().sha256}`);
    expect(String(restore.inputs.stdin).split("\n")[0]).toBe(sudoLine(RESTORE_BOOT));
    expect(restore.inputs.delete).toBe(restoreCommand(token, "sudo", false));
    expect((await registered(`net-tuning-engine-${token}`)).inputs.remotePath).toBe(`/var/lib/pulumi-net-tuning/incoming/engine.${token}.sh`);
    const ops = { ...another(), user: "ops" };
    const o = new NicQueues("o", { connection: ops, interface: "ens1", become: "sudo", txQueueLength: 2000 });
    await promiseOf(o.applied);
    const opsToken = sharedToken("proj", "dev", addressKey(ops)!, true);
    expect((await registered("o-apply")).inputs.create).toMatch(new RegExp(` nic apply-create ${opsToken} "\\$HOME"/\\.cache/pulumi-net-tuning$`));
    expect((await registered("o-restore")).inputs.delete).toBe(restoreCommand(opsToken, "sudo"));
    expect((await registered(`net-tuning-engine-${opsToken}`)).inputs.remotePath).toBe(`.cache/pulumi-net-tuning/engine.${opsToken}.sh`);
    expect(readRestoreStdin(restore.inputs.stdin)).toContain("@restore 0\n");
    expect(apply.inputs.stdin).toContain("@rps-only-below-cpus 1\n");
  });

  test("invalid input fails the program with every problem listed (before any SSH)", () => {
    expect(() => new NicQueues("bad", { connection: another(), interface: "eth/0", txQueueLength: -1 })).toThrow(
      /NicQueues "bad": 2 invalid inputs:\n  - interface "eth\/0" is not a valid Linux interface name.*\n  - txQueueLength must be an integer from 1 to 1000000 \(packets\)/,
    );
  });
});

describe("every route is validated before any remote call", () => {
  const nothingRegistered = (name: string) => expect(resources.filter((r) => r.name.startsWith(`${name}-`))).toEqual([]);
  const messageOf = (f: () => unknown): string => {
    try {
      f();
    } catch (e) {
      return (e as Error).message;
    }
    return "(no error)";
  };

  test("a preset spec renders the same plan as the TypeScript preset", async () => {
    const a = new NicQueues("nicspec", { connection: another(), interface: "eth1", preset: { name: "throughput" } });
    const b = new NicQueues("nichelper", { connection: another(), interface: "eth1", preset: throughput() });
    await Promise.all([promiseOf(a.applied), promiseOf(b.applied)]);
    const plan = async (n: string) => planOfStdin((await registered(`${n}-apply`)).inputs.stdin as string).split("@program\n")[0].replace(/^@owner.*\n/gm, "");
    const [sa, sb] = [await plan("nicspec"), await plan("nichelper")];
    expect(sa).toBe(sb);
    expect(sa).toContain("@set ring.rx max\n");
    expect(messageOf(() => new NicQueues("unk", { connection: another(), interface: "eth1", preset: { name: "fastest" } as any }))).toBe(
      'NicQueues "unk": 1 invalid input:\n  - preset.name: "fastest" is not a NIC preset: use "throughput" or "lowLatency"',
    );
    nothingRegistered("unk");
  });

  test("a preset's values get the arguments' range checks (rings.rx 5000000, coalesce.rxUsecs 1e12)", () => {
    const bad = { ...throughput(), rings: { rx: 5000000 }, coalesce: { rxUsecs: 1e12 } };
    const msg = messageOf(() => new NicQueues("bp", { connection: another(), interface: "eth1", preset: bad as any }));
    expect(msg).toBe(
      'NicQueues "bp": 2 invalid inputs:\n' +
        "  - preset(throughput).rings.rx must be an integer from 1 to 1048576 (descriptors)\n" +
        "  - preset(throughput).coalesce.rxUsecs must be an integer from 0 to 4294967295 (microseconds)",
    );
    // The same values as arguments: the same checks and wording.
    expect(messageOf(() => new NicQueues("ba", { connection: another(), interface: "eth1", rings: { rx: 5000000 }, coalesce: { rxUsecs: 1e12 } }))).toBe(
      msg.replace('"bp"', '"ba"').replace(/preset\(throughput\)\./g, ""),
    );
    nothingRegistered("bp");
  });

  test("untyped JavaScript: become \"doas\" and restoreOnDelete \"no\" are refused with property paths", () => {
    let err: any;
    try {
      new NicQueues("js", { connection: another(), interface: "eth1", txQueueLength: 1000, become: "doas", restoreOnDelete: "no" } as any);
    } catch (e) {
      err = e;
    }
    expect(err.problems).toEqual([
      'become "doas" is not supported: use "sudo" (runs sudo -n, never prompts) or "none" (the SSH user is root); doas, su and others are not supported',
      'restoreOnDelete "no" must be true or false (a boolean, not a string or number)',
    ]);
    expect(pulumi.InputPropertiesError.isInstance(err)).toBe(true);
    expect(err.errors.map((e: any) => e.propertyPath)).toEqual(["become", "restoreOnDelete"]);
    nothingRegistered("js");
  });

  test("two NicQueues on one interface of one known host are refused at preview; another interface is fine", () => {
    const shared = { ...conn, host: "198.18.3.1" };
    new NicQueues("nic-a", { connection: shared, interface: "eth0", txQueueLength: 1000 });
    expect(messageOf(() => new NicQueues("nic-b", { connection: shared, interface: "eth0", txQueueLength: 2000 }))).toBe(
      'NicQueues "nic-b": 1 invalid input:\n  - interface "eth0" is also tuned by NicQueues "nic-a" on the same host (198.18.3.1:22): one NicQueues per interface and host; merge their settings into one',
    );
    new NicQueues("nic-c", { connection: shared, interface: "eth1", txQueueLength: 2000 });
    nothingRegistered("nic-b");
  });
  test("rps.sockFlowEntries (host-wide net.core.rps_sock_flow_entries) in two NicQueues of one host is refused at preview", () => {
    const shared = { ...conn, host: "198.18.3.2" };
    new NicQueues("rfs-a", { connection: shared, interface: "eth0", rps: { cpus: "all", sockFlowEntries: 32768 } });
    expect(messageOf(() => new NicQueues("rfs-b", { connection: shared, interface: "eth1", preset: throughput() }))).toBe(
      'NicQueues "rfs-b": 1 invalid input:\n  - rps.sockFlowEntries writes the host-wide net.core.rps_sock_flow_entries, which NicQueues "rfs-a" also sets on the same host (198.18.3.2:22): set it in only one resource (drop rps.sockFlowEntries here or from NicQueues "rfs-a")',
    );
    nothingRegistered("rfs-b");
    // Without sockFlowEntries the other interface is fine.
    new NicQueues("rfs-c", { connection: shared, interface: "eth1", rps: { cpus: "all", flowEntriesPerQueue: 4096 } });
  });

  test("a NetTuning and a NicQueues both setting net.core.rps_sock_flow_entries on one host are refused at preview, either order", () => {
    const h1 = { ...conn, host: "198.18.3.3" };
    new NicQueues("rfs-n1", { connection: h1, interface: "eth0", rps: { cpus: "all", sockFlowEntries: 32768 } });
    expect(messageOf(() => new NetTuning("sfe-t1", { connection: h1, sysctls: { "net.core.rps_sock_flow_entries": 65536 } }))).toBe(
      'NetTuning "sfe-t1": 1 invalid input:\n  - net.core.rps_sock_flow_entries is also set by NicQueues "rfs-n1" (its rps.sockFlowEntries) on the same host (198.18.3.3:22): the key is host-wide; set it in only one resource (remove it here or drop rps.sockFlowEntries from NicQueues "rfs-n1")',
    );
    nothingRegistered("sfe-t1");
    const h2 = { ...conn, host: "198.18.3.4" };
    new NetTuning("sfe-t2", { connection: h2, sysctls: { "net.core.rps_sock_flow_entries": 65536 } });
    expect(messageOf(() => new NicQueues("rfs-n2", { connection: h2, interface: "eth0", rps: { cpus: "all", sockFlowEntries: 32768 } }))).toBe(
      'NicQueues "rfs-n2": 1 invalid input:\n  - rps.sockFlowEntries writes the host-wide net.core.rps_sock_flow_entries, which NetTuning "sfe-t2" also sets on the same host (198.18.3.4:22): set it in only one resource (drop rps.sockFlowEntries here or the key from NetTuning "sfe-t2")',
    );
    nothingRegistered("rfs-n2");
  });
});

describe("the setting arguments come from the NIC spec", () => {
  // Computed here from the spec's raw tables (not through NIC_SETTING_ARGS), so a group added to the spec must reach
  // NicQueues' arguments and the strict schema without an edit of components/nicQueues.ts or schema.ts.
  const fromSpec = NIC_GROUPS.flatMap((g) => NIC_GROUP_SPECS[g].arg ?? NIC_SETTINGS.filter((s) => s.group === g).map((s) => s.arg));
  test("SETTINGS = interface, every group's argument (top-level settings for a group without one), persistence", () => {
    expect(fromSpec).toEqual(["channels", "rings", "features", "coalesce", "txQueueLength", "rps", "irqAffinity"]);
    expect([...SETTINGS]).toEqual(["interface", ...fromSpec, "persistence"]);
  });
  test("the strict schema accepts exactly those fields", () => {
    expect(Object.keys(nicSettingsSchema.shape)).toEqual(["interface", ...fromSpec, "persistence"]);
  });
});
