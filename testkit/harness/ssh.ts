/**
 * SSH side of the harness: one provider "run" = dial (with retry) → one session → Setenv requests →
 * stdin → exec → wait, mirroring pulumi-command v1.2.1 `remote.CommandOutputs.run` and
 * `remote.Connection.Dial` (golang.org/x/crypto/ssh), implemented with the `ssh2` npm client.
 *
 * Faithfulness notes (see also index.ts header):
 * - Setenv: x/crypto/ssh `Session.Setenv` sends an `env` channel request with want-reply=true and
 *   fails with "ssh: setenv failed" when the server answers SSH_MSG_CHANNEL_FAILURE. ssh2's public
 *   `exec(cmd, { env })` sends env requests with want-reply=false, so refusal would be invisible.
 *   We therefore open the session with `client.exec` and, at the moment ssh2 is about to send the
 *   `exec` request, send each `env` request ourselves with want-reply=true and wait for its answer
 *   (one at a time, as Go does) before letting the `exec` request go. This uses ssh2 internals
 *   (`_protocol.exec/env`, `_chanMgr`, `Channel._callbacks`); `assertSsh2Internals()` fails loudly
 *   if they change. The lab tests prove it end to end: the default sshd (AcceptEnv LANG LC_*)
 *   accepts LANG and refuses PULUMI_COMMAND_STDOUT.
 * - The provider never closes its ssh.Client after a run (one TCP connection per run stays open
 *   until the plugin exits); the harness closes it. Session count is identical.
 * - perDialTimeout bounds the TCP connect only (Go: net.DialTimeout), as in x/crypto/ssh.Dial;
 *   the SSH handshake has a harness bound (`handshakeTimeoutMs`) that Go does not have.
 * - Dial retry mirrors pulumi's retry.Until (100 ms, ×1.5, max 5 s) and the provider's limit check
 *   (`dials > dialErrorLimit` fails, message "after N failed attempts: ..."); -1 (unlimited) is capped
 *   at `maxUnlimitedDials` so that every loop is bounded.
 * - SSH agent auth (agentSocketPath / SSH_AUTH_SOCK) is passed to ssh2's agent support.
 * - Error texts reproduce the Go ones for the cases the tests meet (exit status, signal, missing
 *   status, setenv refusal, connection refused, auth failure); other low-level errors keep ssh2's text.
 */
import * as fs from "fs";
import * as net from "net";
import { Client, ClientChannel, ConnectConfig, SFTPWrapper } from "ssh2";
import type { ReadConnection } from "../../provider/live/ssh";

/** remote.ConnectionArgs as the provider reads them: the fields a live read uses too, plus the dial tuning and hostKey. */
export interface ConnectionBase extends Omit<ReadConnection, "proxy"> {
  dialErrorLimit?: number;
  perDialTimeout?: number;
  hostKey?: string;
}
export interface Connection extends ConnectionBase {
  proxy?: ConnectionBase;
}

export interface SshTuning {
  /** Harness bound on the SSH handshake+auth (Go has none). Default 60 s. */
  handshakeTimeoutMs: number;
  /** Harness bound on one command (the provider has none). Default 600 s. */
  commandTimeoutMs: number;
  /** Cap for dialErrorLimit = -1 (unlimited in the provider). Default 100. */
  maxUnlimitedDials: number;
  /** Multiplier on pulumi's retry delays (1 = 100 ms ×1.5 up to 5 s). Default 1. */
  retryDelayScale: number;
}
export const defaultSshTuning: SshTuning = {
  handshakeTimeoutMs: 60_000,
  commandTimeoutMs: 600_000,
  maxUnlimitedDials: 100,
  retryDelayScale: 1,
};

export const PULUMI_COMMAND_STDOUT = "PULUMI_COMMAND_STDOUT";
export const PULUMI_COMMAND_STDERR = "PULUMI_COMMAND_STDERR";

/** The provider's warning/error text for a refused Setenv (logAndWrapSetenvErr), verbatim. */
export function setenvMessage(key: string): string {
  return `Unable to set '${key}'. This only works if your SSH server is configured to accept
	these variables via AcceptEnv. Alternatively, if a Bash-like shell runs the command on the remote host, you could
	prefix the command itself with the variables in the form 'VAR=value command'`;
}

export interface EnvRequest {
  name: string;
  value: string;
  /** environment input (refusal = error) vs previous output (refusal = warning). */
  required: boolean;
}
export interface EnvResult {
  name: string;
  accepted: boolean;
  required: boolean;
}

export interface RunRequest {
  connection: Connection;
  cmd: string;
  stdin?: string;
  environment?: Record<string, string>;
  previousStdout?: string;
  previousStderr?: string;
  addPreviousOutputInEnv?: boolean;
}

export interface RunOutcome {
  ok: boolean;
  /** Provider-style error text (what `pulumi up` would print for this resource). */
  error?: string;
  /** Was a session opened (i.e. would the provider have opened one)? */
  sessionOpened: boolean;
  dials: number;
  exitCode: number | null;
  signal?: string;
  /** Raw stdout/stderr bytes as text (not trimmed). */
  rawStdout: string;
  rawStderr: string;
  /** Provider outputs: TrimSuffix(…, "\n"); only meaningful when ok. */
  stdout: string;
  stderr: string;
  combined: string;
  env: EnvResult[];
  /** Provider log lines at warning/error severity (Setenv refusals). */
  warnings: string[];
  errors: string[];
  durationMs: number;
}

/** Go's strconv.Quote (as used by fmt %q) for the strings we meet: ASCII escapes like Go, printable
 * non-ASCII kept, invalid/unprintable code points escaped as \uXXXX. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    switch (ch) {
      case '"': out += '\\"'; continue;
      case "\\": out += "\\\\"; continue;
      case "\x07": out += "\\a"; continue;
      case "\b": out += "\\b"; continue;
      case "\f": out += "\\f"; continue;
      case "\n": out += "\\n"; continue;
      case "\r": out += "\\r"; continue;
      case "\t": out += "\\t"; continue;
      case "\v": out += "\\v"; continue;
    }
    if (c < 0x20 || c === 0x7f) out += "\\x" + c.toString(16).padStart(2, "0");
    else if (c < 0x7f) out += ch;
    else if ((c >= 0x80 && c < 0xa0) || c === 0xad || (c >= 0xd800 && c <= 0xdfff)) {
      out += c > 0xffff ? "\\U" + c.toString(16).padStart(8, "0") : "\\u" + c.toString(16).padStart(4, "0");
    } else out += ch;
  }
  return out + '"';
}

const GO_SIGNALS: Record<string, number> = {
  ABRT: 6, ALRM: 14, FPE: 8, HUP: 1, ILL: 4, INT: 2, KILL: 9, PIPE: 13, QUIT: 3, SEGV: 11, TERM: 15, USR1: 10, USR2: 12,
};

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Asserts the ssh2 internals used for want-reply env requests exist (throws a harness error otherwise). */
export function assertSsh2Internals(client: Client): void {
  const c = client as unknown as { _protocol?: { exec?: unknown; env?: unknown }; _chanMgr?: { _channels?: unknown } };
  if (!c._protocol || typeof c._protocol.exec !== "function" || typeof c._protocol.env !== "function" || !c._chanMgr || typeof c._chanMgr._channels !== "object") {
    throw new Error("harness bug: ssh2 internals (_protocol.exec/env, _chanMgr) changed; cannot send want-reply env requests");
  }
}

function endpointOf(c: ConnectionBase): { host: string; port: number; endpoint: string } {
  const port = c.port === undefined ? 22 : Math.trunc(Number(c.port));
  const host = c.host;
  const endpoint = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  return { host, port, endpoint };
}

function goDialError(endpoint: string, host: string, e: NodeJS.ErrnoException): string {
  switch (e.code) {
    case "ECONNREFUSED": return `dial tcp ${endpoint}: connect: connection refused`;
    case "EHOSTUNREACH": return `dial tcp ${endpoint}: connect: no route to host`;
    case "ENETUNREACH": return `dial tcp ${endpoint}: connect: network is unreachable`;
    case "ETIMEDOUT": return `dial tcp ${endpoint}: i/o timeout`;
    case "ENOTFOUND": case "EAI_AGAIN": return `dial tcp: lookup ${host}: no such host`;
    default: return `dial tcp ${endpoint}: ${e.message}`;
  }
}

/** TCP connect bounded by perDialTimeout seconds (0 = no bound), like net.DialTimeout. */
function tcpConnect(c: ConnectionBase): Promise<net.Socket> {
  const { host, port, endpoint } = endpointOf(c);
  const perDial = c.perDialTimeout === undefined ? 15 : c.perDialTimeout;
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host, port });
    let timer: NodeJS.Timeout | undefined;
    const fail = (msg: string) => { if (timer) clearTimeout(timer); sock.destroy(); reject(new Error(msg)); };
    if (perDial > 0) timer = setTimeout(() => fail(`dial tcp ${endpoint}: i/o timeout`), perDial * 1000);
    sock.once("error", (e: NodeJS.ErrnoException) => fail(goDialError(endpoint, host, e)));
    sock.once("connect", () => { if (timer) clearTimeout(timer); sock.removeAllListeners("error"); resolve(sock); });
  });
}

function parseAuthorizedKey(line: string): { type: string; blob: Buffer } {
  const parts = line.trim().split(/\s+/);
  if (parts.length < 2) throw new Error("failed to parse host key: ssh: no key found");
  return { type: parts[0], blob: Buffer.from(parts[1], "base64") };
}

/** SSH handshake + auth over an established stream, like ssh.NewClientConn with the provider's config. */
function sshHandshake(c: ConnectionBase, sock: NodeJS.ReadWriteStream, tuning: SshTuning): Promise<Client> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    const methods: string[] = [];
    const cfg: ConnectConfig = {
      sock: sock as unknown as ConnectConfig["sock"],
      username: c.user === undefined ? "root" : c.user,
      readyTimeout: tuning.handshakeTimeoutMs,
      keepaliveInterval: 0,
    };
    if (c.privateKey !== undefined) {
      cfg.privateKey = c.privateKey;
      if (c.privateKeyPassword !== undefined) cfg.passphrase = c.privateKeyPassword;
      methods.push("publickey");
    }
    if (c.password !== undefined) {
      cfg.password = c.password;
      cfg.tryKeyboard = true;
      methods.push("password", "keyboard-interactive");
    }
    const agent = c.agentSocketPath ?? process.env.SSH_AUTH_SOCK;
    if (agent) cfg.agent = agent;
    if (c.hostKey !== undefined) {
      let want: { type: string; blob: Buffer };
      try { want = parseAuthorizedKey(c.hostKey); } catch (e) { reject(e); return; }
      cfg.algorithms = { serverHostKey: [want.type as never] };
      cfg.hostVerifier = (key: Buffer) => Buffer.isBuffer(key) && key.equals(want.blob);
    }
    let settled = false;
    client.once("ready", () => { settled = true; resolve(client); });
    client.once("error", (e: Error & { level?: string }) => {
      if (settled) return;
      settled = true;
      client.end();
      let msg = e.message;
      if (e.level === "client-authentication") {
        msg = `ssh: handshake failed: ssh: unable to authenticate, attempted methods [none ${methods.join(" ")}], no supported methods remain`;
      } else if (/host key/i.test(msg) || /verification failed/i.test(msg)) {
        msg = `ssh: handshake failed: ssh: host key mismatch`;
      } else {
        msg = `ssh: handshake failed: ${msg}`;
      }
      reject(new Error(msg));
    });
    try { client.connect(cfg); } catch (e) { settled = true; reject(e); }
  });
}

/** pulumi retry.Until + the provider's dialWithRetry (limit check, messages). */
async function dialWithRetry<T>(limit: number, tuning: SshTuning, counter: { dials: number }, f: () => Promise<T>): Promise<T> {
  const maxAttempts = limit === -1 ? tuning.maxUnlimitedDials : limit + 1;
  for (let attempt = 0; attempt < Math.max(1, maxAttempts); attempt++) {
    try {
      counter.dials++;
      return await f();
    } catch (e) {
      const dials = attempt + 1;
      const reached = (limit > -1 && dials > limit) || (limit === -1 && dials >= tuning.maxUnlimitedDials);
      if (reached) throw new Error(`after ${attempt} failed attempts: ${(e as Error).message}`);
      // retry.Until (Retryer): wait DefaultDelay 100 ms, then ×1.5 each time, capped at 5 s
      await sleep(Math.min(100 * Math.pow(1.5, attempt), 5000) * tuning.retryDelayScale);
    }
  }
  throw new Error("harness bug: dial loop exhausted");
}

export interface DialedClient {
  client: Client;
  close(): void;
}

export async function dial(conn: Connection, tuning: SshTuning, counter: { dials: number }): Promise<DialedClient> {
  const limit = conn.dialErrorLimit === undefined ? 10 : conn.dialErrorLimit;
  if (!conn.proxy) {
    const client = await dialWithRetry(limit, tuning, counter, async () => sshHandshake(conn, await tcpConnect(conn), tuning));
    return { client, close: () => client.end() };
  }
  const proxy = conn.proxy;
  const proxyLimit = proxy.dialErrorLimit === undefined ? 10 : proxy.dialErrorLimit;
  let proxyClient: Client;
  try {
    proxyClient = await dialWithRetry(proxyLimit, tuning, counter, async () => sshHandshake(proxy, await tcpConnect(proxy), tuning));
  } catch (e) {
    throw new Error(`proxy: ${(e as Error).message}`);
  }
  const { host, port, endpoint } = endpointOf(conn);
  try {
    const client = await dialWithRetry(limit, tuning, counter, async () => {
      const stream = await new Promise<ClientChannel>((resolve, reject) =>
        proxyClient.forwardOut("127.0.0.1", 0, host, port, (err, s) => (err ? reject(new Error(`ssh: rejected: connect failed (${err.message}) dialing ${endpoint}`)) : resolve(s))));
      return sshHandshake(conn, stream, tuning);
    });
    return { client, close: () => { client.end(); proxyClient.end(); } };
  } catch (e) {
    proxyClient.end();
    throw new Error(`proxy: ${(e as Error).message}`);
  }
}

interface Ssh2Internals {
  _protocol: { exec: (id: number, cmd: string, wantReply: boolean) => void; env: (id: number, k: string, v: string, wantReply: boolean) => void };
  _chanMgr: { _channels: Record<string, unknown> };
}
interface ChannelInternals { outgoing: { id: number }; _callbacks: Array<(hadErr: boolean | Error) => void> }

/**
 * Open one session channel, send the env requests with want-reply (sequentially), then exec.
 * Resolves with the channel (or rejects with a Setenv error for a refused *required* variable,
 * in which case exec is never sent, like the provider's early return).
 */
function openExec(client: Client, cmd: string, envs: EnvRequest[], results: EnvResult[], onChannel: (ch: ClientChannel) => void): Promise<ClientChannel> {
  assertSsh2Internals(client);
  const internals = client as unknown as Ssh2Internals;
  const proto = internals._protocol;
  const origExec = proto.exec;
  let setenvError: Error | undefined;
  proto.exec = function patchedExec(this: unknown, remoteId: number, command: string, wantReply: boolean): void {
    proto.exec = origExec; // one-shot: one session per client (the provider dials per run)
    const chan = Object.values(internals._chanMgr._channels).find(
      (c): c is ChannelInternals => typeof c === "object" && c !== null && (c as ChannelInternals).outgoing?.id === remoteId,
    );
    if (!chan || !Array.isArray(chan._callbacks) || chan._callbacks.length === 0) {
      throw new Error("harness bug: ssh2 channel internals not as expected");
    }
    const execCb = chan._callbacks.pop() as (hadErr: boolean | Error) => void;
    const next = (i: number): void => {
      if (i >= envs.length) {
        chan._callbacks.push(execCb);
        origExec.call(proto, remoteId, command, wantReply);
        return;
      }
      const req = envs[i];
      chan._callbacks.push((hadErr) => {
        const accepted = hadErr === false;
        results.push({ name: req.name, accepted, required: req.required });
        if (!accepted && req.required) {
          setenvError = new Error(`could not set environment variable ${goQuote(req.name)}: ssh: setenv failed`);
          execCb(setenvError);
          return;
        }
        next(i + 1);
      });
      proto.env(remoteId, req.name, req.value, true);
    };
    next(0);
  };
  return new Promise((resolve, reject) => {
    try {
      client.exec(cmd, (err, ch) => {
        if (err) {
          proto.exec = origExec;
          reject(setenvError ?? new Error(`ssh: command ${cmd} failed`));
          return;
        }
        // listeners must be attached synchronously: ssh2 may parse exit-status/close in the same tick
        onChannel(ch);
        resolve(ch);
      });
    } catch (e) {
      proto.exec = origExec;
      reject(e);
    }
  });
}

function trimOneNewline(s: string): string {
  return s.endsWith("\n") ? s.slice(0, -1) : s;
}

/** What every provider operation reports about its connection. */
interface SessionOutcome {
  ok: boolean;
  error?: string;
  sessionOpened: boolean;
  dials: number;
  durationMs: number;
}

/**
 * Dial (with the provider's retries), then one session: a dial error becomes `out.error` with no session opened;
 * otherwise `body` runs with the client, which is closed afterwards. Fills in dials and duration either way.
 */
async function inSession<O extends SessionOutcome>(
  conn: Connection, tuning: SshTuning, out: O, onSession: (() => void) | undefined, body: (client: Client) => Promise<void>,
): Promise<O> {
  const t0 = Date.now();
  const counter = { dials: 0 };
  const finish = (): O => { out.dials = counter.dials; out.durationMs = Date.now() - t0; return out; };
  let dialed: DialedClient;
  try {
    dialed = await dial(conn, tuning, counter);
  } catch (e) {
    out.error = (e as Error).message;
    return finish();
  }
  try {
    out.sessionOpened = true;
    if (onSession) onSession();
    await body(dialed.client);
    return finish();
  } finally {
    dialed.close();
  }
}

/** One provider `run`: the whole of CommandOutputs.run for one command. */
export async function runCommand(req: RunRequest, tuning: SshTuning, onSession?: () => void): Promise<RunOutcome> {
  const out: RunOutcome = {
    ok: false, sessionOpened: false, dials: 0, exitCode: null, rawStdout: "", rawStderr: "",
    stdout: "", stderr: "", combined: "", env: [], warnings: [], errors: [], durationMs: 0,
  };
  return inSession(req.connection, tuning, out, onSession, async (client) => {
    const envs: EnvRequest[] = [];
    for (const [k, v] of Object.entries(req.environment ?? {})) envs.push({ name: k, value: v, required: true });
    if (req.addPreviousOutputInEnv !== false) {
      if (req.previousStdout) envs.push({ name: PULUMI_COMMAND_STDOUT, value: req.previousStdout, required: false });
      if (req.previousStderr) envs.push({ name: PULUMI_COMMAND_STDERR, value: req.previousStderr, required: false });
    }
    const so: Buffer[] = [];
    const se: Buffer[] = [];
    const all: Buffer[] = [];
    const ex: { code: number | null; signal?: string; msg?: string; got: boolean } = { code: null, got: false };
    let closed: Promise<void> = Promise.resolve();
    const attach = (ch: ClientChannel): void => {
      closed = new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          ex.msg = `harness: command timed out after ${tuning.commandTimeoutMs} ms`;
          ch.close();
          resolve();
        }, tuning.commandTimeoutMs);
        ch.on("data", (d: Buffer) => { so.push(d); all.push(d); });
        ch.stderr.on("data", (d: Buffer) => { se.push(d); all.push(d); });
        ch.on("exit", (code: number | null, signal?: string, _dump?: boolean, desc?: string) => {
          ex.got = true;
          if (code !== null && code !== undefined) ex.code = code;
          if (signal) ex.signal = signal.replace(/^SIG/, "");
          if (desc) ex.msg = desc;
        });
        ch.on("close", () => { clearTimeout(timer); resolve(); });
      });
    };
    let chan: ClientChannel;
    try {
      chan = await openExec(client, req.cmd, envs, out.env, attach);
    } catch (e) {
      if ((e as Error).message.startsWith("harness bug")) throw e;
      for (const r of out.env) if (!r.accepted) (r.required ? out.errors : out.warnings).push(setenvMessage(r.name));
      out.error = (e as Error).message;
      return;
    }
    for (const r of out.env) if (!r.accepted) out.warnings.push(setenvMessage(r.name));
    {
      // Go: stdin copied only when non-empty; the write side is always closed (EOF) afterwards.
      if (req.stdin !== undefined && req.stdin.length > 0) chan.end(req.stdin);
      else chan.end();
      await closed;
      // drain: 'close' can precede the readable 'end' of buffered stdout/stderr (bounded wait)
      const ended = (st: NodeJS.ReadableStream & { readableEnded?: boolean; destroyed?: boolean }) =>
        st.readableEnded || st.destroyed ? Promise.resolve() : new Promise<void>((r) => {
          const t = setTimeout(r, 5000);
          st.once("end", () => { clearTimeout(t); r(); });
          st.once("close", () => { clearTimeout(t); r(); });
        });
      await Promise.all([ended(chan), ended(chan.stderr)]);
    }
    out.rawStdout = Buffer.concat(so).toString("utf8");
    out.rawStderr = Buffer.concat(se).toString("utf8");
    out.combined = Buffer.concat(all).toString("utf8");
    out.exitCode = ex.code;
    out.signal = ex.signal;
    let runErr: string | undefined;
    if (!ex.got) {
      runErr = ex.msg ?? "wait: remote command exited without exit status or exit signal";
    } else if (ex.code === null || ex.code !== 0) {
      let status = ex.code;
      if (status === null) {
        status = 128 + (ex.signal && GO_SIGNALS[ex.signal] ? GO_SIGNALS[ex.signal] : 0);
        out.exitCode = status;
      }
      runErr = `Process exited with status ${status}`;
      if (ex.signal) runErr += ` from signal ${ex.signal}`;
      if (ex.msg) runErr += `. Reason was: ${ex.msg}`;
    }
    if (runErr !== undefined) {
      out.error = `${runErr}: running ${goQuote(req.cmd)}:\n${out.combined}`;
      return;
    }
    out.ok = true;
    out.stdout = trimOneNewline(out.rawStdout);
    out.stderr = trimOneNewline(out.rawStderr);
  });
}

export interface CopyRequest {
  connection: Connection;
  /** Local file of the FileAsset. */
  localPath: string;
  remotePath: string;
}

export interface CopyOutcome {
  ok: boolean;
  error?: string;
  sessionOpened: boolean;
  dials: number;
  durationMs: number;
}

function sftpOf(client: Client): Promise<SFTPWrapper> {
  return new Promise((resolve, reject) => client.sftp((err, s) => (err ? reject(err) : resolve(s))));
}
function sftpCall<T>(f: (cb: (err: Error | null | undefined, v?: T) => void) => void): Promise<T | undefined> {
  return new Promise((resolve, reject) => f((err, v) => (err ? reject(err) : resolve(v))));
}

/**
 * One CopyToRemote create/update of a FileAsset (pulumi-command 1.2.1 semantics): dial like a Command, open the SFTP
 * subsystem as the SSH user (no sudo), create the missing parent directories (relative paths are relative to the
 * SFTP server's start directory, the user's home), then write the file in place (create or truncate). A host
 * whose sshd has no `Subsystem sftp` fails here.
 */
export async function copyToRemote(req: CopyRequest, tuning: SshTuning, onSession?: () => void): Promise<CopyOutcome> {
  const out: CopyOutcome = { ok: false, sessionOpened: false, dials: 0, durationMs: 0 };
  return inSession(req.connection, tuning, out, onSession, async (client) => {
    let sftp: SFTPWrapper;
    try {
      sftp = await sftpOf(client);
    } catch (e) {
      out.error = `failed to open an SFTP session (is "Subsystem sftp" configured in the host's sshd_config?): ssh: subsystem request failed: ${(e as Error).message}`;
      return;
    }
    try {
      const data = fs.readFileSync(req.localPath);
      const parts = req.remotePath.split("/").slice(0, -1);
      let dir = req.remotePath.startsWith("/") ? "" : ".";
      for (const p of parts) {
        if (p === "" || p === ".") continue;
        dir = dir === "" ? `/${p}` : `${dir}/${p}`;
        const st = await sftpCall<unknown>((cb) => sftp.stat(dir, cb)).catch(() => undefined);
        // like pkg/sftp's MkdirAll (os.MkdirAll): a mkdir that fails because a concurrent copy made the directory is fine
        if (st === undefined) {
          const d = dir;
          await sftpCall((cb) => sftp.mkdir(d, cb)).catch(async (e: Error) => {
            const again = await sftpCall<{ isDirectory(): boolean }>((cb) => sftp.stat(d, cb)).catch(() => undefined);
            if (!again?.isDirectory()) throw e;
          });
        }
      }
      await sftpCall((cb) => sftp.writeFile(req.remotePath, data, cb as (err: Error | null | undefined) => void));
      out.ok = true;
    } catch (e) {
      out.error = `sftp: copying ${req.localPath} to ${req.remotePath}: ${(e as Error).message}`;
    } finally {
      sftp.end();
    }
  });
}
