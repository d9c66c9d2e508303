/**
 * The confirmed apply (issue #34, "Confirmed apply") under the real `pulumi` CLI on a lab host (no systemd: the
 * detached reverter). Nothing on the host is faked: the network is cut by setting the machine-side veth down, the
 * engine is killed with SIGKILL, and the revert is the engine's own reverter. The only hook holds the stand-in command
 * provider before it dials the confirm (the -restore child's create or update: NT_STANDIN_HOLD), so that the link goes
 * down between the two sessions.
 *  - a timeout shorter than the dial budget is refused at preview (no session);
 *  - the confirm arrives: values applied, the sysctl.d file written by the confirm, no reverter left, 1 session more;
 *  - the network cut before the confirm: `up` fails with "not confirmed: the host reverts at <time>", the host
 *    reverts within the timeout + 5 s, the file was never written; once the link is back the next preview reports
 *    the revert and the next `up` holds (0 apply sessions); a changed plan applies again;
 *  - SIGKILL of the engine during the verify gate's soak: the revert still comes, destroy leaves the host as before;
 *  - SIGKILL of `pulumi up` itself, and of the first of the host's two reverters, while the confirm is awaited: the
 *    revert comes, the next up reports and holds.
 */
import { CliProject, clearSessions, countKinds, logSessions, providerLabel, sessions, toolchain } from "../../testkit/cli";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { declare, Declared, fileOf, projectOn, values } from "./fixtures";

jest.setTimeout(600_000);

let host: LabHost;
let veth: string;
useLab("cliconfirm", 1, async (hs) => {
  toolchain();
  [host] = hs;
  await logSessions(host);
  // the machine-side end of the host's eth0 (its peer's ifindex)
  const idx = (await host.exec("cat /sys/class/net/eth0/iflink")).stdout.trim();
  const links = spawnSync("ip", ["-o", "link"], { encoding: "utf8" }).stdout;
  veth = new RegExp(`^${idx}: ([^:@]+)[:@]`, "m").exec(links)?.[1] ?? "";
  expect(veth).toMatch(/^nt/);
});

const SOMAX = "net.core.somaxconn";
const FILE = "/etc/sysctl.d/90-net-tuning-web.conf";
const PEND = "/var/lib/pulumi-net-tuning/sysctl";
const resources = (e: { json: { deployment: { resources?: { urn: string }[] } } }) => (e.json.deployment.resources ?? []).map((r) => r.urn);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A short dial budget (2 × 5 s = 10 s), so that short timeouts pass the preview's check. */
const DIAL = { dialErrorLimit: 2, perDialTimeout: 5 };

async function reverters(): Promise<string> {
  return (await host.exec("ps -eo pid,args | grep -F ' revert:' | grep -v grep || true")).stdout.trim();
}
/** Everything a destroy must give back: the values, /etc/sysctl.d, the engine's state. */
async function snapshot(): Promise<string> {
  // (files, modes, sizes and contents: not the directory's own times, which a file created and removed changes)
  return (await host.exec(`cat /proc/sys/net/core/somaxconn; find /etc/sysctl.d -mindepth 1 -printf '%p %m %s %l\\n' | sort; cat /etc/sysctl.d/* 2>/dev/null | cksum; find /var/lib/pulumi-net-tuning /var/lib/pulumi-net-tuning-converged 2>/dev/null | sort`)).stdout;
}

describe(`confirmed apply, real pulumi CLI + ${providerLabel()}`, () => {
  let p: CliProject;
  let original: string;
  let before: string;
  const web = (confirm: unknown, sysctls: Record<string, unknown> = { [SOMAX]: 1111 }, verify?: unknown): Record<string, Declared> => ({
    web: { kind: "sysctl", args: { sysctls, confirm, ...(verify ? { verify } : {}) } },
  });

  /**
   * `up` of `decl` with its confirm held by the stand-in (NT_STANDIN_HOLD on a file the caller removes), once the
   * apply armed the revert and set `armedValue`. Returns the running `up` and the hold file.
   */
  async function armedUp(decl: Record<string, Declared>, armedValue: string, tag: string): Promise<{ upping: ReturnType<CliProject["up"]>; hold: string }> {
    const hold = path.join(os.tmpdir(), `nt-hold-${tag}-${process.pid}`);
    fs.writeFileSync(hold, "");
    await declare(p, decl);
    const upping = p.up({ skipPreview: true, env: { NT_STANDIN_HOLD: `-restore=${hold}` } });
    let armed = false;
    for (let i = 0; i < 600 && !armed; i++) {
      await sleep(100);
      armed = (await host.exec(`[ -f ${PEND}/*.pending/armed ] && cat /proc/sys/net/core/somaxconn`)).stdout.trim() === armedValue;
    }
    expect(armed).toBe(true);
    return { upping, hold };
  }

  /**
   * The start of the tests that cut a confirm: the link up (after a failed test), the short dial budget, and 3333
   * applied and confirmed. Returns the sysctl.d file it wrote.
   */
  async function confirmedStart(): Promise<string | null> {
    spawnSync("ip", ["link", "set", veth, "up"]);
    await p.setConfig("dial", JSON.stringify(DIAL));
    await declare(p, web({ timeoutSeconds: 20 }, { [SOMAX]: 3333 }));
    expect((await p.up({ skipPreview: true })).code).toBe(0);
    return fileOf(host, FILE);
  }

  /** Destroys the stack and expects the host as before the file's first test: its value, files and state. */
  async function destroyedAsBefore(): Promise<void> {
    const d = await p.destroy();
    expect(d.code).toBe(0);
    expect(await values(host, [SOMAX])).toEqual({ [SOMAX]: original });
    expect(await snapshot()).toBe(before);
  }

  beforeAll(async () => {
    original = (await values(host, [SOMAX]))[SOMAX];
    before = await snapshot();
    expect((await host.exec("[ -d /run/systemd/system ] && echo systemd || echo none")).stdout.trim()).toBe("none");
    p = await projectOn(host, "ntconfirm", "root", web({ timeoutSeconds: 100 }));
  });

  test("a timeout shorter than the connection's dial budget is refused at preview, naming the argument and the minimum; no session", async () => {
    await clearSessions(host);
    const r = await p.preview({ diff: true });
    const out = r.stdout + r.stderr;
    expect(r.code).not.toBe(0);
    expect(out).toContain("confirm.timeoutSeconds 100 is shorter than the connection's dial budget (150 s: dialErrorLimit × perDialTimeout)");
    expect(out).toContain("Fix: confirm.timeoutSeconds ≥ 150");
    expect(countKinds(await sessions(host)).apply ?? 0).toBe(0);
    // with a verify gate the soak counts too
    await p.setConfig("dial", JSON.stringify(DIAL));
    await declare(p, web({ timeoutSeconds: 12 }, undefined, { soakSeconds: 5, maxIncrease: { "TcpExt.ListenOverflows": 1000000 } }));
    const r2 = await p.preview();
    expect(r2.code).not.toBe(0);
    expect(r2.stdout + r2.stderr).toContain("Fix: confirm.timeoutSeconds ≥ 15");
    expect(countKinds(await sessions(host)).apply ?? 0).toBe(0);
  });

  test("the confirm arrives: values applied, the file written by the confirm, the revert disarmed; the confirm adds exactly 1 session", async () => {
    await declare(p, web({ timeoutSeconds: 30 }));
    await clearSessions(host);
    const r = await p.up({ skipPreview: true });
    console.log(`confirmed apply, pulumi up output:\n${r.stdout}${r.stderr}`);
    expect(r.code).toBe(0);
    expect(await values(host, [SOMAX])).toEqual({ [SOMAX]: "1111" });
    expect(await fileOf(host, FILE)).toMatch(/^net\.core\.somaxconn = 1111$/m);
    expect((await host.exec(`ls -d ${PEND}/*.pending 2>/dev/null || true`)).stdout.trim()).toBe("");
    expect(await reverters()).toBe("");
    expect(countKinds(await sessions(host))).toEqual({ "live-read": 1, sftp: 1, apply: 1, confirm: 1 });
    // the state the confirm adds: the -restore child's create, addPreviousOutputInEnv and stdout, inputs and outputs
    const restore = (await p.export(true)).json.deployment.resources?.find((x) => /web-restore$/.test(x.urn)) as unknown as { inputs: Record<string, unknown>; outputs: Record<string, unknown> };
    const fields = (o: Record<string, unknown>) => JSON.stringify({ create: o.create, addPreviousOutputInEnv: o.addPreviousOutputInEnv, stdout: o.stdout, stderr: o.stderr }, null, 4).length;
    console.log(`checkpoint bytes the confirm adds to web-restore (pulumi stack export --show-secrets, pretty-printed as the CLI stores it): inputs ${fields(restore.inputs)} B, outputs ${fields(restore.outputs)} B`);
    expect(resources(await p.export(true)).filter((u) => /-confirm$/.test(u))).toEqual([]);
  });

  test("NicQueues: a feature change waits for a confirm by default (no plan line), a txqueuelen change alone commits in its one session", async () => {
    const gro = (await host.exec("ethtool -k eth0 | awk '/^generic-receive-offload:/ { print $2 }'")).stdout.trim();
    expect(gro).toMatch(/^(on|off)$/);
    const flip = gro === "on" ? "off" : "on";
    const tx = (await host.exec("cat /sys/class/net/eth0/tx_queue_len")).stdout.trim();
    const both = (q: Record<string, unknown>): Record<string, Declared> => ({ ...web({ timeoutSeconds: 30 }), q: { kind: "nic", args: { interface: "eth0", ...q } } });
    await declare(p, both({ features: { "generic-receive-offload": flip === "on" } }));
    await clearSessions(host);
    const r = await p.up({ skipPreview: true });
    if (r.code !== 0) console.log(r.stdout + r.stderr);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/NicQueues "q": applied, not confirmed yet: .*If it fails: not confirmed: the host reverts at \d{4}-/);
    expect((await host.exec("ethtool -k eth0 | awk '/^generic-receive-offload:/ { print $2 }'")).stdout.trim()).toBe(flip);
    expect(countKinds(await sessions(host))).toEqual({ "live-read": 1, apply: 1, confirm: 1 });
    expect((await host.exec("ls -d /var/lib/pulumi-net-tuning/nic/*.pending 2>/dev/null || true")).stdout.trim()).toBe("");
    expect(await reverters()).toBe("");
    await declare(p, both({ features: { "generic-receive-offload": flip === "on" }, txQueueLength: 1234 }));
    await clearSessions(host);
    expect((await p.up({ skipPreview: true })).code).toBe(0);
    expect((await host.exec("cat /sys/class/net/eth0/tx_queue_len")).stdout.trim()).toBe("1234");
    expect(countKinds(await sessions(host))).toEqual({ "live-read": 1, apply: 1 });
    // gone again (its restore puts the feature and txqueuelen back)
    await declare(p, web({ timeoutSeconds: 30 }));
    expect((await p.up({ skipPreview: true })).code).toBe(0);
    expect((await host.exec("ethtool -k eth0 | awk '/^generic-receive-offload:/ { print $2 }'")).stdout.trim()).toBe(gro);
    expect((await host.exec("cat /sys/class/net/eth0/tx_queue_len")).stdout.trim()).toBe(tx);
  });

  test("the network cut before the confirm: up fails with the time, the host reverts within timeout + 5 s, nothing persisted; then held; a changed plan applies", async () => {
    await clearSessions(host);
    const fileBefore = await fileOf(host, FILE);
    // the apply armed the revert and ended (its session is logged, the value changed); the confirm is held
    const { upping, hold } = await armedUp(web({ timeoutSeconds: 20 }, { [SOMAX]: 2222 }), "2222", "cut");
    await sleep(1500); // the apply's session ends (its report is read)
    expect(spawnSync("ip", ["link", "set", veth, "down"]).status).toBe(0);
    const downAt = Date.now();
    fs.rmSync(hold);
    const r = await upping;
    const out = r.stdout + r.stderr;
    console.log(`unconfirmed apply, pulumi up output:\n${out}`);
    expect(r.code).not.toBe(0);
    const m = /not confirmed: the host reverts at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)/.exec(out);
    expect(m).not.toBeNull();
    const deadline = Date.parse(m![1]);
    expect(deadline).toBeGreaterThan(downAt - 20_000);
    // the host reverts by itself (its sshd unreachable meanwhile: read through the namespace)
    let back = 0;
    for (let i = 0; i < 600 && !back; i++) {
      if ((await values(host, [SOMAX]))[SOMAX] === "1111") back = Date.now();
      else await sleep(200);
    }
    expect(back).toBeGreaterThan(0);
    console.log(`reverted ${((back - deadline) / 1000).toFixed(1)} s after the deadline ${m![1]}`);
    expect(back - deadline).toBeLessThan(5_000);
    expect(await fileOf(host, FILE)).toBe(fileBefore); // never written
    expect(await reverters()).toBe("");
    expect((await host.exec(`cat ${PEND}/*.reverted`)).stdout).toMatch(/^net-tuning-reverted v1\t\d+\t[0-9a-f]{64}\t[0-9a-f]+\t\n$/);
    expect(spawnSync("ip", ["link", "set", veth, "up"]).status).toBe(0);
    await sleep(1000);
    // the next preview reports it; the next up holds: no apply session, the confirm says why
    const pv = await p.preview();
    console.log(`preview after the revert:\n${pv.stdout}${pv.stderr}`);
    expect(pv.stdout + pv.stderr).toMatch(/reverted .* at \d{4}-\d\d-\d\dT/);
    await clearSessions(host);
    const held = await p.up({ skipPreview: true });
    console.log(`up after the revert:\n${held.stdout}${held.stderr}`);
    expect(held.code).not.toBe(0);
    expect(held.stdout + held.stderr).toMatch(/not confirmed: the host \S+ reverted this apply at \d{4}-/);
    expect(countKinds(await sessions(host)).apply ?? 0).toBe(0);
    expect(await values(host, [SOMAX])).toEqual({ [SOMAX]: "1111" });
    // a changed plan applies again (and is confirmed)
    await declare(p, web({ timeoutSeconds: 20 }, { [SOMAX]: 3333 }));
    await clearSessions(host);
    const again = await p.up({ skipPreview: true });
    expect(again.code).toBe(0);
    expect(await values(host, [SOMAX])).toEqual({ [SOMAX]: "3333" });
    expect(await fileOf(host, FILE)).toMatch(/^net\.core\.somaxconn = 3333$/m);
    expect(countKinds(await sessions(host))).toMatchObject({ apply: 1, confirm: 1 });
    expect((await host.exec(`ls ${PEND}/ | grep -c 'reverted\\|pending' || true`)).stdout.trim()).toBe("0");
  });

  test("SIGKILL of the engine during the verify gate's soak: the revert still comes within timeout + 5 s; destroy leaves the host as before", async () => {
    spawnSync("ip", ["link", "set", veth, "up"]); // (after a failed test above)
    await p.setConfig("dial", JSON.stringify(DIAL));
    const was = (await values(host, [SOMAX]))[SOMAX];
    const wasFile = await fileOf(host, FILE);
    await declare(p, web({ timeoutSeconds: 25 }, { [SOMAX]: 4444 }, { soakSeconds: 10, maxIncrease: { "TcpExt.ListenOverflows": 1000000 } }));
    const upping = p.up({ skipPreview: true });
    let pid = "";
    for (let i = 0; i < 600 && !pid; i++) {
      await sleep(100);
      pid = (await host.exec("read p s < /run/pulumi-net-tuning.soak 2>/dev/null && echo $p")).stdout.trim();
    }
    expect(pid).toMatch(/^\d+$/);
    const deadline = Number((await host.exec(`cut -f2 ${PEND}/*.pending/armed`)).stdout.trim()) * 1000;
    expect(await values(host, [SOMAX])).toEqual({ [SOMAX]: "4444" });
    expect((await host.exec(`kill -KILL ${pid}`)).code).toBe(0);
    const r = await upping;
    expect(r.code).not.toBe(0);
    let back = 0;
    for (let i = 0; i < 600 && !back; i++) {
      if ((await values(host, [SOMAX]))[SOMAX] === was) back = Date.now();
      else await sleep(200);
    }
    if (!back) console.log((await host.exec(`ps -eo pid,ppid,pgid,args; ls -la ${PEND} ${PEND}/*.pending; cat ${PEND}/*.pending/*; ls -la /tmp`)).stdout);
    expect(back).toBeGreaterThan(0);
    console.log(`after SIGKILL in the soak: reverted ${((back - deadline) / 1000).toFixed(1)} s after the deadline`);
    expect(back - deadline).toBeLessThan(5_000);
    expect(await fileOf(host, FILE)).toBe(wasFile);
    expect(await reverters()).toBe("");
    await destroyedAsBefore();
  });

  test("SIGKILL of `pulumi up` itself and of the host's first reverter while the confirm is awaited: the host reverts within timeout + 5 s, nothing persisted; the next up reports it and holds; destroy leaves the host as before", async () => {
    const file = await confirmedStart();
    const { upping, hold } = await armedUp(web({ timeoutSeconds: 20 }, { [SOMAX]: 8888 }), "8888", "kill");
    const deadline = Number((await host.exec(`cut -f2 ${PEND}/*.pending/armed`)).stdout.trim()) * 1000;
    // every process of this run (the CLI, its language host and providers: they work in the project's directory)
    const ours = fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid).filter((d) => {
      try {
        return fs.readlinkSync(`/proc/${d}/cwd`) === p.dir;
      } catch {
        return false;
      }
    });
    expect(ours.length).toBeGreaterThan(0);
    for (const d of ours) spawnSync("kill", ["-KILL", d]);
    // and the host's own program that waits for the confirm: the first of the two detached reverters (lab hosts run
    // no systemd), a process group of its own that its file names; the second one reverts
    expect((await reverters()).split("\n")).toHaveLength(2);
    const first = (await host.exec(`for f in ${PEND}/*.pending/by.*; do case $f in *.late) ;; *) cut -f2 "$f" ;; esac; done`)).stdout.trim();
    expect(first).toMatch(/^\d+$/);
    expect((await host.exec(`kill -KILL -${first}`)).code).toBe(0);
    expect((await reverters()).split("\n")).toHaveLength(1);
    const r = await upping;
    expect(r.code).not.toBe(0);
    fs.rmSync(hold, { force: true });
    let back = 0;
    for (let i = 0; i < 600 && !back; i++) {
      if ((await values(host, [SOMAX]))[SOMAX] === "3333") back = Date.now();
      else await sleep(200);
    }
    expect(back).toBeGreaterThan(0);
    console.log(`after SIGKILL of pulumi up: reverted ${((back - deadline) / 1000).toFixed(1)} s after the deadline`);
    expect(back - deadline).toBeLessThan(5_000);
    expect(await fileOf(host, FILE)).toBe(file); // never written
    expect(await reverters()).toBe("");
    // the killed CLI left its lock (the file backend): `pulumi cancel`, as its message says; the state keeps the update
    // it had not finished as a pending operation; the next up goes on, and the host holds the reverted plan
    const locked = await p.up({ skipPreview: true });
    expect(locked.code).not.toBe(0);
    expect(locked.stdout + locked.stderr).toContain("the stack is currently locked");
    const cancel = await p.cli(["cancel", "--yes", "--stack", p.stack]);
    expect([cancel.code, cancel.stdout + cancel.stderr]).toEqual([0, expect.any(String)]);
    const next = await p.up({ skipPreview: true });
    console.log(`up after SIGKILL:\n${next.stdout}${next.stderr}`);
    expect(next.stdout + next.stderr).toMatch(/reverted this apply at \d{4}-|held on /);
    expect(await values(host, [SOMAX])).toEqual({ [SOMAX]: "3333" });
    await destroyedAsBefore();
  });

  test("a first apply (a create) whose confirm comes after the revert: held while its plan is the same; a changed plan applies (as a create: the revert took the journal it had made)", async () => {
    spawnSync("ip", ["link", "set", veth, "up"]);
    await p.setConfig("dial", JSON.stringify(DIAL));
    expect((await p.destroy()).code).toBe(0); // (no resource left by an earlier test)
    const first = (v: number): Record<string, Declared> => ({ first: { kind: "sysctl", args: { sysctls: { [SOMAX]: v }, confirm: { timeoutSeconds: 12 } } } });
    const hold = path.join(os.tmpdir(), `nt-hold5-${process.pid}`);
    fs.writeFileSync(hold, "");
    await declare(p, first(9999));
    const upping = p.up({ skipPreview: true, env: { NT_STANDIN_HOLD: `first-restore=${hold}` } });
    let armed = false;
    for (let i = 0; i < 600 && !armed; i++) {
      await sleep(100);
      armed = (await values(host, [SOMAX]))[SOMAX] === "9999";
    }
    expect(armed).toBe(true);
    let back = false;
    for (let i = 0; i < 300 && !back; i++) {
      await sleep(100);
      back = (await values(host, [SOMAX]))[SOMAX] === original;
    }
    expect(back).toBe(true);
    fs.rmSync(hold, { force: true });
    const r = await upping;
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/not confirmed: the host \S+ reverted this apply at/);
    // the same plan: held (no change)
    const held = await p.up({ skipPreview: true });
    expect(held.code).not.toBe(0);
    expect(held.stdout + held.stderr).toMatch(/held on \S+: this plan was applied without a confirm and the host reverted it|reverted this apply at/);
    expect(await values(host, [SOMAX])).toEqual({ [SOMAX]: original });
    // a changed plan applies and is confirmed
    await declare(p, first(9998));
    const again = await p.up({ skipPreview: true });
    if (again.code !== 0) throw new Error(`up failed:\n${again.stdout}\n${again.stderr}`);
    expect(await values(host, [SOMAX])).toEqual({ [SOMAX]: "9998" });
    expect(await fileOf(host, "/etc/sysctl.d/90-net-tuning-first.conf")).toMatch(/^net\.core\.somaxconn = 9998$/m);
    await destroyedAsBefore();
  });

  /** `up` of `decl` with the link cut between the apply (armed, the value `armedValue` set) and its confirm. */
  async function unconfirmedUp(decl: Record<string, Declared>, armedValue: string): Promise<{ code: number; out: string }> {
    const { upping, hold } = await armedUp(decl, armedValue, "unconfirmed");
    await sleep(1500);
    expect(spawnSync("ip", ["link", "set", veth, "down"]).status).toBe(0);
    fs.rmSync(hold, { force: true });
    const r = await upping;
    expect(spawnSync("ip", ["link", "set", veth, "up"]).status).toBe(0);
    await sleep(1000);
    return { code: r.code, out: r.stdout + r.stderr };
  }

  test("a second apply while the first is still armed keeps the first's originals: both unconfirmed, the host goes back to the value before the first", async () => {
    const file = await confirmedStart();
    const first = await unconfirmedUp(web({ timeoutSeconds: 60 }, { [SOMAX]: 6666 }), "6666");
    expect(first.code).not.toBe(0);
    const second = await unconfirmedUp(web({ timeoutSeconds: 20 }, { [SOMAX]: 7777 }), "7777");
    expect(second.code).not.toBe(0);
    const deadline = Date.parse(/not confirmed: the host reverts at (\S+Z)/.exec(second.out)![1]);
    // the second apply's reverters only (the first's were stopped): a pair with one token (lab hosts run no systemd:
    // two detached processes), with both changes in their copy, oldest first
    const pair = (await reverters()).split("\n");
    expect(pair).toHaveLength(2);
    expect(new Set(pair.map((l) => l.split(" revert:")[1])).size).toBe(1);
    expect((await host.exec(`cat ${PEND}/*.pending/changes`)).stdout).toBe(`${SOMAX}\t3333\n${SOMAX}\t6666\n`);
    let back = 0;
    for (let i = 0; i < 600 && !back; i++) {
      if ((await values(host, [SOMAX]))[SOMAX] === "3333") back = Date.now();
      else await sleep(200);
    }
    expect(back).toBeGreaterThan(0);
    expect(back - deadline).toBeLessThan(5_000);
    expect(await fileOf(host, FILE)).toBe(file);
    expect(await reverters()).toBe("");
    // the journal still holds the true original: destroy restores it
    expect((await p.destroy()).code).toBe(0);
    expect(await values(host, [SOMAX])).toEqual({ [SOMAX]: original });
  });

  test("destroy while armed: the -restore disarms and restores; nothing of a secret value is world-readable or on a command line; the deadline then passes with no revert", async () => {
    await confirmedStart();
    const hold = path.join(os.tmpdir(), `nt-hold2-${process.pid}`);
    fs.writeFileSync(hold, "");
    await declare(p, { web: { kind: "sysctl", args: { sysctls: { [SOMAX]: 5555 }, confirm: { timeoutSeconds: 30 } }, secrets: { [`sysctls.${SOMAX}`]: 5555 } } });
    const upping = p.up({ skipPreview: true, env: { NT_STANDIN_HOLD: `-restore=${hold}` } });
    let armed = false;
    for (let i = 0; i < 600 && !armed; i++) {
      await sleep(100);
      armed = (await host.exec(`[ -f ${PEND}/*.pending/armed ] && cat /proc/sys/net/core/somaxconn`)).stdout.trim() === "5555";
    }
    expect(armed).toBe(true);
    // the secret value: in the 0600 plan of the 0700 pending directory only; not on the reverter's command line
    expect((await host.exec(`stat -c '%a %U' ${PEND} ${PEND}/*.pending; stat -c '%a' ${PEND}/*.pending/* | sort -u`)).stdout).toBe("700 root\n700 root\n600\n");
    expect(await reverters()).toMatch(/revert:ntconfirm\.test\.web-[0-9a-f]+:[0-9a-f]+$/);
    expect(await reverters()).not.toContain("5555");
    expect((await host.exec(`grep -rl 5555 /var/lib/pulumi-net-tuning-converged /etc/sysctl.d /tmp 2>/dev/null || true`)).stdout.trim()).toBe("");
    const deadline = Number((await host.exec(`cut -f2 ${PEND}/*.pending/armed`)).stdout.trim()) * 1000;
    await sleep(1500);
    expect(spawnSync("ip", ["link", "set", veth, "down"]).status).toBe(0);
    fs.rmSync(hold);
    expect((await upping).code).not.toBe(0);
    expect(spawnSync("ip", ["link", "set", veth, "up"]).status).toBe(0);
    await sleep(1000);
    expect(Date.now()).toBeLessThan(deadline - 5_000); // still armed
    const d = await p.destroy();
    expect(d.code).toBe(0);
    expect(await values(host, [SOMAX])).toEqual({ [SOMAX]: original });
    expect(await reverters()).toBe("");
    await sleep(Math.max(0, deadline - Date.now()) + 3_000);
    expect(await values(host, [SOMAX])).toEqual({ [SOMAX]: original });
    expect(await snapshot()).toBe(before);
  });

  afterAll(async () => {
    spawnSync("ip", ["link", "set", veth, "up"]);
    if (p) await p.destroy();
  });
});
