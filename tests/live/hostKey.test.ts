/**
 * Host keys in the live read (issue #32) on real lab hosts (OpenSSH sshd, one ed25519 host key per lab), through the
 * harness (pulumi-command 1.2.1 semantics), refusals included: a preview that the live read refuses fails, and ends
 * (it once waited forever for the refusal's registration: issue #30, bounded here by `within`).
 * - `connection.hostKey` right: the read works, `up` works (the Commands check the same key), and the
 *   `hostKeyFingerprint` output is `ssh-keygen -lf` of the host's key;
 * - `connection.hostKey` wrong (another ed25519 key, or an RSA key the host does not have): the preview fails for that
 *   resource with the endpoint, both fingerprints and the fix; the host saw a key exchange and no login;
 * - no `hostKey`, known_hosts (NET_TUNING_KNOWN_HOSTS) listing another key for the host: refused the same way;
 * - no `hostKey`, not in known_hosts: read, trusted on first use, the fingerprint logged and output;
 * - a password-only login to an unverified host: not attempted (the password never leaves); with hostKey it reads;
 * - a proxy (bastion) with a wrong `connection.proxy.hostKey`: refused at the proxy; with the right ones, read.
 */
process.env.NET_TUNING_LIVE_PREVIEW = "1"; // the harness evaluates programs under setMocks, where live reads are off by default
import { execFileSync } from "child_process";
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
import { stacksDestroyedAfterEach, withLogs, within } from "../../testkit/jest";

jest.setTimeout(180_000);
const SOMAXCONN = "net.core.somaxconn";
const PASSWORD = "pw-HostKey-7d21-not-a-key";

let lab: Lab;
let tmp: string;
let hostPub: string; // "ssh-ed25519 AAAA…" of the lab's host key (every host of a lab has it)
let hostFp: string; // its fingerprint by ssh-keygen -lf
let otherPub: string; // another ed25519 key
let rsaPub: string; // an RSA key (the lab hosts have none)
const savedKnownHosts = process.env.NET_TUNING_KNOWN_HOSTS;

beforeAll(async () => {
  lab = await startLab({ hosts: 2, tag: "hostkey" });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "nt-hostkey-"));
  const pubFile = path.join(STATE_ROOT, lab.id, "keys", "host_ed25519_key.pub");
  hostPub = fs.readFileSync(pubFile, "utf8").trim().split(/\s+/).slice(0, 2).join(" ");
  hostFp = execFileSync("ssh-keygen", ["-lf", pubFile], { encoding: "utf8" }).split(" ")[1];
  expect(hostFp).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
  for (const [t, f] of [["ed25519", "other"], ["rsa", "rsa"]]) execFileSync("ssh-keygen", ["-q", "-t", t, "-N", "", "-f", path.join(tmp, f)]);
  otherPub = fs.readFileSync(path.join(tmp, "other.pub"), "utf8").trim();
  rsaPub = fs.readFileSync(path.join(tmp, "rsa.pub"), "utf8").trim();
  const h0 = lab.hosts[0];
  const pw = await h0.exec(`printf '%s:%s\\n' ${h0.sudoUser.user} '${PASSWORD}' | chpasswd`);
  if (pw.code !== 0) throw new Error(`chpasswd: ${pw.stderr}`);
}, 120_000);
beforeEach(() => {
  // this machine's own known_hosts never decides for a lab address: each test names its file (none by default)
  process.env.NET_TUNING_KNOWN_HOSTS = "";
});
afterAll(async () => {
  if (savedKnownHosts === undefined) delete process.env.NET_TUNING_KNOWN_HOSTS;
  else process.env.NET_TUNING_KNOWN_HOSTS = savedKnownHosts;
  delete process.env.NET_TUNING_LIVE_PREVIEW; // jest runs other files in this worker
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  await lab?.stop();
});

const newStack = stacksDestroyedAfterEach("hostkey");
const fp = (pub: string) => execFileSync("ssh-keygen", ["-lf", "-"], { input: `${pub}\n`, encoding: "utf8" }).split(" ")[1];
function outOf(r: UpResult, key: string, name: string): unknown {
  return r.resources.find((x) => !x.custom && x.name === name)?.outputs?.[key];
}
/** sshd's log of a lab host (sshd -e: one line per accepted login, failed password, closed connection). */
const sshdLog = (h: LabHost) => fs.readFileSync(path.join(STATE_ROOT, lab.id, h.name, "sshd.log"), "utf8");
/** What the host's sshd logged during `f`: logins accepted, passwords tried, connections closed before a login. */
async function logins<T>(h: LabHost, f: () => Promise<T>): Promise<{ r: T; accepted: number; passwords: number; preauth: number }> {
  const before = sshdLog(h).length;
  const r = await f();
  await new Promise((res) => setTimeout(res, 300)); // sshd writes its log line as the connection ends
  const text = sshdLog(h).slice(before);
  const count = (re: RegExp) => text.split("\n").filter((l) => re.test(l)).length;
  return { r, accepted: count(/Accepted /), passwords: count(/password for/), preauth: count(/\[preauth\]/) };
}
function preview(name: string, connection: ConnectionInput) {
  const stack = newStack(name);
  const program = () => {
    new NetTuning(name, { connection, sysctls: { [SOMAXCONN]: 4242 } });
    return {};
  };
  return { stack, program, run: () => within(60_000, `the preview of "${name}"`, withLogs(() => stack.preview(program))) };
}
/**
 * The preview of a NetTuning `name` on `c` is refused by the live read with `message`: it fails with the resource's one
 * error, no child registered; the host saw a key exchange and `loginsBefore` logins (a proxy's), no password.
 */
async function expectRefused(h: LabHost, name: string, c: ConnectionInput, message: string, loginsBefore = 0): Promise<void> {
  const { r: p, accepted, passwords } = await logins(h, preview(name, c).run);
  expect(p.r.ok).toBe(false);
  expect(p.r.error).toContain(`NetTuning "${name}": 1 invalid input:\n  - `);
  expect(p.r.error).toContain(message);
  expect(p.r.resources.filter((x) => x.type.startsWith("command:"))).toEqual([]);
  expect(accepted).toBe(loginsBefore); // the key exchange only: sshd saw the client leave before any login
  expect(passwords).toBe(0);
}
const plainConn = (h: LabHost, extra: Record<string, unknown> = {}): ConnectionInput => ({ ...h.connection(), ...extra });

test("the right connection.hostKey: read at preview, applied at up, hostKeyFingerprint = ssh-keygen -lf of the host's key", async () => {
  const h = lab.hosts[1];
  await h.exec(`echo 1111 > /proc/sys/net/core/somaxconn`);
  const { stack, program, run } = preview("right", { ...h.connection(), hostKey: `${hostPub} lab` });
  const p = await run();
  ok(p.r);
  expect(p.warn).toEqual([]);
  expect(p.info.join("\n")).toContain(`NetTuning "right" on ${h.address}:22: 1 of 1 setting will change (live → declared)`);
  expect(p.info.join("\n")).not.toContain("trusted on first use"); // verified: nothing to say about it
  expect(outOf(p.r, "hostKeyFingerprint", "right")).toBe(hostFp);
  const u = await stack.up(program); // the Commands check the same hostKey
  ok(u);
  expect(await sysctl(h, SOMAXCONN)).toBe("4242");
  expect(outOf(u, "hostKeyFingerprint", "right")).toBe(hostFp);
});

test("a wrong connection.hostKey: refused in the handshake, naming the endpoint, both fingerprints and the fix; no login", async () => {
  const h = lab.hosts[1];
  await expectRefused(h, "wrong", plainConn(h, { hostKey: otherPub }), `connection.hostKey does not match ${h.address}:22: the host presented ssh-ed25519 ${hostFp}, connection.hostKey is ssh-ed25519 ${fp(otherPub)}. Nothing was sent to it beyond the key exchange (no login, no command). Fix: if the host's key changed on purpose`);
});

test("an RSA connection.hostKey on a host without an RSA key: refused (the Commands offer only ssh-rsa: up fails too)", async () => {
  const h = lab.hosts[1];
  await expectRefused(h, "rsa", plainConn(h, { hostKey: rsaPub }), `connection.hostKey is a ssh-rsa key, and ${h.address}:22 offers no host key as ssh-rsa`);
});

test("a malformed connection.hostKey: an input error at preview naming the field and the form, nothing registered, no SSH at all", async () => {
  const h = lab.hosts[1];
  const { run } = preview("malformed", { ...h.connection(), hostKey: hostFp });
  const { r: p, accepted, preauth } = await logins(h, run);
  expect(p.r.ok).toBe(false);
  expect(p.r.error).toContain(`NetTuning "malformed": 1 invalid input:\n  - connection.hostKey "${hostFp.slice(0, 40)}"… is not an SSH public key (no key found): expected one line "TYPE BASE64 [comment]"`);
  expect(p.r.resources.filter((x) => x.type.startsWith("command:"))).toEqual([]);
  expect(accepted + preauth).toBe(0);
});

test("no hostKey, known_hosts lists another key for the host: refused as a changed host identification, no login; the right key: read", async () => {
  const h = lab.hosts[1];
  const kh = path.join(tmp, "known_hosts_changed");
  fs.writeFileSync(kh, `${h.address} ${otherPub}\n`);
  process.env.NET_TUNING_KNOWN_HOSTS = kh;
  await expectRefused(h, "changed", plainConn(h), `connection: ${h.address}:22 presented ssh-ed25519 ${hostFp}, which is not the key known_hosts lists for ${h.address} (${kh}:1: ssh-ed25519 ${fp(otherPub)}): REMOTE HOST IDENTIFICATION HAS CHANGED.`);
  // the same file listing the right key: verified, read through the components
  fs.writeFileSync(kh, `${h.address} ${hostPub}\n`);
  const again = await preview("known", h.connection()).run();
  ok(again.r);
  expect(again.info.join("\n")).toContain(`NetTuning "known" on ${h.address}:22: `);
  expect(again.info.join("\n")).not.toContain("trusted on first use");
  expect(outOf(again.r, "hostKeyFingerprint", "known")).toBe(hostFp);
});

test("no hostKey, not in known_hosts: read, trusted on first use; the fingerprint is logged and is the hostKeyFingerprint output", async () => {
  const h = lab.hosts[1];
  const kh = path.join(tmp, "known_hosts_other");
  fs.writeFileSync(kh, `198.51.100.7 ${otherPub}\n`); // another host only
  process.env.NET_TUNING_KNOWN_HOSTS = kh;
  const reads0 = liveStats.reads;
  const p = await preview("tofu", h.connection()).run();
  ok(p.r);
  expect(liveStats.reads - reads0).toBe(1);
  expect(p.info.join("\n")).toContain(`NetTuning "tofu" on ${h.address}:22: `);
  expect(p.info).toContain(
    `NetTuning "tofu": host key of ${h.address}:22 not verified (no connection.hostKey, not in known_hosts), trusted on first use: ssh-ed25519 ${hostFp}, recorded as the output hostKeyFingerprint; ` +
      "check it against the host's (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub on its console) and set connection.hostKey to verify it",
  );
  expect(outOf(p.r, "hostKeyFingerprint", "tofu")).toBe(hostFp);
});

describe("a password login", () => {
  const saved = process.env.SSH_AUTH_SOCK;
  beforeEach(() => delete process.env.SSH_AUTH_SOCK); // no agent: the password is the only login
  afterEach(() => {
    if (saved !== undefined) process.env.SSH_AUTH_SOCK = saved;
  });
  const pwConnection = (h: LabHost, hostKey?: string): ConnectionInput => ({ host: h.address, port: h.port, user: h.sudoUser.user, password: pulumi.secret(PASSWORD), ...(hostKey ? { hostKey } : {}) });

  test("to an unverified host: not attempted (the password never leaves), one warning with the fix; the fingerprint still recorded", async () => {
    const h = lab.hosts[0];
    const { run } = preview("pwtofu", pwConnection(h));
    const { r: p, accepted, passwords } = await logins(h, run);
    ok(p.r); // the preview goes on with the plan only, as for a host it cannot read
    expect(accepted).toBe(0);
    expect(passwords).toBe(0);
    expect(p.warn).toEqual([
      `NetTuning "pwtofu": live preview skipped: ${h.address}:22: not logged in: the only login is a password and the host key (ssh-ed25519 ${hostFp}) is not verified (no connection.hostKey, not in known_hosts), ` +
        "so the password would go to whoever answers; set connection.hostKey to the host's public key (check the fingerprint on its console: ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub) or list the host in known_hosts; the preview shows the plan only (drift is not checked)",
    ]);
    expect(outOf(p.r, "hostKeyFingerprint", "pwtofu")).toBe(hostFp);
    expect([...p.info, ...p.warn].join("\n")).not.toContain(PASSWORD);
  });

  test("with connection.hostKey: logged in with the password and read", async () => {
    const h = lab.hosts[0];
    await h.exec(`echo 1111 > /proc/sys/net/core/somaxconn`);
    const { run } = preview("pwkey", pwConnection(h, hostPub));
    const { r: p, accepted } = await logins(h, run);
    ok(p.r);
    expect(accepted).toBe(1);
    expect(p.warn).toEqual([]);
    expect(p.info.join("\n")).toContain(`NetTuning "pwkey" on ${h.address}:22: 1 of 1 setting will change (live → declared)\n  ${SOMAXCONN}: 1111 → 4242`);
  });
});

describe("through a proxy (bastion): the lab host forwards to its own sshd on 127.0.0.1", () => {
  const via = (h: LabHost, proxyKey: string, hostKey: string) => ({
    host: "127.0.0.1", user: "root", privateKey: h.root.privateKey, hostKey,
    proxy: { host: h.address, port: h.port, user: "root", privateKey: h.root.privateKey, hostKey: proxyKey },
  });

  test("a wrong connection.proxy.hostKey: refused at the proxy, no login there", async () => {
    const h = lab.hosts[1];
    await expectRefused(h, "proxywrong", via(h, otherPub, hostPub), `connection.proxy.hostKey does not match ${h.address}:22: the host presented ssh-ed25519 ${hostFp}, connection.proxy.hostKey is ssh-ed25519 ${fp(otherPub)}.`);
  });

  test("the right keys for both hops: read (two logins: proxy and host), the host's fingerprint recorded", async () => {
    const h = lab.hosts[1];
    const { run } = preview("proxyright", via(h, hostPub, hostPub));
    const { r: p, accepted } = await logins(h, run);
    ok(p.r);
    expect(accepted).toBe(2);
    expect(p.info.join("\n")).toContain(`NetTuning "proxyright" on 127.0.0.1:22 (via ${h.address}): `);
    expect(outOf(p.r, "hostKeyFingerprint", "proxyright")).toBe(hostFp);
  });

  test("a wrong connection.hostKey behind a right proxy: refused at the host, after the proxy's login only", async () => {
    const h = lab.hosts[1];
    await expectRefused(h, "hostwrong", via(h, hostPub, otherPub), `connection.hostKey does not match 127.0.0.1:22: the host presented ssh-ed25519 ${hostFp}`, 1);
  });
});
