/** NicQueues resource graph under Pulumi mocks: children, their inputs, outputs parsed from the report. */
import * as pulumi from "@pulumi/pulumi";

interface Recorded {
  type: string;
  name: string;
  inputs: Record<string, any>;
}
const resources: Recorded[] = [];
const REPORT = [
  "net-tuning-report v1",
  "applied\teth0/ring.rx\t4096",
  "applied\teth0/rps.rx-0\t3",
  "previous\teth0/ring.rx\t512",
  "previous\teth0/rps.rx-0\t0",
  "warning\tfrom the host",
  "persisted\t/etc/systemd/system/net-tuning-nic-eth0.service",
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

import { NicQueues } from "../../components/nicQueues";
import { engineStdin, restoreCommand, restoreStdin } from "../../provider/host/programs";
import { throughput } from "../../provider/sizing/nic";

function promiseOf<T>(o: pulumi.Output<T>): Promise<T> {
  return (o as any).promise();
}
const conn = { host: "198.18.0.2", user: "root", privateKey: pulumi.secret("-----BEGIN OPENSSH PRIVATE KEY-----\nSECRETKEY\n") };
const byName = (n: string) => resources.filter((r) => r.name === n).slice(-1)[0];
async function registered(name: string): Promise<Recorded> {
  for (let i = 0; i < 200 && !byName(name); i++) await new Promise((r) => setTimeout(r, 10));
  const r = byName(name);
  if (!r) throw new Error(`${name} was never registered`);
  return r;
}

describe("NicQueues resource graph", () => {
  test("one component with -apply (create = update, stdin = plan) and -restore (delete only, stdin = originals)", async () => {
    const n = new NicQueues("nq", { connection: conn, interface: "eth0", rings: { rx: "max" }, rps: { cpus: "all" }, persistence: "systemd" });
    expect(await promiseOf(n.applied)).toEqual({ "eth0/ring.rx": "4096", "eth0/rps.rx-0": "3" });
    expect(await promiseOf(n.previous)).toEqual({ "eth0/ring.rx": "512", "eth0/rps.rx-0": "0" });
    expect(await promiseOf(n.persistedAs)).toBe("/etc/systemd/system/net-tuning-nic-eth0.service");
    expect(await promiseOf(n.warnings)).toEqual(["from the host"]);
    const component = byName("nq");
    expect(component.type).toBe("net-tuning:index:NicQueues");
    expect(component.inputs).toEqual({});
    const apply = await registered("nq-apply");
    const restore = await registered("nq-restore");
    expect(apply.inputs.create).toContain(" nic apply-create /var/lib/pulumi-net-tuning/incoming proj.dev.nq-");
    expect(apply.inputs.update).toBe(apply.inputs.create.replace(" nic apply-create ", " nic apply-update "));
    expect(apply.inputs.delete).toBeUndefined();
    expect(apply.inputs.addPreviousOutputInEnv).toBe(false);
    expect(apply.inputs.stdin).toContain("@kind nic\n@owner proj/dev/nq\n");
    expect(apply.inputs.stdin).toContain("@set ring.rx max\n");
    expect(restore.inputs.create).toBeUndefined();
    expect(restore.inputs.update).toBeUndefined();
    expect(restore.inputs.delete).toBe(restoreCommand("nic"));
    expect(restore.inputs.addPreviousOutputInEnv).toBe(false);
    // apply stdin = the @engine line and the plan; restore stdin = the originals, "@program" and the restore program.
    expect(apply.inputs.stdin).toBe(engineStdin(apply.inputs.stdin.split("\n").slice(1).join("\n")));
    expect(restore.inputs.stdin.split("@program\n")[0]).toMatch(/@interface eth0\n@restore 1\n@orig eth0\/ring\.rx\t512\n@orig eth0\/rps\.rx-0\t0\n$/);
    expect(restore.inputs.stdin).toBe(restoreStdin("nic", restore.inputs.stdin.split("@program\n")[0], false));
  });

  test("become sudo wraps both programs; restoreOnDelete false; a preset is merged", async () => {
    const n = new NicQueues("s", { connection: conn, interface: "ens1", become: "sudo", restoreOnDelete: false, preset: throughput() });
    await promiseOf(n.applied);
    const apply = await registered("s-apply");
    const restore = await registered("s-restore");
    expect(apply.inputs.create).toContain(` nic apply-create "$HOME"/.cache/pulumi-net-tuning proj.dev.s-`);
    expect(apply.inputs.create).toMatch(/^s=;\[ "\$\(id -u\)" = 0 \]\|\|\{ NT_E=\$\(sudo -n true 2>&1\)/);
    expect(restore.inputs.delete).toBe(restoreCommand("nic", "sudo"));
    expect(restore.inputs.stdin).toContain("@restore 0\n");
    expect(apply.inputs.stdin).toContain("@rps-only-below-cpus 1\n");
  });

  test("invalid input fails the program with every problem listed (before any SSH)", () => {
    expect(() => new NicQueues("bad", { connection: conn, interface: "eth/0", txQueueLength: -1 })).toThrow(
      /NicQueues "bad": 2 invalid inputs:\n  - interface "eth\/0" is not a valid Linux interface name.*\n  - txQueueLength must be an integer from 1 to 1000000 \(packets\)/,
    );
  });
});
