/**
 * OpenSSH known_hosts files, for the host-key checks of the live read and the audit (issues #32, #33). Parses the
 * file format of sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT" (plain and hashed `|1|salt|hmac` names, `[host]:port`,
 * patterns with `*` `?` and `!`, `@revoked`; `@cert-authority` lines are skipped: certificates are not checked here).
 * The key itself is checked inside the one SSH handshake of a read (provider/live/ssh.ts, `hostVerifier`): pure
 * functions here, no network.
 */
import { createHmac } from "crypto";
import * as fs from "fs";
import * as path from "path";

export interface KnownHostLine {
  marker?: "revoked" | "cert-authority";
  patterns: string[];
  keyType: string;
  key: string; // base64 blob
  /** `file:line` the line came from (set by {@link readKnownHosts}), for messages. */
  source?: string;
}

/** Lines of a known_hosts text (comments, blanks and malformed lines skipped); `file` names their `source`. */
export function parseKnownHosts(text: string, file?: string): KnownHostLine[] {
  const out: KnownHostLine[] = [];
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const f = line.split(/\s+/);
    let marker: KnownHostLine["marker"];
    if (f[0] === "@revoked" || f[0] === "@cert-authority") marker = f.shift()!.slice(1) as KnownHostLine["marker"];
    if (f.length < 3) continue;
    out.push({ marker, patterns: f[0].split(","), keyType: f[1], key: f[2], ...(file !== undefined ? { source: `${file}:${i + 1}` } : {}) });
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

/** The known_hosts files read by default: ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts (those that exist). */
export function defaultKnownHostsFiles(): string[] {
  const home = process.env.HOME ?? "";
  return [`${home}/.ssh/known_hosts`, "/etc/ssh/ssh_known_hosts"].filter((f) => fs.existsSync(f));
}

/**
 * The environment variable naming the known_hosts files the live read checks (separated by `:`), instead of the
 * defaults ({@link defaultKnownHostsFiles}); set but empty, none is read.
 */
export const KNOWN_HOSTS_ENV = "NET_TUNING_KNOWN_HOSTS";

/** The known_hosts files the live read checks: NET_TUNING_KNOWN_HOSTS when set, else the defaults (those that exist). */
export function liveKnownHostsFiles(env: NodeJS.ProcessEnv = process.env): string[] {
  const v = env[KNOWN_HOSTS_ENV];
  if (v === undefined) return defaultKnownHostsFiles();
  return v.split(path.delimiter).filter((f) => f !== "");
}

/** The lines of `files` (a file that cannot be read counts as empty, as for OpenSSH), each with its `file:line`. */
export function readKnownHosts(files: string[]): KnownHostLine[] {
  return files.flatMap((f) => {
    try {
      return parseKnownHosts(fs.readFileSync(f, "utf8"), f);
    } catch {
      return [];
    }
  });
}
