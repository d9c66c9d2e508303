/**
 * Issue #16, NetTuning `adopt`: a host tuned by hand as seed 000 does it (/etc/sysctl.d/99-hk-net-tuning.conf written
 * with the article's heredoc, loaded with the article's `sysctl --system`), or as seed 001 does it (/etc/sysctl.conf,
 * `sysctl -p`), is taken over by the components' exact commands (testkit/harness over real SSH to a lab host):
 * refused without `adopt` (naming the file), refused listing each undeclared key ready to paste, adopted (the file
 * saved in the journal and in the restore plan, removed; a reboot yields our values), destroyed with byte-identical
 * files (testkit/host `snapshot`: content, mode, owner, mtime) and the hand values back.
 * A lab host is a network namespace: the article's host-wide keys (HOST_WIDE) cannot be set there, so the adopted
 * lifecycle uses the article's file without those five lines; the VM test adopts the file whole.
 */
import type { LabHost } from "../../testkit/lab";
import { stacksDestroyedAfterEach, useLab } from "../../testkit/jest";
import { ok, readSysctl as sysctl, snapshot, sysProgram, writeSysctl } from "../../testkit/host";
import { adoptedBytes, HK_CONF, HK_PATH, HK_VALUES, HOST_WIDE, norm, OURS as ALL_OURS, WEB_SYSCTL_CONF_LINES, writeHkConf } from "./fixtures";
import { readRestoreStdin } from "../../provider/host/programs";

jest.setTimeout(300_000);

let h0: LabHost;
useLab("adopt", 1, async (hs) => {
  [h0] = hs;
  await h0.exec("cp -p /etc/sysctl.conf /root/sysctl.conf.lab");
});
const newStack = stacksDestroyedAfterEach("adopt");

/** HK_CONF without the lines of host-wide keys (what a network namespace can hold). */
const HK_NETNS = HK_CONF.split("\n").filter((l) => !HOST_WIDE.some((k) => l.startsWith(`${k} `))).join("\n");
const NETNS_KEYS = Object.keys(HK_VALUES).filter((k) => !HOST_WIDE.includes(k));
/** Our values: each differs from the hand value (the netns keys of the shared map). */
const OURS: Record<string, string | number> = Object.fromEntries(Object.entries(ALL_OURS).filter(([k]) => !HOST_WIDE.includes(k)));

async function cleanup(): Promise<void> {
  await h0.exec(`rm -f ${HK_PATH}; cp -p /root/sysctl.conf.lab /etc/sysctl.conf`);
  await h0.reboot();
}
afterEach(cleanup);

test("the article's file, without adopt: refused naming 99-hk-net-tuning.conf and its line; nothing changes", async () => {
  await h0.exec(writeHkConf());
  expect(await sysctl(h0, "net.core.somaxconn")).toBe("65535"); // the article's sysctl --system took effect
  const before = await snapshot(h0);
  const stack = newStack("noadopt");
  const r = await stack.up(sysProgram(h0, "edge", { sysctls: { "net.core.somaxconn": 32768, "net.ipv4.tcp_fin_timeout": 20 } }));
  expect(r.ok).toBe(false);
  expect(r.error).toContain(`net.core.somaxconn = 32768 is overridden at boot by ${HK_PATH}:11 which sets 65535`);
  expect(r.error).toContain(`net.ipv4.tcp_fin_timeout = 20 is overridden at boot by ${HK_PATH}:22 which sets 15`);
  expect(r.error).toMatch(/adopt that file \(NetTuning adopt\)/);
  expect(await snapshot(h0)).toBe(before);
});

test("adopt with undeclared keys: refused listing every one with its value, ready to paste; nothing changes", async () => {
  await h0.exec(writeHkConf());
  const before = await snapshot(h0);
  const stack = newStack("undeclared");
  const r = await stack.up(
    sysProgram(h0, "edge", { adopt: ["99-hk-net-tuning.conf"], sysctls: { "net.core.somaxconn": 32768, "net.ipv4.tcp_fin_timeout": 20 } }),
  );
  expect(r.ok).toBe(false);
  const undeclared = Object.keys(HK_VALUES).filter((k) => !["net.core.somaxconn", "net.ipv4.tcp_fin_timeout"].includes(k));
  expect(undeclared).toHaveLength(13);
  for (const k of undeclared) {
    const v = HK_VALUES[k];
    const paste = /^\d+$/.test(v) ? `"${k}": ${v},` : `"${k}": "${v}",`;
    expect([k, r.error]).toEqual([k, expect.stringContaining(`sets ${k} = ${v}, which this resource does not declare (adopting the file would drop it at the next boot): add to sysctls:  ${paste}`)]);
  }
  expect(r.error).toContain(`adopt: ${HK_PATH}:2 sets net.core.rmem_max = 268435456`);
  expect(r.error).toMatch(/13 problem\(s\), nothing was changed/);
  // The adopted file is not a boot override: only the undeclared keys are reported.
  expect(r.error).not.toMatch(/overridden at boot/);
  expect(await snapshot(h0)).toBe(before);
});

test("adopted: file saved and removed, reboot gives our values; destroy gives the file back byte for byte and the hand values", async () => {
  await h0.exec(writeHkConf(HK_NETNS + (HK_NETNS.endsWith("\n") ? "" : "\n")));
  await h0.exec(`chmod 0640 ${HK_PATH}; touch -d '2024-03-05 06:07:08.123456789' ${HK_PATH}`);
  for (const k of NETNS_KEYS) expect([k, await sysctl(h0, k)]).toEqual([k, HK_VALUES[k]]);
  const before = await snapshot(h0);
  const original = (await h0.exec(`cat ${HK_PATH}`)).stdout;
  const stack = newStack("adopted");
  const program = sysProgram(h0, "edge", { adopt: ["99-hk-net-tuning.conf"], sysctls: OURS });
  // preview: the plan names the adopted file
  const p = await stack.preview(program);
  expect(p.ok).toBe(true);
  const up = ok(await stack.up(program), "adopting up");
  expect(String(stack.get("edge-apply")!.inputs.stdin)).toContain(`\n@adopt ${HK_PATH}\n`);
  for (const [k, v] of Object.entries(OURS)) expect([k, await sysctl(h0, k)]).toEqual([k, norm(v)]);
  expect((up.outputs!.previous as Record<string, string>)["net.core.somaxconn"]).toBe("65535");
  expect((await h0.exec(`test -e ${HK_PATH}`)).code).toBe(1);
  // the journal's copy: exact bytes, and its metadata
  const dir = (await h0.exec("ls -d /var/lib/pulumi-net-tuning/sysctl/*.adopted")).stdout.trim();
  expect((await h0.exec(`cat ${dir}/1`)).stdout).toBe(original);
  expect((await h0.exec(`cat ${dir}/index`)).stdout).toMatch(new RegExp(`^${HK_PATH}\tfile\t640\t0:0\t1709618828\\.123456789\t${Buffer.byteLength(original)}\t1\n$`));
  // the restore plan (Pulumi state) carries it too, delimited and base64
  const restoreIn = readRestoreStdin(String(stack.get("edge-restore")!.inputs.stdin)).split("\n@program\n")[0]; // the plan part
  expect(restoreIn).toContain("# --- adopted files (NetTuning adopt): put back byte for byte on delete ---");
  expect(restoreIn).toMatch(/^@adopted-gzip H4sI/m); // gzip'd: the lab host has gzip
  expect(adoptedBytes(restoreIn).get(HK_PATH)?.toString("utf8")).toBe(original);
  // a second up changes nothing and keeps the state copy
  const again = ok(await stack.up(program), "second up");
  expect(again.sessions.total).toBe(0);
  // reboot: our file is the only one that sets these keys
  await h0.reboot();
  for (const [k, v] of Object.entries(OURS)) expect([k, await sysctl(h0, k)]).toEqual([k, norm(v)]);
  // destroy
  ok(await stack.destroy(), "destroy");
  for (const k of NETNS_KEYS) expect([k, await sysctl(h0, k)]).toEqual([k, HK_VALUES[k]]);
  expect(await snapshot(h0)).toBe(before);
  // and a boot after the destroy: the hand values, from the hand file
  await h0.reboot();
  for (const k of NETNS_KEYS) expect([k, await sysctl(h0, k)]).toEqual([k, HK_VALUES[k]]);
});

test("destroy without the host's journal: the file comes back from Pulumi state, byte for byte, and its values are applied again", async () => {
  await h0.exec(writeHkConf(HK_NETNS));
  const before = await snapshot(h0);
  const stack = newStack("fromstate");
  ok(await stack.up(sysProgram(h0, "edge", { adopt: [HK_PATH], sysctls: OURS })), "up");
  await h0.exec("rm -rf /var/lib/pulumi-net-tuning/sysctl");
  // values drift away from the hand ones (the journal is gone: state's originals, then the file's values)
  await writeSysctl(h0, "net.core.somaxconn", 1234);
  ok(await stack.destroy(), "destroy");
  for (const k of NETNS_KEYS) expect([k, await sysctl(h0, k)]).toEqual([k, HK_VALUES[k]]);
  expect(await snapshot(h0)).toBe(before);
});

test("seed 001's /etc/sysctl.conf: only the lines of declared keys are adopted (commented out with a marker); destroy restores the file exactly", async () => {
  await h0.exec(`cat >> /etc/sysctl.conf <<'EOF'\n${WEB_SYSCTL_CONF_LINES}EOF\nsysctl -p >/dev/null`);
  expect(await sysctl(h0, "net.ipv4.tcp_fin_timeout")).toBe("30");
  const before = await snapshot(h0);
  const conf = (await h0.exec("cat /etc/sysctl.conf")).stdout;
  const stack = newStack("sysctlconf");
  const sys = { "net.core.somaxconn": 16384, "net.ipv4.tcp_fin_timeout": 25 };
  // without adopt: refused, naming sysctl.conf (read through 99-sysctl.conf at boot)
  const refused = await stack.up(sysProgram(h0, "web", { sysctls: sys }));
  expect(refused.ok).toBe(false);
  expect(refused.error).toMatch(/net\.ipv4\.tcp_fin_timeout = 25 is overridden at boot by \/etc\/sysctl(\.d\/99-sysctl)?\.conf:\d+ which sets 30/);
  ok(await stack.up(sysProgram(h0, "web", { adopt: ["/etc/sysctl.conf"], sysctls: sys })), "adopt sysctl.conf");
  const edited = (await h0.exec("cat /etc/sysctl.conf")).stdout;
  expect(edited).toContain("\n#pulumi-net-tuning-adopted# net.core.somaxconn=65535\n");
  expect(edited).toContain("\n#pulumi-net-tuning-adopted# net.ipv4.tcp_fin_timeout=30\n");
  expect(edited).toContain("\nnet.ipv4.tcp_tw_reuse=1\n"); // not declared: stays
  expect(edited.replace(/^#pulumi-net-tuning-adopted# /gm, "")).toBe(conf);
  await h0.reboot();
  expect(await sysctl(h0, "net.core.somaxconn")).toBe("16384");
  expect(await sysctl(h0, "net.ipv4.tcp_fin_timeout")).toBe("25");
  ok(await stack.destroy(), "destroy");
  expect(await sysctl(h0, "net.core.somaxconn")).toBe("65535");
  expect(await sysctl(h0, "net.ipv4.tcp_fin_timeout")).toBe("30");
  expect(await snapshot(h0)).toBe(before);
});

test("bad adopt entries are refused before anything runs, naming the entry and the fix", async () => {
  const stack = newStack("bad");
  const r = await stack.preview(sysProgram(h0, "edge", { adopt: ["../../etc/passwd", "/etc/other.conf", "90-net-tuning-edge.conf"], sysctls: OURS }));
  expect(r.ok).toBe(false);
  expect(r.error).toContain(`adopt[0]: "../../etc/passwd" is not a sysctl file procps or systemd-sysctl reads at boot`);
  expect(r.error).toContain(`adopt[1]: "/etc/other.conf" is not a sysctl file`);
  expect(r.error).toContain(`adopt[2]: "/etc/sysctl.d/90-net-tuning-edge.conf" is this resource's own file (fileName)`);
  const p = await stack.preview(sysProgram(h0, "edge", { adopt: ["99-hk-net-tuning.conf"], persist: false, sysctls: OURS }));
  expect(p.error).toContain("adopt needs persist: true");
});

test("a file over 4 KiB: kept only in the host's journal, with a warning; destroy still gives it back from the journal", async () => {
  const big = `${"# hand notes ".repeat(400)}\nnet.core.somaxconn = 65535\n`;
  expect(Buffer.byteLength(big)).toBeGreaterThan(4096);
  await h0.exec(writeHkConf(big));
  const before = await snapshot(h0);
  const stack = newStack("big");
  const up = ok(await stack.up(sysProgram(h0, "edge", { adopt: ["99-hk-net-tuning.conf"], sysctls: { "net.core.somaxconn": 32768 } })));
  expect((up.outputs!.warnings as string[]).join("\n")).toContain(
    `adopted ${HK_PATH} (${Buffer.byteLength(big)} bytes) is kept only in the host's journal`,
  );
  const restoreIn = readRestoreStdin(String(stack.get("edge-restore")!.inputs.stdin)).split("\n@program\n")[0]; // the plan part
  expect(restoreIn).toMatch(new RegExp(`^@adopted ${HK_PATH}\tfile\t644\t0:0\t`, "m"));
  expect(restoreIn).not.toMatch(/^@adopted-(data|gzip) /m);
  ok(await stack.destroy());
  expect(await sysctl(h0, "net.core.somaxconn")).toBe("65535");
  expect(await snapshot(h0)).toBe(before);
});
