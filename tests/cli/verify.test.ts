/**
 * The verify gate (issue #34) under the real `pulumi` CLI on a lab host: the kernel's own counters, read on the host
 * inside the apply's one SSH session. A NetTuning sets net.core.somaxconn to 8 while a program inside the host's
 * network namespace keeps opening fresh listeners (listen() takes the limit in force at that moment) and bursts
 * connections at them without accepting: with somaxconn 8 their accept queues overflow and TcpExt.ListenOverflows
 * rises; with the host's original limit they do not. No test hook: the gate reads /proc/net/netstat.
 *  - limit 0: the gate rolls the change back (the host keeps its original somaxconn, no /etc/sysctl.d file), the
 *    update fails naming the counter with before, after and limit; one apply session;
 *  - an allowance above the rise: the update passes and `verification` holds the readings and the verdict;
 *  - an unknown name: refused at preview, no apply session;
 *  - a NicQueues gated on an `ethtool -S` statistic of the lab's veth: passes.
 * The bytes `verify` adds to the checkpoint are logged.
 */
import { CliProject, clearSessions, countKinds, logSessions, providerLabel, sessions, toolchain } from "../../testkit/cli";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";
import { declare, Declared, fileOf, projectOn, values } from "./fixtures";

jest.setTimeout(600_000);

let host: LabHost;
useLab("cliverify", 1, async (hs) => {
  toolchain();
  [host] = hs;
  await logSessions(host);
});

const SOMAX = "net.core.somaxconn";
const FILE = "/etc/sysctl.d/90-net-tuning-web.conf";
/** Fresh listeners with backlog 128 (capped by somaxconn at listen()), 40 connects each, never accepted, for `secs`. */
const BURST = (secs: number) => `import socket, time
end = time.time() + ${secs}
while time.time() < end:
    l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(128)
    cs = []
    for i in range(40):
        c = socket.socket(); c.setblocking(False)
        try: c.connect(l.getsockname())
        except BlockingIOError: pass
        cs.append(c)
    time.sleep(0.05)
    for c in cs: c.close()
    l.close()
`;

async function burst(secs: number): Promise<void> {
  const r = await host.exec(`cat > /tmp/burst.py && (nohup python3 /tmp/burst.py >/tmp/burst.log 2>&1 &)`, { stdin: BURST(secs) });
  if (r.code !== 0) throw new Error(`burst: ${r.stderr}`);
}
async function overflows(): Promise<number> {
  const r = await host.exec(`awk '/^TcpExt:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "ListenOverflows") k = i; h = 1 } else print $k }' /proc/net/netstat`);
  return Number(r.stdout.trim());
}

describe(`verify gate, real pulumi CLI + ${providerLabel()}`, () => {
  let p: CliProject;
  let original: string;
  const web = (verify: unknown, sysctls: Record<string, unknown> = { [SOMAX]: 8 }): Record<string, Declared> => ({ web: { kind: "sysctl", args: { sysctls, verify } } });

  beforeAll(async () => {
    original = (await values(host, [SOMAX]))[SOMAX];
    expect(Number(original)).toBeGreaterThan(128);
    p = await projectOn(host, "ntverify", "root", web({ soakSeconds: 3, maxIncrease: { "TcpExt.ListenOverflows": 0 } }));
  });

  test("the load overflows listeners only with somaxconn 8 (the control the gate relies on)", async () => {
    const a = await overflows();
    await burst(2);
    await new Promise((r) => setTimeout(r, 2500));
    expect(await overflows()).toBe(a); // the original limit: no overflow
  });

  test("maxIncrease 0: ListenOverflows rises during the soak, the host rolls the change back, the update fails with the table", async () => {
    await burst(40);
    await clearSessions(host);
    const r = await p.up({ skipPreview: true });
    const out = r.stdout + r.stderr;
    console.log(`gated rollback, pulumi up output:\n${out}`);
    expect(r.code).not.toBe(0);
    expect(out).toMatch(/verify gate failed on \S+ after a soak of 3 s: TcpExt\.ListenOverflows rose by [1-9]\d* \(limit \+0\)/);
    expect(out).toMatch(/name +before +after +limit +verdict/);
    expect(out).toMatch(/TcpExt\.ListenOverflows +\d+ +\d+ +\+0 +exceeded/);
    expect(out).toContain(`the change was rolled back on`);
    expect(out).toContain(`${SOMAX} = '${original}' (each read back); nothing was persisted`);
    expect(await values(host, [SOMAX])).toEqual({ [SOMAX]: original });
    expect(await fileOf(host, FILE)).toBeNull();
    expect((await host.exec("ls /var/lib/pulumi-net-tuning/sysctl/ 2>/dev/null | grep -c . || true")).stdout.trim()).toBe("0");
    // the gate adds no session: the engine copy and one apply (live read of the program run)
    expect(countKinds(await sessions(host))).toEqual({ "live-read": 1, sftp: 1, apply: 1 });
  });

  test("an allowance above the rise: passes, verification holds every reading and the verdict", async () => {
    await declare(p, web({ soakSeconds: 3, maxIncrease: { "TcpExt.ListenOverflows": 1000000000, "Tcp.RetransSegs": 1000000000 }, maxLevel: { "sockets.timeWait": 1000000 } }));
    await burst(40);
    await clearSessions(host);
    const r = await p.up({ skipPreview: true });
    expect(r.code).toBe(0);
    expect(await values(host, [SOMAX])).toEqual({ [SOMAX]: "8" });
    expect(await fileOf(host, FILE)).toMatch(/^net\.core\.somaxconn = 8$/m);
    // the engine was delivered by the failed update before: one apply, no extra session for the gate
    expect(countKinds(await sessions(host))).toEqual({ "live-read": 1, apply: 1 });
    const v = (await p.outputs()).web as { verification: { verdict: string; soakSeconds: number; readings: { name: string; kind: string; before: number; afterChange: number; after: number; limit: number; change: number; exceeded: boolean }[] } };
    expect(v.verification.verdict).toBe("pass");
    expect(v.verification.soakSeconds).toBe(3);
    const byName = Object.fromEntries(v.verification.readings.map((x) => [x.name, x]));
    expect(Object.keys(byName).sort()).toEqual(["Tcp.RetransSegs", "TcpExt.ListenOverflows", "sockets.timeWait"]);
    const lo = byName["TcpExt.ListenOverflows"];
    expect(lo.kind).toBe("counter");
    expect(lo.change).toBeGreaterThan(0); // the real rise
    expect(lo.after - Math.min(lo.before, lo.afterChange)).toBe(lo.change);
    expect(byName["sockets.timeWait"].kind).toBe("gauge");
    expect(v.verification.readings.every((x) => !x.exceeded)).toBe(true);
    // the bytes verify adds to the checkpoint: the same resource without it
    // (the resources only: this test's program also exports verification as a stack output, which a program need not)
    const bytes = async () => {
      const rs = (await p.export(true)).json.deployment.resources ?? [];
      return { all: (await p.export(true)).text.length, resources: JSON.stringify(rs.filter((x) => x.type !== "pulumi:pulumi:Stack"), null, 4).length };
    };
    const withGate = await bytes();
    await declare(p, web(undefined));
    expect((await p.up({ skipPreview: true })).code).toBe(0);
    const without = await bytes();
    console.log(
      `checkpoint (pulumi stack export --show-secrets), one host, one NetTuning: resources with verify (3 names) ${withGate.resources} B, without ${without.resources} B: ` +
        `+${withGate.resources - without.resources} B; whole export +${withGate.all - without.all} B (with the test's stack output)`,
    );
    const withGateAll = withGate.resources;
    const withoutAll = without.resources;
    expect(withGateAll).toBeGreaterThan(withoutAll);
  });

  test("an unknown name is refused at preview: the key, the fix, no apply session", async () => {
    await declare(p, web({ soakSeconds: 3, maxIncrease: { "TcpExt.ListenOverflow": 0, "sockets.timeWait": 5 } }, { [SOMAX]: 9 }));
    await clearSessions(host);
    const r = await p.preview({ diff: true });
    const out = r.stdout + r.stderr;
    expect(r.code).not.toBe(0);
    expect(out).toContain(`verify.maxIncrease: "TcpExt.ListenOverflow" is not a counter the gate knows: did you mean "TcpExt.ListenOverflows"`);
    expect(out).toContain(`verify.maxIncrease: "sockets.timeWait" is a gauge`);
    expect(countKinds(await sessions(host)).apply ?? 0).toBe(0);
    expect(await values(host, [SOMAX])).toEqual({ [SOMAX]: "8" });
  });

  test("a NicQueues gated on the veth's ethtool -S statistic passes; a statistic the driver lacks is refused on the host before any change", async () => {
    const stats = (await host.exec("ethtool -S eth0")).stdout;
    const stat = /^\s+(rx_queue_0_xdp_packets):/m.exec(stats)?.[1];
    expect(stat).toBeDefined();
    const tx = (await host.exec("cat /sys/class/net/eth0/tx_queue_len")).stdout.trim();
    const nic = (verify: unknown): Record<string, Declared> => ({ ...web(undefined), q: { kind: "nic", args: { interface: "eth0", txQueueLength: 1234, verify } } });
    await declare(p, nic({ soakSeconds: 1, maxIncrease: { "ethtool.no_such_stat": 0 } }));
    const bad = await p.up({ skipPreview: true });
    expect(bad.code).not.toBe(0);
    expect(bad.stdout + bad.stderr).toMatch(/ethtool\.eth0\.no_such_stat cannot be read on \S+: `ethtool -S eth0` lists no such statistic/);
    expect((await host.exec("cat /sys/class/net/eth0/tx_queue_len")).stdout.trim()).toBe(tx);
    await declare(p, nic({ soakSeconds: 1, maxIncrease: { [`ethtool.${stat}`]: 0 } }));
    await clearSessions(host);
    const r = await p.up({ skipPreview: true });
    expect(r.code).toBe(0);
    expect((await host.exec("cat /sys/class/net/eth0/tx_queue_len")).stdout.trim()).toBe("1234");
    const v = (await p.outputs()).q as { verification: { verdict: string; readings: { name: string; before: number; after: number }[] } };
    expect(v.verification.verdict).toBe("pass");
    expect(v.verification.readings.map((x) => x.name)).toEqual([`ethtool.${stat}`]);
    expect(countKinds(await sessions(host))).toEqual({ "live-read": 1, apply: 1 });
  });

  afterAll(async () => {
    if (p) await p.destroy();
  });
});
