/**
 * Issue #16, NicQueues boot-time overrides: another mechanism that re-applies a setting of this interface at boot
 * is reported by the preflight with file and line (`bootOverride`: error (default) / warn / ignore). The article's
 * /etc/rc.d/rc.local (seed 000) written with the article's commands; a NetworkManager keyfile's [ethtool]; an
 * ifupdown post-up line; tuned's [net] plugin of the active profile; a unit elsewhere (heuristic: warning only).
 * The components' exact commands over real SSH to a lab host (testkit/harness).
 */
import type { LabHost } from "../../testkit/lab";
import { stacksDestroyedAfterEach, useLab } from "../../testkit/jest";
import { nicProgram, ok, snapshot } from "../../testkit/host";
import { hkRcLocal } from "./fixtures";
import { readRestoreStdin } from "../../provider/host/programs";

jest.setTimeout(300_000);

let h0: LabHost;
useLab("adoptnic", 1, (hs) => {
  [h0] = hs;
});
const newStack = stacksDestroyedAfterEach("adoptnic");
const RC = "/etc/rc.d/rc.local";

afterEach(async () => {
  await h0.exec(
    "rm -rf /etc/rc.d /etc/NetworkManager /etc/tuned /etc/systemd/system/hk-nic.service /etc/systemd/system/mid-nic.service /etc/systemd/system/zz-nic.service; rm -f /etc/network/interfaces.d/hk; " +
      "[ -f /root/interfaces.lab ] && cp -p /root/interfaces.lab /etc/network/interfaces; true",
  );
});

/** The article's rc.local, with the article's commands: the file, then `chmod +x`. */
async function writeArticleRcLocal(): Promise<void> {
  await h0.exec(`mkdir -p /etc/rc.d && cat > ${RC} <<'EOF'\n${hkRcLocal("eth0")}EOF\nchmod +x ${RC}`);
}

test("the issue's case: rc.local sets txqueuelen 10000, NicQueues txQueueLength 2500 with systemd: refused with file and line", async () => {
  await writeArticleRcLocal();
  const before = await snapshot(h0);
  const stack = newStack("rc");
  const r = await stack.up(nicProgram(h0, "q", { txQueueLength: 2500, persistence: "systemd" }));
  expect(r.ok).toBe(false);
  expect(r.error).toContain(`bootOverride: ${RC}:4 re-applies txqueuelen settings of eth0 at boot ('ip link set dev eth0 txqueuelen 10000')`);
  expect(r.error).toContain("or list it in adoptRcLocalLines), or set bootOverride to \"warn\"");
  // only the class this resource declares: the ethtool lines are not reported
  expect(r.error).not.toMatch(/ethtool -G/);
  expect(await snapshot(h0)).toBe(before);
});

test("rc.local's RPS loop and rps_sock_flow_entries line: reported line by line when RPS is declared", async () => {
  await writeArticleRcLocal();
  const stack = newStack("rps");
  const r = await stack.up(nicProgram(h0, "q", { rps: { cpus: [0], flowEntriesPerQueue: 2048 }, persistence: "systemd" }));
  expect(r.ok).toBe(false);
  expect(r.error).toContain(`${RC}:11 re-applies rps settings of eth0 at boot ('echo ffffffff > $q/rps_cpus')`);
  expect(r.error).toContain(`${RC}:12 re-applies rfs settings of eth0 at boot ('echo 4096 > $q/rps_flow_cnt')`);
  expect(r.error).not.toMatch(/txqueuelen settings/);
});

test("bootOverride warn: applied, the override named in the warnings; destroy leaves the host byte-identical", async () => {
  await writeArticleRcLocal();
  const before = await snapshot(h0);
  const stack = newStack("warn");
  const up = ok(await stack.up(nicProgram(h0, "q", { txQueueLength: 2500, persistence: "systemd", bootOverride: "warn" })));
  expect((up.outputs!.warnings as string[]).join("\n")).toContain(`bootOverride: ${RC}:4 re-applies txqueuelen settings of eth0 at boot`);
  expect((await h0.exec("cat /sys/class/net/eth0/tx_queue_len")).stdout.trim()).toBe("2500");
  ok(await stack.destroy());
  expect(await snapshot(h0)).toBe(before);
});

test("bootOverride ignore: no check", async () => {
  await writeArticleRcLocal();
  const stack = newStack("ignore");
  const up = ok(await stack.up(nicProgram(h0, "q", { txQueueLength: 2500, persistence: "systemd", bootOverride: "ignore" })));
  expect((up.outputs!.warnings as string[]).join("\n")).not.toMatch(/bootOverride/);
  ok(await stack.destroy());
});

test("NetworkManager keyfile [ethtool], ifupdown post-up and tuned [net]: each refused with file and line", async () => {
  await h0.exec(
    "mkdir -p /etc/NetworkManager/system-connections && cat > /etc/NetworkManager/system-connections/wired.nmconnection <<'EOF'\n" +
      "[connection]\nid=wired\ntype=ethernet\ninterface-name=eth0\n\n[ethtool]\nfeature-gro=false\n\n[ipv4]\nmethod=auto\nEOF\n" +
      // another connection, bound to another interface: not reported
      "cat > /etc/NetworkManager/system-connections/other.nmconnection <<'EOF'\n[connection]\nid=o\ninterface-name=eth9\n[ethtool]\nfeature-gro=false\nEOF\n" +
      "[ -f /root/interfaces.lab ] || cp -p /etc/network/interfaces /root/interfaces.lab 2>/dev/null || : > /root/interfaces.lab; mkdir -p /etc/network/interfaces.d\n" +
      "printf 'auto eth0\\niface eth0 inet manual\\n    post-up ip link set dev $IFACE txqueuelen 10000\\n' > /etc/network/interfaces.d/hk\n" +
      "mkdir -p /etc/tuned/hk && echo hk > /etc/tuned/active_profile && printf '[main]\\nsummary=hk\\n\\n[net]\\ntype=net\\ndevices=eth*\\ntxqueuelen=10000\\nfeatures=gro off\\n' > /etc/tuned/hk/tuned.conf",
  );
  const stack = newStack("nm");
  const r = await stack.up(nicProgram(h0, "q", { txQueueLength: 2500, features: { gro: true }, persistence: "systemd" }));
  expect(r.ok).toBe(false);
  expect(r.error).toContain("/etc/NetworkManager/system-connections/wired.nmconnection:7 re-applies feature settings of eth0 at boot ('feature-gro=false')");
  expect(r.error).not.toContain("other.nmconnection");
  expect(r.error).toContain("/etc/network/interfaces.d/hk:3 re-applies txqueuelen settings of eth0 at boot ('post-up ip link set dev eth0 txqueuelen 10000')");
  expect(r.error).toContain("/etc/tuned/hk/tuned.conf:7 re-applies txqueuelen settings of eth0 at boot ('txqueuelen=10000')");
  expect(r.error).toContain("/etc/tuned/hk/tuned.conf:8 re-applies feature settings of eth0 at boot ('features=gro off')");
});

test("a unit elsewhere naming the interface with ip link: only a warning (heuristic)", async () => {
  await h0.exec("printf '[Service]\\nType=oneshot\\nExecStart=/sbin/ip link set dev eth0 txqueuelen 10000\\n' > /etc/systemd/system/hk-nic.service");
  const stack = newStack("heur");
  const up = ok(await stack.up(nicProgram(h0, "q", { txQueueLength: 2500, persistence: "systemd" })));
  expect((up.outputs!.warnings as string[]).join("\n")).toContain(
    "bootOverride (heuristic): /etc/systemd/system/hk-nic.service:3 mentions eth0 ('ExecStart=/sbin/ip link set dev eth0 txqueuelen 10000')",
  );
  // The files are scanned by one awk: a file with this resource's owner line (mid-nic, between the others in glob
  // order) is left out, the file after it is still scanned with its own line numbers.
  await h0.exec("printf '[Service]\\n\\nType=oneshot\\nExecStart=/sbin/ethtool -K eth0 gro off\\n' > /etc/systemd/system/zz-nic.service");
  const again = ok(await stack.up(nicProgram(h0, "q", { txQueueLength: 2600, persistence: "systemd" })));
  const warned = (again.outputs!.warnings as string[]).filter((w) => w.startsWith("bootOverride (heuristic)"));
  // a unit carrying this resource's owner line (as its own files do) that names the interface: not scanned
  const mark = (await h0.exec("grep -x '# pulumi-net-tuning owner: .*' /etc/systemd/system/net-tuning-nic-eth0.service")).stdout.trim();
  expect(mark).toMatch(/^# pulumi-net-tuning owner: ./);
  await h0.exec(`printf '%s\\n[Service]\\nExecStart=/sbin/ip link set dev eth0 txqueuelen 9000\\n' '${mark}' > /etc/systemd/system/mid-nic.service`);
  expect(warned).toEqual([
    "bootOverride (heuristic): /etc/systemd/system/hk-nic.service:3 mentions eth0 ('ExecStart=/sbin/ip link set dev eth0 txqueuelen 10000'): check that it does not re-apply txqueuelen settings at boot",
  ]);
  // zz-nic sets a feature, which this resource does not declare: no warning; declared, it warns with its line
  const feat = ok(await stack.up(nicProgram(h0, "q", { txQueueLength: 2600, features: { gro: true }, persistence: "systemd" })));
  expect((feat.outputs!.warnings as string[]).filter((w) => w.startsWith("bootOverride (heuristic)"))).toEqual([
    "bootOverride (heuristic): /etc/systemd/system/hk-nic.service:3 mentions eth0 ('ExecStart=/sbin/ip link set dev eth0 txqueuelen 10000'): check that it does not re-apply txqueuelen settings at boot",
    "bootOverride (heuristic): /etc/systemd/system/zz-nic.service:4 mentions eth0 ('ExecStart=/sbin/ethtool -K eth0 gro off'): check that it does not re-apply feature settings at boot",
  ]);
  ok(await stack.destroy());
  await h0.exec("rm -f /etc/systemd/system/zz-nic.service /etc/systemd/system/mid-nic.service /etc/systemd/system/hk-nic.service");
});

test("a bad bootOverride is refused before anything runs", async () => {
  const stack = newStack("bad");
  const r = await stack.preview(nicProgram(h0, "q", { txQueueLength: 2500, bootOverride: "maybe" as never }));
  expect(r.ok).toBe(false);
  expect(r.error).toContain(`bootOverride "maybe": bootOverride must be one of "error", "warn", "ignore"`);
});

describe("adoptRcLocalLines", () => {
  const LOOP = "for q in /sys/class/net/eth0/queues/rx-*; do\n  echo ffffffff > $q/rps_cpus\n  echo 4096 > $q/rps_flow_cnt\ndone";
  const args = {
    txQueueLength: 2500,
    rps: { cpus: [0], flowEntriesPerQueue: 2048 },
    persistence: "systemd" as const,
    adoptRcLocalLines: ["ip link set dev eth0 txqueuelen 10000", LOOP],
  };

  test("the article's txqueuelen line and RPS loop taken out (no boot override left); destroy gives rc.local back byte for byte", async () => {
    await writeArticleRcLocal();
    await h0.exec(`touch -d '2024-03-05 06:07:08.5' ${RC}`);
    const before = await snapshot(h0);
    const original = (await h0.exec(`cat ${RC}`)).stdout;
    const stack = newStack("rcadopt");
    const up = ok(await stack.up(nicProgram(h0, "q", args)));
    expect(String(stack.get("q-apply")!.inputs.stdin)).toContain("\n@adopt-rc 1 echo ffffffff > $q/rps_cpus\n");
    expect((up.outputs!.warnings as string[]).join("\n")).not.toMatch(/bootOverride/);
    expect(readRestoreStdin(String(stack.get("q-restore")!.inputs.stdin))).toContain(`# adopted: rc.local lines (adoptRcLocalLines) of ${RC}, given back`);
    const edited = (await h0.exec(`cat ${RC}`)).stdout;
    const kept = original.split("\n").filter((l) => !["ip link set dev eth0 txqueuelen 10000", ...LOOP.split("\n")].includes(l));
    expect(edited).toBe(kept.join("\n"));
    expect(edited).toContain("ethtool -G eth0 rx 4096 tx 4096\n"); // not adopted: stays
    expect((await h0.exec(`stat -c %a ${RC}`)).stdout.trim()).toBe("755");
    expect((await h0.exec("cat /sys/class/net/eth0/tx_queue_len")).stdout.trim()).toBe("2500");
    expect((await h0.exec("cat /var/lib/pulumi-net-tuning/nic/*.rc-adopted/orig")).stdout).toBe(original);
    // an unchanged program: nothing runs
    expect(ok(await stack.up(nicProgram(h0, "q", args))).sessions.total).toBe(0);
    ok(await stack.destroy());
    expect((await h0.exec(`cat ${RC}`)).stdout).toBe(original);
    expect(await snapshot(h0)).toBe(before);
  });

  test("half a loop (its done left out): refused, the edited file would not parse; nothing changes", async () => {
    await writeArticleRcLocal();
    const before = await snapshot(h0);
    const stack = newStack("rchalf");
    const r = await stack.up(nicProgram(h0, "q", { ...args, adoptRcLocalLines: ["ip link set dev eth0 txqueuelen 10000", "for q in /sys/class/net/eth0/queues/rx-*; do\n  echo ffffffff > $q/rps_cpus\n  echo 4096 > $q/rps_flow_cnt"] }));
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/adoptRcLocalLines: \/etc\/rc\.d\/rc\.local without the adopted lines does not parse \(bash -n: .*\): adopt whole constructs/);
    expect(await snapshot(h0)).toBe(before);
  });

  test("a line that is not in rc.local, or matches twice: refused naming the entry", async () => {
    await writeArticleRcLocal();
    await h0.exec(`printf 'echo 4096 > $q/rps_flow_cnt\\n' >> ${RC}`);
    const stack = newStack("rcmiss");
    const r = await stack.up(nicProgram(h0, "q", { ...args, adoptRcLocalLines: ["ip link set dev eth0 txqueuelen 9999", "echo 4096 > $q/rps_flow_cnt"] }));
    expect(r.ok).toBe(false);
    expect(r.error).toContain(`adoptRcLocalLines[0] ('ip link set dev eth0 txqueuelen 9999') is not in ${RC}`);
    expect(r.error).toContain(`adoptRcLocalLines[1] ('echo 4096 > $q/rps_flow_cnt') matches ${RC} more than once (at lines 12, 14)`);
  });
});
