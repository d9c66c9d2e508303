/**
 * A host that accepts the connection and then stalls (issue #32), under the real `pulumi` CLI: the host program is
 * stopped (SIGSTOP) mid-apply, after it changed its first key. What this pins (docs/operations.md, "A host that
 * stalls"): nothing on the Pulumi side bounds the run (pulumi-command v1.2.1 ignores customTimeouts once connected:
 * tests/cli/commandProvider.test.ts); the run's own deadline does (the engine's watchdog: 300 s holding the lock by
 * default, shortened here by the lab hook): at it the run rolls back and the `up` fails saying so, on its own. Before
 * it: once the program resumes (SIGCONT) the `up` converges; once it is stopped with TERM (and CONT) it rolls its
 * changes back and the `up` fails saying so; once killed the `up` fails with the exit signal, the journal keeps the
 * originals, the next `up` converges and `destroy` leaves the host as before. The program is held at a step by the
 * lab's fault-injection hook (tests/safety/hooks.ts), which the program's lab build of the engine carries (config
 * `labEngine`).
 */
import { CliProject, explain, providerLabel, toolchain } from "../../testkit/cli";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";
import { snapshot } from "../../testkit/host";
import { clearHooks, hold, release, setHooks } from "../safety/hooks";
import { LAB_OVERLAY } from "../../testkit/labEngine";
import { declare, projectOn, values } from "./fixtures";

jest.setTimeout(600_000);

let host: LabHost;
useLab("cli", 1, async (hs) => {
  toolchain();
  host = hs[0];
});

const SOMAX = "net.core.somaxconn";
const FIN = "net.ipv4.tcp_fin_timeout";
const KEYS = [SOMAX, FIN];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The pid of the host program sitting in its pause (waits up to 180 s: the CLI starts the program first). */
async function paused(): Promise<number> {
  for (let i = 0; i < 1800; i++) {
    const r = await host.exec("cat /run/nt-paused 2>/dev/null");
    if (r.code === 0 && /^\d+$/.test(r.stdout.trim())) return Number(r.stdout.trim());
    await sleep(100);
  }
  throw new Error("no host program paused");
}

describe(`a host that stalls mid-apply, real pulumi CLI + ${providerLabel()}`, () => {
  let p: CliProject;
  let originals: Record<string, string>;
  let before: string;
  const web = (sysctls: Record<string, number>) => ({ web: { kind: "sysctl" as const, args: { sysctls } } });

  beforeAll(async () => {
    originals = await values(host, KEYS);
    before = await snapshot(host);
    p = await projectOn(host, "ntstall", "root", web({ [SOMAX]: 8192, [FIN]: 21 }));
    await p.setConfig("labEngine", LAB_OVERLAY);
  });
  let stopped: number | undefined;
  afterEach(async () => {
    // a test that failed midway must not leave its host program stopped (holding the host's lock) for the next one
    if (stopped !== undefined) await host.exec(`ps -o stat= -p ${stopped} | grep -q '^T' && kill -KILL ${stopped}`);
    stopped = undefined;
  });
  afterAll(async () => {
    await clearHooks(host);
  });

  /** Starts `up`, stops the host program at step `step` (SIGSTOP), lets it continue past the hook once resumed. */
  async function stalledUp(step: number, hooks: string[] = []): Promise<{ pid: number; running: Promise<import("../../testkit/cli").CliResult>; settled: () => boolean }> {
    await setHooks(host, [`pause-after-step ${step} 120`, ...hooks]);
    await hold(host);
    let done = false;
    const running = p.up({ skipPreview: true }).finally(() => (done = true));
    const pid = await paused();
    expect((await host.exec(`kill -STOP ${pid}`)).code).toBe(0);
    stopped = pid;
    await release(host); // seen only when it runs again
    return { pid, running, settled: () => done };
  }

  test("a create stalled (SIGSTOP) after its first key: `up` waits (the default deadline is 300 s); resumed (SIGCONT), it converges", async () => {
    const { pid, running, settled } = await stalledUp(3); // create: 1 owner file, 2 journal, 3 the first key
    await sleep(20_000);
    expect(settled()).toBe(false);
    expect((await host.exec(`ps -o stat= -p ${pid}`)).stdout.trim()).toMatch(/^T/);
    expect(await values(host, KEYS)).toEqual({ [SOMAX]: "8192", [FIN]: originals[FIN] }); // really mid-apply
    await host.exec(`kill -CONT ${pid}`);
    const up = await running;
    expect(up.code === 0 ? "" : explain(up)).toBe("");
    expect(await values(host, KEYS)).toEqual({ [SOMAX]: "8192", [FIN]: "21" });
  });

  test("an update stalled and left alone: the run's deadline (5 s by the lab hook) stops it, it rolls back, the `up` fails saying so on its own", async () => {
    await declare(p, web({ [SOMAX]: 4096, [FIN]: 25 }));
    const t0 = Date.now();
    const { running } = await stalledUp(1, ["deadline 5 20"]);
    expect(await values(host, KEYS)).toEqual({ [SOMAX]: "4096", [FIN]: "21" }); // really mid-apply
    const up = await running;
    const seconds = (Date.now() - t0) / 1000;
    stopped = undefined;
    await clearHooks(host);
    expect(up.code).not.toBe(0);
    const out = up.stdout + up.stderr;
    expect(out).toMatch(/the run on \S+ passed its deadline of 5 s: stopping it/);
    expect(out).toMatch(/stopped by its deadline \(5 s holding the host's lock: the run was stopped \(SIGSTOP\)\) while applying on \S+; every change of this run was rolled back\. Fix: find out why that does not return on this host/);
    expect(seconds).toBeLessThan(60);
    console.log(`a stalled update ended by its deadline (5 s) after ${seconds.toFixed(1)} s:\n${out.split("\n").filter((l) => /deadline/.test(l)).join("\n")}`);
    expect(await values(host, KEYS)).toEqual({ [SOMAX]: "8192", [FIN]: "21" });
  });

  test("an update stalled, then TERM and CONT: the run rolls back what it changed and the `up` fails saying so", async () => {
    await declare(p, web({ [SOMAX]: 4096, [FIN]: 25 }));
    // this update's steps: 1 and 2 the changed keys (its journal holds them already: not rewritten), 3 the file
    const { pid, running, settled } = await stalledUp(1);
    expect(await values(host, KEYS)).toEqual({ [SOMAX]: "4096", [FIN]: "21" }); // really mid-apply
    await sleep(5_000);
    expect(settled()).toBe(false);
    await host.exec(`kill -TERM ${pid}; kill -CONT ${pid}`); // a stopped process handles TERM once continued
    const up = await running;
    expect(up.code).not.toBe(0);
    expect(up.stdout + up.stderr).toMatch(/interrupted while applying on \S+; every change of this run was rolled back/);
    expect(await values(host, KEYS)).toEqual({ [SOMAX]: "8192", [FIN]: "21" });
  });

  test("an update stalled, then the stalled program killed: `up` fails with the signal, the journal keeps the originals, the next `up` converges, `destroy` restores", async () => {
    const { pid, running, settled } = await stalledUp(2); // the same update again, held after both keys
    expect(await values(host, KEYS)).toEqual({ [SOMAX]: "4096", [FIN]: "25" });
    await sleep(5_000);
    expect(settled()).toBe(false);
    await host.exec(`kill -KILL ${pid}`);
    const up = await running;
    expect(up.code).not.toBe(0);
    // pulumi-command's error for a session ended by a signal (the stand-in gives the same shape)
    expect(up.stdout + up.stderr).toMatch(/error: Process exited with status 137 from signal KILL: running "/);
    await clearHooks(host);
    const j = await host.exec("cat /var/lib/pulumi-net-tuning/sysctl/*.orig");
    for (const k of KEYS) expect(j.stdout).toContain(`${k}\t${originals[k]}\n`);
    const again = await p.up({ skipPreview: true });
    expect(again.code === 0 ? "" : explain(again)).toBe("");
    expect(await values(host, KEYS)).toEqual({ [SOMAX]: "4096", [FIN]: "25" });
    const d = await p.destroy();
    expect(d.code === 0 ? "" : explain(d)).toBe("");
    expect(await values(host, KEYS)).toEqual(originals);
    expect(await snapshot(host)).toBe(before);
    p.remove();
  });
});
