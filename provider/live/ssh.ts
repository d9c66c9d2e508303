/**
 * A read-only SSH run for live previews: one dial (no retry), one session, one command with a program on stdin, all
 * within one deadline. It honours the `remote.ConnectionArgs` fields users rely on (host, port, user, privateKey,
 * privateKeyPassword, password, agentSocketPath, hostKey, proxy). `dialErrorLimit` and `perDialTimeout` govern the
 * apply Commands, not this read: a preview must finish within its bound even when a host is down.
 *
 * Host keys (issue #32): each hop's key is checked inside its handshake (ssh2's `hostVerifier`) by a
 * {@link HostKeyPolicy}, by default the live read's rule ({@link liveHostKeyPolicy}: `hostKey`, else known_hosts, else
 * trusted on first use and reported). A refused key ends the connection after the key exchange: no login, no session.
 * A password is sent only to a hop whose key the policy calls verified.
 *
 * Nothing here knows Pulumi; nothing here writes anything anywhere. Errors are returned, never thrown, and never
 * contain a secret (no key, password or command text): only the endpoint and the SSH/TCP reason.
 */
import * as net from "net";
import { AuthenticationType, Client, ClientChannel, ConnectConfig } from "ssh2";
import { algorithmsFor, fingerprint, keyText, liveHostKeyRule, parseHostKey, preferListed } from "./hostKey";
import { hostName, KnownHostLine, liveKnownHostsFiles, matches, readKnownHosts } from "./knownHosts";

/** The connection fields a live read uses (a plain, resolved `remote.ConnectionArgs`). */
export interface ReadConnection {
  host: string;
  port?: number;
  user?: string;
  password?: string;
  privateKey?: string;
  privateKeyPassword?: string;
  agentSocketPath?: string;
  /** The expected host key, as @pulumi/command's `connection.hostKey` (provider/live/hostKey.ts). */
  hostKey?: string;
  proxy?: ReadConnection;
}

/** A hop of a read: the host itself, or the proxy (bastion) it is reached through. */
export type Hop = "host" | "proxy";

/** A policy's verdict on a hop's key. `verified`: the key is known to be the host's, so a password may be sent. */
export type HopVerdict = { ok: true; how: string; verified: boolean } | { ok: false; reason: string };

/** How a read checks host keys: the algorithms to offer a hop (undefined: ssh2's defaults) and the check of its key. */
export interface HostKeyPolicy {
  offer(c: ReadConnection, hop: Hop): string[] | undefined;
  check(c: ReadConnection, hop: Hop, key: Buffer): HopVerdict;
}

/** A key a hop presented: its type, OpenSSH fingerprint (`SHA256:…`) and the policy's `how` (or `refused`). */
export interface HostKeySeen {
  hop: Hop;
  endpoint: string;
  type: string;
  fingerprint: string;
  how: string;
}

/**
 * `sentBytes`: TCP bytes this machine wrote for the read (handshake, login, command, stdin; to the proxy when there is
 * one). `hostKeys`: the keys the hops presented (proxy first; always set by readOverSsh). On failure, `hostKeyRefused`: the policy refused a key
 * (the reason is the policy's, whole); `passwordWithheld`: the only login left was a password to an unverified hop.
 */
export type ReadResult =
  | { ok: true; code: number; stdout: string; stderr: string; ms: number; sentBytes?: number; hostKeys?: HostKeySeen[] }
  | { ok: false; reason: string; ms: number; sentBytes?: number; hostKeys?: HostKeySeen[]; hostKeyRefused?: boolean; passwordWithheld?: boolean };

/** An error whose message is the whole reason (a host-key refusal), not wrapped in the proxy's prefix. */
class KeyRefusal extends Error {
  constructor(message: string, readonly withheld = false) {
    super(message);
  }
}

/** Default bound for connect + read of one host, in milliseconds. */
export const LIVE_READ_TIMEOUT_MS = 10_000;

/**
 * Reads in flight at once (per process). More hosts wait in FIFO order for a free slot; each read's deadline
 * ({@link LIVE_READ_TIMEOUT_MS}) starts when it dials, not when it is queued, so a host is never timed out for
 * waiting behind others. A preview of N hosts that all time out takes about ceil(N / 32) × 10 s.
 */
export const LIVE_READ_CONCURRENCY = 32;

/** A FIFO limiter: `run(f)` starts `f` once fewer than `n` started by it are unsettled. Pure (no I/O). */
export function limiter(n: number): { run<T>(f: () => Promise<T>): Promise<T>; inFlight(): number; queued(): number } {
  if (!Number.isInteger(n) || n < 1) throw new Error(`limiter: ${n} is not a positive integer`);
  let active = 0;
  const waiting: (() => void)[] = [];
  const next = () => {
    if (active >= n) return;
    const start = waiting.shift();
    if (start) start();
  };
  return {
    run<T>(f: () => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        waiting.push(() => {
          active++;
          let p: Promise<T>;
          try {
            p = Promise.resolve(f());
          } catch (e) {
            p = Promise.reject(e);
          }
          p.then(resolve, reject).finally(() => {
            active--;
            next();
          });
        });
        next();
      });
    },
    inFlight: () => active,
    queued: () => waiting.length,
  };
}

const slots = limiter(LIVE_READ_CONCURRENCY);

/** {@link readOverSsh} behind the process-wide limiter: at most LIVE_READ_CONCURRENCY dials at once; deadline from the dial. */
export function readOverSshLimited(conn: ReadConnection, command: string, stdin: string, timeoutMs = LIVE_READ_TIMEOUT_MS, policy?: HostKeyPolicy): Promise<ReadResult> {
  return slots.run(() => readOverSsh(conn, command, stdin, timeoutMs, policy));
}

/** `host:port` (`[v6]:port`) of a connection, as messages name it. */
export function endpoint(c: ReadConnection): string {
  const port = c.port ?? 22;
  return c.host.includes(":") ? `[${c.host}]:${port}` : `${c.host}:${port}`;
}

function tcpReason(e: NodeJS.ErrnoException): string {
  switch (e.code) {
    case "ECONNREFUSED": return "connection refused";
    case "EHOSTUNREACH": return "no route to host";
    case "ENETUNREACH": return "network is unreachable";
    case "ETIMEDOUT": return "connect timed out";
    case "ENOTFOUND": case "EAI_AGAIN": return "no such host";
    default: return e.code ?? e.message;
  }
}

/** The login methods, in ssh2's default order, a password only to a verified hop (`sendPassword`). */
function methods(c: ReadConnection, agent: string | undefined, sendPassword: boolean): AuthenticationType[] {
  const pw = c.password !== undefined && sendPassword;
  const m: AuthenticationType[] = ["none"];
  if (pw) m.push("password");
  if (c.privateKey !== undefined) m.push("publickey");
  if (agent) m.push("agent");
  if (pw) m.push("keyboard-interactive");
  return m;
}

function sshConfig(c: ReadConnection, sock: ConnectConfig["sock"], readyTimeout: number): ConnectConfig {
  const cfg: ConnectConfig = { sock, username: c.user ?? "root", readyTimeout, keepaliveInterval: 0 };
  if (c.privateKey !== undefined) {
    cfg.privateKey = c.privateKey;
    if (c.privateKeyPassword !== undefined) cfg.passphrase = c.privateKeyPassword;
  }
  if (c.password !== undefined) {
    cfg.password = c.password;
    cfg.tryKeyboard = true;
  }
  const agent = c.agentSocketPath ?? process.env.SSH_AUTH_SOCK;
  if (agent) cfg.agent = agent;
  return cfg;
}

/**
 * SSH login over an open stream, the hop's key checked by `policy` in the handshake (recorded in `seen`); the reason
 * on failure names the endpoint and what failed, nothing secret.
 */
function login(c: ReadConnection, hop: Hop, sock: ConnectConfig["sock"], readyTimeout: number, clients: Client[], policy: HostKeyPolicy, seen: HostKeySeen[]): Promise<Client> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    clients.push(client);
    let refusal: KeyRefusal | undefined;
    let verified = false;
    client.on("error", () => undefined); // late errors (after the deadline closed it) must not become unhandled
    client.once("ready", () => resolve(client));
    client.once("error", (e: Error & { level?: string }) => {
      if (refusal) return reject(refusal);
      if (c.hostKey !== undefined && /no matching host key format/.test(e.message)) return reject(new KeyRefusal(noKeyOfType(c, hop, policy.offer(c, hop) ?? [])));
      const why = e.level === "client-authentication" ? `login as ${c.user ?? "root"} refused (check the key, password or agent)` : `SSH handshake failed (${e.message})`;
      reject(new Error(`${endpoint(c)}: ${why}`));
    });
    client.on("keyboard-interactive", (_n, _i, _l, prompts, finish) => finish(prompts.map(() => c.password ?? "")));
    const cfg = sshConfig(c, sock, readyTimeout);
    const offer = policy.offer(c, hop);
    if (offer) cfg.algorithms = { serverHostKey: offer as NonNullable<ConnectConfig["algorithms"]>["serverHostKey"] };
    cfg.hostVerifier = (key: Buffer) => {
      const blob = Buffer.from(key);
      const v = policy.check(c, hop, blob);
      const type = keyText(blob).split(" ")[0];
      seen.push({ hop, endpoint: endpoint(c), type, fingerprint: fingerprint(blob), how: v.ok ? v.how : "refused" });
      if (!v.ok) {
        refusal = new KeyRefusal(v.reason);
        return false;
      }
      verified = v.verified;
      const left = methods(c, cfg.agent as string | undefined, verified);
      if (c.password !== undefined && !verified && left.length === 1) {
        refusal = new KeyRefusal(passwordWithheldReason(c, hop, blob, v.how), true);
        return false;
      }
      return true;
    };
    let queue: AuthenticationType[] | undefined;
    cfg.authHandler = (() => {
      queue ??= methods(c, cfg.agent as string | undefined, verified);
      return queue.shift() ?? false;
    }) as unknown as ConnectConfig["authHandler"];
    try {
      client.connect(cfg);
    } catch (e) {
      const m = (e as Error).message.replace(/\s+/g, " ");
      // ssh2: "Cannot parse privateKey: OpenSSH key integrity check failed -- bad passphrase?" / "... but no passphrase given"
      const why = /passphrase/i.test(m) ? "cannot decrypt the private key (check privateKeyPassword)" : m;
      reject(new Error(`${endpoint(c)}: ${why}`));
    }
  });
}

/**
 * A hop with `hostKey` whose server has no key of that type: the Commands offer the same single algorithm
 * (pulumi-command: `HostKeyAlgorithms: [publicKey.Type()]`), so `pulumi up` fails too: a refusal.
 */
function noKeyOfType(c: ReadConnection, hop: Hop, offered: string[]): string {
  const path = hop === "proxy" ? "connection.proxy" : "connection";
  const k = parseHostKey(c.hostKey ?? "");
  const type = k.ok ? k.key.type : "?";
  const rsa = type === "ssh-rsa" ? " (an RSA hostKey is offered as ssh-rsa, SHA-1 signatures, which OpenSSH 8.8 and later refuse by default)" : "";
  return (
    `${path}.hostKey is a ${type} key, and ${endpoint(c)} offers no host key as ${offered.join(", ")}${rsa}: it cannot be the key given. ` +
    `@pulumi/command offers only the hostKey's type as well, so \`pulumi up\` would fail the same way. Nothing was sent to it beyond the key exchange. ` +
    `Fix: set ${path}.hostKey to one of the host's keys, preferably its ed25519 key (/etc/ssh/ssh_host_ed25519_key.pub)`
  );
}

/** Why a password-only login to a hop whose key is not verified was not attempted (the password is never sent). */
function passwordWithheldReason(c: ReadConnection, hop: Hop, blob: Buffer, how: string): string {
  const path = hop === "proxy" ? "connection.proxy" : "connection";
  return (
    `${endpoint(c)}: not logged in: the only login is a password and the host key (${keyText(blob)}) is ${how === "unverified" ? "not verified (no " + path + ".hostKey, not in known_hosts)" : how}, ` +
    `so the password would go to whoever answers; set ${path}.hostKey to the host's public key (check the fingerprint on its console: ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub) or list the host in known_hosts`
  );
}

function tcp(c: ReadConnection, sockets: net.Socket[]): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: c.host, port: c.port ?? 22 });
    sockets.push(sock);
    sock.on("error", () => undefined);
    sock.once("error", (e: NodeJS.ErrnoException) => reject(new Error(`${endpoint(c)}: ${tcpReason(e)}`)));
    sock.once("connect", () => resolve(sock));
  });
}

function exec(client: Client, command: string, stdin: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    client.exec(command, (err: Error | undefined, ch: ClientChannel) => {
      if (err) return reject(new Error(`cannot open a session: ${err.message}`));
      const out: Buffer[] = [];
      const errs: Buffer[] = [];
      let code = -1;
      ch.on("data", (d: Buffer) => out.push(d));
      ch.stderr.on("data", (d: Buffer) => errs.push(d));
      ch.on("exit", (c: number | null) => { code = c ?? -1; });
      ch.on("close", () => resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(errs).toString("utf8") }));
      ch.end(stdin);
    });
  });
}

/**
 * Runs `command` with `stdin` on the host: one dial, one session, connect + run bounded by `timeoutMs` in total.
 * Never throws; every socket and client is closed before it resolves.
 */
export async function readOverSsh(conn: ReadConnection, command: string, stdin: string, timeoutMs = LIVE_READ_TIMEOUT_MS, policy: HostKeyPolicy = liveHostKeyPolicy()): Promise<ReadResult> {
  const t0 = Date.now();
  const sockets: net.Socket[] = [];
  const clients: Client[] = [];
  const hostKeys: HostKeySeen[] = [];
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${endpoint(conn)}: no answer within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
  });
  const work = (async () => {
    const remaining = () => Math.max(1, timeoutMs - (Date.now() - t0));
    let client: Client;
    if (conn.proxy) {
      const proxy = conn.proxy;
      let bastion: Client;
      try {
        bastion = await login(proxy, "proxy", await tcp(proxy, sockets), remaining(), clients, policy, hostKeys);
      } catch (e) {
        throw e instanceof KeyRefusal ? e : new Error(`proxy ${(e as Error).message}`);
      }
      const stream = await new Promise<ClientChannel>((resolve, reject) =>
        bastion.forwardOut("127.0.0.1", 0, conn.host, conn.port ?? 22, (err, s) =>
          err ? reject(new Error(`proxy ${endpoint(proxy)} cannot reach ${endpoint(conn)}: ${err.message}`)) : resolve(s)));
      client = await login(conn, "host", stream as unknown as ConnectConfig["sock"], remaining(), clients, policy, hostKeys);
    } else {
      client = await login(conn, "host", await tcp(conn, sockets), remaining(), clients, policy, hostKeys);
    }
    return exec(client, command, stdin);
  })();
  const sentBytes = () => sockets.reduce((a, s) => a + s.bytesWritten, 0);
  try {
    const r = await Promise.race([work, deadline]);
    return { ok: true, ...r, ms: Date.now() - t0, sentBytes: sentBytes(), hostKeys };
  } catch (e) {
    work.catch(() => undefined);
    const refused = e instanceof KeyRefusal ? (e.withheld ? { passwordWithheld: true } : { hostKeyRefused: true }) : {};
    return { ok: false, reason: (e as Error).message, ms: Date.now() - t0, sentBytes: sentBytes(), hostKeys, ...refused };
  } finally {
    if (timer) clearTimeout(timer);
    for (const c of clients) c.end();
    for (const s of sockets) s.destroy();
  }
}

/**
 * The live read's host-key rule (provider/live/hostKey.ts `liveHostKeyRule`) as a policy: a hop with `hostKey` is
 * offered that key's type only (as the Commands) and accepts only that key; without, known_hosts (`lines`, by default
 * the files of NET_TUNING_KNOWN_HOSTS or ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts, read once per policy) decides
 * when it names the host, its listed types offered first; else the key is accepted, unverified.
 */
export function liveHostKeyPolicy(lines?: KnownHostLine[]): HostKeyPolicy {
  let loaded = lines;
  const all = () => (loaded ??= readKnownHosts(liveKnownHostsFiles()));
  return {
    offer(c) {
      if (c.hostKey !== undefined) {
        const k = parseHostKey(c.hostKey);
        return k.ok ? algorithmsFor(k.key.type) : undefined;
      }
      const name = hostName(c.host, c.port ?? 22);
      return preferListed(all().filter((l) => l.marker === undefined && matches(l.patterns, name)).map((l) => l.keyType));
    },
    check(c, hop, key) {
      const v = liveHostKeyRule(c, hop === "proxy" ? "connection.proxy" : "connection", key, c.hostKey !== undefined ? [] : all());
      return v.ok ? { ok: true, how: v.how, verified: v.how !== "unverified" } : v;
    },
  };
}
