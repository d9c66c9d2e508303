/** NicQueues resource graph under Pulumi mocks: children, their inputs, outputs parsed from the report. */
import * as pulumi from "@pulumi/pulumi";
import { NIC_REPORT } from "./fixtures/report";
import { mockCommands, promiseOf } from "../../testkit/mocks";

// What the host program really printed for the first test's inputs (recorded on a lab host; checked there by
// tests/harness/harness.test.ts).
const { byName, registered } = mockCommands(NIC_REPORT.report);

import { NicQueues } from "../../components/nicQueues";
import { hostCommand, hostStdin } from "../../provider/host/programs";
import { throughput } from "../../provider/sizing/nic";

const conn = { host: "198.18.0.2", user: "root", privateKey: pulumi.secret("-----BEGIN OPENSSH PRIVATE KEY-----\nSECRETKEY\n") };

describe("NicQueues resource graph", () => {
  test("one component with -apply (create = update, stdin = plan) and -restore (delete only, stdin = originals)", async () => {
    const n = new NicQueues(NIC_REPORT.name, { connection: conn, interface: "eth0", ...NIC_REPORT.args });
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
    expect(apply.inputs.create).toBe(hostCommand("nic", "apply"));
    expect(apply.inputs.update).toBe(apply.inputs.create);
    expect(apply.inputs.delete).toBeUndefined();
    expect(apply.inputs.addPreviousOutputInEnv).toBe(false);
    expect(apply.inputs.stdin).toContain("@kind nic\n@owner proj/dev/nq\n");
    expect(apply.inputs.stdin).toContain("@set channel.rx 2\n");
    expect(restore.inputs.create).toBeUndefined();
    expect(restore.inputs.update).toBeUndefined();
    expect(restore.inputs.delete).toBe(hostCommand("nic", "restore"));
    expect(restore.inputs.addPreviousOutputInEnv).toBe(false);
    // stdin = the plan, then "@program" and the program (the command line is a short fixed bootstrap).
    expect(apply.inputs.stdin).toBe(hostStdin("nic", "apply", apply.inputs.stdin.split("@program\n")[0]));
    expect(restore.inputs.stdin.split("@program\n")[0]).toMatch(/@interface eth0\n@restore 1\n@orig eth0\/channel\.rx\t4\n@orig eth0\/txqueuelen\t1000\n@orig eth0\/rps\.rx-0\t0\n[^]*@orig eth0\/rfs\.rx-1\t0\n$/);
    expect(restore.inputs.stdin).toBe(hostStdin("nic", "restore", restore.inputs.stdin.split("@program\n")[0]));
  });

  test("become sudo wraps both programs; restoreOnDelete false; a preset is merged", async () => {
    const n = new NicQueues("s", { connection: conn, interface: "ens1", become: "sudo", restoreOnDelete: false, preset: throughput() });
    await promiseOf(n.applied);
    const apply = await registered("s-apply");
    const restore = await registered("s-restore");
    expect(apply.inputs.create).toBe(hostCommand("nic", "apply", "sudo"));
    expect(restore.inputs.delete).toBe(hostCommand("nic", "restore", "sudo"));
    expect(restore.inputs.stdin).toContain("@restore 0\n");
    expect(apply.inputs.stdin).toContain("@rps-only-below-cpus 1\n");
  });

  test("invalid input fails the program with every problem listed (before any SSH)", () => {
    expect(() => new NicQueues("bad", { connection: conn, interface: "eth/0", txQueueLength: -1 })).toThrow(
      /NicQueues "bad": 2 invalid inputs:\n  - interface "eth\/0" is not a valid Linux interface name.*\n  - txQueueLength must be an integer from 1 to 1000000 \(packets\)/,
    );
  });
});
