/**
 * Live previews and drift (issue #13) on real lab hosts, through the harness (pulumi-command 1.2.1 semantics) running
 * the components' exact commands: live → declared in a new resource's preview; a hand change shows both values and a
 * pending change of `-apply`; `up` repairs it in one session, then the preview is clean and the next `up` opens no
 * session; an unreachable or hung host gives one warning within the bound and no change; a sudo user reads without
 * sudo; NicQueues txqueuelen and feature drift; a hand edit of the sysctl.d file and of the rc.local block.
 */
process.env.NET_TUNING_LIVE_PREVIEW = "1"; // the harness evaluates programs under setMocks, where live reads are off by default
import { execFileSync } from "child_process";
import { readFileSync } from "fs";
import * as pulumi from "@pulumi/pulumi";
import { NetTuning } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";
import { liveStats } from "../../components/live";
import { CONVERGED_DIR, LIVE_READ_COMMAND, parseLiveRead, renderLiveRead } from "../../provider/live/read";
import { readOverSsh } from "../../provider/live/ssh";
import { Stack, UpResult } from "../../testkit/harness";
import { Lab, LabHost, startLab, Who } from "../../testkit/lab";
import { ok, snapshot, sysctl } from "../../testkit/host";
import { withLogs } from "../../testkit/jest";

jest.setTimeout(180_000);
let lab: Lab;
beforeAll(async () => {
  lab = await startLab({ hosts: 4, tag: "preview" });
}, 120_000);
afterAll(async () => {
  delete process.env.NET_TUNING_LIVE_PREVIEW; // jest runs other files in this worker
  await lab?.stop();
});

const SOMAXCONN = "net.core.somaxconn";
const FIN = "net.ipv4.tcp_fin_timeout";

/** Runs a harness operation with pulumi.log.info/warn collected, and the number of host reads it made. */
async function logged(f: () => Promise<UpResult>): Promise<{ r: UpResult; info: string[]; warn: string[]; reads: number }> {
  const reads0 = liveStats.reads;
  const l = await withLogs(f);
  return { ...l, reads: liveStats.reads - reads0 };
}
/** The drift warnings among the logged ones (validation advice is logged too). */
const drifts = (warn: string[]) => warn.filter((m) => m.includes(": drift since its last apply"));
/** Every stack of a test is destroyed after it, also when it failed (a journal left behind would refuse the next test's keys). */
const stacks: Stack[] = [];
function newStack(stack: string): Stack {
  const s = new Stack({ project: "live", stack });
  stacks.push(s);
  return s;
}
afterEach(async () => {
  for (const s of stacks.splice(0)) await s.destroy();
});
/** The pid (in this namespace) of the lab host's sshd listener: the "sshd: … [listener]" among the netns's processes. */
async function listenerPid(host: LabHost): Promise<number> {
  const pids = execFileSync("ip", ["netns", "pids", host.netns], { encoding: "utf8" }).split("\n").filter(Boolean).map(Number).sort((a, b) => a - b);
  const pid = pids.find((p) => { try { return readFileSync(`/proc/${p}/cmdline`, "utf8").includes("[listener]"); } catch { return false; } });
  if (!pid) throw new Error(`no sshd listener in ${host.netns}`);
  return pid;
}
/** A component output as registered (the stack outputs of a preview are not resolved by the harness). */
function outOf(r: UpResult, key: string, name: string): unknown {
  return r.resources.find((x) => !x.custom && x.name === name)?.outputs?.[key];
}
const stepOf = (r: UpResult, name: string) => r.steps.find((s) => s.urn.endsWith(`::${name}`))?.kind;

function sysProgram(host: LabHost, name: string, sysctls: Record<string, number>, who: Who = "root", port?: number) {
  return () => {
    const c = host.connection(who);
    const t = new NetTuning(name, { connection: { ...c, port: port ?? c.port }, become: who === "sudo" ? "sudo" : undefined, sysctls });
    return { live: t.live, drift: t.drift, applied: t.applied };
  };
}

describe("NetTuning", () => {
  test("new resource: live → declared in the preview; up records the converged state; the read changes nothing", async () => {
    const host = lab.hosts[0];
    await host.exec(`echo 1111 > /proc/sys/net/core/somaxconn`);
    const fin = await sysctl(host, FIN);
    const before = await snapshot(host);
    const stack = newStack("new");
    const program = sysProgram(host, "web", { [SOMAXCONN]: 4096, [FIN]: Number(fin) });
    const p = await logged(() => stack.preview(program));
    ok(p.r);
    expect(p.reads).toBe(1);
    expect(stepOf(p.r, "web-apply")).toBe("create");
    const line = p.info.find((m) => m.startsWith(`NetTuning "web" on ${host.address}:${host.port}`));
    expect(line).toBeDefined();
    expect(line!.split("\n")).toEqual([
      `NetTuning "web" on ${host.address}:${host.port}: 1 of 2 settings will change (live → declared)`,
      `  ${SOMAXCONN}: 1111 → 4096`,
      `  1 already as declared: ${FIN}`,
    ]);
    expect(drifts(p.warn)).toEqual([]);
    expect(outOf(p.r, "live", "web")).toEqual({ [FIN]: fin, [SOMAXCONN]: "1111" });
    expect(outOf(p.r, "drift", "web")).toEqual({});
    expect(await snapshot(host)).toBe(before); // the read wrote nothing

    const u = await logged(() => stack.up(program));
    ok(u.r);
    expect(u.reads).toBe(1);
    expect(await sysctl(host, SOMAXCONN)).toBe("4096");
    const rec = await host.exec(`stat -c '%a %U' ${CONVERGED_DIR} ${CONVERGED_DIR}/live.new.web-*; cat ${CONVERGED_DIR}/live.new.web-*`);
    expect(rec.code).toBe(0);
    const [dirMode, fileMode, header, ...rest] = rec.stdout.trim().split("\n");
    expect([dirMode, fileMode]).toEqual(["755 root", "644 root"]);
    expect(header).toMatch(/^net-tuning-converged v1\tlive\.new\.web-[0-9a-f]{8}\t0\tlive\/new\/web$/);
    expect(rest).toEqual(expect.arrayContaining([`value\t${SOMAXCONN}\t4096`, `value\t${FIN}\t${fin}`]));
    expect(rest.some((l) => /^file\t\/etc\/sysctl\.d\/90-net-tuning-web\.conf\t\d+ \d+$/.test(l))).toBe(true);

    const clean = await logged(() => stack.preview(program));
    expect(stepOf(ok(clean.r), "web-apply")).toBe("same");
    expect(clean.info.join("\n")).toContain(`0 of 2 settings will change`);
    expect(drifts(clean.warn)).toEqual([]);
    expect(ok(await stack.up(program)).sessions.total).toBe(0);

    ok(await stack.destroy());
    expect((await host.exec(`ls ${CONVERGED_DIR} 2>&1`)).code).not.toBe(0); // removed with the last record
  });

  test.each<Who>(["root", "sudo"])("hand change as %s: both values and a pending change; up repairs in one session; then clean, 0 sessions", async (who) => {
    const host = lab.hosts[who === "root" ? 1 : 2];
    const stack = new Stack({ project: "live", stack: `drift-${who}` });
    const program = sysProgram(host, "edge", { [SOMAXCONN]: 4096, [FIN]: 17 }, who);
    ok(await stack.up(program));
    await host.exec(`echo 1234 > /proc/sys/net/core/somaxconn`);

    const p = await logged(() => stack.preview(program));
    ok(p.r);
    expect(stepOf(p.r, "edge-apply")).toBe("update");
    expect(p.warn.join("\n")).toContain(`  ${SOMAXCONN}: 4096 (last applied) → 1234 (on the host now)`);
    expect(p.info.join("\n")).toContain(`  ${SOMAXCONN}: 1234 → 4096`);
    expect(outOf(p.r, "drift", "edge")).toEqual({ [SOMAXCONN]: "4096 → 1234" });
    expect(outOf(p.r, "live", "edge")).toMatchObject({ [SOMAXCONN]: "1234", [FIN]: "17" });
    // the plan (stdin) carries nothing from the host: only `update` (the repair token) differs
    const applyIn = p.r.resources.find((r) => r.name === "edge-apply")!.inputs;
    expect(applyIn.update).toMatch(/ sysctl apply-update@[0-9a-f]{16} /);
    expect(applyIn.stdin).toBe(stack.get("edge-apply")!.inputs.stdin);

    const u = ok(await stack.up(program));
    expect(u.sessions.total).toBe(1);
    expect(u.runs.map((x) => [x.name, x.op])).toEqual([["edge-apply", "update"]]);
    expect(await sysctl(host, SOMAXCONN)).toBe("4096");

    const clean = await logged(() => stack.preview(program));
    expect(stepOf(ok(clean.r), "edge-apply")).toBe("same");
    expect(drifts(clean.warn)).toEqual([]);
    expect(ok(await stack.up(program)).sessions.total).toBe(0);

    // the same hand change again is a new drift (another token): shown again, repaired again
    await host.exec(`echo 1234 > /proc/sys/net/core/somaxconn`);
    const again = await logged(() => stack.preview(program));
    expect(stepOf(ok(again.r), "edge-apply")).toBe("update");
    expect(ok(await stack.up(program)).sessions.total).toBe(1);
    expect(ok(await stack.up(program)).sessions.total).toBe(0);
    ok(await stack.destroy());
  });

  test("a hand edit of the sysctl.d file is drift; up rewrites it", async () => {
    const host = lab.hosts[3];
    const stack = newStack("file");
    const program = sysProgram(host, "f", { [SOMAXCONN]: 2048 });
    ok(await stack.up(program));
    const file = "/etc/sysctl.d/90-net-tuning-f.conf";
    const content = (await host.exec(`cat ${file}`)).stdout;
    await host.exec(`echo 'net.ipv4.tcp_sack = 0' >> ${file}`);
    const p = await logged(() => stack.preview(program));
    expect(stepOf(ok(p.r), "f-apply")).toBe("update");
    expect(p.warn.join("\n")).toContain(`  ${file}: edited on the host since the last apply`);
    expect(outOf(p.r, "drift", "f")).toEqual({ [file]: "content of the last apply → edited on the host" });
    expect(ok(await stack.up(program)).sessions.total).toBe(1);
    expect((await host.exec(`cat ${file}`)).stdout).toBe(content);
    const clean = await logged(() => stack.preview(program));
    expect(stepOf(ok(clean.r), "f-apply")).toBe("same");
    expect(drifts(clean.warn)).toEqual([]);
    ok(await stack.destroy());
  });

  test("unreachable port: one warning naming host and reason, within the bound; the preview completes", async () => {
    const host = lab.hosts[0];
    const stack = newStack("refused");
    const t0 = Date.now();
    const p = await logged(() => stack.preview(sysProgram(host, "gone", { [SOMAXCONN]: 4096 }, "root", 1)));
    ok(p.r);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(p.warn).toEqual([
      `NetTuning "gone": live preview skipped: ${host.address}:1: connection refused; the preview shows the plan only (drift is not checked)`,
    ]);
    expect(outOf(p.r, "live", "gone")).toEqual({});
  });

  test("a host that does not answer (sshd stopped) after a repair: warning within 10 s, no change shown, up opens 0 sessions", async () => {
    const host = lab.hosts[1];
    const stack = newStack("hung");
    const program = sysProgram(host, "hung", { [SOMAXCONN]: 3000 });
    ok(await stack.up(program));
    await host.exec(`echo 1234 > /proc/sys/net/core/somaxconn`);
    ok(await stack.up(program)); // the repair: state holds a token other than 0
    expect(stack.get("hung-apply")!.inputs.update).toMatch(/apply-update@[0-9a-f]{16} /);
    const sshd = await listenerPid(host);
    process.kill(sshd, "SIGSTOP"); // from outside: sshd is pid 1 of the host's pid namespace, which ignores its own SIGSTOP
    try {
      const t0 = Date.now();
      const p = await logged(() => stack.preview(program));
      const ms = Date.now() - t0;
      ok(p.r);
      expect(ms).toBeLessThan(12_000);
      expect(p.warn).toEqual([expect.stringMatching(new RegExp(`^NetTuning "hung": live preview skipped: ${host.address}:${host.port}: (no answer within 10 s|SSH handshake failed \\(Timed out while waiting for handshake\\));`))]);
      expect(stepOf(p.r, "hung-apply")).toBe("same");
      expect(p.r.resources.find((r) => r.name === "hung-apply")!.options.ignoreChanges).toEqual(["create", "update"]);
    } finally {
      process.kill(sshd, "SIGCONT");
    }
    expect(ok(await stack.up(program)).sessions.total).toBe(0);
    ok(await stack.destroy());
  });

  test("livePreview: false and NET_TUNING_LIVE_PREVIEW=0: no read, plan-only, no change from drift; after a repair, one update of the command", async () => {
    const host = lab.hosts[2];
    const stack = newStack("off");
    const program = (livePreview?: boolean) => () => {
      const t = new NetTuning("off", { connection: host.connection(), sysctls: { [SOMAXCONN]: 3333 }, livePreview });
      return { live: t.live };
    };
    ok(await stack.up(program()));
    await host.exec(`echo 1234 > /proc/sys/net/core/somaxconn`);
    const p = await logged(() => stack.preview(program(false)));
    expect(p.reads).toBe(0);
    expect(stepOf(ok(p.r), "off-apply")).toBe("same");
    expect(outOf(p.r, "live", "off")).toEqual({});
    process.env.NET_TUNING_LIVE_PREVIEW = "0";
    try {
      const q = await logged(() => stack.preview(program()));
      expect(q.reads).toBe(0);
      expect(stepOf(ok(q.r), "off-apply")).toBe("same");
    } finally {
      process.env.NET_TUNING_LIVE_PREVIEW = "1";
    }
    // documented trade-off: after a repair (a token in state), a run with live previews off proposes token 0 again:
    // one update whose only difference is the `create` and `update` commands (both carry the token); it changes
    // nothing on the host
    ok(await stack.up(program())); // repairs somaxconn (token recorded)
    const r = await logged(() => stack.preview(program(false)));
    expect(stepOf(ok(r.r), "off-apply")).toBe("update");
    const stored = stack.get("off-apply")!.inputs;
    const proposed = r.r.resources.find((x) => x.name === "off-apply")!.inputs;
    expect(Object.keys(proposed).filter((k) => JSON.stringify(proposed[k]) !== JSON.stringify(stored[k]))).toEqual(["create", "update"]);
    ok(await stack.destroy());
  });

  test("through a proxy (bastion), with the key and a password as secrets: read, nothing secret in logs or outputs", async () => {
    const host = lab.hosts[2];
    const c = host.connection("root");
    const PASSWORD = "not-the-password-7f3a";
    const stack = newStack("proxy");
    const program = () => {
      const connection = { host: "127.0.0.1", port: c.port, user: c.user, privateKey: pulumi.secret(c.privateKey), password: pulumi.secret(PASSWORD), proxy: { ...c, privateKey: pulumi.secret(c.privateKey) } };
      const t = new NetTuning("px", { connection, sysctls: { [SOMAXCONN]: 2222 } });
      return { live: t.live };
    };
    const p = await logged(() => stack.preview(program));
    ok(p.r);
    expect(p.reads).toBe(1);
    expect(p.info.join("\n")).toContain(`NetTuning "px" on 127.0.0.1:${c.port} (via ${host.address}): 1 of 1 setting will change`);
    const everything = [...p.info, ...p.warn, JSON.stringify(outOf(p.r, "live", "px")), JSON.stringify(outOf(p.r, "drift", "px"))].join("\n");
    const keyBody = c.privateKey.split("\n").filter((l) => l.length >= 16 && !l.startsWith("-----"));
    expect(keyBody.length).toBeGreaterThan(0);
    for (const frag of [PASSWORD, ...keyBody]) expect(everything).not.toContain(frag);
    const apply = p.r.resources.find((r) => r.name === "px-apply")!;
    expect(apply.secretInputs).toContain("connection");
  });

  test("a refused login: one warning naming the user and the host, no change", async () => {
    const host = lab.hosts[0];
    const stack = newStack("login");
    const program = () => {
      const t = new NetTuning("nl", { connection: { ...host.connection("plain"), user: "nosuchuser" }, sysctls: { [SOMAXCONN]: 2222 } });
      return { live: t.live };
    };
    const p = await logged(() => stack.preview(program));
    ok(p.r);
    expect(p.warn).toEqual([`NetTuning "nl": live preview skipped: ${host.address}:${host.port}: login as nosuchuser refused (check the key, password or agent); the preview shows the plan only (drift is not checked)`]);
  });
});

describe("NicQueues", () => {
  test("txqueuelen and feature drift, rc.local block edited by hand; NetTuning + NicQueues on one host share one read", async () => {
    const host = lab.hosts[3];
    const stack = newStack("nic");
    const program = () => {
      const t = new NetTuning("hs", { connection: host.connection(), sysctls: { [FIN]: 19 } });
      const n = new NicQueues("nq", { connection: host.connection(), interface: host.iface, persistence: "rc.local", txQueueLength: 1357, features: { gro: false } });
      return { live: n.live, drift: n.drift, sysLive: t.live };
    };
    const first = await logged(() => stack.preview(program));
    ok(first.r);
    expect(first.reads).toBe(1); // one session for both resources on the host
    const txq = (await host.exec(`cat /sys/class/net/${host.iface}/tx_queue_len`)).stdout.trim();
    expect(first.info.join("\n")).toContain(`  ${host.iface}/txqueuelen: ${txq} → 1357`);
    ok(await stack.up(program));
    expect(ok(await stack.up(program)).sessions.total).toBe(0);

    await host.exec(`ip link set dev ${host.iface} txqueuelen 999 && ethtool -K ${host.iface} gro on`);
    const p = await logged(() => stack.preview(program));
    ok(p.r);
    expect(stepOf(p.r, "nq-apply")).toBe("update");
    expect(stepOf(p.r, "hs-apply")).toBe("same");
    expect(outOf(p.r, "drift", "nq")).toEqual({
      [`${host.iface}/feature.generic-receive-offload`]: "off → on",
      [`${host.iface}/txqueuelen`]: "1357 → 999",
    });
    expect(p.warn.join("\n")).toContain(`  ${host.iface}/txqueuelen: 1357 (last applied) → 999 (on the host now)`);
    const u = ok(await stack.up(program));
    // and the confirm (a feature change is confirmed by default, issue #34): the -restore child's create
    expect(u.runs.map((x) => [x.name, x.op])).toEqual([["nq-apply", "update"], ["nq-restore", "update"]]);
    expect((await host.exec(`cat /sys/class/net/${host.iface}/tx_queue_len`)).stdout.trim()).toBe("1357");
    const clean = await logged(() => stack.preview(program));
    expect(stepOf(ok(clean.r), "nq-apply")).toBe("same");
    expect(drifts(clean.warn)).toEqual([]);
    expect(ok(await stack.up(program)).sessions.total).toBe(0);

    // a hand edit inside our rc.local block is drift; an edit elsewhere in rc.local is not
    const rc = (await host.exec("ls /etc/rc.d/rc.local /etc/rc.local 2>/dev/null | head -1")).stdout.trim();
    await host.exec(`sed -i '1a # someone else' ${rc}`);
    const outside = await logged(() => stack.preview(program));
    expect(stepOf(ok(outside.r), "nq-apply")).toBe("same");
    await host.exec(`sed -i 's/txqueuelen 1357/txqueuelen 1358/' ${rc}`);
    const inside = await logged(() => stack.preview(program));
    expect(stepOf(ok(inside.r), "nq-apply")).toBe("update");
    expect(outOf(inside.r, "drift", "nq")).toEqual({ [rc]: "content of the last apply → edited on the host" });
    ok(await stack.up(program));
    expect((await host.exec(`grep -c 'txqueuelen 1358' ${rc}`)).stdout.trim()).toBe("0");
    ok(await stack.destroy());
  });
});

describe("the read as a user without sudo", () => {
  test("NicQueues values read by a plain user equal root's; the host is unchanged", async () => {
    const host = lab.hosts[0];
    const i = host.iface;
    const keys = [`${i}/txqueuelen`, `${i}/feature.generic-receive-offload`, `${i}/feature.tcp-segmentation-offload`, `${i}/ring.rx`, `${i}/channel.rx`, `${i}/coalesce.rx-usecs`, `${i}/rps.rx-*`, `${i}/rfs.rx-*`, "net.core.rps_sock_flow_entries"];
    const before = await snapshot(host);
    const readAs = async (who: Who) => {
      const r = await readOverSsh(host.connection(who), LIVE_READ_COMMAND, renderLiveRead([{ kind: "nic", ownerId: "x.y.z-1", keys }]));
      if (!r.ok) throw new Error(r.reason);
      expect(r.code).toBe(0);
      return parseLiveRead(r.stdout)["x.y.z-1"];
    };
    const root = await readAs("root");
    const plain = await readAs("plain");
    expect(Object.keys(root.values)).toEqual(expect.arrayContaining([`${i}/txqueuelen`, `${i}/feature.generic-receive-offload`, `${i}/rps.rx-0`, `${i}/rfs.rx-0`]));
    expect(plain.values).toEqual(root.values);
    expect(plain.unreadable).toEqual(root.unreadable); // what this driver does not report (veth: rings, coalescing), for root too
    expect(await snapshot(host)).toBe(before);
  });
});
