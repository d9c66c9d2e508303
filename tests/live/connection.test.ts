/**
 * Live previews (issue #13) with the connection fields users rely on, on real lab hosts through the harness
 * (pulumi-command 1.2.1 semantics): a password-only login (no key), an encrypted private key with
 * `privateKeyPassword`, an SSH agent (`agentSocketPath`, a real `ssh-agent` holding the key), and `dialErrorLimit` /
 * `perDialTimeout`, which govern the apply Commands but not the read (bounded to 10 s). Each read shows live →
 * declared; no password, key or passphrase appears in the logs, in the `live`/`drift` outputs or in the read's stats.
 */
process.env.NET_TUNING_LIVE_PREVIEW = "1"; // the harness evaluates programs under setMocks, where live reads are off by default
import { ChildProcess, execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import type { ConnectionInput } from "../../components/common";
import { NetTuning } from "../../components/netTuning";
import { liveStats } from "../../components/live";
import { UpResult } from "../../testkit/harness";
import { Lab, LabHost, startLab, STATE_ROOT } from "../../testkit/lab";
import { ok, sysctl } from "../../testkit/host";
import { stacksDestroyedAfterEach, withLogs } from "../../testkit/jest";

jest.setTimeout(180_000);
const SOMAXCONN = "net.core.somaxconn";
const PASSWORD = "pw-Live-5c1e-not-a-key";
const PASSPHRASE = "pp-Live-93ad-unlock";

let lab: Lab;
let tmp: string;
let encKey: string; // an ed25519 key encrypted with PASSPHRASE, authorized for root on host 1
let agent: ChildProcess | undefined;
let agentSock: string;

beforeAll(async () => {
  lab = await startLab({ hosts: 3, tag: "liveconn" });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "nt-liveconn-"));
  // host 0: ntsudo gets a password (the lab users are key-only: password `*`); Debian's default sshd_config accepts
  // password logins (PasswordAuthentication defaults to yes; only root is key-only: prohibit-password)
  const h0 = lab.hosts[0];
  const pw = await h0.exec(`printf '%s:%s\\n' ${h0.sudoUser.user} '${PASSWORD}' | chpasswd`);
  if (pw.code !== 0) throw new Error(`chpasswd: ${pw.stderr}`);
  // host 1: an encrypted key for root
  const keyFile = path.join(tmp, "enc");
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", PASSPHRASE, "-C", "nt-live-enc", "-f", keyFile]);
  encKey = fs.readFileSync(keyFile, "utf8");
  const add = await lab.hosts[1].exec(`cat >> /root/.ssh/authorized_keys`, { stdin: fs.readFileSync(`${keyFile}.pub`, "utf8") });
  if (add.code !== 0) throw new Error(`authorized_keys: ${add.stderr}`);
  // host 2: a real ssh-agent holding the lab's root key: in the foreground (-D) under timeout(1), so it ends with this
  // file (afterAll) or after 15 min at the latest, even when jest is killed; the key expires after 10 min
  agentSock = path.join(tmp, "agent.sock");
  agent = spawn("timeout", ["-s", "TERM", "900", "ssh-agent", "-D", "-a", agentSock], { stdio: "ignore" });
  for (let i = 0; i < 100 && !fs.existsSync(agentSock); i++) await new Promise((r) => setTimeout(r, 50));
  if (!fs.existsSync(agentSock)) throw new Error("ssh-agent did not create its socket within 5 s");
  execFileSync("ssh-add", ["-q", "-t", "600", lab.hosts[2].root.keyPath], { env: { ...process.env, SSH_AUTH_SOCK: agentSock }, stdio: "pipe" });
}, 120_000);
afterAll(async () => {
  if (agent?.pid !== undefined && agent.exitCode === null) {
    const exited = new Promise((r) => agent!.once("exit", r));
    agent.kill("SIGTERM"); // timeout(1) passes it on to ssh-agent
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  }
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  delete process.env.NET_TUNING_LIVE_PREVIEW; // jest runs other files in this worker
  await lab?.stop();
});

const newStack = stacksDestroyedAfterEach("liveconn");
const stepOf = (r: UpResult, name: string) => r.steps.find((s) => s.urn.endsWith(`::${name}`))?.kind;
function outOf(r: UpResult, key: string, name: string): unknown {
  return r.resources.find((x) => !x.custom && x.name === name)?.outputs?.[key];
}
async function logged(f: () => Promise<UpResult>): Promise<{ r: UpResult; info: string[]; warn: string[]; reads: number; samples: string }> {
  const reads0 = liveStats.reads;
  const s0 = liveStats.samples.length;
  const l = await withLogs(f);
  return { ...l, reads: liveStats.reads - reads0, samples: JSON.stringify(liveStats.samples.slice(s0)) };
}
/** The lines of an OpenSSH private key that carry key material (a fragment of one must never be printed). */
const keyBody = (key: string) => key.split("\n").filter((l) => l.length >= 16 && !l.startsWith("-----"));
/** Every text a reviewer or a log could see: the diagnostics, the live and drift outputs, the read's stats. */
function visible(p: Awaited<ReturnType<typeof logged>>, name: string): string {
  return [...p.info, ...p.warn, JSON.stringify(outOf(p.r, "live", name)), JSON.stringify(outOf(p.r, "drift", name)), p.samples].join("\n");
}
function expectNoSecret(text: string, secrets: string[]): void {
  expect(secrets.length).toBeGreaterThan(0);
  for (const s of secrets) expect(text).not.toContain(s);
}
/** preview (live → declared shown, one read) → up (the apply logs in the same way) → preview clean. */
async function previewUpClean(host: LabHost, name: string, connection: ConnectionInput, become: "sudo" | undefined, secrets: string[]) {
  await host.exec(`echo 1111 > /proc/sys/net/core/somaxconn`);
  const stack = newStack(name);
  const program = () => {
    const t = new NetTuning(name, { connection, become, sysctls: { [SOMAXCONN]: 4242 } });
    return { live: t.live, drift: t.drift };
  };
  const p = await logged(() => stack.preview(program));
  ok(p.r);
  expect(p.reads).toBe(1);
  expect(p.warn.filter((m) => m.includes("live preview skipped"))).toEqual([]);
  expect(p.info.find((m) => m.startsWith(`NetTuning "${name}" on `))?.split("\n")).toEqual([
    `NetTuning "${name}" on ${host.address}:${host.port}: 1 of 1 setting will change (live → declared)`,
    `  ${SOMAXCONN}: 1111 → 4242`,
  ]);
  expect(outOf(p.r, "live", name)).toEqual({ [SOMAXCONN]: "1111" });
  expectNoSecret(visible(p, name), secrets);
  expect(p.r.resources.find((r) => r.name === `${name}-apply`)!.secretInputs).toContain("connection");

  const u = await logged(() => stack.up(program));
  ok(u.r);
  expect(await sysctl(host, SOMAXCONN)).toBe("4242");
  expectNoSecret(visible(u, name), secrets);
  const clean = await logged(() => stack.preview(program));
  expect(stepOf(ok(clean.r), `${name}-apply`)).toBe("same");
  expect(clean.info.join("\n")).toContain("0 of 1 setting will change");
  expectNoSecret(visible(clean, name), secrets);
  ok(await stack.destroy());
}

/** The lab's host key as `connection.hostKey`: the read sends a password only to a host whose key it verified (issue #32). */
const hostKey = () => fs.readFileSync(path.join(STATE_ROOT, lab.id, "keys", "host_ed25519_key.pub"), "utf8").trim();

describe("live read with each way to log in", () => {
  test("password only (no key, no agent), as a sudo user, with hostKey: read, applied, clean; the password is nowhere", async () => {
    const h = lab.hosts[0];
    const c = h.connection("sudo");
    // no key, and no agent from the environment either (the read would otherwise try it first)
    const saved = process.env.SSH_AUTH_SOCK;
    delete process.env.SSH_AUTH_SOCK;
    try {
      await previewUpClean(h, "pwonly", { host: c.host, port: c.port, user: c.user, password: pulumi.secret(PASSWORD), hostKey: hostKey() }, "sudo", [PASSWORD]);
    } finally {
      if (saved !== undefined) process.env.SSH_AUTH_SOCK = saved;
    }
  });

  test("a wrong password: one warning naming the user and host, never the password; no change shown", async () => {
    const h = lab.hosts[0];
    const c = h.connection("sudo");
    const stack = newStack("pwbad");
    const wrong = `${PASSWORD}-wrong`;
    const p = await logged(() => stack.preview(() => {
      new NetTuning("pwbad", { connection: { host: c.host, port: c.port, user: c.user, password: pulumi.secret(wrong), hostKey: hostKey() }, become: "sudo", sysctls: { [SOMAXCONN]: 4242 } });
      return {};
    }));
    ok(p.r);
    expect(p.warn).toEqual([`NetTuning "pwbad": live preview skipped: ${h.address}:${h.port}: login as ${c.user} refused (check the key, password or agent); the preview shows the plan only (drift is not checked)`]);
    expectNoSecret(visible(p, "pwbad"), [wrong, PASSWORD]);
  });

  test("an encrypted private key with privateKeyPassword: read, applied, clean; neither key nor passphrase is anywhere", async () => {
    const h = lab.hosts[1];
    expect(encKey).toContain("BEGIN OPENSSH PRIVATE KEY");
    expect(() => execFileSync("ssh-keygen", ["-y", "-P", "", "-f", "/dev/stdin"], { input: encKey, stdio: "pipe" })).toThrow(); // really encrypted
    await previewUpClean(h, "enckey", { host: h.address, port: h.port, user: "root", privateKey: pulumi.secret(encKey), privateKeyPassword: pulumi.secret(PASSPHRASE) }, undefined, [PASSPHRASE, ...keyBody(encKey)]);
  });

  test("an encrypted private key with a wrong passphrase: one warning, no passphrase or key in it", async () => {
    const h = lab.hosts[1];
    const stack = newStack("encbad");
    const p = await logged(() => stack.preview(() => {
      new NetTuning("encbad", { connection: { host: h.address, port: h.port, user: "root", privateKey: pulumi.secret(encKey), privateKeyPassword: pulumi.secret("not-it-0000") }, sysctls: { [SOMAXCONN]: 4242 } });
      return {};
    }));
    ok(p.r);
    expect(p.warn).toEqual([`NetTuning "encbad": live preview skipped: ${h.address}:${h.port}: cannot decrypt the private key (check privateKeyPassword); the preview shows the plan only (drift is not checked)`]);
    expectNoSecret(visible(p, "encbad"), ["not-it-0000", PASSPHRASE, ...keyBody(encKey)]);
  });

  test("agentSocketPath (a real ssh-agent holding the key, no privateKey given): read, applied, clean; no key anywhere", async () => {
    const h = lab.hosts[2];
    const listed = execFileSync("ssh-add", ["-l"], { env: { ...process.env, SSH_AUTH_SOCK: agentSock }, encoding: "utf8" });
    expect(listed).toMatch(/ED25519/);
    const saved = process.env.SSH_AUTH_SOCK;
    delete process.env.SSH_AUTH_SOCK; // only the connection's agentSocketPath names the agent
    try {
      await previewUpClean(h, "agent", { host: h.address, port: h.port, user: "root", agentSocketPath: agentSock }, undefined, keyBody(h.root.privateKey));
    } finally {
      if (saved !== undefined) process.env.SSH_AUTH_SOCK = saved;
    }
  });
});

describe("dialErrorLimit and perDialTimeout govern the apply, not the read", () => {
  test("tiny values: the read still reads; the apply Command carries them", async () => {
    const h = lab.hosts[2];
    const stack = newStack("dialtiny");
    const connection = { ...h.connection("root"), dialErrorLimit: 1, perDialTimeout: 1 };
    const p = await logged(() => stack.preview(() => {
      new NetTuning("dt", { connection, sysctls: { [SOMAXCONN]: 4242 } });
      return {};
    }));
    ok(p.r);
    expect(p.reads).toBe(1);
    expect(p.info.join("\n")).toContain(`NetTuning "dt" on ${h.address}:${h.port}: `);
    // what the read sent: its stdin (the tree-shaken program, 23.2 KB since it runs NetTuning's boot-order check and
    // reports a NicQueues interface's facts (issue #32 "preview equals up": +4.8 KB, the request's boot fields included;
    // 23,382 bytes measured here; 24,035 once nt_cleanup stops the run's watchdog and the boot-order check compares a
    // secret value by its sha256 and names the files the login user cannot read; about 27.1 KB with NicQueues' RPS and
    // IRQ refusals, 30.4 KB with its persistence refusals, 31.3 KB with NetTuning's planned-file owner check, 33.8 KB
    // with the request fields and the part of NicQueues' bootOverride and both kinds' adoption checks that is always
    // sent: their scans and checks are sent only when a resource asks for them, tests/unit/liveRead; 36.5 KB as root,
    // with the check of other owners' journals, which only root can read; 37.1 KB with root's -w checks of tx_queue_len
    // and smp_affinity), 18.4 KB
    // since ethtool's text is parsed in the shell,
    // issue #31: no awk process per read on apply; 17.3 KB since it reports the congestion-control facts and a revert
    // record, 16.4 KB before, 15.1 KB before nn_live_ethtool) plus SSH's handshake and login
    const sample = liveStats.samples[liveStats.samples.length - 1];
    expect(sample.ok).toBe(true);
    expect(sample.stdinBytes).toBeLessThan(19_000 + 19_000);
    expect(sample.sentBytes).toBeGreaterThan(sample.stdinBytes);
    expect(sample.sentBytes).toBeLessThan(sample.stdinBytes + 16_000);
    const apply = p.r.resources.find((r) => r.name === "dt-apply")!;
    expect(apply.inputs.connection).toMatchObject({ dialErrorLimit: 1, perDialTimeout: 1 });
  });

  test("large values on a host that does not answer (sshd stopped): one warning within the 10 s bound, no change", async () => {
    const h = lab.hosts[1];
    const stack = newStack("dialhuge");
    // a plain up first, so the preview has a stored -apply to compare with
    const program = () => {
      new NetTuning("dh", { connection: { ...h.connection("root"), dialErrorLimit: 50, perDialTimeout: 60 }, sysctls: { [SOMAXCONN]: 3131 } });
      return {};
    };
    ok(await stack.up(program));
    const pid = listenerPid(h);
    process.kill(pid, "SIGSTOP"); // from outside: sshd is pid 1 of the host's pid namespace
    try {
      const t0 = Date.now();
      const p = await logged(() => stack.preview(program));
      const ms = Date.now() - t0;
      ok(p.r);
      expect(ms).toBeLessThan(12_000); // not 50 dials × 60 s
      expect(p.warn).toEqual([expect.stringMatching(new RegExp(`^NetTuning "dh": live preview skipped: ${h.address}:${h.port}: (no answer within 10 s|SSH handshake failed \\(Timed out while waiting for handshake\\));`))]);
      expect(stepOf(p.r, "dh-apply")).toBe("same");
    } finally {
      process.kill(pid, "SIGCONT");
    }
    ok(await stack.destroy());
  });
});

/** The pid (in this namespace) of the lab host's sshd listener. */
function listenerPid(host: LabHost): number {
  const pids = execFileSync("ip", ["netns", "pids", host.netns], { encoding: "utf8" }).split("\n").filter(Boolean).map(Number).sort((a, b) => a - b);
  const pid = pids.find((p) => { try { return fs.readFileSync(`/proc/${p}/cmdline`, "utf8").includes("[listener]"); } catch { return false; } });
  if (!pid) throw new Error(`no sshd listener in ${host.netns}`);
  return pid;
}
