/**
 * Issue #33, "Profiles measured against ESnet": a profile's `pacing` and `congestionControl` options, checked on a real
 * lab host (a network namespace) before anything changes, at preview (the live read's cc-… facts, sysctl.sh
 * nts_live_cc) as at `up` (the host preflight), in the same words (provider/host/messages.ts CC_UNAVAILABLE,
 * CC_NOT_ALLOWED, KEYS_ABSENT):
 * - `congestionControl: "htcp"`: not in tcp_available_congestion_control and no tcp_htcp module on this kernel;
 * - an available algorithm outside the host-wide tcp_allowed_congestion_control: a namespace may not pick it;
 * - `pacing: "fq"`: net.core.default_qdisc is host-wide, absent in the namespace: the usual refusal.
 * Both also say why the plan's `@module tcp_<name>` cannot be loaded, in modprobe's words (MODULE_UNLOADABLE: the
 * preflight's modprobe, the read's dry run `modprobe -D`; tests/live/modules.test.ts).
 */
process.env.NET_TUNING_LIVE_PREVIEW = "1"; // the harness evaluates programs under setMocks, where live reads are off by default
import { NetTuning } from "../../components/netTuning";
import { CC_NOT_ALLOWED, CC_UNAVAILABLE, CHILD_NETNS_NOTE, HOST_WIDE_FIX, keysAbsentRefusal, MODULE_UNLOADABLE } from "../../provider/host/messages";
import { absenceHint, isHostWide } from "../../provider/sysctl/catalogue";
import { Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { snapshot } from "../../testkit/host";
import { within } from "../../testkit/jest";

jest.setTimeout(180_000);
let lab: Lab;
let host: LabHost;
beforeAll(async () => {
  lab = await startLab({ hosts: 1, tag: "cc" });
  host = lab.hosts[0];
}, 120_000);
afterAll(async () => {
  delete process.env.NET_TUNING_LIVE_PREVIEW; // jest runs other files in this worker
  await lab?.stop();
});

const problems = (error: string | undefined) => (error ?? "").split("\n").filter((l) => l.startsWith("  - ")).map((l) => l.slice(4)).sort();

/** A preview through the harness with the real live read (bounded): its outcome and what it registered. */
async function preview(args: Record<string, unknown>): Promise<{ ok: boolean; error?: string; registered: string[] }> {
  const st = new Stack({ project: "cc", stack: `p${Math.random().toString(36).slice(2, 8)}` });
  const r = await within(60_000, "the preview", st.preview(() => {
    new NetTuning("cc", { connection: host.connection(), ...args } as never);
  }));
  return { ok: r.ok, error: r.error, registered: r.resources.map((x) => `${x.type}::${x.name}`) };
}

/** Refused at preview with exactly `expected` and nothing registered; `up` (live preview off) refused by the host with them too; the host unchanged. */
async function refused(args: Record<string, unknown>, expected: string[]): Promise<string[]> {
  const before = await snapshot(host);
  const p = await preview(args);
  expect(p.ok).toBe(false);
  expect(problems(p.error)).toEqual([...expected].sort());
  expect(p.registered.filter((x) => x.startsWith("command:"))).toEqual([]);
  expect(await snapshot(host)).toBe(before);
  const up = await new Stack({ project: "cc", stack: `s${Math.random().toString(36).slice(2, 8)}` }).up(() => {
    new NetTuning("cc", { connection: host.connection(), livePreview: false, ...args } as never);
  });
  expect(up.ok).toBe(false);
  expect(up.error).toContain("preflight refused the change");
  expect(problems(up.error)).toEqual(expect.arrayContaining(expected));
  expect(await snapshot(host)).toBe(before);
  return problems(up.error);
}

const facts = async () => {
  const r = await host.exec("cat /proc/sys/net/ipv4/tcp_available_congestion_control /proc/sys/net/ipv4/tcp_allowed_congestion_control; uname -r; ls /lib/modules/$(uname -r)/kernel/net/ipv4/ 2>/dev/null | grep -c '^tcp_' || true");
  const [available, allowed, kernel, modules] = r.stdout.trim().split("\n");
  return { available, allowed, kernel, modules: Number(modules) };
};

const qdiscAbsent = (kernel: string) => keysAbsentRefusal(["net.core.default_qdisc"], absenceHint, isHostWide, kernel, true);

test("congestionControl: \"htcp\", neither available nor loadable here, and pacing fq in a namespace: refused at preview as at up, naming the value and the available ones", async () => {
  const f = await facts();
  expect(f.available.split(" ")).not.toContain("htcp");
  expect(f.modules).toBe(0); // no module directory for this kernel: nothing is loadable
  // and why the plan's @module tcp_htcp cannot be loaded, in modprobe's own words (no module tree for this kernel)
  const module = MODULE_UNLOADABLE.text({ module: "tcp_htcp", said: `modprobe: FATAL: Module tcp_htcp not found in directory /lib/modules/${f.kernel}` });
  const expected = [qdiscAbsent(f.kernel), CC_UNAVAILABLE.text({ name: "htcp", available: f.available, loadable: "none" }), module];
  expect(expected[0]).toContain(CHILD_NETNS_NOTE);
  expect(expected[0]).toContain(HOST_WIDE_FIX);
  const up = await refused({ profile: { name: "nvmeTcpLatency", congestionControl: "htcp" } }, expected);
  expect(up).toHaveLength(3);
});

test("a congestion control available but not allowed in the lab namespace (cubic here): refused at preview as at up", async () => {
  const f = await facts();
  // the kernel's allowed list is host-wide (here "reno bbr"); an available name outside it
  const name = f.available.split(" ").find((n) => !f.allowed.split(" ").includes(n));
  expect(name).toBeDefined();
  await refused({ profile: { name: "nvmeTcpLatency", congestionControl: name } }, [qdiscAbsent(f.kernel), CC_NOT_ALLOWED.text({ name: name!, allowed: f.allowed })]);
});

test("an allowed congestion control: the preview passes (live → declared), up applies it, destroy puts the original back", async () => {
  const f = await facts();
  const name = f.allowed.split(" ")[0];
  const original = (await host.exec("cat /proc/sys/net/ipv4/tcp_congestion_control")).stdout.trim();
  const p = await preview({ sysctls: { "net.ipv4.tcp_congestion_control": name } });
  expect([p.ok, p.error]).toEqual([true, undefined]);
  expect(p.registered).toEqual(expect.arrayContaining(["command:remote:Command::cc-apply"]));
  const s = new Stack({ project: "cc", stack: "ok" });
  const up = await s.up(() => {
    new NetTuning("cc", { connection: host.connection(), sysctls: { "net.ipv4.tcp_congestion_control": name } });
  });
  expect([up.ok, up.error]).toEqual([true, undefined]);
  expect((await host.exec("cat /proc/sys/net/ipv4/tcp_congestion_control")).stdout.trim()).toBe(name);
  expect((await s.destroy()).ok).toBe(true);
  expect((await host.exec("cat /proc/sys/net/ipv4/tcp_congestion_control")).stdout.trim()).toBe(original);
});
