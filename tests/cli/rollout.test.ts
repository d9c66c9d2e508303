/**
 * The rollout helper (issue #34, "Rollout helper") under the real `pulumi` CLI on 10 lab hosts: a canary of 1, waves
 * of 3, a failure budget of 1. Nothing is faked on the hosts: host 4 refuses the change (a later sysctl.d file sets the
 * key to another value: its boot-order check) and host 6 fails it (a read-only /etc/sysctl.d: the file cannot be
 * written, the engine rolls the value back).
 *  - the first `up` applies the canary and wave 1 (host 4 refused: 1 failure, within the budget), wave 2 (host 6 failed:
 *    2 failures), and its budget check halts: `up` fails, the log names every host's status, the hosts of wave 3 see no
 *    SSH session; hosts 4 and 6 hold their original values;
 *  - a second `up` runs hosts 4 and 6 again (they fail again), halts again, and wave 3 stays untouched;
 *  - `resume` with the halt's id goes on: wave 3 applied, statuses in the stack outputs;
 *  - hosts 4 and 6 fixed: the next `up` applies them (a first apply that failed is run again);
 *  - an update that fails on an applied host (host 2) and a gated rollback (host 3) keep their originals: destroy puts
 *    every host back as it was;
 *  - a confirm that arrives after the host reverted: status unconfirmed, a halt, the plan held;
 *  - a host with a NicQueues that fails (read-only rc.local) and a NetTuning that applies: the host counts as failed.
 */
import { CliProject, clearSessions, countKinds, logSessions, providerLabel, sessions, toolchain } from "../../testkit/cli";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

jest.setTimeout(900_000);

const N = 10;
let hosts: LabHost[] = [];
useLab("clirollout", N, async (hs) => {
  toolchain();
  hosts = hs;
  for (const h of hosts) await logSessions(h);
});

const PROGRAM = `"use strict";
const pulumi = require("@pulumi/pulumi");
const { NetTuning, NicQueues, rollout } = require("net-tuning");
const cfg = new pulumi.Config();
const privateKey = cfg.requireSecret("privateKey");
const hosts = JSON.parse(cfg.require("hosts"));
const verify = cfg.getObject("verify") || {}; // host name → a verify gate for that host
const confirm = cfg.getObject("confirm") || {}; // host name → a confirm for that host
const nic = cfg.getObject("nic") || {}; // host name → NicQueues arguments for that host (besides its NetTuning)
const r = rollout(hosts, JSON.parse(cfg.require("rollout")), (h, ctx) => [
  ...(nic[h.name] ? [new NicQueues("nic-" + h.name, { connection: { host: h.host, port: h.port, user: h.user, privateKey }, ...nic[h.name] }, ctx.opts)] : []),
  new NetTuning("web-" + h.name, {
    connection: { host: h.host, port: h.port, user: h.user, privateKey, ...(cfg.getObject("dial") || {}) },
    sysctls: { "net.core.somaxconn": cfg.requireNumber("somaxconn"), ...((cfg.getObject("extra") || {})[h.name] || {}) },
    ...(verify[h.name] ? { verify: verify[h.name] } : {}),
    ...(confirm[h.name] ? { confirm: confirm[h.name] } : {}),
  }, ctx.opts)]);
module.exports = { waves: r.waves, statuses: r.statuses, summary: r.summary };
`;

/** The same NetTuning per host, outside a rollout (a resource that joins one later keeps its URN). */
const PLAIN = `"use strict";
const pulumi = require("@pulumi/pulumi");
const { NetTuning } = require("net-tuning");
const cfg = new pulumi.Config();
const privateKey = cfg.requireSecret("privateKey");
for (const h of JSON.parse(cfg.require("hosts"))) {
  new NetTuning("web-" + h.name, { connection: { host: h.host, port: h.port, user: h.user, privateKey }, sysctls: { "net.core.somaxconn": cfg.requireNumber("somaxconn") } });
}
`;
const SOMAX = "/proc/sys/net/core/somaxconn";
const OVERRIDE = "/etc/sysctl.d/99-zz-local.conf";
const label = (i: number) => `h${i + 1}`;
const somax = async (h: LabHost) => (await h.exec(`cat ${SOMAX}`)).stdout.trim();
/** What a destroy must give back on a host: the value, /etc/sysctl.d, the engine's state and records. */
async function snapshot(h: LabHost): Promise<string> {
  return (await h.exec(`cat ${SOMAX}; find /etc/sysctl.d -mindepth 1 -printf '%p %m %s\\n' | sort; cat /etc/sysctl.d/* 2>/dev/null | cksum; find /var/lib/pulumi-net-tuning /var/lib/pulumi-net-tuning-converged -name '*web*' 2>/dev/null | sort`)).stdout;
}
const readOnlySysctlD = (h: LabHost) => h.exec("mount --bind /etc/sysctl.d /etc/sysctl.d && mount -o remount,bind,ro /etc/sysctl.d");
const writableSysctlD = (h: LabHost) => h.exec("umount /etc/sysctl.d");
async function applySessions(): Promise<number[]> {
  const out: number[] = [];
  for (const h of hosts) out.push((await sessions(h)).filter((s) => s.kind !== "live-read").length);
  return out;
}
/** NT_DOCS_OUT=<dir>: each run's CLI output written there (for docs/safe-rollout.md), named by the test's step. */
function keep(step: string, r: { stdout: string; stderr: string }): void {
  const dir = process.env.NT_DOCS_OUT;
  if (dir) fs.writeFileSync(path.join(dir, `${step}.txt`), `${r.stdout}${r.stderr ? `\n--- stderr\n${r.stderr}` : ""}`);
}
/** Destroys the stack and expects `h` byte for byte as in `snap`. */
async function destroyedAs(p: CliProject, h: LabHost, snap: string): Promise<void> {
  const d = await p.destroy();
  expect(d.code).toBe(0);
  expect(await snapshot(h)).toBe(snap);
}
/** The `hosts` config of one host (the program's list, with h<i+1> as its name). */
const oneHost = (i: number) => JSON.stringify([{ name: label(i), ...(({ host, port, user }) => ({ host, port, user }))(hosts[i].connection("root")) }]);
async function clearAll(): Promise<void> {
  for (const h of hosts) await clearSessions(h);
}

describe(`rollout helper, 10 hosts, real pulumi CLI + ${providerLabel()}`, () => {
  let p: CliProject;
  let originals: string[];
  let before: string[];
  let haltId = "";

  beforeAll(async () => {
    originals = await Promise.all(hosts.map(somax));
    // host 4 holds a later sysctl.d file of its own (kept: not ours), host 6 a read-only /etc/sysctl.d
    expect((await hosts[3].exec(`printf 'net.core.somaxconn = 777\\n' > ${OVERRIDE}`)).code).toBe(0);
    before = await Promise.all(hosts.map(snapshot));
    expect((await readOnlySysctlD(hosts[5])).code).toBe(0);
    const c = hosts[0].connection("root");
    p = new CliProject({
      name: "rollout",
      program: PROGRAM,
      config: {
        hosts: JSON.stringify(hosts.map((h, i) => ({ name: label(i), ...(({ host, port, user }) => ({ host, port, user }))(h.connection("root")) }))),
        rollout: JSON.stringify({ canary: 1, waveSize: 3, maxFailures: 1, bakeSeconds: 1 }),
        somaxconn: "2222",
      },
      secrets: { privateKey: c.privateKey },
    });
    await p.init();
    await clearAll();
  });
  afterAll(async () => {
    await writableSysctlD(hosts[5]).catch(() => undefined);
    await writableSysctlD(hosts[1]).catch(() => undefined);
    await hosts[8].exec("umount /etc/rc.local 2>/dev/null; true").catch(() => undefined);
    await writableSysctlD(hosts[6]).catch(() => undefined);
    if (p) {
      await p.destroy().catch(() => undefined);
      p.remove();
    }
  });

  it("halts after the wave that exceeds the fleet's budget; later waves see no session", async () => {
    const r = await p.up({ skipPreview: true });
    keep("1-halt", r);
    const out = r.stdout + r.stderr;
    expect(r.code).not.toBe(0);
    expect(out).toContain(`rollout "rollout" halted after wave 2: 2 host(s) not applied, the budget is 1 (maxFailures). Later waves were not started.`);
    // every host named with its status, wave by wave
    expect(out).toMatch(/canary {2}h1 {2}applied/);
    expect(out).toMatch(/wave 1 {2}h4 {2}refused {2}.*99-zz-local\.conf/);
    expect(out).toMatch(/wave 2 {2}h6 {2}failed {2}/);
    for (const h of ["h2", "h3", "h5", "h7"]) expect(out).toMatch(new RegExp(`wave [12]  ${h}  applied`));
    for (const h of ["h8", "h9", "h10"]) expect(out).toMatch(new RegExp(`wave 3  ${h}  not started`));
    haltId = /resume: "(wave-2-[0-9a-f]{8})"/.exec(out)?.[1] ?? "";
    expect(haltId).not.toBe("");
    const now = await Promise.all(hosts.map(somax));
    expect(now).toEqual(hosts.map((_, i) => ([0, 1, 2, 4, 6].includes(i) ? "2222" : originals[i])));
    const s = await applySessions();
    expect(s.slice(7)).toEqual([0, 0, 0]); // wave 3: not even a live read or an engine copy
    for (const i of [7, 8, 9]) expect(await sessions(hosts[i])).toEqual([]);
    for (const i of [3, 5]) expect(await snapshot(hosts[i])).toContain(`${originals[i]}\n`);
  });

  it("a second up runs the failed hosts again, halts again, and leaves wave 3 untouched", async () => {
    await clearAll();
    const r = await p.up({ skipPreview: true });
    keep("2-halt-again", r);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain(`set resume: "${haltId}"`);
    const applies = (await Promise.all(hosts.map(sessions))).map((l) => countKinds(l).apply ?? 0);
    // hosts 4 and 6 (their first apply failed: the live read finds the marker) run again; the applied ones do not
    expect(applies).toEqual([0, 0, 0, 1, 0, 1, 0, 0, 0, 0]);
    for (const i of [7, 8, 9]) expect(await sessions(hosts[i])).toEqual([]);
    expect(await Promise.all(hosts.slice(7).map(somax))).toEqual(originals.slice(7));
  });

  it("resume with the halt's id goes on; the statuses are stack outputs", async () => {
    await p.setConfig("rollout", JSON.stringify({ canary: 1, waveSize: 3, maxFailures: 1, bakeSeconds: 1, resume: haltId }));
    const r = await p.up({ skipPreview: true });
    keep("3-resume", r);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`rollout "rollout": every wave ran`);
    // the summary marks the two failures the resume excused
    expect(r.stdout).toMatch(/wave 1 {2}h4 {2}refused \(excused by resume\) {2}net\.core\.somaxconn = 2222 is overridden at boot/);
    expect(r.stdout).toMatch(/wave 2 {2}h6 {2}failed \(excused by resume\) {2}cannot write \/etc\/sysctl\.d\//);
    expect(await Promise.all(hosts.slice(7).map(somax))).toEqual(["2222", "2222", "2222"]);
    const o = await p.outputs();
    expect(o.statuses).toEqual(Object.fromEntries(hosts.map((_, i) => [label(i), i === 3 ? "refused" : i === 5 ? "failed" : "applied"])));
    expect(o.waves).toEqual([["h1"], ["h2", "h3", "h4"], ["h5", "h6", "h7"], ["h8", "h9", "h10"]]);
    // state: a budget check per wave, small: its create is a comment and a timer (a halted one stores nothing), its
    // dependencies the resources of its own wave only (not every host so far: components/rollout.ts detached)
    const e = await p.export();
    const checks = (e.json.deployment.resources ?? []).filter((x) => (x as { type?: string }).type === "command:local:Command").map((x) => JSON.stringify(x).length);
    console.log(`rollout state: ${checks.length} budget checks, ${checks.join(", ")} bytes each (export JSON)`);
    expect(checks.length).toBe(4);
    checks.forEach((b, w) => expect(b).toBeLessThan(1300 + 250 * (w === 0 ? 1 : 3)));
  });

  it("hosts fixed: the next up applies them", async () => {
    expect((await hosts[3].exec(`rm ${OVERRIDE}`)).code).toBe(0);
    expect((await writableSysctlD(hosts[5])).code).toBe(0);
    await clearAll();
    const r = await p.up({ skipPreview: true });
    expect(r.code).toBe(0);
    expect(await Promise.all(hosts.map(somax))).toEqual(hosts.map(() => "2222"));
    expect((await p.outputs()).statuses).toEqual(Object.fromEntries(hosts.map((_, i) => [label(i), "applied"])));
    expect(await applySessions()).toEqual([0, 0, 0, 1, 0, 1, 0, 0, 0, 0]);
    // the checks after the waves that changed a host run again and bake; the canary's does not
    expect(r.stdout).not.toMatch(/rollout-check-canary updat/);
    for (const w of [1, 2]) {
      const m = new RegExp(`rollout-check-wave-${w} updated \\((\\d+(?:\\.\\d+)?)(m?s)\\)`).exec(r.stdout);
      expect(m).not.toBeNull();
      expect(Number(m![1]) * (m![2] === "ms" ? 0.001 : 1)).toBeGreaterThanOrEqual(1);
    }
  });

  it("an update that fails on one host and is rolled back by its gate on another keeps their originals; destroy gives every host back", async () => {
    expect((await readOnlySysctlD(hosts[1])).code).toBe(0);
    // host 3: a gate no host passes (its own SSH session is an established TCP connection): rolled back by the gate
    await p.setConfig("verify", JSON.stringify({ h3: { soakSeconds: 1, maxLevel: { "Tcp.CurrEstab": 0 } } }));
    await p.setConfig("rollout", JSON.stringify({ canary: 1, waveSize: 3, maxFailures: 2, bakeSeconds: 1 }));
    await p.setConfig("somaxconn", "3333");
    const pv = await p.preview({ diff: true });
    keep("5-preview", pv);
    const r = await p.up({ skipPreview: true });
    keep("5-gate", r);
    if (r.code !== 0) throw new Error(`up failed:\n${r.stdout}\n${r.stderr}`); // two failures: within the budget
    expect(await Promise.all(hosts.map(somax))).toEqual(hosts.map((_, i) => (i === 1 || i === 2 ? "2222" : "3333")));
    const st = (await p.outputs()).statuses as Record<string, string>;
    expect([st.h2, st.h3]).toEqual(["failed", "rolledBack"]);
    expect(r.stdout).toContain("verify gate failed on");
    expect((await writableSysctlD(hosts[1])).code).toBe(0);
    // host 4's own file back as it was at the start
    expect((await hosts[3].exec(`printf 'net.core.somaxconn = 777\\n' > ${OVERRIDE}`)).code).toBe(0);
    const d = await p.destroy();
    expect(d.code).toBe(0);
    expect(await Promise.all(hosts.map(snapshot))).toEqual(before);
  });

  it("a confirm that arrives after the host reverted: status unconfirmed, the budget check halts; the next up holds the plan", async () => {
    // one host (h10) in a rollout of its own; the confirm held by the stand-in until the host reverted by itself
    const h = hosts[9];
    const was = await somax(h);
    const snap = await snapshot(h);
    await p.setConfig("hosts", oneHost(9));
    await p.setConfig("verify", "{}");
    await p.setConfig("dial", JSON.stringify({ dialErrorLimit: 2, perDialTimeout: 5 }));
    await p.setConfig("confirm", JSON.stringify({ h10: { timeoutSeconds: 12 } }));
    await p.setConfig("rollout", JSON.stringify({ canary: 0, waveSize: 1 }));
    await p.setConfig("somaxconn", "4444");
    const hold = path.join(os.tmpdir(), `nt-rollout-hold-${process.pid}`);
    fs.writeFileSync(hold, "");
    const upping = p.up({ skipPreview: true, env: { NT_STANDIN_HOLD: `web-h10-restore=${hold}` } });
    // applied and armed, then reverted by the host itself at the deadline
    let applied = false;
    for (let i = 0; i < 600 && !applied; i++) {
      await new Promise((r) => setTimeout(r, 100));
      applied = (await somax(h)) === "4444";
    }
    expect(applied).toBe(true);
    let reverted = false;
    for (let i = 0; i < 300 && !reverted; i++) {
      await new Promise((r) => setTimeout(r, 100));
      reverted = (await somax(h)) === was;
    }
    expect(reverted).toBe(true);
    fs.rmSync(hold);
    const r = await upping;
    const out = r.stdout + r.stderr;
    expect(r.code).not.toBe(0);
    expect(out).toMatch(/rollout "rollout" halted after wave 1: 1 host\(s\) not applied, the budget is 0/);
    expect(out).toMatch(/wave 1 {2}h10 {2}unconfirmed {2}not confirmed: the host \S+ reverted this apply at/);
    expect(await somax(h)).toBe(was);
    // the next up: the host holds the reverted plan (no change), the status stays, the check halts again
    const again = await p.up({ skipPreview: true });
    expect(again.code).not.toBe(0);
    expect(again.stdout + again.stderr).toMatch(/wave 1 {2}h10 {2}unconfirmed/);
    expect(await somax(h)).toBe(was);
    await destroyedAs(p, h, snap);
  });

  it("a host with a NetTuning and a NicQueues: its status is the worse of the two; fixed, the next up applies both", async () => {
    const h = hosts[8];
    const snap = await snapshot(h);
    const txq = (await h.exec(`cat /sys/class/net/${h.iface}/tx_queue_len`)).stdout.trim();
    await p.setConfig("hosts", oneHost(8));
    await p.setConfig("confirm", "{}");
    await p.setConfig("nic", JSON.stringify({ h9: { interface: h.iface, txQueueLength: 2345 } }));
    await p.setConfig("rollout", JSON.stringify({ canary: 1, waveSize: 1 }));
    await p.setConfig("somaxconn", "5555");
    // NicQueues persists in rc.local (no systemd on a lab host): a read-only /etc/rc.local makes it fail and roll back
    expect((await h.exec("touch /etc/rc.local && mount --bind /etc/rc.local /etc/rc.local && mount -o remount,bind,ro /etc/rc.local")).code).toBe(0);
    const r = await p.up({ skipPreview: true });
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/halted after the canary: 1 host\(s\) not applied, the budget is 0/);
    expect(r.stdout + r.stderr).toMatch(/canary {2}h9 {2}failed {2}.*rc\.local/);
    expect((await h.exec(`cat /sys/class/net/${h.iface}/tx_queue_len`)).stdout.trim()).toBe(txq); // rolled back
    expect(await somax(h)).toBe("5555"); // its NetTuning applied
    expect((await h.exec("umount /etc/rc.local && rm /etc/rc.local")).code).toBe(0);
    const ok = await p.up({ skipPreview: true });
    if (ok.code !== 0) throw new Error(`up failed:\n${ok.stdout}\n${ok.stderr}`);
    expect((await h.exec(`cat /sys/class/net/${h.iface}/tx_queue_len`)).stdout.trim()).toBe("2345");
    expect((await p.outputs()).statuses).toEqual({ h9: "applied" });
    await destroyedAs(p, h, snap);
    expect((await h.exec(`cat /sys/class/net/${h.iface}/tx_queue_len`)).stdout.trim()).toBe(txq);
  });

  it("a host whose live read finds what its preflight refuses: the preview warns instead of failing, up counts it as refused", async () => {
    // h8 is a network namespace: the host-wide net.core.netdev_max_backlog is absent there
    const h = hosts[7];
    const snap = await snapshot(h);
    await p.setConfig("hosts", oneHost(7));
    await p.setConfig("nic", "{}");
    await p.setConfig("extra", JSON.stringify({ h8: { "net.core.netdev_max_backlog": 30000 } }));
    await p.setConfig("rollout", JSON.stringify({ canary: 0, waveSize: 1, maxFailures: 1 }));
    const pv = await p.preview();
    expect([pv.code, pv.stdout + pv.stderr]).toEqual([0, expect.stringContaining('(inside a rollout: the host will refuse this change and count as "refused")')]);
    expect(pv.stdout + pv.stderr).toContain("net.core.netdev_max_backlog");
    const r = await p.up({ skipPreview: true });
    if (r.code !== 0) throw new Error(`up failed:\n${r.stdout}\n${r.stderr}`); // one failure: within the budget
    expect((await p.outputs()).statuses).toEqual({ h8: "refused" });
    expect(r.stdout).toMatch(/wave 1 {2}h8 {2}refused {2}.*net\.core\.netdev_max_backlog/);
    expect(await somax(h)).toBe(originals[7]); // nothing changed
    await destroyedAs(p, h, snap);
  });

  it("not tolerated: an update whose host kept no report (the resource joined the rollout) or a cut one fails up as outside a rollout; nothing is lost", async () => {
    const h = hosts[6];
    const snap = await snapshot(h);
    await p.setConfig("hosts", oneHost(6));
    await p.setConfig("extra", "{}");
    await p.setConfig("rollout", JSON.stringify({ canary: 0, waveSize: 1, maxFailures: 1 }));
    await p.setConfig("somaxconn", "6000");
    // applied outside a rollout first (same resource name: the same URN)
    p.setProgram(PLAIN);
    const plain = await p.up({ skipPreview: true });
    if (plain.code !== 0) throw new Error(`up failed:\n${plain.stdout}\n${plain.stderr}`);
    expect(await somax(h)).toBe("6000");
    p.setProgram(PROGRAM);
    // an update of `value` that fails on the read-only /etc/sysctl.d: up fails, not a halt; the host keeps `kept`
    const failsOutright = async (value: string, kept: string) => {
      expect((await readOnlySysctlD(h)).code).toBe(0);
      await p.setConfig("somaxconn", value);
      const r = await p.up({ skipPreview: true });
      expect(r.code).not.toBe(0);
      expect(r.stdout + r.stderr).toContain("cannot write /etc/sysctl.d/90-net-tuning-web-h7.conf");
      expect(r.stdout + r.stderr).not.toContain("halted");
      expect(await somax(h)).toBe(kept);
      expect((await writableSysctlD(h)).code).toBe(0);
    };
    await failsOutright("6001", "6000");
    const ok = await p.up({ skipPreview: true });
    if (ok.code !== 0) throw new Error(`up failed:\n${ok.stdout}\n${ok.stderr}`);
    expect(await somax(h)).toBe("6001");
    // the kept report cut short (its end line gone): not printed, the failure fails up
    const last = "/var/lib/pulumi-net-tuning/sysctl/rollout.test.web-h7-*.last";
    expect((await h.exec(`f=$(ls ${last}) && grep -c . "$f" && sed -i '$d' "$f" && tail -1 "$f"`)).stdout).not.toMatch(/end\n$/);
    await failsOutright("6002", "6001");
    await destroyedAs(p, h, snap);
  });
});
