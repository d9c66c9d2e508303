/**
 * The confirmed apply's TypeScript side (issue #34): the check at preview (the minimum timeout from the soak and the
 * connection's dial budget), the plan lines (none without `confirm`: plans are byte for byte what they were, NicQueues'
 * default included), the -confirm child (registered only when a confirm can happen; its command and stdin only after
 * an apply that armed a revert) and the report's `confirm` line.
 */
import * as pulumi from "@pulumi/pulumi";
import { SYSCTL_REPORT } from "./fixtures/report";
import { mockCommands, promiseOf, settleAfterAll } from "../../testkit/mocks";

// the fixture's report with a revert armed (token, deadline) as the engine prints it before "end"
const ARMED = SYSCTL_REPORT.report.replace(/^end$/m, "confirm\t0123abcd\t1796594412\nend");
const { registered, resources } = mockCommands(ARMED);
settleAfterAll();

import { checkConfirm, confirmOf, dialBudget, utc } from "../../provider/confirm";
import { confirmCommand } from "../../provider/host/programs";
import { parseReport } from "../../provider/report";
import { NetTuning } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";

const conn = { host: "198.18.0.2", user: "root", privateKey: pulumi.secret("-----BEGIN OPENSSH PRIVATE KEY-----\nSECRETKEY\n") };
let hosts = 10;
const another = () => ({ ...conn, host: `198.18.1.${hosts++}` });

test("the dial budget: pulumi-command's defaults (10 × 15 s), the connection's own values, a proxy's added, -1 none", () => {
  expect(dialBudget(undefined)).toBe(150);
  expect(dialBudget({ host: "h" })).toBe(150);
  expect(dialBudget({ host: "h", dialErrorLimit: 2, perDialTimeout: 5 })).toBe(10);
  expect(dialBudget({ host: "h", dialErrorLimit: 3, proxy: { host: "b", perDialTimeout: 4 } })).toBe(45 + 40);
  expect(dialBudget({ host: "h", dialErrorLimit: -1 })).toBeUndefined();
  // an Output (every property another Output): the defaults, no recursion
  expect(dialBudget(pulumi.output({ host: "h", dialErrorLimit: 1 }))).toBe(150);
});

test("checks at preview: the minimum is the soak plus the dial budget, named with the fix", () => {
  const sys = (v: unknown, soak = 0, connection: unknown = { host: "h" }) => checkConfirm(v, { kind: "sysctl", soak, connection, nicDefault: false });
  expect(sys(undefined)).toEqual({ problems: [], lines: [], on: false });
  expect(sys({ timeoutSeconds: 150 })).toEqual({ problems: [], lines: ["@confirm 150"], on: true });
  expect(sys({ timeoutSeconds: 149 }).problems).toEqual([
    "confirm.timeoutSeconds 149 is shorter than the connection's dial budget (150 s: dialErrorLimit × perDialTimeout): the host could revert while the confirm is still dialing. Fix: confirm.timeoutSeconds ≥ 150, or lower connection.dialErrorLimit / perDialTimeout",
  ]);
  expect(sys({ timeoutSeconds: 170 }, 30).problems[0]).toMatch(/^confirm\.timeoutSeconds 170 is shorter than the verify gate's soak \(30 s\) plus the connection's dial budget \(150 s: .*Fix: confirm\.timeoutSeconds ≥ 180,/);
  expect(sys({ timeoutSeconds: 20 }, 10, { host: "h", dialErrorLimit: 2, perDialTimeout: 5 }).lines).toEqual(["@confirm 20"]);
  expect(sys({ timeoutSeconds: 0 })).toEqual({ problems: [], lines: [], on: false });
  expect(sys(false)).toEqual({ problems: [], lines: [], on: false });
  for (const bad of [{ timeoutSeconds: 1.5 }, { timeoutSeconds: "300" }, { timeout: 300 }, { timeoutSeconds: 86_401 }, true]) {
    expect(sys(bad).problems).toEqual([expect.stringMatching(/^confirm .* is not valid: write \{ timeoutSeconds: N \} \(whole seconds, 0 to 86400; 0 turns the confirm off\)/)]);
  }
  expect(sys({ timeoutSeconds: 300 }, 0, { host: "h", dialErrorLimit: -1 }).problems[0]).toMatch(/dials forever \(dialErrorLimit -1\)/);
});

test("NicQueues: on by default with channels, rings or features, decided on the host (no plan line unless the dial budget needs more); off writes @confirm off", () => {
  const nic = (v: unknown, nicDefault: boolean, soak = 0, connection: unknown = { host: "h" }) => checkConfirm(v, { kind: "nic", soak, connection, nicDefault });
  expect(nic(undefined, true)).toEqual({ problems: [], lines: [], on: true });
  expect(nic(undefined, true, 60)).toEqual({ problems: [], lines: [], on: true }); // the host's max(120, 60 + 150)
  expect(nic(undefined, true, 0, { host: "h", perDialTimeout: 30 })).toEqual({ problems: [], lines: ["@confirm 300"], on: true });
  expect(nic(undefined, false)).toEqual({ problems: [], lines: [], on: false });
  expect(nic({ timeoutSeconds: 0 }, true)).toEqual({ problems: [], lines: ["@confirm off"], on: false });
  expect(nic(false, true)).toEqual({ problems: [], lines: ["@confirm off"], on: false });
  expect(nic({ timeoutSeconds: 200 }, false)).toEqual({ problems: [], lines: ["@confirm 200"], on: true });
});

test("the report's confirm line, the UTC time, the confirm's command", () => {
  const r = parseReport(ARMED);
  expect(confirmOf(r.extra)).toEqual({ token: "0123abcd", deadline: 1796594412 });
  expect(confirmOf(parseReport(SYSCTL_REPORT.report).extra)).toBeUndefined();
  expect(utc(1796594412)).toBe("2026-12-06T22:00:12Z");
  expect(() => confirmCommand("sysctl", "a b", "0123")).toThrow();
  expect(() => confirmCommand("sysctl", "proj.dev.web-1234", "0123;x")).toThrow();
  const cmd = confirmCommand("sysctl", "proj.dev.web-1234", "0123abcd");
  expect(cmd).toMatch(/^\/bin\/sh -c 'e=\/usr\/local\/lib\/pulumi-net-tuning\/engine-[0-9a-f]{64}\.sh;\[ -O \$e \]\|\|.*exec \/bin\/sh \$e sysctl confirm:proj\.dev\.web-1234:0123abcd'$/);
  expect(cmd.length).toBeLessThan(300); // stored twice per resource
  // with become "sudo": root's command under sudo -n unless root (tests/safety/sudo.test.ts runs it)
  expect(confirmCommand("nic", "proj.dev.q-1", "0123abcd", undefined, "sudo")).toBe(`[ -O / ]||set -- sudo -n;"$@" ${confirmCommand("nic", "proj.dev.q-1", "0123abcd")}`);
});

describe("the confirm under mocks: the -restore child's create", () => {
  test("NetTuning with confirm: after an armed apply, -restore (depends on -apply) gets the confirm as its create; the plan has the line; no child more", async () => {
    const t = new NetTuning("webc", { connection: another(), sysctls: { "net.core.somaxconn": 4096 }, confirm: { timeoutSeconds: 300 } });
    const apply = await registered("webc-apply");
    const restore = await registered("webc-restore");
    expect(apply.inputs.stdin).toMatch(/\n@confirm 300\n@content\n/);
    expect(restore.inputs.create).toMatch(/ sysctl confirm:proj\.dev\.webc-[0-9a-f]+:0123abcd'$/);
    expect(restore.inputs.create).toBe(confirmCommand("sysctl", restore.inputs.create.split("confirm:")[1].split(":")[0], "0123abcd"));
    expect(restore.inputs.addPreviousOutputInEnv).toBe(false);
    expect(restore.inputs.update).toBeUndefined();
    expect(restore.inputs.delete).toMatch(/net-tuning-in/);
    expect(await promiseOf(t.applied)).toBeDefined();
    expect(resources.filter((r) => /-confirm$/.test(r.name))).toEqual([]);
  });

  test("no confirm: -restore as before (delete only), no line (NetTuning by default, NicQueues without channels/rings/features or with timeoutSeconds 0)", async () => {
    new NetTuning("webn", { connection: another(), sysctls: { "net.core.somaxconn": 4096 } });
    new NicQueues("nqn", { connection: another(), interface: "eth0", txQueueLength: 2000 });
    new NicQueues("nqo", { connection: another(), interface: "eth0", channels: { combined: 2 }, confirm: { timeoutSeconds: 0 } });
    expect((await registered("webn-apply")).inputs.stdin).not.toContain("@confirm");
    expect((await registered("nqn-apply")).inputs.stdin).not.toContain("@confirm");
    expect((await registered("nqo-apply")).inputs.stdin).toContain("\n@confirm off\n");
    for (const n of ["webn", "nqn", "nqo"]) {
      const r = await registered(`${n}-restore`);
      expect([n, r.inputs.create, r.inputs.addPreviousOutputInEnv]).toEqual([n, undefined, undefined]);
    }
  });

  test("NicQueues with channels: on by default, the plan without a confirm line (byte for byte as before); a report that armed nothing sets no command", async () => {
    new NicQueues("nqd", { connection: another(), interface: "eth0", channels: { combined: 2 } });
    expect((await registered("nqd-apply")).inputs.stdin).not.toContain("@confirm");
    const r = await registered("nqd-restore");
    // the mock host's report (a NicQueues in a file of NetTuning reports) armed nothing: no command, nothing runs
    expect(r.inputs.create).toBeUndefined();
    expect(r.inputs.addPreviousOutputInEnv).toBeUndefined();
  });

  test("a timeout below the dial budget fails the program before anything is registered", () => {
    expect(() => new NetTuning("webbad", { connection: another(), sysctls: { "net.core.somaxconn": 4096 }, confirm: { timeoutSeconds: 60 } })).toThrow(
      /confirm\.timeoutSeconds 60 is shorter than the connection's dial budget \(150 s/,
    );
  });
});
