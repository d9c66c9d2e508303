/**
 * A read-only SSH run for live previews: one dial (no retry), one session, one command with a program on stdin, all
 * within one deadline. It honours the `remote.ConnectionArgs` fields users rely on (host, port, user, privateKey,
 * privateKeyPassword, password, agentSocketPath, proxy). `dialErrorLimit` and `perDialTimeout` govern the apply
 * Commands, not this read: a preview must finish within its bound even when a host is down.
 *
 * Nothing here knows Pulumi; nothing here writes anything anywhere. Errors are returned, never thrown, and never
 * contain a secret (no key, password or command text): only the endpoint and the SSH/TCP reason.
 */
import * as net from "net";
import { Client, ClientChannel, ConnectConfig } from "ssh2";

/** The connection fields a live read uses (a plain, resolved `remote.ConnectionArgs`). */
export interface ReadConnection {
  host: string;
  port?: number;
  user?: string;
  password?: string;
  privateKey?: string;
  privateKeyPassword?: string;
  agentSocketPath?: string;
  proxy?: ReadConnection;
}

/** `sentBytes`: TCP bytes this machine wrote for the read (handshake, login, command, stdin; to the proxy when there is one). */
export type ReadResult =
  | { ok: true; code: number; stdout: string; stderr: string; ms: number; sentBytes?: number }
  | { ok: false; reason: string; ms: number; sentBytes?: number };

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
export function readOverSshLimited(conn: ReadConnection, command: string, stdin: string, timeoutMs = LIVE_READ_TIMEOUT_MS): Promise<ReadResult> {
  return slots.run(() => readOverSsh(conn, command, stdin, timeoutMs));
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

/** SSH login over an open stream; the reason on failure names the endpoint and what failed, nothing secret. */
function login(c: ReadConnection, sock: ConnectConfig["sock"], readyTimeout: number, clients: Client[]): Promise<Client> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    clients.push(client);
    client.on("error", () => undefined); // late errors (after the deadline closed it) must not become unhandled
    client.once("ready", () => resolve(client));
    client.once("error", (e: Error & { level?: string }) => {
      const why = e.level === "client-authentication" ? `login as ${c.user ?? "root"} refused (check the key, password or agent)` : `SSH handshake failed (${e.message})`;
      reject(new Error(`${endpoint(c)}: ${why}`));
    });
    client.on("keyboard-interactive", (_n, _i, _l, prompts, finish) => finish(prompts.map(() => c.password ?? "")));
    try {
      client.connect(sshConfig(c, sock, readyTimeout));
    } catch (e) {
      const m = (e as Error).message.replace(/\s+/g, " ");
      // ssh2: "Cannot parse privateKey: OpenSSH key integrity check failed -- bad passphrase?" / "... but no passphrase given"
      const why = /passphrase/i.test(m) ? "cannot decrypt the private key (check privateKeyPassword)" : m;
      reject(new Error(`${endpoint(c)}: ${why}`));
    }
  });
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
export async function readOverSsh(conn: ReadConnection, command: string, stdin: string, timeoutMs = LIVE_READ_TIMEOUT_MS): Promise<ReadResult> {
  const t0 = Date.now();
  const sockets: net.Socket[] = [];
  const clients: Client[] = [];
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
        bastion = await login(proxy, await tcp(proxy, sockets), remaining(), clients);
      } catch (e) {
        throw new Error(`proxy ${(e as Error).message}`);
      }
      const stream = await new Promise<ClientChannel>((resolve, reject) =>
        bastion.forwardOut("127.0.0.1", 0, conn.host, conn.port ?? 22, (err, s) =>
          err ? reject(new Error(`proxy ${endpoint(proxy)} cannot reach ${endpoint(conn)}: ${err.message}`)) : resolve(s)));
      client = await login(conn, stream as unknown as ConnectConfig["sock"], remaining(), clients);
    } else {
      client = await login(conn, await tcp(conn, sockets), remaining(), clients);
    }
    return exec(client, command, stdin);
  })();
  const sentBytes = () => sockets.reduce((a, s) => a + s.bytesWritten, 0);
  try {
    const r = await Promise.race([work, deadline]);
    return { ok: true, ...r, ms: Date.now() - t0, sentBytes: sentBytes() };
  } catch (e) {
    work.catch(() => undefined);
    return { ok: false, reason: (e as Error).message, ms: Date.now() - t0, sentBytes: sentBytes() };
  } finally {
    if (timer) clearTimeout(timer);
    for (const c of clients) c.end();
    for (const s of sockets) s.destroy();
  }
}
