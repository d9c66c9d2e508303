/**
 * Two names of one kernel variable are one key on the host too (review 7, H2). A lab host is a network namespace,
 * where net.ipv4.ip_forward and net.ipv4.conf.all.forwarding are per namespace and one variable (devinet.c). Another
 * stack owning one name refuses the other name before anything changes (the plan's `@alias` line, read by the owner
 * check), so the second resource never records the first one's value as its original; after the owner's delete the
 * second takes the variable over with the true original, and deleting both leaves the host as it was.
 */
import * as pulumi from "@pulumi/pulumi";
import { Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { snapshot, writeSysctl } from "../../testkit/host";
import { NetTuning } from "../../components/netTuning";
import { endLine, hostProgram, readRestoreStdin } from "../../provider/host/programs";
import { planSysctls } from "../../provider/sysctl/plan";
import { ownerOf } from "../../provider/owner";
import { commands, ok, readSysctl, sysProgram, trackedStacks } from "./common";

jest.setTimeout(300000);

const FWD = "net.ipv4.ip_forward";
const ALL = "net.ipv4.conf.all.forwarding";
const DEF = "net.ipv4.conf.default.forwarding";
const FIN = "net.ipv4.tcp_fin_timeout";

let lab: Lab;
let host: LabHost;
beforeAll(async () => {
  lab = await startLab({ hosts: 1, tag: "alias" });
  host = lab.hosts[0];
}, 120000);
afterAll(async () => {
  await lab?.stop();
});

const newStack = trackedStacks();

test("the lab's kernel: ip_forward and conf.all.forwarding are one variable of the namespace (a write of either sets both and conf.default)", async () => {
  expect([await readSysctl(host, FWD), await readSysctl(host, ALL)]).toEqual(["0", "0"]);
  try {
    await writeSysctl(host, FWD, 1);
    expect([await readSysctl(host, ALL), await readSysctl(host, DEF)]).toEqual(["1", "1"]);
    await writeSysctl(host, ALL, 0);
    expect([await readSysctl(host, FWD), await readSysctl(host, DEF)]).toEqual(["0", "0"]);
  } finally {
    await writeSysctl(host, ALL, 0);
  }
});

test.each([
  [FWD, ALL],
  [ALL, FWD],
])("stack A owns %s, stack B declares %s: refused naming A and both names; nothing changed; after A's delete B takes over with the true original", async (first, second) => {
  const before = await snapshot(host);
  const a = newStack("rel", "aliasA");
  const b = newStack("rel", "aliasB");
  ok(await a.up(sysProgram(host, "first", { sysctls: { [first]: 1 } })));
  expect([await readSysctl(host, FWD), await readSysctl(host, ALL)]).toEqual(["1", "1"]);
  const mid = await snapshot(host);
  const rb = await b.up(sysProgram(host, "second", { sysctls: { [second]: 1, [FIN]: 23 } }));
  expect(rb.ok).toBe(false);
  expect(rb.runs[0].exitCode).toBe(2);
  expect(rb.error).toContain(
    `${second} is already managed by rel/aliasA/first on this host as ${first}, the same kernel variable (journal /var/lib/pulumi-net-tuning/sysctl/`,
  );
  expect(rb.error).toContain("manage it in one resource only, under one name, or remove it there first");
  expect(await snapshot(host)).toBe(mid); // B's other key was not touched either
  expect(commands(b)).toBe(0);

  // Before the fix B applied and stored 1 (A's value) as its original: destroying A then B left forwarding on.
  ok(await a.destroy());
  expect([await readSysctl(host, FWD), await readSysctl(host, ALL)]).toEqual(["0", "0"]);
  const taken = ok(await b.up(sysProgram(host, "second", { sysctls: { [second]: 1, [FIN]: 23 } })));
  expect((taken.outputs!.previous as Record<string, string>)[second]).toBe("0");
  expect(readRestoreStdin(b.get("second-restore")!.inputs.stdin as string)).toContain(`@orig ${second}\t0\n`);
  expect(await readSysctl(host, FWD)).toBe("1");
  ok(await b.destroy());
  expect([await readSysctl(host, FWD), await readSysctl(host, ALL)]).toEqual(["0", "0"]);
  expect(await snapshot(host)).toBe(before);
});

test("one stack, hosts known only at apply: the host arbitrates, one of the two names wins, the other is refused naming it", async () => {
  const before = await snapshot(host);
  const s = newStack("rel", "aliasSame");
  const r = await s.up(() => {
    new NetTuning("fwd", { connection: pulumi.output(host.connection()), sysctls: { [FWD]: 1 } });
    new NetTuning("all", { connection: pulumi.output(host.connection()), sysctls: { [ALL]: 1 } });
  });
  expect(r.ok).toBe(false);
  const applies = r.runs.filter((x) => x.name.endsWith("-apply"));
  expect(applies).toHaveLength(2);
  const winner = applies.find((x) => x.ok)!;
  const loser = applies.find((x) => !x.ok)!;
  expect(winner).toBeDefined();
  expect(loser).toBeDefined();
  const [wKey, lKey] = winner.name === "fwd-apply" ? [FWD, ALL] : [ALL, FWD];
  expect(loser.exitCode).toBe(2);
  expect(loser.error).toContain(`${lKey} is already managed by rel/aliasSame/${winner.name.replace(/-apply$/, "")} on this host as ${wKey}, the same kernel variable`);
  ok(await s.destroy());
  expect([await readSysctl(host, FWD), await readSysctl(host, ALL)]).toEqual(["0", "0"]);
  expect(await snapshot(host)).toBe(before);
});

test("a malformed @alias line is refused with exit 5 before anything changes (the engine validates what it reads)", async () => {
  const before = await snapshot(host);
  const good = planSysctls({ owner: ownerOf("rel", "aliasBad", "bad"), name: "bad", sysctls: { [FWD]: 1 } }).stdin;
  expect(good).toContain(`\n@alias ${FWD} ${ALL}\n`);
  expect((await host.exec("cat > /tmp/nt-alias-engine.sh", { stdin: hostProgram("sysctl", "apply") })).code).toBe(0);
  for (const bad of [`@alias ${FWD}`, `@alias ${FWD} *`, `@alias ${FWD}  ${ALL}`, `@alias ${FWD} ${ALL};reboot`]) {
    // framed with its end line (issue #32), so the engine parses the plan and refuses the line itself
    const plan = good.replace(`@alias ${FWD} ${ALL}`, bad);
    const r = await host.exec("sh /tmp/nt-alias-engine.sh", { stdin: `${plan}${endLine(plan)}` });
    expect([r.code, r.stderr]).toEqual([5, expect.stringContaining(`invalid @alias line '${bad.slice("@alias ".length)}'`)]);
  }
  await host.exec("rm -f /tmp/nt-alias-engine.sh");
  expect(await readSysctl(host, FWD)).toBe("0");
  expect(await snapshot(host)).toBe(before);
});

test("one resource renaming its key to the other name is refused before any change; removing it first, then adding it, keeps the true original", async () => {
  // Before: the update recorded the tuned 1 as conf.all.forwarding's original, then restoring the dropped ip_forward
  // to 0 switched forwarding off behind a successful update; the destroy then put 1 back.
  const before = await snapshot(host);
  const s = newStack("rel", "aliasRename");
  ok(await s.up(sysProgram(host, "ren", { sysctls: { [FWD]: 1, [FIN]: 24 } })));
  const mid = await snapshot(host);
  const r = await s.up(sysProgram(host, "ren", { sysctls: { [ALL]: 1, [FIN]: 24 } }));
  expect(r.ok).toBe(false);
  expect(r.runs.find((x) => x.name === "ren-apply")!.exitCode).toBe(2);
  expect(r.error).toContain(
    `${ALL} is the kernel variable this resource set as ${FWD} (journal /var/lib/pulumi-net-tuning/sysctl/`,
  );
  expect(r.error).toContain(`keep the name ${FWD}, or remove the key first (an up without it restores the original), then add it as ${ALL}`);
  expect(await snapshot(host)).toBe(mid);
  ok(await s.up(sysProgram(host, "ren", { sysctls: { [FIN]: 24 } })));
  expect(await readSysctl(host, FWD)).toBe("0");
  const t = ok(await s.up(sysProgram(host, "ren", { sysctls: { [ALL]: 1, [FIN]: 24 } })));
  expect((t.outputs!.previous as Record<string, string>)[ALL]).toBe("0");
  expect(await readSysctl(host, FWD)).toBe("1");
  ok(await s.destroy());
  expect(await readSysctl(host, FWD)).toBe("0");
  expect(await snapshot(host)).toBe(before);
});
