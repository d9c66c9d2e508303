/**
 * `connection.hostKey` (issue #32): parsed as @pulumi/command 1.2.1 parses it (x/crypto/ssh ParseAuthorizedKey: the
 * vectors' expected answers were produced by that Go function, tests/unit/fixtures/hostKey/vectors.json), fingerprints
 * as OpenSSH prints them, the refusal of a malformed key at preview, and the live read's rule (hostKey, known_hosts,
 * trust on first use).
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { fingerprint, hostKeyProblem, liveHostKeyRule, parseHostKey } from "../../provider/live/hostKey";
import { liveKnownHostsFiles, parseKnownHosts, readKnownHosts } from "../../provider/live/knownHosts";
import { liveHostKeyPolicy } from "../../provider/live/ssh";
import { connectionProblems } from "../../components/validation";

interface Vector { name: string; text: string; accepted: boolean; type?: string; fingerprint?: string; goError?: string }
const doc = JSON.parse(fs.readFileSync(path.join(__dirname, "fixtures/hostKey/vectors.json"), "utf8")) as { vectors: Vector[] };
const byName = (n: string) => doc.vectors.find((v) => v.name === n)!;
const ED = byName("pub").text.split(" ").slice(0, 2).join(" ");
const RSA = byName("rsa").text;
const blobOf = (line: string) => Buffer.from(line.split(/\s+/)[1], "base64");

describe("parseHostKey accepts exactly what x/crypto/ssh ParseAuthorizedKey accepts", () => {
  test.each(doc.vectors.map((v) => [v.name, v] as const))("%s", (_n, v) => {
    const p = parseHostKey(v.text);
    expect(p.ok).toBe(v.accepted);
    if (p.ok) {
      expect(p.key.type).toBe(v.type);
      expect(fingerprint(p.key.blob)).toBe(v.fingerprint);
    }
  });
  test("the vectors cover both answers and every form the Commands take", () => {
    expect(doc.vectors.filter((v) => v.accepted).length).toBeGreaterThanOrEqual(10);
    expect(doc.vectors.filter((v) => !v.accepted).length).toBeGreaterThanOrEqual(10);
  });
});

test("fingerprint() equals ssh-keygen -lf for ed25519, ecdsa and rsa keys", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nt-hk-"));
  try {
    for (const t of ["ed25519", "ecdsa", "rsa"]) {
      const f = path.join(dir, t);
      execFileSync("ssh-keygen", ["-q", "-t", t, "-N", "", "-f", f]);
      const line = fs.readFileSync(`${f}.pub`, "utf8");
      const want = execFileSync("ssh-keygen", ["-lf", `${f}.pub`], { encoding: "utf8" }).split(" ")[1];
      expect(want).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
      expect(fingerprint(blobOf(line))).toBe(want);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

describe("a malformed hostKey is an input error at preview, naming the field and the form", () => {
  const base = { host: "10.0.0.1", privateKey: "k" };
  test("connection.hostKey and connection.proxy.hostKey", () => {
    expect(connectionProblems({ ...base, hostKey: "SHA256:WOcoWis3gQw+IbT3HN/Q9rjU+7GNLnZTDeFjbnr3wSc" }).map((x) => x.message)).toEqual([
      expect.stringMatching(/^connection\.hostKey "SHA256:WOcoWis3gQw\+IbT3HN\/Q9rjU\+7GNLnZTD"… is not an SSH public key \(no key found\): expected one line "TYPE BASE64 \[comment\]", as in the host's \/etc\/ssh\/ssh_host_ed25519_key\.pub/),
    ]);
    expect(connectionProblems({ ...base, proxy: { ...base, hostKey: "ssh-ed25519" } })[0].message).toMatch(/^connection\.proxy\.hostKey "ssh-ed25519" is not an SSH public key/);
    expect(connectionProblems({ ...base, hostKey: "" })[0].message).toMatch(/^connection\.hostKey "" is not an SSH public key/);
    expect(connectionProblems({ ...base, hostKey: 42 })[0].message).toMatch(/^connection\.hostKey 42 is not a string/);
    // each problem carries its own property path (the engine shows it per argument): made where it is known, not read back
    expect(connectionProblems({ ...base, proxy: { ...base, hostKey: "ssh-ed25519" } }).map((p) => p.path)).toEqual(["connection.proxy.hostKey"]);
  });
  test("a good key, or none, is no problem", () => {
    expect(connectionProblems({ ...base, hostKey: `${ED} comment` })).toEqual([]);
    expect(connectionProblems({ ...base, hostKey: `198.18.0.2 ${ED}` })).toEqual([]);
    expect(connectionProblems(base)).toEqual([]);
    expect(hostKeyProblem("connection.hostKey", undefined)).toEqual([]);
  });
});

describe("the live read's rule", () => {
  const ed = blobOf(ED);
  const rsa = blobOf(RSA);
  const hop = { host: "10.0.0.7", port: 22 };
  test("hostKey given: only that key; a mismatch names the endpoint, both fingerprints and the fix", () => {
    expect(liveHostKeyRule({ ...hop, hostKey: ED }, "connection", ed, [])).toEqual({ ok: true, how: "given" });
    const v = liveHostKeyRule({ ...hop, hostKey: RSA }, "connection", ed, []);
    expect(v.ok).toBe(false);
    const reason = (v as { reason: string }).reason;
    expect(reason).toContain(`connection.hostKey does not match 10.0.0.7:22: the host presented ssh-ed25519 ${fingerprint(ed)}, connection.hostKey is ssh-rsa ${fingerprint(rsa)}.`);
    expect(reason).toContain("Nothing was sent to it beyond the key exchange");
    expect(reason).toContain("Fix: ");
    // known_hosts is not consulted when hostKey is given
    expect(liveHostKeyRule({ ...hop, hostKey: ED }, "connection", ed, parseKnownHosts(`10.0.0.7 ${RSA}\n`))).toEqual({ ok: true, how: "given" });
  });
  test("no hostKey: listed in known_hosts → only a listed key (of any type); @revoked refused; not listed → unverified", () => {
    const listed = parseKnownHosts(`# x\n10.0.0.7 ${ED}\n`, "/k");
    expect(liveHostKeyRule(hop, "connection", ed, listed)).toEqual({ ok: true, how: "known" });
    const other = liveHostKeyRule(hop, "connection", rsa, listed);
    expect(other).toEqual({ ok: false, reason: expect.stringContaining(`connection: 10.0.0.7:22 presented ssh-rsa ${fingerprint(rsa)}, which is not the key known_hosts lists for 10.0.0.7 (/k:2: ssh-ed25519 ${fingerprint(ed)}): REMOTE HOST IDENTIFICATION HAS CHANGED.`) });
    expect((other as { reason: string }).reason).toContain("ssh-keygen -R 10.0.0.7");
    expect(liveHostKeyRule({ host: "10.0.0.7", port: 2222 }, "connection.proxy", rsa, listed)).toEqual({ ok: true, how: "unverified" }); // [10.0.0.7]:2222 is another name
    expect(liveHostKeyRule(hop, "connection", ed, parseKnownHosts(`@revoked * ${ED}\n`))).toEqual({ ok: false, reason: expect.stringContaining("which known_hosts marks @revoked") });
    expect(liveHostKeyRule(hop, "connection", ed, parseKnownHosts(`10.0.0.8 ${RSA}\n`))).toEqual({ ok: true, how: "unverified" });
  });
  test("the policy: a password is sent only to a verified hop; listed types are offered first; hostKey's type only", () => {
    const p = liveHostKeyPolicy(parseKnownHosts(`10.0.0.7 ${RSA}\n`));
    expect(p.check({ host: "10.0.0.9" }, "host", ed)).toEqual({ ok: true, how: "unverified", verified: false });
    expect(p.check({ host: "10.0.0.9", hostKey: ED }, "host", ed)).toEqual({ ok: true, how: "given", verified: true });
    expect(p.offer({ host: "10.0.0.7" }, "host")?.slice(0, 3)).toEqual(["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"]);
    expect(p.offer({ host: "10.0.0.9" }, "host")).toBeUndefined();
    expect(p.offer({ host: "10.0.0.9", hostKey: ED }, "host")).toEqual(["ssh-ed25519"]);
    expect(p.offer({ host: "10.0.0.9", hostKey: RSA }, "host")).toEqual(["ssh-rsa"]); // as pulumi-command: publicKey.Type()
  });
  test("NET_TUNING_KNOWN_HOSTS names the files (':'-separated; empty: none); a missing file reads as empty", () => {
    expect(liveKnownHostsFiles({ NET_TUNING_KNOWN_HOSTS: "/a:/b" })).toEqual(["/a", "/b"]);
    expect(liveKnownHostsFiles({ NET_TUNING_KNOWN_HOSTS: "" })).toEqual([]);
    expect(readKnownHosts(["/nonexistent/known_hosts"])).toEqual([]);
  });
});
