/**
 * Issue #32, "every run has a deadline", for the fallback restore too: a destroy whose host lost the installed engine
 * runs the fallback program from the -restore child's stdin, which has no watchdog of its own. The restore bootstrap
 * runs it under `timeout` (provider/host/programs.ts RESTORE_BOUND, 2,400 s: above the longest run the engine allows
 * itself), which ends it and every command it started. On lab hosts, with the child's own `delete` command (its bound
 * shortened to 4 s here: the only change) and its stored stdin:
 * - NicQueues as root, ethtool stuck in `-L` (a wrapper in the host's private root stops itself there, as a driver
 *   that never returns would leave it);
 * - NetTuning as the sudo user, the program itself stopped (SIGSTOP) while it waited for the host's lock.
 * Each time: exit 124 (timeout's) within seconds instead of a session held until the test's own timeout (60 s; before
 * this, forever), no report (nothing says restored), no process of the run left (not the stuck command), no work
 * directory; the journal still holds the originals; once the fault is gone, the destroy (the stored command, its real
 * bound) converges to the host of before the create.
 */
import { RESTORE_BOUND } from "../../provider/host/programs";
import { Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { nicProgram, ok, snapshot, sysctl, sysProgram } from "../../testkit/host";

jest.setTimeout(300_000);

let lab: Lab;
beforeAll(async () => {
  lab = await startLab({ hosts: 2, tag: "fbdeadline" });
}, 120_000);
afterAll(async () => {
  await lab?.stop();
});

const ENGINE_GONE = "rm -rf /usr/local/lib/pulumi-net-tuning";
const restoredBy = (out: string | undefined) => /^restored-by\t(.*)$/m.exec(out ?? "")?.[1];

/** Waits (bounded) until no process of a restore run is left on the host: its program, `extra`; and no work directory. */
async function nothingLeft(host: LabHost, extra = ""): Promise<void> {
  const pattern = `/bin/sh [p] /tmp/net-tuning-in\\.|timeou[t] [0-9]*/bin/sh p${extra ? `|${extra}` : ""}`;
  let left = "";
  for (let i = 0; i < 50; i++) {
    left = (await host.exec(`pgrep -af '${pattern}' || true`)).stdout.trim();
    if (!left) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(left).toBe("");
  expect((await host.exec("ls -d /tmp/net-tuning-in.* 2>/dev/null || true")).stdout.trim()).toBe("");
}

/** The child's stored `delete` (its bound shortened to `seconds`) and stdin, and the journal file of its owner. */
async function stored(stack: Stack, host: LabHost, name: string, kind: "sysctl" | "nic", seconds: number) {
  const child = stack.get(name)!;
  const journal = (await host.exec(`ls /var/lib/pulumi-net-tuning/${kind}/*.orig`)).stdout.trim();
  expect(journal.split("\n")).toHaveLength(1);
  // (as root the bootstrap is the command; with become "sudo" the stdin's first line: programs.ts sudoLine)
  const [cmd, stdin] = [String(child.inputs.delete), String(child.inputs.stdin)];
  const bound = `t=$t\\ ${RESTORE_BOUND};`;
  expect(cmd.split(bound).length + stdin.split(bound).length).toBe(3);
  return { cmd: cmd.replace(bound, `t=$t\\ ${seconds};`), stdin: stdin.replace(bound, `t=$t\\ ${seconds};`), journal };
}

test("NicQueues as root: ethtool -L does not return → ended at the bound with every command of the run; the journal keeps the originals; the next destroy converges", async () => {
  const host = lab.hosts[0];
  const before = await snapshot(host, { delivery: true });
  const rx = /^RX:\s+(\d+)$/m.exec((await host.exec("ethtool -l eth0 | sed -n '/^Current/,$p'")).stdout)![1];
  const stack = new Stack({ project: "fbdeadline", stack: "nic" });
  const wrapper = "/usr/sbin/ethtool";
  try {
    ok(await stack.up(nicProgram(host, "q", { persistence: "rc.local", channels: { rx: 2 }, txQueueLength: 2345, features: { gro: true } })));
    const { cmd, stdin, journal } = await stored(stack, host, "q-restore", "nic", 4);
    expect((await host.exec(`grep -c '^eth0/channel.rx\t${rx}$' ${journal}`)).stdout.trim()).toBe("1");
    // the engine gone; ethtool -L stops itself (state T: neither TERM nor the session can end it until CONT)
    const fault = `${ENGINE_GONE} && mv ${wrapper} ${wrapper}.real && printf '%s\\n' '#!/bin/sh' 'case " $* " in *" -L "*) kill -STOP $$ ;; esac' 'exec ${wrapper}.real "$@"' > ${wrapper} && chmod 755 ${wrapper}`;
    expect((await host.exec(fault)).code).toBe(0);
    const t0 = Date.now();
    const r = await host.ssh(cmd, { who: "root", stdin, timeoutMs: 60_000 });
    const seconds = (Date.now() - t0) / 1000;
    expect(r.code).toBe(124);
    expect(r.stdout).toBe(""); // no report: the report says restored-by only when the restore is done
    expect(seconds).toBeLessThan(20);
    await nothingLeft(host, `${wrapper} -[L]`);
    // not restored: the channels as tuned, and the journal (and the rc.local block) still there with the originals
    expect((await host.exec("ethtool -l eth0 | sed -n '/^Current/,$p'")).stdout).toMatch(/^RX:\s+2$/m);
    expect((await host.exec(`grep -c '^eth0/channel.rx\t${rx}$' ${journal}; grep -c '^# BEGIN pulumi-net-tuning' /etc/rc.local`)).stdout.trim()).toBe("1\n1");
    // the fault gone: the destroy runs the stored fallback (the engine is still missing) and converges
    expect((await host.exec(`mv -f ${wrapper}.real ${wrapper}`)).code).toBe(0);
    const d = ok(await stack.destroy());
    expect(d.runs.map((x) => restoredBy(x.stdout))).toEqual(["fallback"]);
    await nothingLeft(host);
    expect(await snapshot(host, { delivery: true })).toBe(before);
  } finally {
    await host.exec(`[ ! -e ${wrapper}.real ] || mv -f ${wrapper}.real ${wrapper}`);
    await stack.destroy();
  }
});

test("NetTuning with become sudo: the program stopped (SIGSTOP) while it waits for the lock → ended at the bound; nothing restored, the journal kept; the next destroy converges", async () => {
  const host = lab.hosts[1];
  const before = await snapshot(host, { delivery: true });
  const o = await sysctl(host, "net.core.somaxconn");
  const stack = new Stack({ project: "fbdeadline", stack: "sys" });
  try {
    ok(await stack.up(sysProgram(host, "t", { become: "sudo", sysctls: { "net.core.somaxconn": 8123, "net.ipv4.tcp_fin_timeout": 17 } }, "sudo")));
    // (a bound of 12 s: the test must find and stop the program before it, also on a loaded machine; with 4 s the
    // bound sometimes ended the program first, and the test's kill -STOP found nothing)
    const { cmd, stdin, journal } = await stored(stack, host, "t-restore", "sysctl", 12);
    expect((await host.exec(`grep -c '^net.core.somaxconn\t${o}$' ${journal}`)).stdout.trim()).toBe("1");
    expect((await host.exec(ENGINE_GONE)).code).toBe(0);
    // another run holds the host's lock: the fallback waits for it
    const holder = (await host.exec("flock /run/pulumi-net-tuning.lock sleep 120 > /dev/null 2>&1 < /dev/null & echo $!")).stdout.trim();
    const t0 = Date.now();
    const running = host.ssh(cmd, { who: "sudo", stdin, timeoutMs: 60_000 });
    let pid = "";
    for (let i = 0; i < 100 && !pid; i++) {
      // (-o: the program itself, not a subshell it forked at that moment, which has the same command line)
      pid = (await host.exec("pgrep -o -f '^/bin/sh p /tmp/net-tuning-in\\.' || true")).stdout.trim();
      if (!pid) await new Promise((r) => setTimeout(r, 50));
    }
    expect(pid).toMatch(/^\d+$/);
    expect((await host.exec(`kill -STOP ${pid} && kill $(pgrep -P ${holder}) ${holder}`)).code).toBe(0);
    const r = await running;
    const seconds = (Date.now() - t0) / 1000;
    expect(r.code).toBe(124);
    expect(r.stdout).toBe("");
    expect(seconds).toBeGreaterThanOrEqual(12);
    expect(seconds).toBeLessThan(40);
    await nothingLeft(host);
    expect(await sysctl(host, "net.core.somaxconn")).toBe("8123");
    expect((await host.exec(`grep -c '^net.core.somaxconn\t${o}$' ${journal}`)).stdout.trim()).toBe("1");
    const d = ok(await stack.destroy());
    expect(d.runs.map((x) => restoredBy(x.stdout))).toEqual(["fallback"]);
    await nothingLeft(host);
    expect(await sysctl(host, "net.core.somaxconn")).toBe(o);
    expect(await snapshot(host, { delivery: true })).toBe(before);
  } finally {
    await stack.destroy();
  }
});
