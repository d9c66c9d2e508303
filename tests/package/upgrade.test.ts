/**
 * Upgrading from the landed 0.1.0 (commit 1954048): the package name changed (pulumi-net-tuning → net-tuning) but
 * the type tokens did not, so a stack's URNs stay. This test evaluates the same program with the 0.1.0 components
 * and with the current ones (TypeScript helpers and declarative specs) under setMocks and compares what the engine
 * would compare: every 0.1.0 resource (type and name, hence its URN) is registered again, so nothing is deleted or
 * created anew; the one addition is the stack's engine delivery to the host (one `net-tuning-engine-<host>-<hash>`
 * CopyToRemote, shared by both resources). The `-apply` plans are the 0.1.0 plans without the program: only the
 * `@engine` line, the sysctl.d header comment, the default directives and host hints no longer written, and the NIC
 * plan's group titles differ, so the update that follows an upgrade re-applies identical values:
 * tests/engine/migration.test.ts runs it on a lab host.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import { REPO, run } from "./freshClone";
import { PACKAGE_VERSION } from "../../provider/version";
import { planOfStdin } from "../../provider/host/programs";

const V010 = "1954048";
interface Reg {
  type: string;
  name: string;
  parent?: string;
  inputs: Record<string, unknown>;
}
let regs: Reg[] = [];
pulumi.runtime.setMocks(
  {
    newResource(args) {
      regs.push({ type: args.type, name: args.name, inputs: args.inputs });
      // an -apply prints a complete (empty) report: one that printed nothing is refused as a damaged engine
      return { id: `${args.name}-id`, state: { ...args.inputs, stdout: args.name.endsWith("-apply") ? "net-tuning-report v1\nend\n" : "" } };
    },
    call: (args) => args.inputs,
  },
  "fleet",
  "prod",
  false,
);

let old: { NetTuning: any; NicQueues: any; longFatFlows: any; throughput: any };
let tmp = "";
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "net-tuning-upgrade-"));
  const dir = path.join(tmp, "v010");
  fs.mkdirSync(dir);
  // The 0.1.0 tree as committed (no worktree metadata is added to the repository).
  run("sh", ["-c", `git -C "${REPO}" archive ${V010} | tar -x -C "${dir}"`], { cwd: REPO, timeout: 60_000 });
  fs.symlinkSync(path.join(REPO, "node_modules"), path.join(dir, "node_modules"));
  old = require(path.join(dir, "index.ts"));
});
afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const connection = { host: "203.0.113.10", user: "ops", privateKey: pulumi.secret("KEY") };

/** Runs a program, waits for every registration, returns them in a stable order. */
async function evaluate(program: () => pulumi.Resource[]): Promise<Reg[]> {
  regs = [];
  const roots = program();
  await Promise.all(roots.map((r) => new Promise<void>((res) => pulumi.all([r.urn, (r as any).applied]).apply(() => res()))));
  for (let i = 0; i < 200 && regs.filter((r) => r.type === "command:remote:Command").length < 4; i++) await new Promise((r) => setTimeout(r, 10));
  return [...regs].sort((a, b) => (a.name < b.name ? -1 : 1));
}

function program(m: { NetTuning: any; NicQueues: any }, profile: unknown, preset: unknown): () => pulumi.Resource[] {
  return () => {
    const sys = new m.NetTuning("edge", { connection, become: "sudo", profile, sysctls: { "net.core.somaxconn": 65535 } });
    const nic = new m.NicQueues("edge-nic", { connection, become: "sudo", interface: "ens1f0", preset, coalesce: { adaptiveRx: false, rxUsecs: 10 }, persistence: "systemd" }, { dependsOn: [sys] });
    return [sys, nic];
  };
}

test("the 0.1.0 program's resources are all registered again (same URNs); one engine delivery is the only addition; the plans are the same", async () => {
  const opts = { bandwidth: "10Gbit", rtt: "40ms", concurrency: 2000, memory: "128GiB" };
  const before = await evaluate(program(old, old.longFatFlows(opts), old.throughput()));
  const current = require("../../index");
  const after = await evaluate(program(current, current.longFatFlows(opts), current.throughput()));
  const specs = await evaluate(program(current, { name: "longFatFlows", ...opts }, { name: "throughput" }));
  const ids = (rs: Reg[]) => rs.map((r) => `${r.type}::${r.name}`).sort();
  expect(ids(before)).toEqual([
    "command:remote:Command::edge-apply",
    "command:remote:Command::edge-nic-apply",
    "command:remote:Command::edge-nic-restore",
    "command:remote:Command::edge-restore",
    "net-tuning:index:NetTuning::edge",
    "net-tuning:index:NicQueues::edge-nic",
  ]);
  const added = ids(after).filter((id) => !ids(before).includes(id));
  expect(added).toEqual([expect.stringMatching(/^command:remote:CopyToRemote::net-tuning-engine-203\.0\.113\.10-[0-9a-f]{8}$/)]);
  expect(ids(after).length).toBe(ids(before).length + 1);
  // The reviewable plan: 0.1.0's stdin up to "@program" = today's stdin after its "@engine" line, but for the
  // version that 0.1.0 wrote into the sysctl.d header (today's header names none, so upgrades leave the file alone).
  // Known one-time differences (the upgrade's update shows them; no directive or value line changes): the engine's
  // defaults (`@persist 1`, `@boot-override error`) and the host hints are no longer written into the plan, the
  // file's two header comment lines became one, and the NIC plan's group titles (comment lines) are shorter.
  const nicTitlesOut = (s: string) => (/^@kind nic$/m.test(s) ? s.split("\n").filter((l) => !l.startsWith("# ")).join("\n") : s);
  const plan010 = (r: Reg) =>
    nicTitlesOut(
      String(r.inputs.stdin).split("\n@program\n")[0]
        .replace(/^# pulumi-net-tuning 0\.1\.0: managed by Pulumi resource .*\n# Manual edits are overwritten; deleting the resource restores the previous values\.$/m, "# Managed by Pulumi: edits are overwritten.")
        .split("\n").filter((l) => !/^@persist 1$|^@boot-override error$|^@hint /.test(l)).join("\n"),
    );
  // today's plan: the stdin without its "@engine" line and (since issue #32) its "@end <sha256>" line
  const planNow = (r: Reg) => nicTitlesOut(planOfStdin(String(r.inputs.stdin)).replace(/\n$/, ""));
  for (const name of ["edge-apply", "edge-nic-apply"]) {
    const b = before.find((r) => r.name === name)!;
    const a = after.find((r) => r.name === name)!;
    expect(String(a.inputs.stdin).split("\n")[0]).toMatch(new RegExp(`^@engine ${PACKAGE_VERSION.replace(/\./g, "\\.")} [0-9a-f]{64}$`));
    expect(planNow(a)).toBe(plan010(b));
    expect(planNow(a)).not.toBe(String(b.inputs.stdin).split("\n@program\n")[0]); // the normalisation is needed (not a no-op)
  }
  // The declarative specs render the same registrations (the engine's FileAsset compared by its path).
  const comparable = (rs: Reg[]) => rs.map((r) => ({ ...r, inputs: { ...r.inputs, source: r.inputs.source === undefined ? undefined : "FileAsset" } }));
  // (The engine delivery is registered once per program run: this process evaluates three programs without a stack
  // resource, so the third reuses the second's delivery; its commands name the same delivery token, compared here.)
  const withoutDelivery = (rs: Reg[]) => rs.filter((r) => r.type !== "command:remote:CopyToRemote");
  expect(comparable(withoutDelivery(specs))).toEqual(comparable(withoutDelivery(after)));
  expect(withoutDelivery(specs).length).toBe(6);
});
