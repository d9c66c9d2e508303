/**
 * A damaged host (review findings of session 5) on real lab hosts through the harness: an installed engine left empty
 * or truncated (a power loss after its install), the staged copy gone as well, a restore stdin without its program,
 * a sysctl emptied by hand before a fallback restore, and `restoreOnDelete: false` readable in the -restore diff.
 * Nothing may report success while doing nothing: the apply re-installs an empty engine from the staged copy, or
 * fails naming the recovery; the restore runs the installed engine only when its sha256 matches, else the fallback.
 */
import { spawnSync } from "child_process";
import * as path from "path";
import { engine } from "../../provider/host/engine";
import { readRestoreStdin } from "../../provider/host/programs";
import { COPY_TYPE, Stack } from "../../testkit/harness";
import { Lab, startLab } from "../../testkit/lab";
import { ok, snapshot, sysctl, sysProgram } from "../../testkit/host";

let lab: Lab;
beforeAll(async () => {
  lab = await startLab({ hosts: 2, tag: "damage" });
}, 120000);
afterAll(async () => {
  await lab?.stop();
});

const E = engine();
const INSTALLED = `/usr/local/lib/pulumi-net-tuning/${E.fileName}`;
const STAGED = "/var/lib/pulumi-net-tuning/incoming/engine.*.sh";
const SOMAXCONN = "net.core.somaxconn";
const restoredBy = (out: string | undefined) => /^restored-by\t(.*)$/m.exec(out ?? "")?.[1];
const sha = async (host: Lab["hosts"][number]) => (await host.exec(`sha256sum < ${INSTALLED}`)).stdout.split(" ")[0];

describe("an empty installed engine (power loss after its install)", () => {
  test("the next update installs it again from the staged copy and applies; the destroy restores", async () => {
    const host = lab.hosts[0];
    const before = await snapshot(host);
    const original = await sysctl(host, SOMAXCONN);
    const stack = new Stack({ project: "dmg", stack: "empty" });
    ok(await stack.up(sysProgram(host, "t", { sysctls: { [SOMAXCONN]: 7001 } })));
    await host.exec(`: > ${INSTALLED}`);
    const r = ok(await stack.up(sysProgram(host, "t", { sysctls: { [SOMAXCONN]: 7002 } })));
    expect(r.runs.map((x) => [x.name, x.exitCode])).toEqual([["t-apply", 0]]);
    expect(await sysctl(host, SOMAXCONN)).toBe("7002");
    expect(await sha(host)).toBe(E.sha256);
    expect(readRestoreStdin(String(stack.get("t-restore")!.inputs.stdin))).toContain(`@orig ${SOMAXCONN}\t${original}\n`);
    const d = ok(await stack.destroy());
    expect(restoredBy(d.runs[0].stdout)).toBe(`engine ${E.fileName}`);
    expect(await snapshot(host)).toBe(before);
  });

  test("with the staged copy gone too: the update fails with exit 6 naming the recovery, nothing changes, the originals stay in state", async () => {
    const host = lab.hosts[0];
    const before = await snapshot(host);
    const original = await sysctl(host, SOMAXCONN);
    const stack = new Stack({ project: "dmg", stack: "nostage" });
    ok(await stack.up(sysProgram(host, "t", { sysctls: { [SOMAXCONN]: 7011 } })));
    const restoreStdin = String(stack.get("t-restore")!.inputs.stdin);
    await host.exec(`: > ${INSTALLED}; rm -f ${STAGED}`);
    const r = await stack.up(sysProgram(host, "t", { sysctls: { [SOMAXCONN]: 7012 } }));
    expect(r.ok).toBe(false);
    expect(r.error).toContain("Process exited with status 6");
    const delivery = stack.resources().find((x) => x.type === COPY_TYPE)!;
    expect(r.error).toContain(`: no engine ${E.version} (${delivery.inputs.remotePath} missing or altered): run pulumi up --replace "$(pulumi stack --show-urns|grep -o 'urn:pulumi:[^ ]*::${delivery.name}$')"`);
    expect(delivery.urn).toBe(`urn:pulumi:nostage::dmg::command:remote:CopyToRemote::${delivery.name}`);
    expect(await sysctl(host, SOMAXCONN)).toBe("7011");
    expect(String(stack.get("t-restore")!.inputs.stdin)).toBe(restoreStdin);
    // the recovery the message names: the copy is replaced, then the apply updates
    ok(await stack.up(sysProgram(host, "t", { sysctls: { [SOMAXCONN]: 7012 } }), { replace: [delivery.urn] }));
    expect(await sysctl(host, SOMAXCONN)).toBe("7012");
    expect(readRestoreStdin(String(stack.get("t-restore")!.inputs.stdin))).toContain(`@orig ${SOMAXCONN}\t${original}\n`);
    ok(await stack.destroy());
    expect(await snapshot(host)).toBe(before);
  });
});

test("a truncated installed engine (sha256 differs): the destroy does not run it, the fallback restores", async () => {
  const host = lab.hosts[1];
  const before = await snapshot(host);
  const stack = new Stack({ project: "dmg", stack: "trunc" });
  ok(await stack.up(sysProgram(host, "t", { sysctls: { [SOMAXCONN]: 7021, "net.ipv4.tcp_fin_timeout": 19 } })));
  // a prefix of the engine ending at a line: it parses and, run, would define functions and exit 0 doing nothing
  await host.exec(`head -n 40 ${INSTALLED} > /tmp/e && cat /tmp/e > ${INSTALLED} && rm /tmp/e`);
  expect(await sha(host)).not.toBe(E.sha256);
  const d = ok(await stack.destroy());
  expect(restoredBy(d.runs[0].stdout)).toBe("fallback");
  // the fallback removes the journal; the damaged engine goes with the last journal, as the engine's restore does
  expect(await snapshot(host)).toBe(before);
});

test("fallback: a sysctl emptied by hand before the destroy is restored (an empty value is a value), as the engine does", async () => {
  const host = lab.hosts[1];
  const RP = "net.ipv4.ip_local_reserved_ports";
  for (const tier of ["engine", "fallback"]) {
    await host.exec(`sysctl -qw ${RP}=1000`);
    const stack = new Stack({ project: "dmg", stack: `empty-${tier}` });
    ok(await stack.up(sysProgram(host, "t", { sysctls: { [RP]: "8080" } })));
    await host.exec(`echo > /proc/sys/net/ipv4/ip_local_reserved_ports`);
    expect(await sysctl(host, RP)).toBe("");
    if (tier === "fallback") await host.exec("rm -rf /var/lib/pulumi-net-tuning /usr/local/lib/pulumi-net-tuning");
    const d = ok(await stack.destroy());
    expect(restoredBy(d.runs[0].stdout)).toBe(tier === "engine" ? `engine ${E.fileName}` : "fallback");
    expect(d.runs[0].stdout).not.toContain("no longer exists");
    expect(await sysctl(host, RP)).toBe("1000");
  }
  await host.exec(`echo > /proc/sys/net/ipv4/ip_local_reserved_ports`);
});

test("restoreOnDelete: false shows in the preview as a readable @restore line of the -restore stdin", async () => {
  const host = lab.hosts[1];
  const stack = new Stack({ project: "dmg", stack: "rod" });
  ok(await stack.up(sysProgram(host, "t", { sysctls: { [SOMAXCONN]: 7031 } })));
  const old = String(stack.get("t-restore")!.inputs.stdin);
  const p = ok(await stack.preview(sysProgram(host, "t", { sysctls: { [SOMAXCONN]: 7031 }, restoreOnDelete: false })));
  expect(p.updated.map((u) => u.split("::").pop())).toEqual(["t-restore"]);
  const nu = String((p.resources.find((x) => x.name === "t-restore") as unknown as { inputs: Record<string, unknown> }).inputs.stdin);
  // the plain line before the gzip|base64 line (the lab host has gzip and base64) is the restore choice
  expect(old).toMatch(/^@restore 1\n[A-Za-z0-9+/=]+\n$/);
  expect(nu).toMatch(/^@restore 0\n[A-Za-z0-9+/=]+\n$/);
  expect(readRestoreStdin(nu)).toBe(readRestoreStdin(old).replace("@restore 1\n", "@restore 0\n"));
  ok(await stack.destroy());
});

test("an original the state cannot hold (kernel.core_pattern = '|/usr/share/apport/…'): refused before anything changes (exit 2, the key and value named)", async () => {
  const host = lab.hosts[1];
  const fake = "|/usr/share/apport/apport -p%p -s%s -c%c -- %E";
  // a stand-in for the machine-wide /proc/sys/kernel/core_pattern, in the lab host's own mount namespace only
  expect((await host.exec(`printf '%s\\n' '${fake}' > /root/core_pattern && mount --bind /root/core_pattern /proc/sys/kernel/core_pattern && cat /proc/sys/kernel/core_pattern`)).stdout).toBe(`${fake}\n`);
  try {
    const before = await snapshot(host);
    const stack = new Stack({ project: "dmg", stack: "unsafe" });
    const r = await stack.up(sysProgram(host, "t", { sysctls: { "kernel.core_pattern": "core", [SOMAXCONN]: 7041 } }));
    expect(r.ok).toBe(false);
    expect(r.error).toContain("Process exited with status 2");
    expect(r.error).toContain(`cannot be kept as an original (Pulumi state stores only the characters [A-Za-z0-9 ._:,+\t-]), so a delete could not restore it: kernel.core_pattern = '${fake}'; nothing was changed`);
    expect((await host.exec("cat /proc/sys/kernel/core_pattern")).stdout).toBe(`${fake}\n`);
    expect(await snapshot(host)).toBe(before);
    // without that key the same resource applies (a negative control: the refusal is about the value only)
    ok(await stack.up(sysProgram(host, "t", { sysctls: { [SOMAXCONN]: 7041 } })));
    expect(await sysctl(host, SOMAXCONN)).toBe("7041");
    ok(await stack.destroy());
    expect(await snapshot(host)).toBe(before);
  } finally {
    await host.exec("umount /proc/sys/kernel/core_pattern; rm -f /root/core_pattern");
  }
});

test("a truncated installed engine on an update (exit 0, no report): the update fails naming the recovery, the originals stay in state, the recovery works", async () => {
  const host = lab.hosts[0];
  const before = await snapshot(host);
  const original = await sysctl(host, SOMAXCONN);
  // its own process: the SDK raises the -restore child's failed input as an unhandled rejection (how Pulumi fails the
  // update), which jest would take over
  const r = spawnSync(process.execPath, ["-r", "ts-node/register/transpile-only", path.join(__dirname, "fixtures/truncated-engine.ts"), JSON.stringify({ connection: host.connection(), pid: host.pid })], {
    encoding: "utf8",
    timeout: 180_000,
    env: { ...process.env, TS_NODE_PROJECT: path.join(__dirname, "../../tsconfig.dev.json") },
  });
  const out = JSON.parse(r.stdout.trim().split("\n").pop() ?? "{}");
  expect(out.crashed).toBeUndefined();
  expect(out.create).toBe(true);
  expect(out.update.ok).toBe(false);
  expect(out.update.runs).toEqual([["t-apply", 0, ""]]);
  expect(out.update.error).toContain("pulumi-net-tuning: t-apply exited 0 but printed no report, so nothing was recorded");
  expect(out.update.error).toContain("then run `pulumi up --replace <URN of t-apply>`");
  expect(out.restoreKept).toBe(true);
  expect(out.afterUpdate).toBe("7051");
  expect(out.recovery).toEqual({ ok: true });
  expect(out.afterRecovery).toBe("7052");
  expect(readRestoreStdin(out.restoreStdin)).toContain(`@orig ${SOMAXCONN}\t${original}\n`);
  expect(out.destroy).toEqual({ ok: true });
  expect(out.afterDestroy).toBe(original);
  expect(await snapshot(host)).toBe(before);
}, 240_000);
