/**
 * Issue #32, "the preview refuses what `up` refuses": the kernel modules a NetTuning's settings need (the plan's
 * `@module` lines: a congestion control's tcp_<name>, net.netfilter.* → nf_conntrack). The apply's preflight loads each
 * one that is not loaded (/sys/module/M) with modprobe and refuses when that fails (sysctl.sh kind_preflight); the live
 * read loads nothing and writes nothing: it asks modprobe for a dry run (`modprobe -D M`, sysctl.sh nts_live_modules)
 * and refuses in the preflight's words (provider/host/messages.ts MODULE_UNLOADABLE), on a real lab host:
 * - bbr, available and allowed in the lab's network namespace (built into this kernel, so no /sys/module entry), on a
 *   machine with no module tree for its kernel: modprobe tcp_bbr would fail, but a congestion control the kernel
 *   offers needs no module (sysctl.sh nts_module_present): the preview passes and `up` applies bbr, neither running
 *   modprobe (both refused it before);
 * - nf_conntrack not loaded (/sys/module hidden) but in the modules.builtin index every distribution kernel ships
 *   (depmod, in the host's private root): the preview passes, having run modprobe only as a dry run (a modprobe wrapper
 *   notes its arguments), and `up`'s preflight runs modprobe and applies;
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

/** A modprobe wrapper that notes its arguments (world-writable record in /run: the read runs as the login user) and runs the real one. */
const MODPROBE_WRAPPER = [
  "mkdir -p /run/nt-modprobe && ln -s \"$(readlink -f /usr/sbin/modprobe)\" /run/nt-modprobe/modprobe && : > /run/nt-modprobe.log && chmod 666 /run/nt-modprobe.log",
  "mv /usr/sbin/modprobe /usr/sbin/modprobe.nt && printf '#!/bin/sh\\necho \"$*\" >> /run/nt-modprobe.log\\nexec /run/nt-modprobe/modprobe \"$@\"\\n' > /usr/sbin/modprobe && chmod 755 /usr/sbin/modprobe",
].join(" && ");

test("bbr, which this kernel offers (built in: no /sys/module entry) on a host without a module tree: the preview passes and up applies it, neither running modprobe (both refused it before, modprobe tcp_bbr failing)", async () => {
  const facts = (await host.exec(`cat /proc/sys/net/ipv4/tcp_available_congestion_control /proc/sys/net/ipv4/tcp_allowed_congestion_control; ls -d /sys/module/tcp_bbr /lib/modules/${kernel} 2>&1`)).stdout;
  expect(facts.split("\n").slice(0, 2).map((l) => l.split(" "))).toEqual([expect.arrayContaining(["bbr"]), expect.arrayContaining(["bbr"])]);
  expect(facts).toContain("cannot access '/sys/module/tcp_bbr'");
  expect(facts).toContain(`cannot access '/lib/modules/${kernel}'`);
  expect((await host.exec(MODPROBE_WRAPPER)).code).toBe(0);
  // (the lab's namespaces start with bbr: reno, the other allowed one, first, so that the preview shows a change)
  const initial = (await host.exec("cat /proc/sys/net/ipv4/tcp_congestion_control")).stdout.trim();
  const original = "reno";
  expect((await host.exec(`echo ${original} > /proc/sys/net/ipv4/tcp_congestion_control`)).code).toBe(0);
  const p = await lab.preview("NetTuning", "ok", { sysctls: { [CC]: "bbr" } });
  expect([p.ok, p.error]).toEqual([true, undefined]);
  expect(p.info.join("\n")).toContain(`${CC}: ${original} → bbr`);
  const st = lab.newStack("ok");
  ok(await st.up(lab.program("NetTuning", "ok", { sysctls: { [CC]: "bbr" } })));
  expect((await host.exec("cat /proc/sys/net/ipv4/tcp_congestion_control")).stdout.trim()).toBe("bbr");
  expect((await host.exec("cat /run/nt-modprobe.log")).stdout).toBe("");
  ok(await st.destroy());
  expect((await host.exec("cat /proc/sys/net/ipv4/tcp_congestion_control")).stdout.trim()).toBe(original);
  await host.exec(`echo ${initial} > /proc/sys/net/ipv4/tcp_congestion_control`);
});

test("nf_conntrack not loaded but in the module tree's modules.builtin (depmod): the preview passes, its read ran modprobe only as a dry run and loaded nothing; up's preflight runs modprobe and applies", async () => {
  const KEY = "net.netfilter.nf_conntrack_tcp_timeout_established";
  const setup = [
    `mkdir -p /lib/modules/${kernel} && echo kernel/net/netfilter/nf_conntrack.ko > /lib/modules/${kernel}/modules.builtin && depmod ${kernel} 2>/dev/null`,
    // as on a kernel where nf_conntrack is not loaded yet: /sys/module hidden by an empty tmpfs in the host's mount namespace
    "mount -t tmpfs -o ro,mode=755 nt-no-modules /sys/module",
    MODPROBE_WRAPPER,
    "modprobe -D nf_conntrack && : > /run/nt-modprobe.log",
  ].join(" && ");
  const s = await host.exec(setup);
  expect([s.code, s.stdout.trim(), s.stderr]).toEqual([0, "builtin nf_conntrack", ""]);
  const original = (await host.exec("cat /proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established")).stdout.trim();
  const want = String(Number(original) + 7);
  const p = await lab.preview("NetTuning", "ct", { persist: false, sysctls: { [KEY]: Number(want) } });
  expect([p.ok, p.error]).toEqual([true, undefined]);
  expect(p.info.join("\n")).toContain(`${KEY}: ${original} → ${want}`);
  // the read: one dry run; nothing loaded, nothing written
  expect((await host.exec("cat /run/nt-modprobe.log")).stdout).toBe("-D nf_conntrack\n");
  const st = lab.newStack("ct");
  ok(await st.up(lab.program("NetTuning", "ct", { persist: false, sysctls: { [KEY]: Number(want) } })));
  expect((await host.exec("cat /run/nt-modprobe.log")).stdout.split("\n")).toEqual(["-D nf_conntrack", "-D nf_conntrack", "nf_conntrack", ""]);
  expect((await host.exec("cat /proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established")).stdout.trim()).toBe(want);
  ok(await st.destroy());
  expect((await host.exec("cat /proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established")).stdout.trim()).toBe(original);
});

test("net.netfilter.* whose nf_conntrack is neither loaded nor loadable (persist false: no boot-order fields in the request): refused at preview as at up", async () => {
  const KEY = "net.netfilter.nf_conntrack_tcp_timeout_established";
  expect((await host.exec(`cat /proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established && mount -t tmpfs -o ro,mode=755 nt-no-modules /sys/module && ls -A /sys/module | wc -l`)).stdout.trim().split("\n")[1]).toBe("0");
  await lab.refusedAlike("NetTuning", { persist: false, sysctls: { [KEY]: 3600 } }, [notFound("nf_conntrack")]);
});
