/**
 * `connection.hostKey` as @pulumi/command 1.2.1 takes it, and the live read's host-key rule (issue #32).
 *
 * The Commands (pulumi-command provider/pkg/provider/remote/connection.go, `SSHConfig`) parse `hostKey` with
 * golang.org/x/crypto/ssh `ParseAuthorizedKey`, accept only that key (`FixedHostKey`: the server's key blob must equal
 * it, byte for byte) and offer only its key type as host-key algorithm (`HostKeyAlgorithms: [publicKey.Type()]`);
 * without `hostKey` they ignore the host key (`InsecureIgnoreHostKey`). {@link parseHostKey} accepts what
 * `ParseAuthorizedKey` accepts (read from x/crypto's keys.go, not copied): the first line, of possibly several, that
 * holds `[options] TYPE BASE64 [comment]` (blank and `#` lines skipped; the TYPE word is not compared with the key:
 * the key names its own type), so a `.pub` file, an authorized_keys line, a line of `ssh-keyscan` or of known_hosts
 * (`host TYPE BASE64`: the host field reads as options) all work. The key's structure is checked as x/crypto does for
 * the types the read can verify (ed25519, ecdsa, rsa); a DSA, security-key (`sk-…`) or certificate key is accepted
 * by name (the Commands take it; ssh2, the read's client, cannot negotiate it: the read is skipped, said so).
 *
 * Pure (no I/O) but for {@link liveHostKeyRule}'s caller reading the known_hosts files.
 */
import { createHash, createPublicKey } from "crypto";
import { hostName, KnownHostLine, matches } from "./knownHosts";

/** A parsed `hostKey`: the key blob (SSH wire format) and its type (the blob's first string). */
export interface HostKey {
  type: string;
  blob: Buffer;
}

/** What a `hostKey` should look like, for messages. */
export const HOST_KEY_FORM =
  'one line "TYPE BASE64 [comment]", as in the host\'s /etc/ssh/ssh_host_ed25519_key.pub or a line of `ssh-keyscan HOST` (e.g. "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA…")';

/** Host-key types the read (ssh2) verifies, with the algorithms each may be negotiated as. */
const READ_ALGOS: Record<string, string[]> = {
  "ssh-ed25519": ["ssh-ed25519"],
  "ecdsa-sha2-nistp256": ["ecdsa-sha2-nistp256"],
  "ecdsa-sha2-nistp384": ["ecdsa-sha2-nistp384"],
  "ecdsa-sha2-nistp521": ["ecdsa-sha2-nistp521"],
  "ssh-rsa": ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"],
};
/** Types x/crypto parses that the read cannot verify (accepted, the read is skipped). */
const OTHER_TYPES = new Set([
  "ssh-dss", "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com",
  "ssh-rsa-cert-v01@openssh.com", "ssh-dss-cert-v01@openssh.com", "ecdsa-sha2-nistp256-cert-v01@openssh.com",
  "ecdsa-sha2-nistp384-cert-v01@openssh.com", "ecdsa-sha2-nistp521-cert-v01@openssh.com",
  "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com", "ssh-ed25519-cert-v01@openssh.com", "sk-ssh-ed25519-cert-v01@openssh.com",
]);
const CURVES: Record<string, { name: string; jwk: string; size: number }> = {
  "ecdsa-sha2-nistp256": { name: "nistp256", jwk: "P-256", size: 32 },
  "ecdsa-sha2-nistp384": { name: "nistp384", jwk: "P-384", size: 48 },
  "ecdsa-sha2-nistp521": { name: "nistp521", jwk: "P-521", size: 66 },
};

/** Reads SSH wire strings from a blob; `undefined` when one is cut short. */
function reader(b: Buffer): { next(): Buffer | undefined; done(): boolean } {
  let at = 0;
  return {
    next() {
      if (at + 4 > b.length) return undefined;
      const n = b.readUInt32BE(at);
      if (at + 4 + n > b.length) return undefined;
      const s = b.subarray(at + 4, at + 4 + n);
      at += 4 + n;
      return s;
    },
    done: () => at === b.length,
  };
}

/** Why `blob` is not a well-formed SSH public key of a type x/crypto knows, or undefined when it is. */
function blobProblem(blob: Buffer): string | undefined {
  const r = reader(blob);
  const type = r.next()?.toString("latin1");
  if (type === undefined) return "the key is too short";
  if (OTHER_TYPES.has(type)) return undefined;
  if (!(type in READ_ALGOS)) return `unknown key type ${JSON.stringify(type)}`;
  const fields: Buffer[] = [];
  for (let i = 0; i < (type === "ssh-ed25519" ? 1 : 2); i++) {
    const f = r.next();
    if (f === undefined) return `the ${type} key is cut short`;
    fields.push(f);
  }
  if (!r.done()) return `the ${type} key has trailing bytes`;
  if (type === "ssh-ed25519") return fields[0].length === 32 ? undefined : `an ed25519 key has 32 bytes, not ${fields[0].length}`;
  if (type === "ssh-rsa") {
    const e = BigInt(`0x${fields[0].toString("hex") || "0"}`);
    if (fields[0].length > 0 && fields[0][0] & 0x80) return "the rsa exponent is negative";
    if (e >= 1n << 24n || e < 3n || e % 2n === 0n) return "the rsa exponent is not an odd number from 3 to 2^24";
    return fields[1].length > 1025 ? "the rsa modulus is larger than 8192 bits" : undefined;
  }
  const curve = CURVES[type];
  if (fields[0].toString("latin1") !== curve.name) return `the ${type} key names curve ${JSON.stringify(fields[0].toString("latin1"))}`;
  const p = fields[1];
  if (p.length !== 1 + 2 * curve.size || p[0] !== 4) return `the ${type} point is not an uncompressed point of ${curve.name}`;
  try {
    const x = p.subarray(1, 1 + curve.size).toString("base64url");
    const y = p.subarray(1 + curve.size).toString("base64url");
    createPublicKey({ key: { kty: "EC", crv: curve.jwk, x, y }, format: "jwk" });
    return undefined;
  } catch {
    return `the ${type} point is not on the curve`;
  }
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** `BASE64 [comment]` (what follows the type word) as a key, or why not. */
function keyField(rest: string): HostKey | string {
  const b64 = rest.trim().split(/[ \t]/)[0];
  if (!BASE64.test(b64) || b64 === "") return "the key is not base64";
  const blob = Buffer.from(b64, "base64");
  const problem = blobProblem(blob);
  return problem ?? { type: reader(blob).next()!.toString("latin1"), blob };
}

/** The index after an authorized_keys options field (commas, double quotes with `\"`), or -1 when a quote is open. */
function afterOptions(line: string): number {
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (!quoted && (c === " " || c === "\t")) return i;
    if (c === '"' && (i === 0 || line[i - 1] !== "\\")) quoted = !quoted;
  }
  return quoted ? -1 : line.length;
}

/**
 * `connection.hostKey` as @pulumi/command parses it (see the file's comment): the key, or why it is not one (the
 * last reason, as x/crypto reports "no key found; last parsing error …").
 */
export function parseHostKey(text: string): { ok: true; key: HostKey } | { ok: false; reason: string } {
  let last = "no key found";
  for (const raw of text.split("\n")) {
    const line = raw.split("\r")[0].trim();
    if (line === "" || line.startsWith("#")) continue;
    const sp = line.search(/[ \t]/);
    if (sp === -1) continue;
    const direct = keyField(line.slice(sp));
    if (typeof direct !== "string") return { ok: true, key: direct };
    last = direct;
    // no key after the first word: perhaps the first word is an options field (or a known_hosts host field)
    const end = afterOptions(line);
    if (end === -1 || end === line.length) continue;
    const rest = line.slice(end).replace(/^[ \t]+/, "");
    const sp2 = rest.search(/[ \t]/);
    if (rest === "" || sp2 === -1) continue;
    const after = keyField(rest.slice(sp2));
    if (typeof after !== "string") return { ok: true, key: after };
    last = after;
  }
  return { ok: false, reason: last };
}

/**
 * The problem of a plain `hostKey` at `path` (`connection.hostKey`, `connection.proxy.hostKey`) for the resource's
 * list of problems, or none (absent, an Output, or a key @pulumi/command accepts).
 */
export function hostKeyProblem(path: string, v: unknown): string[] {
  if (v === undefined || v === null || typeof v === "object" || typeof v === "function") return [];
  if (typeof v !== "string") return [`${path} ${JSON.stringify(v)} is not a string: expected ${HOST_KEY_FORM}`];
  const p = parseHostKey(v);
  if (p.ok) return [];
  // (a host public key is not secret, but a hostKey field may hold anything pasted: show its start only)
  const shown = v.length > 40 ? `${JSON.stringify(v.slice(0, 40))}…` : JSON.stringify(v);
  return [`${path} ${shown} is not an SSH public key (${p.reason}): expected ${HOST_KEY_FORM}; @pulumi/command would fail with "failed to parse host key" at \`pulumi up\``];
}

/** The fingerprint OpenSSH prints (`ssh-keygen -lf`): `SHA256:` and the unpadded base64 of the blob's sha256. */
export function fingerprint(blob: Buffer): string {
  return `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;
}

/** `TYPE SHA256:…` of a key blob, as messages name a key. */
export function keyText(blob: Buffer): string {
  return `${reader(blob).next()?.toString("latin1") ?? "?"} ${fingerprint(blob)}`;
}

/** The host-key algorithms the read offers for a `hostKey` of `type`: that type only, as the Commands do (undefined: the read cannot verify it). */
export function algorithmsFor(type: string): string[] | undefined {
  // pulumi-command offers exactly publicKey.Type(): "ssh-rsa" (SHA-1 signatures) for an RSA key, which OpenSSH 8.8+
  // no longer accepts by default; the read offers the same, so the preview fails where `up` would
  if (type === "ssh-rsa") return ["ssh-rsa"];
  return READ_ALGOS[type] ? [type] : undefined;
}

/** The host-key algorithms to offer, types that known_hosts lists for the host first (as OpenSSH orders them), or undefined (ssh2's defaults). */
export function preferListed(listedTypes: string[]): string[] | undefined {
  const first = [...new Set(listedTypes.flatMap((t) => READ_ALGOS[t] ?? []))];
  if (first.length === 0) return undefined;
  const rest = Object.values(READ_ALGOS).flat().filter((a) => !first.includes(a));
  return [...first, ...rest];
}

/** How a hop's key was taken: `given` (= connection.hostKey), `known` (listed in known_hosts), `unverified` (neither: trusted on first use). */
export type KeyHow = "given" | "known" | "unverified";
export type KeyVerdict = { ok: true; how: KeyHow } | { ok: false; reason: string };

/**
 * The live read's rule for one hop (issue #32): `hostKey` given → only that key; else the known_hosts `lines` that
 * name the host (`host` on port 22, `[host]:port` otherwise; `@revoked` refuses) → only a key they list, of any type
 * (a host known with an ed25519 key that now shows only an ecdsa one is refused: no downgrade to an unlisted type);
 * else the key is accepted as `unverified` (its fingerprint is reported). `path`: `connection` or `connection.proxy`.
 */
export function liveHostKeyRule(hop: { host: string; port?: number; hostKey?: string }, path: string, presented: Buffer, lines: KnownHostLine[]): KeyVerdict {
  const port = hop.port ?? 22;
  const ep = hop.host.includes(":") ? `[${hop.host}]:${port}` : `${hop.host}:${port}`;
  const seen = keyText(presented);
  const nothingSent = "Nothing was sent to it beyond the key exchange (no login, no command).";
  if (hop.hostKey !== undefined) {
    const want = parseHostKey(hop.hostKey);
    if (!want.ok) return { ok: false, reason: `${path}.hostKey is not an SSH public key (${want.reason}): expected ${HOST_KEY_FORM}` };
    if (want.key.blob.equals(presented)) return { ok: true, how: "given" };
    return {
      ok: false,
      reason:
        `${path}.hostKey does not match ${ep}: the host presented ${seen}, ${path}.hostKey is ${keyText(want.key.blob)}. ${nothingSent} ` +
        `Fix: if the host's key changed on purpose (reinstalled, rotated), set ${path}.hostKey to its new public key (the host's ` +
        `/etc/ssh/ssh_host_*_key.pub, read on its console or checked against a fingerprint from there); otherwise the connection may be intercepted: do not apply`,
    };
  }
  const name = hostName(hop.host, port);
  const b64 = presented.toString("base64");
  const mine = lines.filter((l) => l.marker !== "cert-authority" && matches(l.patterns, name));
  const revoked = mine.find((l) => l.marker === "revoked" && l.key === b64);
  if (revoked) {
    return { ok: false, reason: `${path}: ${ep} presented ${seen}, which known_hosts marks @revoked (${revoked.source ?? "known_hosts"}). ${nothingSent} Fix: give the host a new key, then set ${path}.hostKey or list the new key in known_hosts` };
  }
  const listed = mine.filter((l) => l.marker === undefined);
  if (listed.length === 0) return { ok: true, how: "unverified" };
  if (listed.some((l) => l.key === b64)) return { ok: true, how: "known" };
  const was = listed.map((l) => `${l.source ?? "known_hosts"}: ${l.keyType} ${fingerprintOfBase64(l.key)}`).join("; ");
  return {
    ok: false,
    reason:
      `${path}: ${ep} presented ${seen}, which is not the key known_hosts lists for ${name} (${was}): REMOTE HOST IDENTIFICATION HAS CHANGED. ${nothingSent} ` +
      `Fix: if the change is expected, remove the old line (\`ssh-keygen -R ${name}\`) or set ${path}.hostKey to the new key; otherwise the connection may be intercepted: do not apply`,
  };
}

function fingerprintOfBase64(b64: string): string {
  return fingerprint(Buffer.from(b64, "base64"));
}
