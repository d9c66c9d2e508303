/**
 * OpenSSH known_hosts checking for the audit (issue #33): on by default, as OpenSSH users expect. Parses the file
 * format of sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT" (plain and hashed `|1|salt|hmac` names, `[host]:port`, patterns
 * with `*` `?` and `!`, `@revoked`; `@cert-authority` lines are skipped: certificates are not checked here), and
 * fetches a host's key with a handshake that stops right after the key exchange (no login).
 *
 * The key is checked in a handshake of its own before the audit's session (provider/live/ssh.ts has no host-key hook
 * yet): see docs/audit.md for what that leaves open.
 */
import { createHmac } from "crypto";
import * as fs from "fs";
import * as net from "net";
import { Client } from "ssh2";

export interface KnownHostLine {
  marker?: "revoked" | "cert-authority";
  patterns: string[];
  keyType: string;
  key: string; // base64 blob
}

/** Lines of a known_hosts text (comments, blanks and malformed lines skipped). */
export function parseKnownHosts(text: string): KnownHostLine[] {
  const out: KnownHostLine[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const f = line.split(/\s+/);
    let marker: KnownHostLine["marker"];
    if (f[0] === "@revoked" || f[0] === "@cert-authority") marker = f.shift()!.slice(1) as KnownHostLine["marker"];
    if (f.length < 3) continue;
    out.push({ marker, patterns: f[0].split(","), keyType: f[1], key: f[2] });
  }
  return out;
}

/** The name known_hosts uses for a host: `host` on port 22, `[host]:port` otherwise. */
export function hostName(host: string, port = 22): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

function glob(pattern: string, s: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`, "i");
  return re.test(s);
}

/** Whether one line's host patterns match `name` (hashed names included; a matching `!pattern` excludes). */
export function matches(patterns: string[], name: string): boolean {
  let hit = false;
  for (const p of patterns) {
    if (p.startsWith("|1|")) {
      const [, , salt, hash] = p.split("|");
      if (salt && hash && createHmac("sha1", Buffer.from(salt, "base64")).update(name).digest("base64") === hash) hit = true;
      continue;
    }
    if (p.startsWith("!")) { if (glob(p.slice(1), name)) return false; continue; }
    if (glob(p, name)) hit = true;
  }
  return hit;
}

/** The key type named inside an SSH public key blob (its first string). */
export function keyTypeOf(blob: Buffer): string {
  const n = blob.readUInt32BE(0);
  return blob.subarray(4, 4 + n).toString("ascii");
}

export type HostKeyVerdict =
  | { ok: true; how: "known" | "accepted-new" }
  | { ok: false; reason: string };

/**
 * Checks `blob` (the host's key) for `host:port` against `lines`: a line of the same key type that matches the name
 * and holds the key → known; a matching line of the same type with another key → changed (refused, as OpenSSH does);
 * `@revoked` → refused; no line → unknown (refused, or accepted with `acceptNew`).
 */
export function verifyHostKey(lines: KnownHostLine[], host: string, port: number, blob: Buffer, acceptNew: boolean): HostKeyVerdict {
  const name = hostName(host, port);
  const b64 = blob.toString("base64");
  const type = keyTypeOf(blob);
  const mine = lines.filter((l) => matches(l.patterns, name));
  if (mine.some((l) => l.marker === "revoked" && l.key === b64)) return { ok: false, reason: `the host key of ${name} is marked @revoked in known_hosts` };
  const plain = mine.filter((l) => l.marker === undefined);
  if (plain.some((l) => l.keyType === type && l.key === b64)) return { ok: true, how: "known" };
  if (plain.some((l) => l.keyType === type)) return { ok: false, reason: `the ${type} host key of ${name} is not the one in known_hosts (REMOTE HOST IDENTIFICATION HAS CHANGED): remove the old line if the change is expected` };
  if (acceptNew) return { ok: true, how: "accepted-new" };
  return { ok: false, reason: `${name} is not in known_hosts (${type}): add its key (ssh-keyscan, or a first ssh), or give --accept-new to trust it on first use` };
}

/** known_hosts line for a newly accepted key. */
export function knownHostsLine(host: string, port: number, blob: Buffer): string {
  return `${hostName(host, port)} ${keyTypeOf(blob)} ${blob.toString("base64")}\n`;
}

/** The host's key blob from a handshake that stops after the key exchange (no authentication), or an error reason. */
export function fetchHostKey(host: string, port: number, timeoutMs: number): Promise<{ ok: true; key: Buffer } | { ok: false; reason: string }> {
  return new Promise((resolve) => {
    let key: Buffer | undefined;
    let done = false;
    const sock = net.connect({ host, port });
    const client = new Client();
    const finish = (r: { ok: true; key: Buffer } | { ok: false; reason: string }) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      client.end();
      sock.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => finish({ ok: false, reason: `${host}:${port}: no answer within ${Math.round(timeoutMs / 1000)} s` }), timeoutMs);
    sock.on("error", (e: NodeJS.ErrnoException) => finish({ ok: false, reason: `${host}:${port}: ${e.code === "ECONNREFUSED" ? "connection refused" : e.code ?? e.message}` }));
    client.on("error", (e) => finish(key ? { ok: true, key } : { ok: false, reason: `${host}:${port}: SSH handshake failed (${e.message})` }));
    sock.once("connect", () => {
      client.connect({
        sock,
        username: "net-tuning-hostkey",
        readyTimeout: timeoutMs,
        hostVerifier: (k: Buffer) => {
          key = Buffer.from(k);
          finish({ ok: true, key });
          return false;
        },
      });
    });
  });
}

/** The known_hosts files read by default: ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts (those that exist). */
export function defaultKnownHostsFiles(): string[] {
  const home = process.env.HOME ?? "";
  return [`${home}/.ssh/known_hosts`, "/etc/ssh/ssh_known_hosts"].filter((f) => fs.existsSync(f));
}
