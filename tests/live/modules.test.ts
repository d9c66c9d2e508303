/**
 * Issue #32, "the preview refuses what `up` refuses": the kernel modules a NetTuning's settings need (the plan's
 * `@module` lines: a congestion control's tcp_<name>, net.netfilter.* → nf_conntrack). The apply's preflight loads each
 * one that is not loaded (/sys/module/M) with modprobe and refuses when that fails (sysctl.sh kind_preflight); the live
 * read loads nothing and writes nothing: it asks modprobe for a dry run (`modprobe -D M`, sysctl.sh nts_live_modules)
 * and refuses in the preflight's words (provider/host/messages.ts MODULE_UNLOADABLE), on a real lab host:
 * - bbr, available and allowed in the lab's network namespace (built into this kernel), but this machine has no module
 *   tree for its kernel (no /lib/modules/<release>, so no modules.builtin either): modprobe tcp_bbr fails, so `up`
 *   refuses, and now the preview too (before: the preview passed and `up` refused);
 * - the same host given the modules.builtin index every distribution kernel ships (depmod, in the host's private root):
 *   modprobe finds tcp_bbr built in; the preview passes, having run modprobe only as a dry run (a modprobe wrapper
 *   notes its arguments), and `up` applies bbr;
 * - net.netfilter.* with nf_conntrack not loaded and not loadable (a kernel without it: /sys/module hidden by an empty
 *   tmpfs in the host's mount namespace, as on a kernel where nf_conntrack is neither loaded nor built in; no module
 *   tree), `persist: false` (the request carries no boot-order fields, only the modules): refused alike.
 * The lab cannot show a module really loaded (no module files on this machine, and sshd runs without CAP_SYS_MODULE):
 * "loads nothing" is shown by the wrapper's record (only `-D` calls from the read) and /sys/module unchanged.
 */
process.env.NET_TUNING_LIVE_PREVIEW = "1"; // the harness evaluates programs under setMocks, where live reads are off by default
import { MODULE_UNLOADABLE } from "../../provider/host/messages";
import type { LabHost } from "../../testkit/lab";
import { ok } from "../../testkit/host";
import { previewLab } from "./previewLab";

jest.setTimeout(180_000);
// (after each test: the host's module tree, the wrapper and the tmpfs over /sys/module go; /run/nt-* files too)
const lab = previewLab(
  "modules",
  "umount /sys/module 2>/dev/null; rm -rf /lib/modules; [ ! -e /usr/sbin/modprobe.nt ] || mv -f /usr/sbin/modprobe.nt /usr/sbin/modprobe; rm -rf /run/nt-modprobe /run/nt-modprobe.log",
);
let host: LabHost;
let kernel: string;
beforeAll(async () => {
  host = lab.host();
  kernel = (await host.exec("uname -r")).stdout.trim();
});

const CC = "net.ipv4.tcp_congestion_control";
/** kmod's words when the module is not in the (absent) module tree of this kernel: what modprobe and its dry run say. */
const notFound = (m: string) => MODULE_UNLOADABLE.text({ module: m, said: `modprobe: FATAL: Module ${m} not found in directory /lib/modules/${kernel}` });

test("bbr, available and allowed here, whose module modprobe cannot find (no module tree for this kernel): refused at preview as at up, in modprobe's words", async () => {
  const facts = (await host.exec(`cat /proc/sys/net/ipv4/tcp_available_congestion_control /proc/sys/net/ipv4/tcp_allowed_congestion_control; ls -d /sys/module/tcp_bbr /lib/modules/${kernel} 2>&1`)).stdout;
  expect(facts.split("\n").slice(0, 2).map((l) => l.split(" "))).toEqual([expect.arrayContaining(["bbr"]), expect.arrayContaining(["bbr"])]);
  expect(facts).toContain("cannot access '/sys/module/tcp_bbr'");
  expect(facts).toContain(`cannot access '/lib/modules/${kernel}'`);
  await lab.refusedAlike("NetTuning", { sysctls: { [CC]: "bbr" } }, [notFound("tcp_bbr")]);
});

test("bbr with the module tree's modules.builtin (depmod): the preview passes, its read ran modprobe only as a dry run and loaded nothing; up applies bbr", async () => {
  // the module tree a distribution kernel ships, reduced to its built-in index; a wrapper notes modprobe's arguments
  // (world-writable record in /run: the read runs as the login user) and runs the real one (kmod, by its name)
  const setup = [
    `mkdir -p /lib/modules/${kernel} && echo kernel/net/ipv4/tcp_bbr.ko > /lib/modules/${kernel}/modules.builtin && depmod ${kernel} 2>/dev/null`,
    "mkdir -p /run/nt-modprobe && ln -s \"$(readlink -f /usr/sbin/modprobe)\" /run/nt-modprobe/modprobe && : > /run/nt-modprobe.log && chmod 666 /run/nt-modprobe.log",
    "mv /usr/sbin/modprobe /usr/sbin/modprobe.nt && printf '#!/bin/sh\\necho \"$*\" >> /run/nt-modprobe.log\\nexec /run/nt-modprobe/modprobe \"$@\"\\n' > /usr/sbin/modprobe && chmod 755 /usr/sbin/modprobe",
    "modprobe -D tcp_bbr && : > /run/nt-modprobe.log",
  ].join(" && ");
  const s = await host.exec(setup);
  expect([s.code, s.stdout.trim(), s.stderr]).toEqual([0, "builtin tcp_bbr", ""]);
  const modules = (await host.exec("ls /sys/module")).stdout;
  // (the lab's namespaces start with bbr: reno, the other allowed one, first, so that the preview shows a change)
  const initial = (await host.exec("cat /proc/sys/net/ipv4/tcp_congestion_control")).stdout.trim();
  const original = "reno";
  expect((await host.exec(`echo ${original} > /proc/sys/net/ipv4/tcp_congestion_control`)).code).toBe(0);
  const p = await lab.preview("NetTuning", "ok", { sysctls: { [CC]: "bbr" } });
  expect([p.ok, p.error]).toEqual([true, undefined]);
  expect(p.registered).toEqual(expect.arrayContaining(["command:remote:Command::ok-apply"]));
  expect(p.info.join("\n")).toContain(`${CC}: ${original} → bbr`);
  // the read: one dry run; nothing loaded, nothing written
  expect((await host.exec("cat /run/nt-modprobe.log")).stdout).toBe("-D tcp_bbr\n");
  expect((await host.exec("ls /sys/module")).stdout).toBe(modules);
  // up: the preflight's modprobe tcp_bbr (built in: nothing to load), then the value
  const st = lab.newStack("ok");
  ok(await st.up(lab.program("NetTuning", "ok", { sysctls: { [CC]: "bbr" } })));
  expect((await host.exec("cat /run/nt-modprobe.log")).stdout.split("\n")).toEqual(["-D tcp_bbr", "-D tcp_bbr", "tcp_bbr", ""]);
  expect((await host.exec("cat /proc/sys/net/ipv4/tcp_congestion_control")).stdout.trim()).toBe("bbr");
  ok(await st.destroy());
  expect((await host.exec("cat /proc/sys/net/ipv4/tcp_congestion_control")).stdout.trim()).toBe(original);
  await host.exec(`echo ${initial} > /proc/sys/net/ipv4/tcp_congestion_control`);
});

test("net.netfilter.* whose nf_conntrack is neither loaded nor loadable (persist false: no boot-order fields in the request): refused at preview as at up", async () => {
  const KEY = "net.netfilter.nf_conntrack_tcp_timeout_established";
  expect((await host.exec(`cat /proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established && mount -t tmpfs -o ro,mode=755 nt-no-modules /sys/module && ls -A /sys/module | wc -l`)).stdout.trim().split("\n")[1]).toBe("0");
  await lab.refusedAlike("NetTuning", { persist: false, sysctls: { [KEY]: 3600 } }, [notFound("nf_conntrack")]);
});
