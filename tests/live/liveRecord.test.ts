/**
 * The converged record on a real lab host (issue #13): world-readable (0644), it never republishes the value of a
 * sysctl whose /proc/sys file is not world-readable (net.ipv4.tcp_fastopen_key, 0600): such a key is recorded as
 * `unknown`, the others with their value; the next preview is clean (no drift, no change).
 * After an adopting apply with `become: "sudo"`, the record lists no file under the 0700 state dir (where adoption
 * stages the adopted file) and a read as the sudo user (no sudo) shows no drift and no change.
 */
process.env.NET_TUNING_LIVE_PREVIEW = "1"; // the harness evaluates programs under setMocks, where live reads are off by default
import { NetTuning } from "../../components/netTuning";
import { CONVERGED_DIR } from "../../provider/live/read";
import { Stack, UpResult } from "../../testkit/harness";
import { Lab, startLab } from "../../testkit/lab";
import { ok } from "../../testkit/host";
import { withLogs } from "../../testkit/jest";

jest.setTimeout(180_000);
let lab: Lab;
beforeAll(async () => {
  lab = await startLab({ hosts: 2, tag: "liverec" });
}, 120_000);
afterAll(async () => {
  delete process.env.NET_TUNING_LIVE_PREVIEW;
  await lab?.stop();
});

test("a 0600 sysctl is recorded as unknown, without its value; the next preview shows no drift", async () => {
  const host = lab.hosts[0];
  const KEY = "net.ipv4.tcp_fastopen_key";
  const secretKey = "0123abcd-4567ef01-89abcdef-01234567";
  expect((await host.exec(`stat -c %a /proc/sys/net/ipv4/tcp_fastopen_key`)).stdout.trim()).toBe("600");
  const stack = new Stack({ project: "live", stack: "rec" });
  const program = () => {
    const t = new NetTuning("tfo", { connection: host.connection("root"), sysctls: { "net.core.somaxconn": 4096, [KEY]: secretKey } });
    return { drift: t.drift };
  };
  try {
    ok(await stack.up(program));
    expect((await host.exec(`cat /proc/sys/net/ipv4/tcp_fastopen_key`)).stdout.trim()).toBe(secretKey);
    const rec = await host.exec(`stat -c %a ${CONVERGED_DIR}/live.rec.tfo-*; cat ${CONVERGED_DIR}/live.rec.tfo-*`);
    expect(rec.code).toBe(0);
    const [mode, , ...rest] = rec.stdout.trim().split("\n");
    expect(mode).toBe("644");
    expect(rest).toEqual(expect.arrayContaining(["value\tnet.core.somaxconn\t4096", `unknown\t${KEY}`]));
    expect(rec.stdout).not.toContain("0123abcd");
    const { r: p, warn } = await withLogs(async () => ok(await stack.preview(program)));
    expect(p.steps.find((s) => s.urn.endsWith("::tfo-apply"))?.kind).toBe("same");
    expect(warn.filter((m) => m.includes("drift since"))).toEqual([]);
  } finally {
    await stack.destroy();
  }
});

test("become sudo after an adopting apply: no state-dir file in the record; the read as the SSH user shows no drift", async () => {
  const host = lab.hosts[1];
  const HAND = "/etc/sysctl.d/98-hand-liverec.conf";
  await host.exec(`printf 'net.core.somaxconn = 1000\\n' > ${HAND}; echo 1000 > /proc/sys/net/core/somaxconn`);
  const stack = new Stack({ project: "live", stack: "adopted" });
  const program = () => {
    const t = new NetTuning("ad", { connection: host.connection("sudo"), become: "sudo", adopt: ["98-hand-liverec.conf"], sysctls: { "net.core.somaxconn": 4096 } });
    return { drift: t.drift };
  };
  try {
    ok(await stack.up(program));
    expect((await host.exec(`test -e ${HAND}`)).code).toBe(1); // adopted: moved to the state dir
    const rec = await host.exec(`cat ${CONVERGED_DIR}/live.adopted.ad-*`);
    expect(rec.code).toBe(0);
    expect(rec.stdout).toMatch(/^file\t\/etc\/sysctl\.d\/90-net-tuning-ad\.conf\t\d+ \d+$/m);
    expect(rec.stdout).not.toContain("/var/lib/pulumi-net-tuning/");
    const { r: p, warn } = await withLogs(async () => ok(await stack.preview(program)));
    expect(warn.filter((m) => m.includes("drift since"))).toEqual([]);
    expect(p.steps.find((s) => s.urn.endsWith("::ad-apply"))?.kind).toBe("same");
  } finally {
    await stack.destroy();
    await host.exec(`rm -f ${HAND}`);
  }
});

// Issue #32, preview equals up: a read as the sudo user (become "sudo": no sudo at preview) cannot see the root-only
// state directory, so another resource's journal holding a declared key is not checked there. The preview says so,
// and `up` (as root) refuses before anything changes; a read as root refuses at preview already (control).
test("a read as the sudo user says the root-only checks are still to come; up refuses another resource's key", async () => {
  const host = lab.hosts[1];
  const KEY = "net.ipv4.tcp_fin_timeout";
  const before = (await host.exec(`cat /proc/sys/net/ipv4/tcp_fin_timeout`)).stdout.trim();
  const first = new Stack({ project: "live", stack: "owner-a" });
  const second = new Stack({ project: "live", stack: "owner-b" });
  const prog = (name: string, who: "root" | "sudo", v: number) => () => {
    const t = new NetTuning(name, { connection: host.connection(who), ...(who === "sudo" ? { become: "sudo" as const } : {}), sysctls: { [KEY]: v } });
    return { drift: t.drift };
  };
  try {
    ok(await first.up(prog("a", "sudo", 21)));
    const { r: p, info } = await withLogs(async () => second.preview(prog("b", "sudo", 22)));
    expect(p.error).toBeUndefined(); // not seen at preview: the other journal is root's
    expect(info.filter((m) => m.startsWith('NetTuning "b": read as'))).toEqual([
      `NetTuning "b": read as ${host.connection("sudo").user} (no sudo at preview), so the checks only root can make (another resource's journal holding a declared key) run at \`pulumi up\`, before anything changes`,
    ]);
    const u = await second.up(prog("b", "sudo", 22));
    expect(u.ok).toBe(false);
    expect(u.error).toContain(`${KEY} is already managed by live/owner-a/a on this host`);
    expect((await host.exec(`cat /proc/sys/net/ipv4/tcp_fin_timeout`)).stdout.trim()).toBe("21");
    // control: as root the preview reads the journals and refuses there, with the same words, and says nothing of sudo
    const { r: pr, info: infoRoot } = await withLogs(async () => second.preview(prog("b", "root", 22)));
    expect(pr.error).toContain(`${KEY} is already managed by live/owner-a/a on this host`);
    expect(infoRoot.filter((m) => m.includes("no sudo at preview"))).toEqual([]);
  } finally {
    await second.destroy();
    await first.destroy();
  }
  expect((await host.exec(`cat /proc/sys/net/ipv4/tcp_fin_timeout`)).stdout.trim()).toBe(before);
});
