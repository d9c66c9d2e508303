/**
 * Drift of what preview.test.ts does not cover (issue #13), on real lab hosts through the harness (pulumi-command
 * 1.2.1 semantics): NicQueues channels changed by hand (`ethtool -L` on the lab's veth, kernel ≥ 5.8), the NicQueues
 * boot script and systemd unit of `persistence: "systemd"` edited by hand, and NetTuning's modules-load file
 * (/etc/modules-load.d, written when a key needs a module) edited and removed by hand. Each: the drift warning with
 * both values, the `drift` output, a pending update of `-apply` only; `up` repairs in one session; the next preview
 * is clean and the next `up` opens no session.
 */
process.env.NET_TUNING_LIVE_PREVIEW = "1"; // the harness evaluates programs under setMocks, where live reads are off by default
import { NetTuning } from "../../components/netTuning";
import { NicQueues, NicQueuesArgs } from "../../components/nicQueues";
import { Stack, UpResult } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { ok, sysctl } from "../../testkit/host";
import { stacksDestroyedAfterEach, withLogs } from "../../testkit/jest";

jest.setTimeout(180_000);
let lab: Lab;
beforeAll(async () => {
  lab = await startLab({ hosts: 3, tag: "livedrift" });
}, 120_000);
afterAll(async () => {
  delete process.env.NET_TUNING_LIVE_PREVIEW; // jest runs other files in this worker
  await lab?.stop();
});

const newStack = stacksDestroyedAfterEach("livedrift");
const stepOf = (r: UpResult, name: string) => r.steps.find((s) => s.urn.endsWith(`::${name}`))?.kind;
function outOf(r: UpResult, key: string, name: string): unknown {
  return r.resources.find((x) => !x.custom && x.name === name)?.outputs?.[key];
}
const drifts = (warn: string[]) => warn.filter((m) => m.includes(": drift since its last apply"));

/** After a hand change: the preview shows `drift` (and the warning lines), `up` repairs in 1 session, then clean, 0 sessions. */
async function expectRepaired(stack: Stack, program: () => Record<string, unknown>, name: string, drift: Record<string, string>, warnLines: string[]) {
  const p = await withLogs(() => stack.preview(program));
  ok(p.r);
  expect(stepOf(p.r, `${name}-apply`)).toBe("update");
  expect(p.r.steps.filter((s) => s.kind !== "same").map((s) => `${s.urn.split("::").pop()} ${s.kind}`)).toEqual([`${name}-apply update`, `${name}-restore update`]);
  expect(outOf(p.r, "drift", name)).toEqual(drift);
  const w = drifts(p.warn);
  expect(w).toHaveLength(1);
  for (const l of warnLines) expect(w[0].split("\n")).toContain(l);
  const u = ok(await stack.up(program));
  expect(u.sessions.total).toBe(1);
  expect(u.runs.map((x) => [x.name, x.op])).toEqual([[`${name}-apply`, "update"]]);
  // the -restore child shows as an update in the preview only because its stdin comes from the apply's output
  // (unknown until the apply runs); in the up it resolves to the stored originals: no change
  expect(stepOf(u, `${name}-restore`)).toBe("same");
  const clean = await withLogs(() => stack.preview(program));
  expect(stepOf(ok(clean.r), `${name}-apply`)).toBe("same");
  expect(drifts(clean.warn)).toEqual([]);
  expect(outOf(clean.r, "drift", name)).toEqual({});
  expect(ok(await stack.up(program)).sessions.total).toBe(0);
}

function nicProgram(host: LabHost, name: string, args: Omit<NicQueuesArgs, "connection" | "interface">) {
  return () => {
    const n = new NicQueues(name, { connection: host.connection(), interface: host.iface, ...args });
    return { live: n.live, drift: n.drift };
  };
}

describe("NicQueues", () => {
  test("channels changed by hand (ethtool -L rx/tx on the veth): drift, repaired in one session, then clean", async () => {
    const host = lab.hosts[0];
    const i = host.iface;
    // the lab's veth takes separate rx/tx counts up to 4 (kernel ≥ 5.8); this kernel:
    const probe = await host.exec(`ethtool -L ${i} rx 3 tx 3 && ethtool -l ${i}`);
    expect(probe.code).toBe(0);
    expect(probe.stdout.split("Current hardware settings:")[1]).toMatch(/RX:\s+3\n\s*TX:\s+3/);
    const stack = newStack("chan");
    // confirm off: the repair in one session (a channel change is confirmed by default since issue #34: a second one)
    const program = nicProgram(host, "ch", { persistence: "none", channels: { rx: 2, tx: 2 }, confirm: { timeoutSeconds: 0 } });
    const first = await withLogs(() => stack.preview(program));
    expect(first.info.join("\n")).toContain(`  ${i}/channel.rx: 3 → 2`);
    ok(await stack.up(program));
    const cur = async () => (await host.exec(`ethtool -l ${i}`)).stdout.split("Current hardware settings:")[1];
    expect(await cur()).toMatch(/RX:\s+2\n\s*TX:\s+2/);

    await host.exec(`ethtool -L ${i} rx 4 tx 1`);
    await expectRepaired(stack, program, "ch", { [`${i}/channel.rx`]: "2 → 4", [`${i}/channel.tx`]: "2 → 1" }, [
      `  ${i}/channel.rx: 2 (last applied) → 4 (on the host now)`,
      `  ${i}/channel.tx: 2 (last applied) → 1 (on the host now)`,
    ]);
    expect(await cur()).toMatch(/RX:\s+2\n\s*TX:\s+2/);
    ok(await stack.destroy());
  });

  test("persistence systemd: the boot script, then the unit, edited by hand: drift each time, rewritten by up, then clean", async () => {
    const host = lab.hosts[1];
    const i = host.iface;
    const stack = newStack("unit");
    const program = nicProgram(host, "bu", { persistence: "systemd", txQueueLength: 2468 });
    ok(await stack.up(program));
    const script = `/usr/local/libexec/net-tuning/nic-${i}.sh`;
    const unit = `/etc/systemd/system/net-tuning-nic-${i}.service`;
    const files = await host.exec(`cat ${script} && echo ---- && cat ${unit}`);
    expect(files.code).toBe(0);
    expect(files.stdout).toContain("txqueuelen 2468");
    const [scriptText, unitText] = files.stdout.split("----\n");

    await host.exec(`sed -i 's/txqueuelen 2468/txqueuelen 2469/' ${script}`);
    expect((await host.exec(`grep -c 'txqueuelen 2469' ${script}`)).stdout.trim()).toBe("1");
    await expectRepaired(stack, program, "bu", { [script]: "content of the last apply → edited on the host" }, [`  ${script}: edited on the host since the last apply`]);
    expect((await host.exec(`cat ${script}`)).stdout).toBe(scriptText);

    await host.exec(`printf '# local override\\n' >> ${unit}`);
    await expectRepaired(stack, program, "bu", { [unit]: "content of the last apply → edited on the host" }, [`  ${unit}: edited on the host since the last apply`]);
    expect((await host.exec(`cat ${unit}`)).stdout).toBe(unitText);
    ok(await stack.destroy());
  });
});

describe("NetTuning", () => {
  test("the modules-load file edited, then removed, by hand: drift each time, rewritten by up, then clean", async () => {
    const host = lab.hosts[2];
    const KEY = "net.netfilter.nf_conntrack_tcp_timeout_established";
    // nf_conntrack is loaded on this machine (the lab cannot load modules: no CAP_SYS_MODULE): its keys are per netns
    expect((await host.exec(`test -d /sys/module/nf_conntrack && cat /proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established`)).code).toBe(0);
    const stack = newStack("mods");
    const program = () => {
      const t = new NetTuning("md", { connection: host.connection(), sysctls: { [KEY]: 7200 } });
      return { live: t.live, drift: t.drift };
    };
    ok(await stack.up(program));
    expect(await sysctl(host, KEY)).toBe("7200");
    const ls = await host.exec("ls /etc/modules-load.d/pulumi-net-tuning-*.conf");
    expect(ls.code).toBe(0);
    const mods = ls.stdout.trim();
    expect(mods.split("\n")).toHaveLength(1);
    const content = (await host.exec(`cat ${mods}`)).stdout;
    expect(content).toMatch(/\nnf_conntrack\n$/);

    await host.exec(`printf 'nf_conntrack_ftp\\n' >> ${mods}`);
    await expectRepaired(stack, program, "md", { [mods]: "content of the last apply → edited on the host" }, [`  ${mods}: edited on the host since the last apply`]);
    expect((await host.exec(`cat ${mods}`)).stdout).toBe(content);

    await host.exec(`rm ${mods}`);
    await expectRepaired(stack, program, "md", { [mods]: "content of the last apply → removed" }, [`  ${mods}: removed since the last apply`]);
    expect((await host.exec(`cat ${mods}`)).stdout).toBe(content);
    ok(await stack.destroy());
    expect((await host.exec(`ls ${mods} 2>&1`)).code).not.toBe(0);
  });
});
