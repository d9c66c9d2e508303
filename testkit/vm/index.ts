/**
 * VM test host: a Debian guest (bullseye, bookworm or trixie) under QEMU (TCG) that tests use like a lab host.
 *
 * - `ensureImage(suite)` runs `build-image.sh <suite>`, which builds the base image once per recipe and suite into
 *   `$NT_VM_CACHE` (default `/var/cache/net-tuning-vm/<recipe>-<suite>/`) and reuses it afterwards.
 * - `startVm({ suite, cpus })` boots the guest on a fresh qcow2 overlay of that base image, with
 *   `eth0` = e1000e (own user-mode subnet 10.0.2.0/24) and `eth1` = virtio-net (10.0.3.0/24,
 *   carrying SSH through `hostfwd=tcp:127.0.0.1:PORT-:22`). Both user-mode networks use
 *   `restrict=on`: the guest reaches nothing but the forwarded port.
 * - A QMP monitor on a unix socket in the guest's run directory (`qmp()`), and `setSshLink(up)`: QEMU's `set_link` on
 *   the netdev of the NIC that carries SSH, the cable pulled and plugged back in.
 * - Teardown: `stop()`; otherwise exit/signal handlers kill QEMU and remove the overlay, QEMU
 *   itself dies with its parent (PR_SET_PDEATHSIG through `setpriv`), and leftovers of dead
 *   processes are swept by the next `startVm()`.
 *
 * See testkit/vm/README.md.
 */
import type { Who as LabWho } from "../lab";
import { ChildProcess, spawn } from "child_process";
import * as fs from "fs";
import * as net from "net";
import * as path from "path";
import { Client } from "ssh2";

export type Who = Exclude<LabWho, "plain">; // a guest has no plain (non-sudo) user

/** The Debian releases the VM tier builds images for. */
export const SUITES = ["bullseye", "bookworm", "trixie"] as const;
export type Suite = (typeof SUITES)[number];

export interface VmOptions {
  /** Debian release of the guest (its own kernel, procps, ethtool). Default bookworm, or `$NT_VM_SUITE`. */
  suite?: Suite;
  /** vCPUs (`-smp`). Default `$NT_VM_CPUS` or 1. */
  cpus?: number;
}

export interface SshResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface VmHost {
  address: "127.0.0.1";
  suite: Suite;
  cpus: number;
  /** What the image was built from (manifest.txt): kernel release and package versions. */
  image: ImageInfo;
  port: number;
  iface: { e1000e: string; virtio: string };
  connection(who?: Who): { host: string; port: number; user: string; privateKey: string };
  ssh(cmd: string, opts?: { who?: Who; stdin?: string; timeoutMs?: number }): Promise<SshResult>;
  /** Reboot the guest (disk state kept) and wait for SSH with a new boot id, bounded. */
  reboot(): Promise<void>;
  /** Throw away every guest change: stop, fresh qcow2 overlay on the cached base image, boot. */
  reset(): Promise<void>;
  stop(): Promise<void>;
  /** Duration of the last boot (QEMU start, or reboot request, until SSH answered). */
  bootMs: number;
  /**
   * One QMP command on the guest's QEMU monitor (a unix socket in its run directory): a new connection per call, the
   * greeting, `qmp_capabilities`, then `execute` with `args`; resolves with its `return`, rejects with its `error`
   * (class and description) or after `timeoutMs` (default 10 s). Asynchronous events are skipped.
   */
  qmp(execute: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<unknown>;
  /**
   * The link of the NIC that carries SSH (virtio-net, `iface.virtio`) down or up: QMP `set_link` on its netdev, which
   * QEMU passes to the NIC, so the guest's driver sees its carrier go (systemd-networkd logs `Lost carrier`) and every
   * frame between the guest and the user-mode network is dropped. A TCP connect to the forwarded SSH port still
   * succeeds meanwhile (QEMU's user-mode stack accepts it on the host side) but nothing answers: an SSH client waits
   * for a banner that comes only once the link is up again (QEMU retransmits its SYN to the guest for up to 75 s).
   * Down also drops the cached SSH connections. Up waits, bounded by NT_VM_SSH_TIMEOUT_MS, until SSH answers again
   * (the guest may first renew its DHCP lease) and resolves with the milliseconds that took. Set it up again before
   * `reboot()`; `reset()` starts a new QEMU with the link up.
   */
  setSshLink(up: boolean): Promise<number>;
  /** True when the forwarded SSH port sends an SSH banner within `ms` (false while the link is down). */
  sshAnswers(ms: number): Promise<boolean>;
}

export interface ImageInfo {
  suite: Suite;
  /** Directory with rootfs.img, vmlinuz, initrd.img, keys, manifest.txt. */
  path: string;
  /** Kernel release of the image (`uname -r` in the guest). */
  kernel: string;
  /** Package → version, from manifest.txt. */
  packages: Record<string, string>;
  /** True when this call built the image (cold cache). */
  built: boolean;
  /** Wall time of this call (build or cache check). */
  buildMs: number;
}

const BUILD_SCRIPT = path.join(__dirname, "build-image.sh");
export const CACHE_ROOT = process.env.NT_VM_CACHE ?? "/var/cache/net-tuning-vm";
const RUN_ROOT = path.join(CACHE_ROOT, "run");

const envInt = (name: string, dflt: number): number => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : dflt;
};
/** Bounds. Boot under TCG measured at ~25 s on an idle 2-core machine; allow for a busy CI. */
const BUILD_TIMEOUT_MS = envInt("NT_VM_BUILD_TIMEOUT_MS", 25 * 60_000);
const BOOT_TIMEOUT_MS = envInt("NT_VM_BOOT_TIMEOUT_MS", 300_000);
const SSH_TIMEOUT_MS = envInt("NT_VM_SSH_TIMEOUT_MS", 120_000);
const DEFAULT_VCPUS = envInt("NT_VM_CPUS", 1);
const MEMORY_MB = envInt("NT_VM_MEMORY_MB", 1024);
/** Bound of one QMP command (connect, greeting, capabilities, command). */
const QMP_TIMEOUT_MS = 10_000;

/** Guest NIC layout; the image's initramfs makes eth0 = e1000e deterministic (see build-image.sh). */
const NICS = {
  e1000e: { mac: "52:54:00:4e:54:01", net: "10.0.2.0/24", name: "eth0", driver: "e1000e", netdev: "nic0" },
  virtio: { mac: "52:54:00:4e:54:02", net: "10.0.3.0/24", name: "eth1", driver: "virtio_net", netdev: "nic1" },
} as const;
/** The netdev `setSshLink` sets down/up: the one with the SSH port forward. */
const SSH_NETDEV = NICS.virtio.netdev;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `p`, or a rejection after `ms` (the timer never outlives the race). */
function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), Math.max(0, ms));
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------------------------
// Image

const imagePromises = new Map<Suite, Promise<ImageInfo>>();

function defaultSuite(): Suite {
  const s = process.env.NT_VM_SUITE ?? "bookworm";
  if (!(SUITES as readonly string[]).includes(s)) throw new Error(`NT_VM_SUITE=${s}: use one of ${SUITES.join(", ")}`);
  return s as Suite;
}

/** Build the guest image of `suite` if the cache has none for the current recipe. Memoised per process and suite. */
export function ensureImage(suite: Suite = defaultSuite()): Promise<ImageInfo> {
  if (!(SUITES as readonly string[]).includes(suite)) throw new Error(`suite ${String(suite)}: use one of ${SUITES.join(", ")}`);
  let p = imagePromises.get(suite);
  if (!p) {
    p = runBuild(suite).catch((e) => {
      imagePromises.delete(suite);
      throw e;
    });
    imagePromises.set(suite, p);
  }
  return p;
}

function readManifest(dir: string): { kernel: string; packages: Record<string, string> } {
  const text = fs.readFileSync(path.join(dir, "manifest.txt"), "utf8");
  const kernel = /^kernel=(.*)$/m.exec(text)?.[1] ?? "";
  const packages: Record<string, string> = {};
  for (const m of text.matchAll(/^ {2}(\S+) (\S+)$/gm)) packages[m[1]] = m[2];
  return { kernel, packages };
}

function runBuild(suite: Suite): Promise<ImageInfo> {
  const started = Date.now();
  return new Promise<ImageInfo>((resolve, reject) => {
    const child = spawn("bash", [BUILD_SCRIPT, suite], {
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // own process group, so a timeout kills debootstrap & co. too
      env: { ...process.env, NT_VM_CACHE: CACHE_ROOT },
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString();
      if (process.env.NT_VM_VERBOSE) process.stderr.write(d);
    });
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {
        /* already gone */
      }
    }, BUILD_TIMEOUT_MS);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const field = (k: string) => new RegExp(`^${k}=(.*)$`, "m").exec(stdout)?.[1];
      const dir = field("NT_VM_DIR");
      if (code !== 0 || !dir) {
        reject(
          new Error(
            `build-image.sh ${suite} failed (exit ${code ?? signal}` +
              `${Date.now() - started >= BUILD_TIMEOUT_MS ? ", timed out" : ""}):\n${stderr.slice(-4000)}`,
          ),
        );
        return;
      }
      try {
        resolve({ suite, path: dir, ...readManifest(dir), built: field("NT_VM_BUILT") === "1", buildMs: Date.now() - started });
      } catch (e) {
        reject(e);
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Process-wide cleanup of running guests

interface Live {
  proc?: ChildProcess;
  runDir: string;
}
const live = new Set<Live>();
let handlersInstalled = false;

function killAndRemove(l: Live): void {
  try {
    if (l.proc?.pid && l.proc.exitCode === null && l.proc.signalCode === null) process.kill(l.proc.pid, "SIGKILL");
  } catch {
    /* gone */
  }
  try {
    fs.rmSync(l.runDir, { recursive: true, force: true });
  } catch {
    /* best effort */
  }
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on("exit", () => {
    for (const l of live) killAndRemove(l);
    live.clear();
  });
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    const h = () => {
      for (const l of live) killAndRemove(l);
      live.clear();
      process.removeListener(sig, h);
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig); // keep the default outcome
    };
    process.on(sig, h);
  }
}

/** Remove run directories (and QEMU) left by processes that died without cleaning up. */
function sweepStale(): void {
  let entries: string[] = [];
  try {
    entries = fs.readdirSync(RUN_ROOT);
  } catch {
    return;
  }
  for (const e of entries) {
    const owner = Number(/^(\d+)-/.exec(e)?.[1]);
    if (!owner || pidAlive(owner)) continue;
    const dir = path.join(RUN_ROOT, e);
    try {
      const qpid = Number(fs.readFileSync(path.join(dir, "qemu.pid"), "utf8").trim());
      const cmdline = qpid ? fs.readFileSync(`/proc/${qpid}/cmdline`, "utf8") : "";
      if (cmdline.includes(dir)) process.kill(qpid, "SIGKILL"); // only our own QEMU for that dir
    } catch {
      /* no pid file or process gone */
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** True when 127.0.0.1:port sends an SSH banner within `ms`. */
function sshBanner(port: number, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: "127.0.0.1", port });
    let buf = "";
    const done = (ok: boolean) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), ms);
    sock.on("data", (d: Buffer) => {
      buf += d.toString("latin1");
      if (buf.startsWith("SSH-")) done(true);
      else if (buf.length >= 4) done(false);
    });
    sock.on("error", () => done(false));
    sock.on("close", () => done(false));
  });
}

function run(cmd: string, args: string[], timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ["ignore", "ignore", "pipe"], timeout: timeoutMs, killSignal: "SIGKILL" });
    let err = "";
    p.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    p.on("error", reject);
    p.on("close", (code, sig) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(" ")}: exit ${code ?? sig}: ${err.trim()}`)),
    );
  });
}

// ---------------------------------------------------------------------------------------------
// The guest

class Vm implements VmHost {
  readonly address = "127.0.0.1" as const;
  port = 0;
  iface: { e1000e: string; virtio: string } = { e1000e: NICS.e1000e.name, virtio: NICS.virtio.name };
  bootMs = 0;
  /** The SSH NIC's link as setSshLink left it (QEMU starts with it up). */
  private linkDown = false;
  private readonly keys: Record<Who, string>;
  private readonly hostKey: Buffer;
  private readonly live: Live;
  private exited?: Promise<void>;
  private readonly conns = new Map<Who, Promise<Client>>();

  private readonly imageDir: string;
  readonly suite: Suite;

  constructor(
    readonly image: ImageInfo,
    runDir: string,
    readonly cpus: number,
  ) {
    this.imageDir = image.path;
    this.suite = image.suite;
    this.keys = {
      root: fs.readFileSync(path.join(image.path, "id_root"), "utf8"),
      sudo: fs.readFileSync(path.join(image.path, "id_ntsudo"), "utf8"),
    };
    this.hostKey = Buffer.from(
      fs.readFileSync(path.join(image.path, "ssh_host_ed25519_key.pub"), "utf8").trim().split(/\s+/)[1],
      "base64",
    );
    this.live = { runDir };
  }

  get runDir(): string {
    return this.live.runDir;
  }

  /** The QMP monitor's unix socket. */
  get qmpPath(): string {
    return path.join(this.runDir, "qmp.sock");
  }

  connection(who: Who = "root") {
    return { host: this.address, port: this.port, user: who === "root" ? "root" : "ntsudo", privateKey: this.keys[who] };
  }

  /**
   * Run `cmd` over SSH. One connection per user is kept and reused (an SSH handshake costs the
   * TCG guest ~1-3 s); it is dropped on error, timeout, reboot(), reset() and stop().
   */
  async ssh(cmd: string, opts: { who?: Who; stdin?: string; timeoutMs?: number } = {}): Promise<SshResult> {
    return this.exec(cmd, opts, false);
  }

  private connect(who: Who, timeoutMs: number): Promise<Client> {
    const c = this.connection(who);
    return new Promise<Client>((resolve, reject) => {
      const conn = new Client();
      conn.once("ready", () => resolve(conn));
      conn.on("error", (e) => reject(e)); // after "ready": surfaces as "close" to the users below
      conn.once("close", () => reject(new Error(`ssh connection to ${c.host}:${c.port} closed before ready`)));
      conn.connect({
        host: c.host,
        port: c.port,
        username: c.user,
        privateKey: c.privateKey,
        readyTimeout: Math.max(1000, Math.min(timeoutMs, 30_000)),
        keepaliveInterval: 5000,
        keepaliveCountMax: 4,
        algorithms: { serverHostKey: ["ssh-ed25519"] },
        hostVerifier: (key: Buffer) => key.equals(this.hostKey),
      });
    });
  }

  private cachedConn(who: Who, timeoutMs: number): { conn: Promise<Client>; reused: boolean } {
    const have = this.conns.get(who);
    if (have) return { conn: have, reused: true };
    const conn = this.connect(who, timeoutMs);
    this.conns.set(who, conn);
    const forget = () => {
      if (this.conns.get(who) === conn) this.conns.delete(who);
    };
    conn.then((cl) => cl.once("close", forget), forget);
    return { conn, reused: false };
  }

  /** End every cached connection (before a reboot/reset/stop). */
  private dropConns(): void {
    for (const p of this.conns.values()) p.then((c) => c.end(), () => undefined);
    this.conns.clear();
  }

  private async exec(
    cmd: string,
    opts: { who?: Who; stdin?: string; timeoutMs?: number },
    oneShot: boolean,
  ): Promise<SshResult> {
    const who = opts.who ?? "root";
    const timeoutMs = opts.timeoutMs ?? SSH_TIMEOUT_MS;
    const deadline = Date.now() + timeoutMs;
    for (let attempt = 0; ; attempt++) {
      const { conn: connP, reused } = oneShot
        ? { conn: this.connect(who, timeoutMs), reused: false }
        : this.cachedConn(who, timeoutMs);
      let conn: Client;
      try {
        conn = await withTimeout(connP, deadline - Date.now(), `ssh connect to 127.0.0.1:${this.port}`);
      } catch (e) {
        if (oneShot) connP.then((c) => c.end(), () => undefined);
        else this.dropConns();
        if (reused && attempt === 0) continue;
        throw e;
      }
      try {
        return await this.execOn(conn, cmd, opts.stdin, deadline, oneShot);
      } catch (e) {
        // Only a failure to open the channel (nothing ran yet) is retried, once, on a new connection.
        if ((e as { channelOpenFailed?: boolean }).channelOpenFailed && reused && attempt === 0) {
          this.dropConns();
          continue;
        }
        throw e;
      }
    }
  }

  private execOn(conn: Client, cmd: string, stdin: string | undefined, deadline: number, oneShot: boolean): Promise<SshResult> {
    return new Promise<SshResult>((resolve, reject) => {
      let stdout = "";
      let stderr = "";
      let code: number | undefined;
      let done = false;
      const onClose = () => finish(new Error(`ssh connection to 127.0.0.1:${this.port} closed while running: ${cmd}`));
      const finish = (err?: Error) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        conn.removeListener("close", onClose);
        if (oneShot) conn.end();
        if (err) reject(err);
        else resolve({ code: code ?? -1, stdout, stderr });
      };
      const timer = setTimeout(() => {
        conn.end(); // the command may still be running: never reuse this connection
        // the guest's console (kernel messages: OOM, soft lockups, hung tasks) says whether the guest or the command hung
        finish(new Error(`ssh to 127.0.0.1:${this.port} timed out: ${cmd}\n${this.qemuDiagnostics()}`));
      }, Math.max(0, deadline - Date.now()));
      conn.once("close", onClose);
      conn.exec(cmd, (err, stream) => {
        if (err) return finish(Object.assign(err, { channelOpenFailed: true }));
        stream.on("data", (d: Buffer) => (stdout += d.toString()));
        stream.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        stream.on("exit", (c: number | null) => {
          if (typeof c === "number") code = c;
        });
        stream.on("close", () => finish());
        if (stdin !== undefined) stream.end(stdin);
        else stream.end();
      });
    });
  }

  /** Start QEMU on a fresh overlay and wait for SSH. */
  async boot(): Promise<void> {
    const started = Date.now();
    fs.mkdirSync(this.runDir, { recursive: true });
    const overlay = path.join(this.runDir, "overlay.qcow2");
    fs.rmSync(overlay, { force: true });
    await run(
      "qemu-img",
      ["create", "-q", "-f", "qcow2", "-F", "raw", "-b", path.join(this.imageDir, "rootfs.img"), overlay],
      60_000,
    );
    let lastErr: Error | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (attempt > 0 || this.port === 0) this.port = await freePort();
      this.spawnQemu(overlay);
      try {
        await this.waitForSsh(started + BOOT_TIMEOUT_MS, undefined);
        lastErr = undefined;
        break;
      } catch (e) {
        lastErr = e as Error;
        const early = this.live.proc?.exitCode !== null; // QEMU died (e.g. hostfwd port taken): retry
        await this.kill();
        if (!early) break;
      }
    }
    if (lastErr) throw lastErr;
    this.bootMs = Date.now() - started;
    await this.discoverIfaces();
  }

  private spawnQemu(overlay: string): void {
    // sun_path holds 108 bytes: the run directory is short (<cache>/run/<pid>-XXXXXX), but NT_VM_CACHE may not be
    if (Buffer.byteLength(this.qmpPath) > 100) throw new Error(`QMP socket path too long for a unix socket (${this.qmpPath}): use a shorter NT_VM_CACHE`);
    fs.rmSync(this.qmpPath, { force: true });
    this.linkDown = false;
    const serial = path.join(this.runDir, "serial.log");
    const args = [
      "--pdeathsig", "KILL", "--",
      "qemu-system-x86_64",
      "-name", `net-tuning-vm-${this.suite}`,
      "-accel", "tcg",
      "-machine", "q35",
      "-cpu", "max",
      "-smp", String(this.cpus),
      "-m", String(MEMORY_MB),
      "-display", "none",
      "-no-user-config",
      "-nodefaults",
      "-serial", `file:${serial}`,
      "-kernel", path.join(this.imageDir, "vmlinuz"),
      "-initrd", path.join(this.imageDir, "initrd.img"),
      "-append", "root=/dev/vda rw console=ttyS0 net.ifnames=0 panic=5",
      "-drive", `file=${overlay},if=virtio,format=qcow2,cache=unsafe,discard=unmap`,
      "-netdev", `user,id=${NICS.e1000e.netdev},restrict=on,net=${NICS.e1000e.net}`,
      "-device", `e1000e,netdev=${NICS.e1000e.netdev},mac=${NICS.e1000e.mac}`,
      "-netdev", `user,id=${SSH_NETDEV},restrict=on,net=${NICS.virtio.net},hostfwd=tcp:127.0.0.1:${this.port}-:22`,
      "-device", `virtio-net-pci,netdev=${SSH_NETDEV},mac=${NICS.virtio.mac}`,
      // the monitor (qmp(), setSshLink()): QEMU creates the socket (replacing a stale one), kill() removes it
      "-qmp", `unix:${this.qmpPath},server=on,wait=off`,
    ];
    const proc = spawn("setpriv", args, { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    proc.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
    this.exited = new Promise<void>((r) => proc.on("close", () => r()));
    proc.on("error", (e) => (err += String(e)));
    (proc as ChildProcess & { qemuStderr?: () => string }).qemuStderr = () => err;
    this.live.proc = proc;
    fs.writeFileSync(path.join(this.runDir, "qemu.pid"), `${proc.pid}\n`);
    live.add(this.live);
    installHandlers();
  }

  private qemuDiagnostics(): string {
    const p = this.live.proc as (ChildProcess & { qemuStderr?: () => string }) | undefined;
    let serial = "";
    try {
      serial = fs.readFileSync(path.join(this.runDir, "serial.log"), "utf8").split("\n").slice(-25).join("\n");
    } catch {
      /* none yet */
    }
    return `qemu exit=${p?.exitCode ?? p?.signalCode ?? "running"} stderr: ${p?.qemuStderr?.() ?? ""}\n--- serial tail ---\n${serial}`;
  }

  /** Poll SSH until it answers (with a boot id different from `notBootId`), bounded by `deadline`. */
  private async waitForSsh(deadline: number, notBootId: string | undefined): Promise<string> {
    let last = "";
    while (Date.now() < deadline) {
      const p = this.live.proc;
      if (!p || p.exitCode !== null || p.signalCode !== null) {
        throw new Error(`QEMU exited while waiting for SSH\n${this.qemuDiagnostics()}`);
      }
      // Cheap probe first: until the guest's sshd listens, a connection through the user-mode
      // forward hangs (no reply from the guest) instead of failing, so keep each try short.
      if (!(await sshBanner(this.port, 3000))) {
        last = "no SSH banner";
        await sleep(500);
        continue;
      }
      try {
        const r = await this.exec(
          "cat /proc/sys/kernel/random/boot_id",
          { timeoutMs: Math.max(1000, Math.min(20_000, deadline - Date.now())) },
          true,
        );
        const id = r.stdout.trim();
        if (r.code === 0 && id && id !== notBootId) return id;
        last = id === notBootId ? "old boot id still answering" : `exit ${r.code}: ${r.stderr}`;
      } catch (e) {
        last = (e as Error).message;
      }
      await sleep(1000);
    }
    throw new Error(`no SSH on 127.0.0.1:${this.port} within the bound (last: ${last})\n${this.qemuDiagnostics()}`);
  }

  private async discoverIfaces(): Promise<void> {
    const r = await this.ssh(
      'for i in /sys/class/net/*; do [ -e "$i/device/driver" ] && echo "${i##*/} $(basename "$(readlink "$i/device/driver")")"; done; true',
    );
    const byDriver = new Map(
      r.stdout
        .trim()
        .split("\n")
        .map((l) => l.split(" ") as [string, string])
        .map(([n, d]) => [d, n] as const),
    );
    const e1000e = byDriver.get(NICS.e1000e.driver);
    const virtio = byDriver.get(NICS.virtio.driver);
    if (!e1000e || !virtio) throw new Error(`guest NICs not found by driver: ${r.stdout} ${r.stderr}`);
    this.iface = { e1000e, virtio };
  }

  qmp(execute: string, args?: Record<string, unknown>, timeoutMs = QMP_TIMEOUT_MS): Promise<unknown> {
    const where = `QMP ${execute} on ${this.qmpPath}`;
    return new Promise((resolve, reject) => {
      const sock = net.connect(this.qmpPath);
      let buf = "";
      let stage: "greeting" | "capabilities" | "command" = "greeting";
      let settled = false;
      const done = (err: Error | undefined, value?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        sock.destroy();
        if (err) reject(err);
        else resolve(value);
      };
      const timer = setTimeout(() => done(new Error(`${where}: no answer within ${timeoutMs} ms (during ${stage})`)), timeoutMs);
      const send = (msg: object) => sock.write(`${JSON.stringify(msg)}\n`);
      sock.on("data", (d: Buffer) => {
        buf += d.toString("utf8");
        for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line) continue;
          let msg: { QMP?: unknown; event?: unknown; return?: unknown; error?: { class?: string; desc?: string } };
          try {
            msg = JSON.parse(line) as typeof msg;
          } catch {
            return done(new Error(`${where}: not a QMP message: ${line.slice(0, 200)}`));
          }
          if (msg.event !== undefined) continue; // asynchronous events (NIC_RX_FILTER_CHANGED, …)
          if (msg.error) return done(new Error(`${where}: ${msg.error.class ?? "error"}: ${msg.error.desc ?? line}`));
          if (stage === "greeting" && msg.QMP !== undefined) {
            stage = "capabilities";
            send({ execute: "qmp_capabilities" });
          } else if (stage === "capabilities" && "return" in msg) {
            stage = "command";
            send(args ? { execute, arguments: args } : { execute });
          } else if (stage === "command" && "return" in msg) {
            return done(undefined, msg.return);
          }
        }
      });
      sock.on("error", (e) => done(new Error(`${where}: ${e.message}`)));
      sock.on("close", () => done(new Error(`${where}: the monitor closed the connection (during ${stage})`)));
    });
  }

  async setSshLink(up: boolean): Promise<number> {
    const started = Date.now();
    if (!up) this.dropConns(); // their packets would be dropped: a call would hang until its timeout
    await this.qmp("set_link", { name: SSH_NETDEV, up });
    this.linkDown = !up;
    if (!up) return Date.now() - started;
    await this.waitForSsh(started + SSH_TIMEOUT_MS, undefined);
    return Date.now() - started;
  }

  sshAnswers(ms: number): Promise<boolean> {
    return sshBanner(this.port, ms);
  }

  async reboot(): Promise<void> {
    if (this.linkDown) throw new Error("reboot(): the SSH NIC's link is down (setSshLink(false)): set it up first");
    const started = Date.now();
    const before = (await this.ssh("cat /proc/sys/kernel/random/boot_id")).stdout.trim();
    // Detach so the SSH session ends cleanly before systemd tears sshd down.
    await this.ssh("nohup sh -c 'sleep 1; systemctl reboot' >/dev/null 2>&1 &", { timeoutMs: 30_000 }).catch(() => undefined);
    this.dropConns();
    await this.waitForSsh(started + BOOT_TIMEOUT_MS, before);
    this.bootMs = Date.now() - started;
    await this.discoverIfaces();
  }

  private async kill(): Promise<void> {
    this.dropConns();
    const p = this.live.proc;
    if (p && p.exitCode === null && p.signalCode === null) {
      p.kill("SIGKILL");
      await withTimeout(this.exited!, 10_000, "QEMU exit").catch(() => undefined);
    }
    this.live.proc = undefined;
    fs.rmSync(this.qmpPath, { force: true });
  }

  async reset(): Promise<void> {
    await this.kill();
    await this.boot(); // boot() recreates the overlay
  }

  async stop(): Promise<void> {
    await this.kill();
    fs.rmSync(this.runDir, { recursive: true, force: true });
    live.delete(this.live);
  }
}

/** Build (if needed) and boot one guest of `suite`. Call `stop()` when done (afterAll). */
export async function startVm(opts: VmOptions = {}): Promise<VmHost> {
  const image = await ensureImage(opts.suite ?? defaultSuite());
  const cpus = opts.cpus ?? DEFAULT_VCPUS;
  if (!Number.isInteger(cpus) || cpus < 1 || cpus > 8) throw new Error(`startVm: cpus ${cpus}: use 1-8`);
  fs.mkdirSync(RUN_ROOT, { recursive: true });
  sweepStale();
  const runDir = fs.mkdtempSync(path.join(RUN_ROOT, `${process.pid}-`));
  const vm = new Vm(image, runDir, cpus);
  try {
    await vm.boot();
  } catch (e) {
    await vm.stop();
    throw e;
  }
  return vm;
}
