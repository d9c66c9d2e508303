/**
 * The lab itself: isolation, sshd behaviour, users, veth NIC features, teardown (also after SIGKILL),
 * and 50 hosts on one machine. Needs root. Run: npx jest tests/lab
 */
import { spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { cleanupStaleLabs, Lab, LabHost, procStart, sshOptions, startLab, STATE_ROOT } from "../../testkit/lab";
import { procPath, readSysctl as hostSysctl, snapshot as hostSnapshot, writeSysctl } from "../../testkit/host";

// ------------------------------------------------------------------------------------------ helpers

/** A sysctl of the machine itself (not of a lab host). */
function readSysctl(key: string): string {
  return fs.readFileSync(procPath(key), "utf8").trim();
}
function netnsList(prefix: string): string[] {
  try {
    return fs.readdirSync("/run/netns").filter((n) => n.startsWith(prefix));
  } catch {
    return [];
  }
}
function netnsInode(ns: string): number {
  return fs.statSync(`/run/netns/${ns}`).ino;
}
function pids(): number[] {
  return fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number);
}
/**
 * Every process (pid) whose network namespace is one of the given nsfs inodes. Namespace inode numbers are
 * reused once a namespace is freed, so inodes that now belong to another NAMED namespace (e.g. a lab of a
 * concurrent test run) are not ours any more and are skipped; a leaked process would keep our (deleted,
 * unnamed) namespace alive and its inode from being reused.
 */
function processesInNetns(ours: Set<number>, ourNames: string[]): number[] {
  const inodes = new Set(ours);
  for (const n of netnsList("")) {
    if (ourNames.includes(n)) continue;
    try {
      inodes.delete(netnsInode(n));
    } catch {
      /* raced */
    }
  }
  return pids().filter((p) => {
    try {
      const m = /^net:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${p}/ns/net`));
      return !!m && inodes.has(Number(m[1]));
    } catch {
      return false;
    }
  });
}
/** Mount entries, in any process's mount namespace on the machine, whose line mentions `needle`. */
function mountsMentioning(needle: string): string[] {
  const found = new Set<string>();
  for (const p of pids()) {
    let info = "";
    try {
      info = fs.readFileSync(`/proc/${p}/mountinfo`, "utf8");
    } catch {
      continue;
    }
    for (const line of info.split("\n")) if (line.includes(needle)) found.add(`${p}: ${line}`);
  }
  return [...found];
}
function veths(key: string): string[] {
  return fs.readdirSync("/sys/class/net").filter((v) => v.startsWith(`nt${key}h`));
}
function keyOf(id: string): string {
  return /([0-9a-f]{8})$/.exec(id)![1];
}

interface Snapshot {
  id: string;
  netns: string[];
  inodes: Set<number>;
  addresses: string[];
  initPids: { pid: number; start: string }[];
}
function snapshot(id: string, netns: string[], addresses: string[]): Snapshot {
  const initPids = netns.map((_, n) => {
    const [pid, start] = fs.readFileSync(path.join(STATE_ROOT, id, `h${n}`, "init.pid"), "utf8").trim().split(" ");
    return { pid: Number(pid), start };
  });
  return { id, netns, inodes: new Set(netns.map(netnsInode)), addresses, initPids };
}
/** Asserts that nothing of a lab is left on the machine. */
async function expectGone(s: Snapshot): Promise<void> {
  expect(netnsList(`ntlab-${s.id}-`)).toEqual([]);
  expect(veths(keyOf(s.id))).toEqual([]);
  expect(processesInNetns(s.inodes, s.netns)).toEqual([]);
  for (const p of s.initPids) {
    expect(p.start).toMatch(/^\d+$/);
    expect(procStart(p.pid)).not.toBe(p.start); // that sshd (same pid AND start time) no longer exists
  }
  expect(mountsMentioning(path.join(STATE_ROOT, s.id))).toEqual([]);
  expect(fs.existsSync(path.join(STATE_ROOT, s.id))).toBe(false);
  const slots = fs.readdirSync(path.join(STATE_ROOT, ".slots")).map((x) => fs.readlinkSync(path.join(STATE_ROOT, ".slots", x)));
  expect(slots).not.toContain(s.id);
  // no address or route of the lab is left on the machine (never probe the gone addresses: with the
  // routes gone, packets to 198.18/15 would leave the machine through its default route)
  const addrs = spawnSync("ip", ["-4", "-o", "addr", "show"], { encoding: "utf8" }).stdout;
  const routes = spawnSync("ip", ["-4", "route", "show"], { encoding: "utf8" }).stdout;
  for (const a of s.addresses) {
    const gw = a.replace(/\d+$/, (d) => String(Number(d) - 1));
    expect(addrs).not.toContain(`inet ${gw}/`);
    expect(routes).not.toContain(a.replace(/\d+$/, (d) => String(Number(d) - 2)) + "/30");
  }
}

// ---------------------------------------------------------------------------------- shared 2-host lab

jest.setTimeout(120_000); // independent of the project's testTimeout; the whole file takes ~25 s

let lab: Lab;
let h0: LabHost;
let h1: LabHost;

beforeAll(async () => {
  lab = await startLab({ hosts: 2, tag: "labtest" });
  [h0, h1] = lab.hosts;
  console.log(`[lab] 2-host lab ${lab.id} started, per-host ms: ${lab.startupMs.join(", ")}`);
}, 60_000);
afterAll(async () => {
  await lab?.stop();
}, 60_000);

describe("lab host shape", () => {
  test("hosts have the documented names, namespaces, addresses and connection args", async () => {
    expect(h0.name).toBe("h0");
    expect(h0.netns).toBe(`ntlab-${lab.id}-0`);
    expect(h0.iface).toBe("eth0");
    expect(h0.port).toBe(22);
    expect(h0.address).toMatch(/^198\.1[89]\.\d+\.\d+$/);
    expect(h1.address).not.toBe(h0.address);
    expect(h0.connection("sudo")).toEqual({ host: h0.address, port: 22, user: "ntsudo", privateKey: h0.sudoUser.privateKey });
    expect(h0.connection().user).toBe("root");
    expect(h0.plainUser.privateKey).toMatch(/^-----BEGIN OPENSSH PRIVATE KEY-----/);
    expect(fs.statSync(h0.root.keyPath).mode & 0o777).toBe(0o600);
    const r = await h0.ssh("hostname; id -un; ip -4 -o addr show dev eth0");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(h0.netns);
    expect(r.stdout).toContain(`inet ${h0.address}/30`);
    const e = await h1.exec("id -u; cat", { stdin: "from-stdin" });
    expect(e).toEqual({ code: 0, stdout: "0\nfrom-stdin", stderr: "" });
    expect((await h0.exec("exit 7")).code).toBe(7);
    await expect(h0.exec("sleep 5", { timeoutMs: 300 })).rejects.toThrow(/timed out/);
  });
});

describe("(1) isolation", () => {
  test("per-namespace sysctls changed over SSH stay inside the host", async () => {
    const fin = readSysctl("net.ipv4.tcp_fin_timeout");
    const som = readSysctl("net.core.somaxconn");
    const newFin = String(Number(fin) === 23 ? 24 : 23);
    const newSom = String(Number(som) === 1234 ? 1235 : 1234);
    const r = await h0.ssh(`sysctl -w net.ipv4.tcp_fin_timeout=${newFin} net.core.somaxconn=${newSom} && sysctl -n net.ipv4.tcp_fin_timeout net.core.somaxconn`);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n").slice(-2)).toEqual([newFin, newSom]);
    expect(readSysctl("net.ipv4.tcp_fin_timeout")).toBe(fin);
    expect(readSysctl("net.core.somaxconn")).toBe(som);
    const other = await h1.exec("sysctl -n net.ipv4.tcp_fin_timeout net.core.somaxconn");
    expect(other.stdout.trim().split("\n")).not.toContain(newFin);
    expect(other.stdout.trim().split("\n")).not.toContain(newSom);
  });

  test("files written on the host (sysctl.d, /var/lib, /usr/local, systemd, rc.local, ...) do not reach the machine", async () => {
    const probe = `ntlab-probe-${lab.id}`;
    const dirs = ["/etc/sysctl.d", "/var/lib", "/usr/local", "/etc/systemd/system", "/etc/modules-load.d", "/etc/rc.d", "/etc/sudoers.d", "/root", "/home", "/tmp", "/run", "/work"];
    const files = dirs.map((d) => path.join(d, probe));
    const machineBefore = {
      sysctlConf: fs.readFileSync("/etc/sysctl.conf", "utf8"),
      passwd: fs.readFileSync("/etc/passwd", "utf8"),
      rcLocal: fs.existsSync("/etc/rc.local") ? fs.readFileSync("/etc/rc.local", "utf8") : null,
      rcd: fs.existsSync("/etc/rc.d"),
    };
    const script = [
      "set -e",
      ...dirs.map((d) => `mkdir -p ${d} && echo x > ${path.join(d, probe)}`),
      `echo net.ipv4.tcp_fin_timeout=11 >> /etc/sysctl.conf`,
      `printf '#!/bin/sh\\nexit 0\\n' > /etc/rc.local && chmod +x /etc/rc.local`,
      `printf '#!/bin/sh\\n' > /etc/rc.d/rc.local`,
      `echo done`,
    ].join("\n");
    const r = await h0.ssh(script);
    expect(r).toMatchObject({ code: 0, stdout: "done\n" });
    // visible inside the host ...
    expect((await h0.exec(files.map((f) => `test -f ${f}`).join(" && "))).code).toBe(0);
    expect((await h0.exec("grep -c tcp_fin_timeout=11 /etc/sysctl.conf")).stdout.trim()).toBe("1");
    // ... but neither on the machine ...
    for (const f of files) expect([f, fs.existsSync(f)]).toEqual([f, false]);
    expect(fs.readFileSync("/etc/sysctl.conf", "utf8")).toBe(machineBefore.sysctlConf);
    expect(fs.existsSync("/etc/rc.local") ? fs.readFileSync("/etc/rc.local", "utf8") : null).toBe(machineBefore.rcLocal);
    expect(fs.existsSync("/etc/rc.d")).toBe(machineBefore.rcd);
    // ... nor on the other lab host; and the lab users exist only inside the hosts
    expect((await h1.exec(files.map((f) => `test ! -e ${f}`).join(" && "))).code).toBe(0);
    expect(machineBefore.passwd).not.toMatch(/^ntsudo:/m);
    expect((await h1.exec("getent passwd ntsudo ntplain | cut -d: -f1")).stdout).toBe("ntsudo\nntplain\n");
  });

  test("host-wide sysctls (vm, fs, kernel) are read-only inside the host, even for root", async () => {
    const swappiness = readSysctl("vm.swappiness");
    const target = swappiness === "13" ? "14" : "13";
    const viaSsh = await h0.ssh(`echo ${target} > /proc/sys/vm/swappiness`);
    expect(viaSsh.code).not.toBe(0);
    expect(viaSsh.stderr).toMatch(/Read-only file system/);
    const viaSysctl = await h0.ssh(`sysctl -w vm.swappiness=${target} fs.file-max=123456 kernel.pid_max=40000`);
    expect(viaSysctl.code).not.toBe(0);
    const viaExec = await h0.exec(`echo ${target} > /proc/sys/vm/swappiness`);
    expect(viaExec.code).not.toBe(0);
    // root over SSH cannot undo the protection (CAP_SYS_ADMIN is not in its bounding set)
    const remount = await h0.ssh("mount -o remount,bind,rw /proc/sys && echo remounted");
    expect(remount.code).not.toBe(0);
    expect(remount.stdout).not.toContain("remounted");
    expect(readSysctl("vm.swappiness")).toBe(swappiness);
    // net.* is writable (per netns)
    expect((await h0.exec("echo 1 > /proc/sys/net/ipv4/tcp_mtu_probing && cat /proc/sys/net/ipv4/tcp_mtu_probing")).stdout).toBe("1\n");
  });
});

describe("(2) sshd runs Debian's default config", () => {
  test("SetEnv PULUMI_COMMAND_* is refused, LC_* is accepted", () => {
    const ssh = (setenv: string, cmd: string) =>
      spawnSync("ssh", [...sshOptions(h0.root.keyPath), "-o", `SetEnv=${setenv}`, `root@${h0.address}`, cmd], {
        encoding: "utf8",
        timeout: 20_000,
      });
    const refused = ssh("PULUMI_COMMAND_STDOUT=x", "echo ${PULUMI_COMMAND_STDOUT-unset}");
    expect(refused.status).toBe(0);
    expect(refused.stdout).toBe("unset\n");
    // control: the mechanism works for what AcceptEnv allows, so "unset" above is sshd's refusal
    const accepted = ssh("LC_NTLAB=probe", "echo ${LC_NTLAB-unset}");
    expect(accepted.status).toBe(0);
    expect(accepted.stdout).toBe("probe\n");
  });
});

describe("(3) users", () => {
  test("ntsudo has passwordless sudo, ntplain has no sudo rights, root is root", async () => {
    const s = await h0.ssh("id -un; sudo -n true && sudo -n id -u", { who: "sudo" });
    expect(s).toMatchObject({ code: 0, stdout: "ntsudo\n0\n" });
    const p = await h0.ssh("id -un; sudo -n true", { who: "plain" });
    expect(p.stdout).toBe("ntplain\n");
    expect(p.code).not.toBe(0);
    expect(p.stderr).toMatch(/password is required|not allowed|may not run sudo/);
    const r = await h0.ssh("id -u; readlink /proc/$$/exe", { who: "root" });
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[0]).toBe("0");
    // key auth only: a key of another user is refused
    const wrong = spawnSync("ssh", [...sshOptions(h0.plainUser.keyPath), `root@${h0.address}`, "true"], { encoding: "utf8", timeout: 20_000 });
    expect(wrong.status).toBe(255);
    expect(wrong.stderr).toMatch(/Permission denied/);
  });
});

describe("(4) the host's NIC (veth)", () => {
  test("ethtool -k/-K, -l/-L, txqueuelen and RPS work on eth0; rings/coalescing are unsupported", async () => {
    const k = await h0.ssh("ethtool -k eth0");
    expect(k.code).toBe(0);
    const gro = /^generic-receive-offload: (on|off)$/m.exec(k.stdout)?.[1];
    expect(gro).toBeDefined();
    const flip = gro === "on" ? "off" : "on";
    // like on Debian, a non-root user's PATH has no /usr/sbin; without sudo the change is not permitted
    const K = await h0.ssh(`/usr/sbin/ethtool -K eth0 gro ${flip}`, { who: "sudo" });
    expect(K.code).not.toBe(0);
    expect(K.stderr).toMatch(/not permitted/);
    const K2 = await h0.ssh(`sudo -n ethtool -K eth0 gro ${flip} && /usr/sbin/ethtool -k eth0 | grep '^generic-receive-offload'`, { who: "sudo" });
    expect(K2).toMatchObject({ code: 0, stdout: `generic-receive-offload: ${flip}\n` });

    const l = await h0.ssh("ethtool -l eth0");
    expect(l.code).toBe(0);
    const [max, cur] = l.stdout.split("Current hardware settings:");
    expect(max).toMatch(/RX:\s+4/);
    expect(cur).toMatch(/RX:\s+4/);
    const L = await h0.ssh("ethtool -L eth0 rx 2 tx 2 && ethtool -l eth0 && ls /sys/class/net/eth0/queues");
    expect(L.code).toBe(0);
    expect(L.stdout.split("Current hardware settings:")[1]).toMatch(/RX:\s+2\s+TX:\s+2/);
    expect(L.stdout).toMatch(/rx-0\nrx-1\ntx-0\ntx-1\n$/);
    const plainL = await h0.ssh("/usr/sbin/ethtool -L eth0 rx 4 tx 4", { who: "plain" });
    expect(plainL.code).not.toBe(0);
    expect(plainL.stderr).toMatch(/not permitted/);
    expect((await h0.ssh("ethtool -L eth0 rx 4 tx 4 && ls /sys/class/net/eth0/queues | grep -c rx-")).stdout).toBe("4\n");

    const t = await h0.ssh("ip link set eth0 txqueuelen 5000 && cat /sys/class/net/eth0/tx_queue_len");
    expect(t).toMatchObject({ code: 0, stdout: "5000\n" });
    const rps = await h0.ssh("echo 1 > /sys/class/net/eth0/queues/rx-0/rps_cpus && cat /sys/class/net/eth0/queues/rx-0/rps_cpus");
    expect(rps.code).toBe(0);
    expect(rps.stdout.trim()).toMatch(/^0*1$/);
    // the machine side of the veth pair is untouched
    const peer = fs.readdirSync("/sys/class/net").find((v) => v === `nt${keyOf(lab.id)}h0`)!;
    expect(fs.readFileSync(`/sys/class/net/${peer}/tx_queue_len`, "utf8").trim()).not.toBe("5000");

    expect((await h0.ssh("ethtool -G eth0 rx 512")).code).not.toBe(0);
    expect((await h0.ssh("ethtool -C eth0 rx-usecs 8")).code).not.toBe(0);
  });
});

describe("(4b) key → /proc/sys path, host snapshot, reboot", () => {
  test("keys with a dot inside an interface name map as sysctl(8) maps them", async () => {
    expect(procPath("net.ipv4.tcp_rmem")).toBe("/proc/sys/net/ipv4/tcp_rmem");
    expect(procPath("net/ipv4/tcp_rmem")).toBe("/proc/sys/net/ipv4/tcp_rmem");
    expect(procPath("net.ipv4.conf.eth0/100.rp_filter")).toBe("/proc/sys/net/ipv4/conf/eth0.100/rp_filter");
    expect(procPath("net/ipv4/conf/eth0.100/rp_filter")).toBe("/proc/sys/net/ipv4/conf/eth0.100/rp_filter");
    // On a host: an interface named d0.100 (one end of a veth pair; this kernel has no 8021q or dummy), both key
    // forms, and sysctl(8) agree.
    expect(await h1.exec("ip link add d0.100 type veth peer name d0p")).toMatchObject({ code: 0, stderr: "" });
    try {
      await writeSysctl(h1, "net.ipv4.conf.d0/100.rp_filter", 2);
      expect(await hostSysctl(h1, "net/ipv4/conf/d0.100/rp_filter")).toBe("2");
      expect((await h1.exec("sysctl -n net.ipv4.conf.d0/100.rp_filter")).stdout).toBe("2\n");
      await writeSysctl(h1, "net/ipv4/conf/d0.100/rp_filter", 1);
      expect(await hostSysctl(h1, "net.ipv4.conf.d0/100.rp_filter")).toBe("1");
    } finally {
      await h1.exec("ip link del d0.100");
    }
  });

  test("snapshot() sees every /etc change (content at equal size and mtime, mode, owner), rings and coalescing", async () => {
    expect((await h1.exec("printf 'lab probe\\n' > /etc/nt-probe && chmod 644 /etc/nt-probe")).code).toBe(0);
    const before = await hostSnapshot(h1);
    expect(await hostSnapshot(h1)).toBe(before); // deterministic, also for the unsupported ethtool -g/-c of a veth
    expect(before).toContain("ethtool -g eth0:\nnetlink error: Operation not supported\nexit 1\n");
    expect(before).toContain("ethtool -c eth0:\nnetlink error: Operation not supported\nexit 1\n");
    expect(before).toMatch(/^\/etc\/nt-probe f 644 0:0 {2}10 [\d.]+$/m);
    const changes = [
      // same length, same mtime: only the content hash can tell
      "cp -p /etc/nt-probe /tmp/h && { tr 'a-z' 'A-Z' < /tmp/h > /etc/nt-probe; } && touch -r /tmp/h /etc/nt-probe",
      "chmod 600 /etc/nt-probe",
      "chown 1:1 /etc/nt-probe",
      "mkdir /etc/nt-empty-dir",
    ];
    const undo = "cat /tmp/h > /etc/nt-probe && touch -r /tmp/h /etc/nt-probe && chmod 644 /etc/nt-probe && chown 0:0 /etc/nt-probe; rmdir /etc/nt-empty-dir 2>/dev/null; rm -f /tmp/h";
    try {
      for (const c of changes) {
        expect((await h1.exec(c)).code).toBe(0);
        const after = await hostSnapshot(h1);
        expect({ change: c, same: after === before }).toEqual({ change: c, same: false });
      }
    } finally {
      expect((await h1.exec(undo)).code).toBe(0);
    }
    expect(await hostSnapshot(h1)).toBe(before);
    await h1.exec("rm -f /etc/nt-probe");
  });

  test("reboot(): runtime values back to boot values, /run emptied, then the boot order of sysctl --system", async () => {
    const before = await hostSnapshot(h1);
    const start = { som: await hostSysctl(h1, "net.core.somaxconn"), fin: await hostSysctl(h1, "net.ipv4.tcp_fin_timeout"), ka: await hostSysctl(h1, "net.ipv4.tcp_keepalive_time"), syn: await hostSysctl(h1, "net.ipv4.tcp_max_syn_backlog") };
    const files = [
      // /usr/lib is masked by the same name in /etc; /run does not survive the boot; /etc/sysctl.conf comes last.
      ["/usr/lib/sysctl.d/60-nt-a.conf", "net.core.somaxconn = 1001\nnet.ipv4.tcp_max_syn_backlog = 3001\n"],
      ["/etc/sysctl.d/60-nt-a.conf", "net.core.somaxconn = 1002\n"],
      ["/etc/sysctl.d/70-nt-b.conf", "net.ipv4.tcp_fin_timeout = 42\nnet.core.somaxconn = 1004\n"],
      ["/run/sysctl.d/80-nt-c.conf", "net.ipv4.tcp_fin_timeout = 43\n"],
      ["/usr/lib/sysctl.d/90-nt-d.conf", "net.ipv4.tcp_fin_timeout = 44\n"],
      ["/etc/sysctl.conf", "net.core.somaxconn = 1003\n"],
    ] as const;
    const conf = await h1.exec("cat /etc/sysctl.conf");
    try {
      for (const [f, text] of files) expect((await h1.exec(`printf '${text}' >> ${f}`)).code).toBe(0);
      await writeSysctl(h1, "net.ipv4.tcp_keepalive_time", 777); // runtime only
      expect((await h1.exec("touch /run/nt-volatile")).code).toBe(0);
      await h1.reboot();
      expect({
        som: await hostSysctl(h1, "net.core.somaxconn"), // 60-a (etc) → 70-b → sysctl.conf last (also as 99-sysctl.conf)
        fin: await hostSysctl(h1, "net.ipv4.tcp_fin_timeout"), // 70-b 42, then /usr/lib 90-d 44; /run's 43 is gone
        ka: await hostSysctl(h1, "net.ipv4.tcp_keepalive_time"),
        syn: await hostSysctl(h1, "net.ipv4.tcp_max_syn_backlog"), // /usr/lib/60-nt-a.conf is masked by /etc/sysctl.d/60-nt-a.conf
      }).toEqual({ som: "1003", fin: "44", ka: start.ka, syn: start.syn });
      expect((await h1.exec("ls -A /run /run/sysctl.d")).stdout).toBe("/run:\nlock\nsshd\nsshd.pid\nsysctl.d\n\n/run/sysctl.d:\n");
      expect((await h1.ssh("echo still here")).stdout).toBe("still here\n"); // sshd and new sessions survive
    } finally {
      await h1.exec(`rm -f ${files.map(([f]) => f).filter((f) => f !== "/etc/sysctl.conf").join(" ")}`);
      await h1.exec("cat > /etc/sysctl.conf", { stdin: conf.stdout });
    }
    await h1.reboot();
    expect({ som: await hostSysctl(h1, "net.core.somaxconn"), fin: await hostSysctl(h1, "net.ipv4.tcp_fin_timeout") }).toEqual({ som: start.som, fin: start.fin });
    expect(await h1.reboot()).toMatch(/permission denied on key "kernel\.pid_max"/); // host-wide keys: tolerated, logged
    // Everything else as before, but /etc/sysctl.conf's mtime and the overlay's copy of it.
    const norm = (t: string) => t.replace(/^\/etc\/sysctl\.conf f .*$/m, "/etc/sysctl.conf f");
    expect(norm(await hostSnapshot(h1))).toBe(norm(before));
  });
});

describe("(4c) reboot() and the NIC", () => {
  test("channels, txqueuelen, features and RPS go back to their boot values; an executable /etc/rc.local runs", async () => {
    const nic = () => h1.exec("ethtool -l eth0 | sed -n '/^Current/,$p' | grep -E '^(RX|TX):'; cat /sys/class/net/eth0/tx_queue_len; " +
      "ethtool -k eth0 | grep -E '^(generic-receive-offload|tcp-segmentation-offload):'; cat /sys/class/net/eth0/queues/rx-0/rps_cpus /sys/class/net/eth0/queues/rx-0/rps_flow_cnt");
    const at = (await nic()).stdout;
    const before = await hostSnapshot(h1);
    const change = "ethtool -L eth0 rx 2 tx 2 && ip link set dev eth0 txqueuelen 2222 && ethtool -K eth0 gro on tso off && " +
      "echo 1 > /sys/class/net/eth0/queues/rx-0/rps_cpus && echo 128 > /sys/class/net/eth0/queues/rx-0/rps_flow_cnt";
    expect(await h1.exec(change)).toMatchObject({ code: 0 });
    expect((await nic()).stdout).not.toBe(at);
    await h1.reboot();
    expect((await nic()).stdout).toBe(at);
    expect(await hostSnapshot(h1)).toBe(before);
    try {
      await h1.exec("printf '#!/bin/sh\\nip link set dev eth0 txqueuelen 4321\\n' > /etc/rc.local && chmod 755 /etc/rc.local");
      await h1.reboot();
      expect((await h1.exec("cat /sys/class/net/eth0/tx_queue_len")).stdout).toBe("4321\n");
    } finally {
      await h1.exec("rm -f /etc/rc.local");
    }
    await h1.reboot();
    expect((await nic()).stdout).toBe(at);
  });
});

describe("(5) teardown", () => {
  test("stop() leaves no namespace, process, mount, veth, dir or slot behind", async () => {
    const l = await startLab({ hosts: 2, tag: "stoptest" });
    const snap = snapshot(l.id, l.hosts.map((h) => h.netns), l.hosts.map((h) => h.address));
    // some extra processes of the host: a background session and an exec'd sleeper
    await l.hosts[0].ssh("nohup sleep 300 >/dev/null 2>&1 &");
    void l.hosts[1].exec("sleep 300", { timeoutMs: 60_000 }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 200));
    expect(processesInNetns(snap.inodes, snap.netns).length).toBeGreaterThanOrEqual(4);
    expect(veths(keyOf(l.id))).toHaveLength(2);
    expect(mountsMentioning(path.join(STATE_ROOT, l.id)).length).toBeGreaterThan(0); // the hosts' own mounts
    await l.stop();
    await expectGone(snap);
    await l.stop(); // idempotent
  });

  test("a lab whose owner was SIGKILLed is removed by cleanupStaleLabs(), a live one is not", async () => {
    const child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", path.join(__dirname, "..", "..", "testkit", "lab", "fixtures", "hold-lab.ts"), "2"], {
      cwd: path.join(__dirname, "..", ".."),
      env: { ...process.env, TS_NODE_PROJECT: path.join(__dirname, "..", "..", "tsconfig.dev.json") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const line = await new Promise<string>((resolve, reject) => {
      let buf = "";
      const timer = setTimeout(() => reject(new Error(`hold-lab did not start: ${stderr}`)), 60_000);
      child.stdout!.on("data", (d: Buffer) => {
        buf += d.toString();
        if (buf.includes("\n")) {
          clearTimeout(timer);
          resolve(buf.split("\n")[0]);
        }
      });
      child.once("exit", (c) => reject(new Error(`hold-lab exited ${c}: ${stderr}`)));
    });
    const info = JSON.parse(line) as { id: string; pid: number; keyPath: string; hosts: { netns: string; address: string }[] };
    const snap = snapshot(info.id, info.hosts.map((h) => h.netns), info.hosts.map((h) => h.address));
    const hello = spawnSync("ssh", [...sshOptions(info.keyPath), `root@${info.hosts[1].address}`, "hostname"], { encoding: "utf8", timeout: 20_000 });
    expect(hello.stdout).toBe(`${info.hosts[1].netns}\n`);

    // owner alive: not touched
    const early = await cleanupStaleLabs();
    expect(early.join("\n")).not.toContain(info.id);
    expect(netnsList(`ntlab-${info.id}-`)).toHaveLength(2);

    child.kill("SIGKILL");
    await exited;
    // the hosts' processes die with their owner (PR_SET_PDEATHSIG -> unshare --kill-child -> pid namespace)
    for (let i = 0; i < 100 && processesInNetns(snap.inodes, snap.netns).length; i++) await new Promise((r) => setTimeout(r, 50));
    expect(processesInNetns(snap.inodes, snap.netns)).toEqual([]);
    // the dead owner's lab is still there: its namespaces, veths and state dir
    expect(netnsList(`ntlab-${info.id}-`)).toHaveLength(2);
    expect(veths(keyOf(info.id))).toHaveLength(2);
    expect(fs.existsSync(path.join(STATE_ROOT, info.id))).toBe(true);

    const removed = await cleanupStaleLabs();
    console.log(`[lab] cleanupStaleLabs() after SIGKILL removed:\n  ${removed.join("\n  ")}`);
    if (removed.includes(`lab ${info.id} (owner pid ${info.pid} is gone)`)) {
      expect(removed).toEqual(expect.arrayContaining(info.hosts.map((h) => `${info.id}: netns ${h.netns}`)));
    } else {
      // only possible when a concurrent test run's cleanupStaleLabs() claimed this stale lab first
      console.log(`[lab] ${info.id} was claimed by a concurrent cleanupStaleLabs()`);
      expect(removed.join("\n")).not.toContain(info.id);
    }
    await expectGone(snap);
  });
});

describe("(6) scale", () => {
  test("50 hosts start, answer over SSH and stop cleanly", async () => {
    const t0 = Date.now();
    const big = await startLab({ hosts: 50, tag: "scale" });
    const total = Date.now() - t0;
    const snap = snapshot(big.id, big.hosts.map((h) => h.netns), big.hosts.map((h) => h.address));
    try {
      const ms = big.startupMs;
      const sorted = [...ms].sort((a, b) => a - b);
      console.log(
        `[lab] 50 hosts started in ${total} ms total (concurrency 8); per host ms: ${ms.join(" ")}\n` +
          `[lab] per host: min ${sorted[0]} median ${sorted[25]} max ${sorted[49]}`,
      );
      expect(big.hosts).toHaveLength(50);
      expect(ms.every((m) => m > 0)).toBe(true);
      expect(new Set(big.hosts.map((h) => h.address)).size).toBe(50);
      // every host answers over SSH with its own hostname (bounded concurrency)
      const names: string[] = [];
      const queue = [...big.hosts];
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          for (let h = queue.shift(); h; h = queue.shift()) {
            const r = await h.ssh("hostname", { timeoutMs: 30_000 });
            names.push(r.stdout.trim());
          }
        }),
      );
      expect(names.sort()).toEqual(big.hosts.map((h) => h.netns).sort());
    } finally {
      const s0 = Date.now();
      await big.stop();
      console.log(`[lab] 50 hosts stopped in ${Date.now() - s0} ms`);
    }
    await expectGone(snap);
  });
});
