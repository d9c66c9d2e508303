/**
 * Issue #32 "Preview equals up": what the host preflight refuses only with the host in view, refused at preview by the
 * live read, in the preflight's own words, on a real lab host through the harness:
 * - NetTuning's boot-order check (sysctl.sh nts_boot_conflicts / nts_boot_mask, the one rule the apply's preflight and
 *   the live read's nts_live_boot run): a file read later at boot that sets a declared key to another value, and a
 *   fileName that would mask a same-named file in a later directory. bootOverride "error" (the default): the preview
 *   fails, nothing registered, nothing on the host changed, no session; `up` with the live preview off is refused by
 *   the host with the same problem. "warn": the preview warns and `up` applies. A file the resource adopts is no
 *   conflict;
 * - NicQueues on an interface the host does not have, and on a host without ethtool (nic.sh kind_preflight; the read's
 *   nn_live_iface); its persistence checks; and its bootOverride check (another boot mechanism that re-applies a
 *   declared setting: rc.local, NetworkManager, heuristics), by the scan the preflight and the read share.
 */
process.env.NET_TUNING_LIVE_PREVIEW = "1"; // the harness evaluates programs under setMocks, where live reads are off by default
import { NetTuning } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";
import { rollout } from "../../components/rollout";
import type { LabHost } from "../../testkit/lab";
import { previewLab, problems } from "./previewLab";
import { withLogs, within } from "../../testkit/jest";
import { snapshot } from "../../testkit/host";

jest.setTimeout(180_000);
const lab = previewLab("bootorder", "rm -f /etc/sysctl.d/99-zz.conf /run/sysctl.d/90-bo.conf; [ ! -e /usr/sbin/ethtool.off ] || mv -f /usr/sbin/ethtool.off /usr/sbin/ethtool");
let host: LabHost;
beforeAll(() => {
  host = lab.host();
});




const RC = "/etc/rc.local";
/** Each test of the describe it is called in gets rc.local back as it was, then `cleanup` runs. */
function keepRcLocal(cleanup: string): void {
  let rcBefore: string | undefined;
  beforeEach(async () => {
    const r = await host.exec(`cat ${RC}`);
    rcBefore = r.code === 0 ? r.stdout : undefined;
  });
  afterEach(async () => {
    if (rcBefore === undefined) await host.exec(`rm -f ${RC}`);
    else await host.exec(`cat > ${RC}`, { stdin: rcBefore });
    await host.exec(cleanup);
  });
}

const somaxconn = async () => (await host.exec("cat /proc/sys/net/core/somaxconn")).stdout.trim();
const OVERRIDE = "net.core.somaxconn = 2222 is overridden at boot by /etc/sysctl.d/99-zz.conf:1 which sets 777";

describe("NetTuning: a file read later at boot sets a declared key to another value", () => {
  beforeEach(async () => {
    await host.exec("printf 'net.core.somaxconn = 777\\n' > /etc/sysctl.d/99-zz.conf");
  });

  test('bootOverride "error" (default): refused at preview as at up, in the same words; nothing changed, no session', async () => {
    await lab.refusedAlike("NetTuning", { sysctls: { "net.core.somaxconn": 2222, "net.ipv4.tcp_keepalive_time": 600 } }, [`${OVERRIDE}: remove that line, adopt that file (NetTuning adopt), or set bootOverride to "warn" to accept it`]);
  });

  test("inside a rollout: the refusal is a warning at preview (the host will count as refused), the children are registered", async () => {
    const s = lab.newStack("ro");
    const { r, warn } = await within(60_000, "the rollout's preview", withLogs(() =>
      s.preview(() => {
        rollout([host], { waveSize: 1, maxFailures: 1 }, (h, ctx) => new NetTuning("ro", { connection: h.connection(), sysctls: { "net.core.somaxconn": 2222 } }, ctx.opts));
      }),
    ));
    expect([r.ok, r.error]).toEqual([true, undefined]);
    expect(r.resources.map((x) => `${x.type}::${x.name}`)).toEqual(expect.arrayContaining(["command:remote:Command::ro-apply"]));
    expect(warn.filter((m) => m.includes(OVERRIDE)).map((m) => m.split("\n").slice(-2))).toEqual([
      [`  - ${OVERRIDE}: remove that line, adopt that file (NetTuning adopt), or set bootOverride to "warn" to accept it`, '(inside a rollout: the host will refuse this change and count as "refused")'],
    ]);
  });

  test('bootOverride "warn": the preview warns with the host\'s finding, up applies (and warns the same), destroy puts it back', async () => {
    const was = await somaxconn();
    const args = { sysctls: { "net.core.somaxconn": 2222 }, bootOverride: "warn" };
    const p = await lab.preview("NetTuning", "w", args);
    expect([p.ok, p.error]).toEqual([true, undefined]);
    expect(p.registered).toEqual(expect.arrayContaining(["command:remote:Command::w-apply", "command:remote:Command::w-restore"]));
    expect(p.warn.filter((m) => m.includes(OVERRIDE))).toEqual([`NetTuning "w": ${OVERRIDE} (bootOverride "warn": pulumi up applies the change and warns the same)`]);
    const s = lab.newStack("w");
    const { r: up, warn } = await withLogs(() => s.up(lab.program("NetTuning", "w", args)));
    expect([up.ok, up.error]).toEqual([true, undefined]);
    expect(warn.some((m) => m.includes(OVERRIDE))).toBe(true);
    expect(await somaxconn()).toBe("2222");
    expect((await s.destroy()).ok).toBe(true);
    expect(await somaxconn()).toBe(was);
  });

  test("a file the resource adopts is no conflict: the preview passes, up adopts it, destroy puts it back", async () => {
    const args = { sysctls: { "net.core.somaxconn": 2222 }, adopt: ["/etc/sysctl.d/99-zz.conf"] };
    const p = await lab.preview("NetTuning", "a", args);
    expect([p.ok, p.error]).toEqual([true, undefined]);
    expect(p.warn.filter((m) => m.includes("overridden at boot"))).toEqual([]);
    const s = lab.newStack("a");
    const up = await s.up(lab.program("NetTuning", "a", args));
    expect([up.ok, up.error]).toEqual([true, undefined]);
    expect((await host.exec("test -e /etc/sysctl.d/99-zz.conf; echo $?")).stdout.trim()).toBe("1");
    expect((await s.destroy()).ok).toBe(true);
    expect((await host.exec("cat /etc/sysctl.d/99-zz.conf")).stdout).toBe("net.core.somaxconn = 777\n");
  });
});

describe("NetTuning: what the read cannot see as plainly as the preflight", () => {
  const KEY = "net.ipv4.tcp_fastopen_key";
  const SECRET = "0123abcd-4567ef01-89abcdef-01234567";
  const OTHER = "fedcba98-76543210-fedcba98-76543210";

  test("a secret key set to another value by a later file: refused at preview as at up, in the same words, neither value printed", async () => {
    await host.exec(`printf '${KEY} = ${OTHER}\\n' > /etc/sysctl.d/99-zz.conf`);
    const finding = `${KEY} = (secret) is overridden at boot by /etc/sysctl.d/99-zz.conf:1 which sets another value (secret)`;
    await lab.refusedAlike("NetTuning", { sysctls: { [KEY]: SECRET } }, [`${finding}: remove that line, adopt that file (NetTuning adopt), or set bootOverride to "warn" to accept it`]);
    const p = await lab.preview("NetTuning", "s", { sysctls: { [KEY]: SECRET } });
    expect(p.error).not.toContain(OTHER);
    expect(p.error).not.toContain(SECRET);
    expect(p.logs.join("\n")).not.toMatch(new RegExp(`${SECRET}|${OTHER}`));
  });

  test("a secret key set to the same value by a later file: no conflict at preview (compared by sha256), none at up", async () => {
    await host.exec(`printf '${KEY} =  ${SECRET} \\n' > /etc/sysctl.d/99-zz.conf`); // blanks as the check normalizes them
    const p = await lab.preview("NetTuning", "same", { sysctls: { [KEY]: SECRET } });
    expect([p.ok, p.error]).toEqual([true, undefined]);
    expect(p.logs.filter((m) => m.includes("overridden at boot"))).toEqual([]);
    const up = await lab.newStack("same").up(lab.program("NetTuning", "same", { sysctls: { [KEY]: SECRET }, livePreview: false }));
    expect([up.ok, up.error]).toEqual([true, undefined]);
  });

  test("a later file the login user cannot read: the preview says its check is left to up; up (as root) refuses the override", async () => {
    await host.exec("printf 'net.core.somaxconn = 777\\n' > /etc/sysctl.d/99-zz.conf && chmod 0600 /etc/sysctl.d/99-zz.conf");
    const args = { sysctls: { "net.core.somaxconn": 2222 }, connection: host.connection("sudo"), become: "sudo" };
    const p = await lab.preview("NetTuning", "u", args);
    expect([p.ok, p.error]).toEqual([true, undefined]);
    expect(p.info.filter((m) => m.includes("boot-order check"))).toEqual([
      `NetTuning "u": the boot-order check could not read /etc/sysctl.d/99-zz.conf as ${host.sudoUser.user} at preview: \`pulumi up\` reads it as root, before anything changes, and refuses there if a declared key is set to another value`,
    ]);
    const up = await lab.newStack("u").up(lab.program("NetTuning", "u", args));
    expect(up.ok).toBe(false);
    expect(up.error).toContain("preflight refused the change");
    expect(up.error).toContain(OVERRIDE);
  });
});

describe("NetTuning: a fileName where a file or link of someone else's is (sysctl.sh nts_file_refusals: one rule for the preflight and the read)", () => {
  const FILE = "/etc/sysctl.d/80-mine.conf";
  afterEach(async () => {
    await host.exec(`rm -f ${FILE}`);
  });
  /** The preview and `up` (live preview off) refuse with `expected`, each naming its own owner label (another stack). */
  async function refusedWithOwner(args: Record<string, unknown>, expected: string): Promise<void> {
    const said = (e: string | undefined) => problems(e).map((l) => l.replace(/this resource \(([^()]*\/[^()]*)\)/, "this resource (<owner>)"));
    const p = await lab.preview("NetTuning", "f", args);
    expect([p.ok, p.sessions]).toEqual([false, 0]);
    expect(said(p.error)).toEqual([expected]);
    const up = await lab.newStack("f").up(lab.program("NetTuning", "f", { ...args, livePreview: false }));
    expect(up.ok).toBe(false);
    expect(up.error).toContain("preflight refused the change");
    expect(said(up.error)).toEqual([expected]);
  }

  test("a hand-written file at that name: refused at preview as at up, whatever bootOverride says", async () => {
    await host.exec(`printf 'net.core.somaxconn = 1000\\n' > ${FILE}`);
    for (const bootOverride of ["error", "ignore"]) {
      await refusedWithOwner({ sysctls: { "net.core.somaxconn": 2222 }, fileName: "80-mine.conf", bootOverride }, `${FILE} exists and was not written by this resource (<owner>): choose another fileName, or move that file away first`);
    }
    expect((await host.exec(`cat ${FILE}`)).stdout).toBe("net.core.somaxconn = 1000\n");
  });

  test("a dangling symlink at that name: refused at preview as at up, the link kept", async () => {
    await host.exec(`ln -s /nonexistent/x.conf ${FILE}`);
    await refusedWithOwner({ sysctls: { "net.core.somaxconn": 2222 }, fileName: "80-mine.conf" }, `${FILE} is a symlink (to /nonexistent/x.conf), not a file written by this resource (<owner>): choose another fileName, or move that link away first`);
    expect((await host.exec(`readlink ${FILE}`)).stdout.trim()).toBe("/nonexistent/x.conf");
  });
});

test("NetTuning: a fileName that would mask a same-named file in a later directory: refused at preview as at up", async () => {
  await host.exec("mkdir -p /run/sysctl.d && printf 'net.ipv4.tcp_keepalive_time = 500\\n' > /run/sysctl.d/90-bo.conf");
  const finding =
    "fileName 90-bo.conf: /etc/sysctl.d/90-bo.conf would mask /run/sysctl.d/90-bo.conf (systemd-sysctl and sysctl --system read only the first file of a name, " +
    "/etc/sysctl.d first), so what it sets (net.ipv4.tcp_keepalive_time) would no longer be applied at boot";
  await lab.refusedAlike("NetTuning", { sysctls: { "net.core.somaxconn": 2222 }, fileName: "90-bo.conf" }, [`${finding}: choose another fileName, or set bootOverride to "warn" to accept it`]);
});

describe("NicQueues: what the preflight checks before reading the interface", () => {
  const hostname = async () => (await host.exec("cat /proc/sys/kernel/hostname")).stdout.trim();

  test("an interface that does not exist: refused at preview as at up, with the host's interfaces", async () => {
    const list = (await host.exec("ls /sys/class/net")).stdout.trim().split(/\s+/).join(" ");
    await lab.refusedAlike("NicQueues", { interface: "ntnosuch0", persistence: "none", txQueueLength: 5000 }, [
      `interface ntnosuch0 does not exist on ${await hostname()} (interfaces: ${list}): check the name`,
    ]);
  });

  // (before, `up` added one refusal per ethtool group on top: "rings cannot be changed: eth0 (driver unknown) does not
  // support ring parameters (ethtool -g eth0 says: …: ethtool: not found)"; the preflight now gives this one only)
  test("a host without ethtool, with rings, channels, features and coalescing declared: one refusal, at preview as at up", async () => {
    await host.exec("mv /usr/sbin/ethtool /usr/sbin/ethtool.off");
    expect((await host.exec("sh -c 'command -v ethtool || echo none'")).stdout.trim()).toBe("none");
    await lab.refusedAlike("NicQueues", { interface: host.iface, persistence: "none", txQueueLength: 5000, features: { gro: true }, rings: { rx: 512 }, channels: { rx: 2 }, coalesce: { rxUsecs: 50 } }, [`ethtool is not installed on ${await hostname()}: install the ethtool package`]);
  });
});

describe("NicQueues: persistence the host cannot take (nic.sh nn_persist_refusals: one rule for the preflight and the read)", () => {
  const UNIT = "/etc/systemd/system/net-tuning-nic-eth0.service";
  keepRcLocal(`rm -f ${UNIT}`);

  test("rc.local holding another resource's block for the interface: refused at preview as at up, in the same words", async () => {
    const begin = "# BEGIN pulumi-net-tuning other/stack/x eth0";
    await host.exec(`printf '#!/bin/sh\\n${begin}\\nip link set dev eth0 txqueuelen 3000\\n# END pulumi-net-tuning other/stack/x eth0\\nexit 0\\n' > ${RC} && chmod 0755 ${RC}`);
    await lab.refusedAlike("NicQueues", { interface: host.iface, persistence: "rc.local", txQueueLength: 5000 }, [
      `persistence: ${RC} already holds a block for eth0 of another resource ('${begin}'): one NicQueues per interface`,
    ]);
  });

  test("persistence \"systemd\" with a unit of that name not written by this resource: refused at preview as at up (the message names each one's owner)", async () => {
    await host.exec(`mkdir -p /etc/systemd/system && printf '[Unit]\\nDescription=hand-made\\n' > ${UNIT}`);
    const args = { interface: host.iface, persistence: "systemd", txQueueLength: 5000 };
    const p = await lab.preview("NicQueues", "u", args);
    expect(p.ok).toBe(false);
    expect(p.sessions).toBe(0);
    const said = (e: string | undefined) => problems(e).map((l) => l.replace(/\(([^()]*\/[^()]*)\)/, "(<owner>)"));
    const unitRefusal = `persistence: ${UNIT} exists and was not written by this resource (<owner>): move it away or use persistence "rc.local"/"none"`;
    expect(said(p.error)).toEqual([unitRefusal]);
    const up = await lab.newStack("u").up(lab.program("NicQueues", "u", { ...args, livePreview: false }));
    expect(up.ok).toBe(false);
    expect(said(up.error)).toEqual([unitRefusal]);
    // its own unit (the marker line of this owner) is no refusal: the same stack's preview passes once the file names it
    const s = lab.newStack("own");
    const r1 = await s.preview(lab.program("NicQueues", "u", args));
    const owner = /exists and was not written by this resource \(([^()]+)\)/.exec(r1.error ?? "")?.[1];
    expect(owner).toMatch(/\/u$/);
    await host.exec(`printf '# pulumi-net-tuning owner: ${owner}\\n' >> ${UNIT}`);
    const r2 = await s.preview(lab.program("NicQueues", "u", args));
    expect([r2.ok, r2.error]).toEqual([true, undefined]);
  });
});

describe("NicQueues: another boot mechanism re-applies a declared setting (nic.sh nn_boot_scan: one scan and rule for the preflight and the read)", () => {
  const NM = "/etc/NetworkManager/system-connections/lab.nmconnection";
  const SVC = "/etc/systemd/system/hk-nic.service";
  keepRcLocal(`rm -rf /etc/NetworkManager ${SVC} /etc/systemd/system/net-tuning-nic-eth0.service`);
  const rcLocal = (line: string) => host.exec(`printf '#!/bin/sh\\n${line}\\nexit 0\\n' > ${RC} && chmod 0755 ${RC}`);
  const TXQ = `${RC}:2 re-applies txqueuelen settings of eth0 at boot ('ip link set dev eth0 txqueuelen 10000'), over this resource's`;
  const FIX = 'remove that line (rc.local: or list it in adoptRcLocalLines), or set bootOverride to "warn" to accept it';

  test('rc.local re-applies txqueuelen (bootOverride "error", the default): refused at preview as at up, in the same words', async () => {
    await rcLocal("ip link set dev eth0 txqueuelen 10000");
    await lab.refusedAlike("NicQueues", { interface: host.iface, persistence: "systemd", txQueueLength: 5000 }, [`bootOverride: ${TXQ}: ${FIX}`]);
  });

  test("a NetworkManager keyfile bound to the interface sets a declared feature: refused at preview as at up", async () => {
    await host.exec(`mkdir -p ${NM.replace(/\/[^/]+$/, "")} && printf '[connection]\\nid=lab\\ninterface-name=eth0\\n\\n[ethtool]\\nfeature-gro=true\\n' > ${NM} && chmod 0600 ${NM}`);
    await lab.refusedAlike("NicQueues", { interface: host.iface, persistence: "systemd", features: { gro: false } }, [
      `bootOverride: ${NM}:6 re-applies feature settings of eth0 at boot ('feature-gro=true'), over this resource's: ${FIX}`,
    ]);
  });

  test("a class the resource does not declare, and persistence \"none\": no refusal at preview", async () => {
    await rcLocal("ip link set dev eth0 txqueuelen 10000");
    const p = await lab.preview("NicQueues", "f", { interface: host.iface, persistence: "systemd", features: { gro: false } });
    expect([p.ok, p.error]).toEqual([true, undefined]);
    const n = await lab.preview("NicQueues", "n", { interface: host.iface, persistence: "none", txQueueLength: 5000 });
    expect([n.ok, n.error]).toEqual([true, undefined]);
    expect([...p.warn, ...n.warn].filter((m) => m.includes("bootOverride"))).toEqual([]);
  });

  test('bootOverride "warn": the preview warns with the host\'s finding, up applies and warns the same, destroy puts it back', async () => {
    await rcLocal("ip link set dev eth0 txqueuelen 10000");
    const was = (await host.exec("cat /sys/class/net/eth0/tx_queue_len")).stdout.trim();
    const args = { interface: host.iface, persistence: "systemd", txQueueLength: 5000, bootOverride: "warn" };
    const p = await lab.preview("NicQueues", "w", args);
    expect([p.ok, p.error]).toEqual([true, undefined]);
    expect(p.warn.filter((m) => m.includes("bootOverride"))).toEqual([`NicQueues "w": bootOverride: ${TXQ} (pulumi up applies the change and warns the same)`]);
    const s = lab.newStack("w");
    const up = await s.up(lab.program("NicQueues", "w", args));
    expect([up.ok, up.error]).toEqual([true, undefined]);
    expect((await host.exec("cat /sys/class/net/eth0/tx_queue_len")).stdout.trim()).toBe("5000");
    expect((await s.destroy()).ok).toBe(true);
    expect((await host.exec("cat /sys/class/net/eth0/tx_queue_len")).stdout.trim()).toBe(was);
  });

  test("a unit that only mentions the interface (heuristic): a warning at preview, as up warns", async () => {
    await host.exec(`mkdir -p /etc/systemd/system && printf '[Service]\\nExecStart=/usr/sbin/ethtool -K eth0 gro on\\n' > ${SVC}`);
    const heur = `bootOverride (heuristic): ${SVC}:2 mentions eth0 ('ExecStart=/usr/sbin/ethtool -K eth0 gro on'): check that it does not re-apply feature settings at boot`;
    const args = { interface: host.iface, persistence: "systemd", features: { gro: false } };
    const p = await lab.preview("NicQueues", "h", args);
    expect([p.ok, p.error]).toEqual([true, undefined]);
    expect(p.warn.filter((m) => m.includes("bootOverride"))).toEqual([`NicQueues "h": ${heur} (pulumi up applies the change and warns the same)`]);
    const s = lab.newStack("h");
    const { r: up, warn } = await withLogs(() => s.up(lab.program("NicQueues", "h", { ...args, livePreview: false })));
    expect([up.ok, up.error]).toEqual([true, undefined]);
    expect(warn.filter((m) => m.includes(heur))).toHaveLength(1);
  });

  test("adoptRcLocalLines: the adopted line is no conflict at preview, another one is (as at up); up adopts it, destroy gives it back", async () => {
    await host.exec(`printf '#!/bin/sh\\nip link set dev eth0 txqueuelen 10000\\nexit 0\\n' > ${RC} && chmod 0755 ${RC}`);
    const args = { interface: host.iface, persistence: "systemd", txQueueLength: 5000, adoptRcLocalLines: ["ip link set dev eth0 txqueuelen 10000"] };
    const p = await lab.preview("NicQueues", "a", args);
    expect([p.ok, p.error]).toEqual([true, undefined]);
    expect([...p.info, ...p.warn].filter((m) => m.includes("bootOverride") || m.includes("adoptRcLocalLines"))).toEqual([]);
    const s = lab.newStack("a");
    const up = await s.up(lab.program("NicQueues", "a", args));
    expect([up.ok, up.error]).toEqual([true, undefined]);
    expect((await host.exec(`cat ${RC}`)).stdout).not.toContain("txqueuelen 10000");
    // once adopted: the preview passes as root and as the sudo user (whose read cannot see what root's state says was
    // taken out)
    for (const extra of [{}, { connection: host.connection("sudo"), become: "sudo" }]) {
      const again = await s.preview(lab.program("NicQueues", "a", { ...args, ...extra }));
      expect([again.ok, again.error]).toEqual([true, undefined]);
    }
    expect((await s.destroy()).ok).toBe(true);
    expect((await host.exec(`cat ${RC}`)).stdout).toContain("txqueuelen 10000");
    // a line not adopted is still a conflict
    await host.exec(`printf '#!/bin/sh\\nip link set dev eth0 txqueuelen 10000\\nip link set dev eth0 txqueuelen 9000\\nexit 0\\n' > ${RC} && chmod 0755 ${RC}`);
    await lab.refusedAlike("NicQueues", args, [
      `bootOverride: ${RC}:3 re-applies txqueuelen settings of eth0 at boot ('ip link set dev eth0 txqueuelen 9000'), over this resource's: ${FIX}`,
    ]);
  });

  test("adoptRcLocalLines naming a line rc.local does not have, or with persistence \"rc.local\": refused at preview as at up", async () => {
    await rcLocal("ip link set dev eth0 txqueuelen 10000");
    const hostname = (await host.exec("cat /proc/sys/kernel/hostname")).stdout.trim();
    await lab.refusedAlike("NicQueues", { interface: host.iface, persistence: "none", txQueueLength: 5000, adoptRcLocalLines: ["ip link set dev eth0 txqueuelen 8000"] }, [
      `adoptRcLocalLines[0] ('ip link set dev eth0 txqueuelen 8000') is not in ${RC} on ${hostname} (compared trimmed, outside pulumi-net-tuning blocks): copy the lines exactly as the file has them`,
    ]);
    await lab.refusedAlike("NicQueues", { interface: host.iface, persistence: "rc.local", txQueueLength: 5000, adoptRcLocalLines: ["ip link set dev eth0 txqueuelen 10000"] }, [
      'adoptRcLocalLines needs persistence "systemd" or "none" (rc.local would hold this resource\'s own block): set persistence',
    ]);
  });
});

describe("NetTuning: adoption (sysctl.sh nts_adopt_check: one rule for the preflight and the read)", () => {
  const X = "/etc/sysctl.d/60-adopt-x.conf";
  const hostname = async () => (await host.exec("cat /proc/sys/kernel/hostname")).stdout.trim();
  afterEach(async () => {
    await host.exec(`rm -f ${X} /etc/sysctl.d/61-adopt-link.conf`);
  });

  test("a file to adopt that does not exist: refused at preview as at up", async () => {
    await lab.refusedAlike("NetTuning", { sysctls: { "net.core.somaxconn": 2222 }, adopt: [X] }, [`adopt: ${X} does not exist on ${await hostname()}: nothing to adopt; remove it from adopt`]);
  });

  test("a file to adopt that sets a key the resource does not declare: refused at preview as at up, with the line to paste", async () => {
    await host.exec(`printf 'net.core.somaxconn = 777\\nnet.ipv4.tcp_keepalive_time = 600\\n' > ${X}`);
    await lab.refusedAlike("NetTuning", { sysctls: { "net.core.somaxconn": 2222 }, adopt: [X] }, [
      `adopt: ${X}:2 sets net.ipv4.tcp_keepalive_time = 600, which this resource does not declare (adopting the file would drop it at the next boot): add to sysctls:  "net.ipv4.tcp_keepalive_time": 600,`,
    ]);
  });

  test("a symbolic link to adopt: refused at preview as at up", async () => {
    await host.exec(`printf 'net.core.somaxconn = 777\\n' > ${X} && ln -s ${X} /etc/sysctl.d/61-adopt-link.conf`);
    await lab.refusedAlike("NetTuning", { sysctls: { "net.core.somaxconn": 2222 }, adopt: ["/etc/sysctl.d/61-adopt-link.conf"] }, [
      `adopt: /etc/sysctl.d/61-adopt-link.conf is a symbolic link (to ${X}): adopt the file it points to instead`,
    ]);
  });

  test("once adopted: the preview passes as root and as the sudo user (whose read cannot see root's index); the file back: refused as root, as at up", async () => {
    await host.exec(`printf 'net.core.somaxconn = 777\\n' > ${X}`);
    const args = { sysctls: { "net.core.somaxconn": 2222 }, adopt: [X] };
    const s = lab.newStack("adopted");
    const up = await s.up(lab.program("NetTuning", "ad", args));
    expect([up.ok, up.error]).toEqual([true, undefined]);
    expect((await host.exec(`test -e ${X} && echo there || echo gone`)).stdout.trim()).toBe("gone");
    for (const extra of [{}, { connection: host.connection("sudo"), become: "sudo" }]) {
      const p = await s.preview(lab.program("NetTuning", "ad", { ...args, ...extra }));
      expect([p.ok, p.error]).toEqual([true, undefined]);
    }
    // the file comes back: refused at preview (root's read sees the index) as at up
    await host.exec(`printf 'net.core.somaxconn = 777\\n' > ${X}`);
    const again = `adopt: ${X} was adopted by this resource earlier and exists again: move it away (the adopted original is kept in`;
    const p = await s.preview(lab.program("NetTuning", "ad", args));
    expect(p.ok).toBe(false);
    expect(problems(p.error).filter((l) => l.startsWith(again))).toHaveLength(1);
    // (an unchanged resource runs nothing at `up`: a changed value makes the preflight run)
    const u = await s.up(lab.program("NetTuning", "ad", { ...args, sysctls: { "net.core.somaxconn": 2223 }, livePreview: false }));
    expect(u.ok).toBe(false);
    expect(problems(u.error).filter((l) => l.startsWith(again))).toHaveLength(1);
    await host.exec(`rm -f ${X}`);
    expect((await s.destroy()).ok).toBe(true);
    expect((await host.exec(`cat ${X}`)).stdout).toBe("net.core.somaxconn = 777\n");
  });
});

describe("a key or interface another stack's resource manages on the host (runtime.sh nt_owner_conflicts, nic.sh nn_other_owners: the preflight's rules, in a read as root)", () => {
  test("refused at preview as at up, in the same words; the sudo user's read cannot see root's journals and leaves it to up", async () => {
    const a = lab.newStack("owner-a");
    const upA = await a.up(lab.program("NetTuning", "oa", { sysctls: { "net.core.somaxconn": 3333 }, fileName: "90-oa.conf" }));
    expect([upA.ok, upA.error]).toEqual([true, undefined]);
    const before = await snapshot(host);
    const args = { sysctls: { "net.core.somaxconn": 4444, "net.ipv4.tcp_fin_timeout": 33 }, fileName: "90-ob.conf" };
    const p = await lab.preview("NetTuning", "ob", args);
    expect(p.ok).toBe(false);
    expect(p.sessions).toBe(0);
    const said = problems(p.error);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^net\.core\.somaxconn is already managed by \S+\/oa on this host \(journal \/var\/lib\/pulumi-net-tuning\/sysctl\/\S+\.orig\): manage it in one resource only, or remove it there first$/);
    const up = await lab.newStack("owner-b").up(lab.program("NetTuning", "ob", { ...args, livePreview: false }));
    expect(up.ok).toBe(false);
    expect(problems(up.error)).toEqual(said);
    const sudo = await lab.preview("NetTuning", "ob", { ...args, connection: host.connection("sudo"), become: "sudo" });
    expect([sudo.ok, sudo.error]).toEqual([true, undefined]);
    expect(await snapshot(host)).toBe(before);
  });

  test("NicQueues: an interface another stack's NicQueues tunes (nic.sh nn_other_owners): refused at preview as at up", async () => {
    const a = lab.newStack("nic-a");
    const upA = await a.up(lab.program("NicQueues", "na", { interface: host.iface, persistence: "none", txQueueLength: 3100 }));
    expect([upA.ok, upA.error]).toEqual([true, undefined]);
    const args = { interface: host.iface, persistence: "none", txQueueLength: 3200 };
    const p = await lab.preview("NicQueues", "nb", args);
    expect(p.ok).toBe(false);
    const said = problems(p.error);
    // (and its txqueuelen key by the generic rule, as the preflight says it too)
    expect(said.filter((l) => !l.startsWith(`${host.iface}/txqueuelen is already managed by`))).toHaveLength(1);
    expect(said.find((l) => l.startsWith(`${host.iface} is`))).toMatch(new RegExp(`^${host.iface} is already managed by \\S+/na \\(journal /var/lib/pulumi-net-tuning/nic/\\S+\\.orig\\): one NicQueues per interface; manage it there, or delete that resource first$`));
    const up = await lab.newStack("nic-b").up(lab.program("NicQueues", "nb", { ...args, livePreview: false }));
    expect(up.ok).toBe(false);
    expect(problems(up.error)).toEqual(said);
  });

  test("NicQueues: a tx_queue_len root cannot write (nic.sh nn_txq_writable; here a read-only mount): refused at preview as at up", async () => {
    const dir = (await host.exec(`readlink -f /sys/class/net/${host.iface}`)).stdout.trim();
    await host.exec(`mount --bind ${dir} ${dir} && mount -o remount,bind,ro ${dir}`);
    try {
      const hostname = (await host.exec("cat /proc/sys/kernel/hostname")).stdout.trim();
      await lab.refusedAlike("NicQueues", { interface: host.iface, persistence: "none", txQueueLength: 3300 }, [`txQueueLength: /sys/class/net/${host.iface}/tx_queue_len is not writable on ${hostname}`]);
    } finally {
      await host.exec(`umount ${dir}`);
    }
  });
});
