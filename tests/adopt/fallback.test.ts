/**
 * Issue #16 with the second restore tier (ARCHITECTURE.md "Restore without the host"): the destroy of a resource that
 * adopted hand-written files (NetTuning `adopt`) or rc.local lines (NicQueues `adoptRcLocalLines`) when the installed
 * engine is gone, so the FALLBACK program carried in the -restore child's stdin restores (its adoption part,
 * provider/host/sh/restore-adopt-<kind>.sh): with the host's journal (its copies, files over 4 KiB too) or without it
 * (the copies in Pulumi state). The components' exact commands over real SSH to a lab host (testkit/harness); "byte
 * for byte" is the testkit/host `snapshot` (every file of /etc with mode, owner, size, mtime and md5; /proc/sys/net;
 * the NIC) before the create and after the destroy. The same stored restore stdin is also run under dash, bash
 * --posix and busybox sh.
 */
import type { LabHost } from "../../testkit/lab";
import { stacksDestroyedAfterEach, useLab } from "../../testkit/jest";
import { nicProgram, ok, readSysctl as sysctl, snapshot, sysProgram, writeSysctl } from "../../testkit/host";
import { adoptedBytes, HK_CONF, HK_PATH, HK_VALUES, HOST_WIDE, hkRcLocal, norm, OURS as ALL_OURS, WEB_SYSCTL_CONF_LINES, writeHkConf } from "./fixtures";
import { fallbackProgram, frameRestore, readRestoreStdin, restoreCommand, restoreStdin } from "../../provider/host/programs";
import { engine, engineLine } from "../../provider/host/engine";

jest.setTimeout(300_000);

let h0: LabHost;
/** The host's name as the restore programs say it (uname -n). */
let HOST: string;
useLab("adoptfb", 1, async (hs) => {
  [h0] = hs;
  HOST = (await h0.exec("uname -n")).stdout.trim();
  await h0.exec("cp -p /etc/sysctl.conf /root/sysctl.conf.lab");
});
const newStack = stacksDestroyedAfterEach("adoptfb");

/** The installed engine (the first restore tier) gone: the fallback restores. */
const NO_ENGINE = "rm -rf /usr/local/lib/pulumi-net-tuning";
/** The host's journal and the installed engine gone (a host rebuilt from a backup, say): the fallback restores from Pulumi state. */
const NO_HOST_STATE = "rm -rf /var/lib/pulumi-net-tuning /usr/local/lib/pulumi-net-tuning";
const SHELLS = ["dash", "bash --posix", "busybox sh"];
const restoredBy = (out: string | undefined) => /^restored-by\t(.*)$/m.exec(out ?? "")?.[1];
const warnings = (out: string | undefined) => (out ?? "").split("\n").filter((l) => l.startsWith("warning\t")).map((l) => l.slice(8));
/** A snapshot without the harness's staged engine copy (a fallback run by hand is given no delivery token, so it stays). */
const unstaged = (s: string) => s.split("\n").filter((l) => !l.includes("/var/lib/pulumi-net-tuning/incoming/")).join("\n");

/** HK_CONF without the lines of host-wide keys (what a network namespace can hold). */
const HK_NETNS = HK_CONF.split("\n").filter((l) => !HOST_WIDE.some((k) => l.startsWith(`${k} `))).join("\n");
const NETNS_KEYS = Object.keys(HK_VALUES).filter((k) => !HOST_WIDE.includes(k));
const OURS: Record<string, string | number> = Object.fromEntries(Object.entries(ALL_OURS).filter(([k]) => !HOST_WIDE.includes(k)));
/**
 * Seed 001's sysctl.conf lines without those of keys the hand file sets too (one hand setter per key: the engine and
 * the fallback apply adopted files again in the order of the plan, not in boot order).
 */
const CONF_LINES = WEB_SYSCTL_CONF_LINES.split("\n").filter((l) => !/^net\.(core\.somaxconn|ipv4\.tcp_max_syn_backlog|ipv4\.tcp_fin_timeout)=/.test(l)).join("\n");
/** Keys of seed 001's lines this resource declares (so those lines are adopted), our values differing from the hand ones. */
const CONF_OURS = { "net.ipv4.tcp_tw_reuse": 0, "net.ipv4.tcp_syncookies": 2 };
const CONF_HAND = { "net.ipv4.tcp_tw_reuse": "1", "net.ipv4.tcp_syncookies": "1" };

/** The stored restore stdin's fallback run by `shell` as the restore bootstrap runs it (its private directory, the plain form on stdin). */
async function runFallback(shell: string, stdin: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const unpack = `if ! grep -q '^@program$' "$d/in"; then { sed q "$d/in" && sed 1d "$d/in" | base64 -d | gunzip; } > "$d/u" && mv "$d/u" "$d/in"; fi && sed '1,/^@program$/d' "$d/in" > "$d/program"`;
  return h0.exec(`d=$(mktemp -d /tmp/net-tuning-in.XXXXXX) && cat > "$d/in" && { ${unpack}; } && ${shell} "$d/program" "$d" < "$d/in"`, { stdin, timeoutMs: 60000 });
}

describe("NetTuning adopt", () => {
  afterEach(async () => {
    await h0.exec(`rm -f ${HK_PATH} ${HK_PATH}.away; cp -p /root/sysctl.conf.lab /etc/sysctl.conf`);
    await h0.reboot();
  });

  /** The article's file (0640, group 4, a time with nanoseconds) and seed 001's sysctl.conf lines, both loaded as the articles do. */
  async function handTuned(): Promise<void> {
    await h0.exec(writeHkConf(HK_NETNS.endsWith("\n") ? HK_NETNS : `${HK_NETNS}\n`));
    await h0.exec(`chmod 0640 ${HK_PATH} && chown 0:4 ${HK_PATH} && touch -d '2024-03-05 06:07:08.123456789' ${HK_PATH}`);
    await h0.exec(`cat >> /etc/sysctl.conf <<'EOF'\n${CONF_LINES}EOF\nsysctl -p >/dev/null && touch -d '2023-01-02 03:04:05.25' /etc/sysctl.conf`);
    for (const k of NETNS_KEYS) expect([k, await sysctl(h0, k)]).toEqual([k, HK_VALUES[k]]);
    for (const [k, v] of Object.entries(CONF_HAND)) expect([k, await sysctl(h0, k)]).toEqual([k, v]);
  }
  const program = () => sysProgram(h0, "edge", { adopt: [HK_PATH, "/etc/sysctl.conf"], sysctls: { ...OURS, ...CONF_OURS } });
  async function checkHandValues(): Promise<void> {
    for (const k of NETNS_KEYS) expect([k, await sysctl(h0, k)]).toEqual([k, HK_VALUES[k]]);
    for (const [k, v] of Object.entries(CONF_HAND)) expect([k, await sysctl(h0, k)]).toEqual([k, v]);
  }

  test("engine and journal removed: the fallback puts both adopted files back from Pulumi state, byte for byte, and their values", async () => {
    await handTuned();
    const before = await snapshot(h0, { delivery: true });
    const original = (await h0.exec(`cat ${HK_PATH}`)).stdout;
    const confBefore = (await h0.exec("cat /etc/sysctl.conf")).stdout;
    const stack = newStack("state");
    ok(await stack.up(program()), "adopting up");
    expect((await h0.exec(`test -e ${HK_PATH}`)).code).toBe(1);
    expect((await h0.exec("grep -c '^#pulumi-net-tuning-adopted# ' /etc/sysctl.conf")).stdout.trim()).toBe("2");
    for (const [k, v] of Object.entries({ ...OURS, ...CONF_OURS })) expect([k, await sysctl(h0, k)]).toEqual([k, norm(v)]);
    // the restore stdin: the small fallback with its adoption part, not the engine's restore
    const plain = readRestoreStdin(String(stack.get("edge-restore")!.inputs.stdin));
    const prog = plain.slice(plain.indexOf("\n@program\n") + 10);
    expect(prog).toMatch(/^a_put\(\) \{$/m);
    expect(prog).toMatch(/\nr_main\n$/);
    expect(prog).not.toContain("nt_restore_main");
    // both files in Pulumi state, gzip'd (the lab host has gzip): each record with its data, within 8 KiB
    expect(Buffer.byteLength(String(stack.get("edge-restore")!.inputs.stdin))).toBeLessThanOrEqual(8192);
    expect(plain).toMatch(/^@adopted-gzip H4sI/m);
    const files = adoptedBytes(plain);
    expect([...files.keys()]).toEqual(["/etc/sysctl.conf", HK_PATH]);
    expect(files.get(HK_PATH)?.toString("utf8")).toBe(original);
    expect(files.get("/etc/sysctl.conf")?.toString("utf8")).toBe(confBefore);
    expect((await h0.exec(NO_HOST_STATE)).code).toBe(0);
    await writeSysctl(h0, "net.core.somaxconn", 1234); // drifted: the originals in state put it back
    const d = ok(await stack.destroy(), "destroy");
    expect(restoredBy(d.runs[0].stdout)).toBe("fallback");
    expect(warnings(d.runs[0].stdout)).toEqual([expect.stringMatching(/^the host's journal .* is missing; restoring the originals kept in Pulumi state$/)]);
    await checkHandValues();
    expect((await h0.exec(`cat ${HK_PATH}`)).stdout).toBe(original);
    expect(await snapshot(h0, { delivery: true })).toBe(before);
  });

  test("as a sudo user (become sudo): engine and journal removed, the fallback under sudo puts the adopted files back from Pulumi state", async () => {
    await handTuned();
    const before = await snapshot(h0, { delivery: true });
    const stack = newStack("sudo");
    ok(await stack.up(sysProgram(h0, "edge", { become: "sudo", adopt: [HK_PATH, "/etc/sysctl.conf"], sysctls: { ...OURS, ...CONF_OURS } }, "sudo")));
    expect((await h0.exec(`test -e ${HK_PATH}`)).code).toBe(1);
    expect((await h0.exec(NO_HOST_STATE)).code).toBe(0);
    const d = ok(await stack.destroy());
    expect(restoredBy(d.runs[0].stdout)).toBe("fallback");
    await checkHandValues();
    expect(await snapshot(h0, { delivery: true })).toBe(before);
    // the sudo user's staged engine copy went too
    expect((await h0.exec(`ls -a /home/${h0.sudoUser.user}/.cache 2>&1`)).stdout).not.toContain("pulumi-net-tuning");
  });

  test("engine and journal removed, the files not loaded before the apply: their values come from the files put back, not from the originals", async () => {
    // the hand files written but never loaded: the originals (Pulumi state) are the lab's defaults
    await h0.exec(`cat > ${HK_PATH} <<'EOF'\n${HK_NETNS}EOF\ncat >> /etc/sysctl.conf <<'EOF'\n${CONF_LINES}EOF`);
    const defaults = Object.fromEntries(await Promise.all([...NETNS_KEYS, ...Object.keys(CONF_HAND)].map(async (k) => [k, await sysctl(h0, k)] as const)));
    const changed = Object.keys(defaults).filter((k) => defaults[k] !== ({ ...HK_VALUES, ...CONF_HAND } as Record<string, string>)[k]);
    expect(changed.length).toBeGreaterThan(3);
    const before = await snapshot(h0, { delivery: true });
    const stack = newStack("unloaded");
    ok(await stack.up(program()));
    expect((await h0.exec(NO_HOST_STATE)).code).toBe(0);
    const d = ok(await stack.destroy());
    expect(restoredBy(d.runs[0].stdout)).toBe("fallback");
    await checkHandValues();
    // the host as before except the values the put-back files set
    const proc = (k: string) => `/proc/sys/${k.replace(/\./g, "/")}:`;
    const drop = (s: string) => s.split("\n").filter((l) => !changed.some((k) => l.startsWith(proc(k)))).join("\n");
    expect(drop(await snapshot(h0, { delivery: true }))).toBe(drop(before));
  });

  test("engine removed, journal kept: the fallback puts back from the journal, a file over 4 KiB (not in Pulumi state) too", async () => {
    const big = `${"# hand notes ".repeat(400)}\n${HK_NETNS}`;
    expect(Buffer.byteLength(big)).toBeGreaterThan(4096);
    await h0.exec(writeHkConf(big));
    await h0.exec(`cat >> /etc/sysctl.conf <<'EOF'\n${CONF_LINES}EOF\nsysctl -p >/dev/null`);
    const before = await snapshot(h0, { delivery: true });
    const stack = newStack("journal");
    const up = ok(await stack.up(program()));
    expect((up.outputs!.warnings as string[]).join("\n")).toContain(`adopted ${HK_PATH} (${Buffer.byteLength(big)} bytes) is kept only in the host's journal`);
    // in the plan: its record without data (sysctl.conf's with)
    const lines = readRestoreStdin(String(stack.get("edge-restore")!.inputs.stdin)).split("\n");
    const at = lines.findIndex((l) => l.startsWith(`@adopted ${HK_PATH}\tfile\t644\t0:0\t`));
    expect(lines[at]).toMatch(new RegExp(`\t${Buffer.byteLength(big)}$`));
    expect(lines[at + 1]).not.toMatch(/^@adopted-(data|gzip) /);
    expect(lines.filter((l) => l.startsWith("@adopted-gzip ")).length).toBeGreaterThan(0);
    expect((await h0.exec(NO_ENGINE)).code).toBe(0);
    const d = ok(await stack.destroy());
    expect(restoredBy(d.runs[0].stdout)).toBe("fallback");
    expect(warnings(d.runs[0].stdout)).toEqual([]);
    await checkHandValues();
    expect(await snapshot(h0, { delivery: true })).toBe(before);
  });

  test("engine and journal removed, a file kept only in the journal: a warning names it, everything else is restored", async () => {
    const big = `${"# hand notes ".repeat(400)}\n${HK_NETNS}`;
    await h0.exec(writeHkConf(big));
    await h0.exec(`cat >> /etc/sysctl.conf <<'EOF'\n${CONF_LINES}EOF\nsysctl -p >/dev/null`);
    const conf = (await h0.exec("cat /etc/sysctl.conf")).stdout;
    const stack = newStack("lost");
    ok(await stack.up(program()));
    expect((await h0.exec(NO_HOST_STATE)).code).toBe(0);
    const d = ok(await stack.destroy());
    expect(restoredBy(d.runs[0].stdout)).toBe("fallback");
    expect(warnings(d.runs[0].stdout)).toContain(`cannot put back the adopted ${HK_PATH} on ${HOST}: its copy was kept only in the host's journal, which is gone`);
    expect((await h0.exec(`test -e ${HK_PATH}`)).code).toBe(1);
    expect((await h0.exec("cat /etc/sysctl.conf")).stdout).toBe(conf);
    await checkHandValues(); // the originals in state
  });

  test("engine removed, a file of the adopted name exists again with other content: exit 1 naming it, journal kept; moved away, the delete finishes byte for byte", async () => {
    await handTuned();
    const before = await snapshot(h0, { delivery: true });
    const stack = newStack("again");
    ok(await stack.up(program()));
    expect((await h0.exec(`${NO_ENGINE} && echo 'net.core.somaxconn = 4242' > ${HK_PATH}`)).code).toBe(0);
    const journal = (await h0.exec("ls -R /var/lib/pulumi-net-tuning/sysctl && cat /var/lib/pulumi-net-tuning/sysctl/*.orig")).stdout;
    const d = await stack.destroy();
    expect(d.ok).toBe(false);
    const run = d.runs.find((r) => r.name === "edge-restore")!;
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(`net-tuning: cannot put back the adopted ${HK_PATH}: a file of that name exists again with other content: move it away, then run the delete again on ${HOST} (fallback restore)`);
    expect(stack.get("edge-restore")).toBeDefined();
    expect((await h0.exec("ls -R /var/lib/pulumi-net-tuning/sysctl && cat /var/lib/pulumi-net-tuning/sysctl/*.orig")).stdout).toBe(journal);
    expect((await h0.exec(`cat ${HK_PATH}`)).stdout).toBe("net.core.somaxconn = 4242\n");
    expect((await h0.exec(`mv ${HK_PATH} ${HK_PATH}.away`)).code).toBe(0);
    const d2 = ok(await stack.destroy());
    expect(restoredBy(d2.runs[0].stdout)).toBe("fallback");
    await h0.exec(`rm -f ${HK_PATH}.away`);
    await checkHandValues();
    expect(await snapshot(h0, { delivery: true })).toBe(before);
  });

  test("engine removed, sysctl.conf edited after the apply: only the marker is taken out, with a warning", async () => {
    await handTuned();
    const stack = newStack("edited");
    ok(await stack.up(program()));
    const conf = (await h0.exec("cat /etc/sysctl.conf")).stdout;
    expect((await h0.exec(`${NO_ENGINE} && echo '# edited later' >> /etc/sysctl.conf`)).code).toBe(0);
    const d = ok(await stack.destroy());
    expect(restoredBy(d.runs[0].stdout)).toBe("fallback");
    expect(warnings(d.runs[0].stdout)).toEqual([
      "/etc/sysctl.conf was edited after this resource adopted its lines: only the lines it commented out were given back (marker removed), the rest is as you left it",
    ]);
    expect((await h0.exec("cat /etc/sysctl.conf")).stdout).toBe(`${conf.replace(/^#pulumi-net-tuning-adopted# /gm, "")}# edited later\n`);
    await checkHandValues();
  });

  test.each(SHELLS)("under %s: the stored fallback puts the adopted files back from Pulumi state (journal and engine gone), then from the journal", async (shell) => {
    await handTuned();
    const before = await snapshot(h0, { delivery: true });
    const stack = newStack(`sh-${shell.split(" ")[0]}`);
    ok(await stack.up(program()));
    const stdin = String(stack.get("edge-restore")!.inputs.stdin);
    expect((await h0.exec(NO_HOST_STATE)).code).toBe(0);
    const r = await runFallback(shell, stdin);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(restoredBy(r.stdout)).toBe("fallback");
    await checkHandValues();
    expect(unstaged(await snapshot(h0, { delivery: true }))).toBe(unstaged(before));
    // a second run of the same stdin changes nothing (a retried delete)
    const again = await runFallback(shell, stdin);
    expect([again.code, again.stderr]).toEqual([0, ""]);
    expect(unstaged(await snapshot(h0, { delivery: true }))).toBe(unstaged(before));
    ok(await stack.destroy());
    // from the journal: the same program with the journal kept
    const stack2 = newStack(`shj-${shell.split(" ")[0]}`);
    ok(await stack2.up(program()));
    expect((await h0.exec(NO_ENGINE)).code).toBe(0);
    const r2 = await runFallback(shell, String(stack2.get("edge-restore")!.inputs.stdin));
    expect([r2.code, r2.stderr]).toEqual([0, ""]);
    expect(warnings(r2.stdout)).toEqual([]);
    await checkHandValues();
    expect((await h0.exec("ls /var/lib/pulumi-net-tuning/sysctl 2>&1")).stdout).not.toMatch(/adopted|orig/);
    expect(unstaged(await snapshot(h0, { delivery: true }))).toBe(unstaged(before));
  });

  test("journal and engine gone, a damaged gzip'd copy in the stored plan: exit 1 naming the file, nothing of it written; the intact stdin then puts it back", async () => {
    await h0.exec(writeHkConf(HK_NETNS.endsWith("\n") ? HK_NETNS : `${HK_NETNS}\n`));
    const original = (await h0.exec(`cat ${HK_PATH}`)).stdout;
    const stack = newStack("damaged");
    ok(await stack.up(sysProgram(h0, "edge", { adopt: [HK_PATH], sysctls: OURS })));
    const stdin = String(stack.get("edge-restore")!.inputs.stdin);
    const plain = readRestoreStdin(stdin);
    // one character of the gzip'd copy changed (base64 stays valid): gzip's CRC-32 (or the size) catches it
    const line = plain.split("\n").find((l) => l.startsWith("@adopted-gzip "))!;
    const flipped = line.slice(0, 30) + (line[30] === "A" ? "B" : "A") + line.slice(31);
    const damaged = restoreStdin("sysctl", plain.split("\n@program\n")[0].replace(/^@engine [^\n]*\n/m, "").replace(line, flipped), true);
    expect((await h0.exec(NO_HOST_STATE)).code).toBe(0);
    const r = await runFallback("dash", damaged);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot decode the adopted ${HK_PATH} from Pulumi state (damaged, or base64/gzip missing): run the delete again`);
    expect((await h0.exec(`test -e ${HK_PATH}`)).code).toBe(1);
    const good = await runFallback("dash", stdin);
    expect([good.code, good.stderr]).toEqual([0, ""]);
    expect((await h0.exec(`cat ${HK_PATH}`)).stdout).toBe(original);
    ok(await stack.destroy()); // the same fallback once more: the file is there as it should be, nothing to do
    expect((await h0.exec(`cat ${HK_PATH}`)).stdout).toBe(original);
  });
});

describe("NicQueues adoptRcLocalLines", () => {
  const RC = "/etc/rc.d/rc.local";
  const LOOP = "for q in /sys/class/net/eth0/queues/rx-*; do\n  echo ffffffff > $q/rps_cpus\n  echo 4096 > $q/rps_flow_cnt\ndone";
  const args = {
    txQueueLength: 2500,
    rps: { cpus: [0], flowEntriesPerQueue: 2048 },
    persistence: "systemd" as const,
    adoptRcLocalLines: ["ip link set dev eth0 txqueuelen 10000", LOOP],
  };
  afterEach(async () => {
    await h0.exec("rm -rf /etc/rc.d");
  });
  /** The article's rc.local with the article's commands, 0750, group 4, a time with a fraction. */
  async function articleRcLocal(): Promise<string> {
    await h0.exec(`mkdir -p /etc/rc.d && cat > ${RC} <<'EOF'\n${hkRcLocal("eth0")}EOF\nchmod 0750 ${RC} && chown 0:4 ${RC} && touch -d '2024-03-05 06:07:08.5' ${RC}`);
    return (await h0.exec(`cat ${RC}`)).stdout;
  }

  test("engine removed, journal kept: the fallback gives rc.local back byte for byte", async () => {
    const original = await articleRcLocal();
    const before = await snapshot(h0, { delivery: true });
    const stack = newStack("rc");
    ok(await stack.up(nicProgram(h0, "q", args)));
    expect((await h0.exec(`cat ${RC}`)).stdout).not.toContain("txqueuelen 10000");
    const plain = readRestoreStdin(String(stack.get("q-restore")!.inputs.stdin));
    expect(plain).toContain(`# adopted: rc.local lines (adoptRcLocalLines) of ${RC}, given back from the host's journal on delete`);
    expect(plain.slice(plain.indexOf("\n@program\n"))).not.toContain("nt_restore_main");
    expect((await h0.exec(NO_ENGINE)).code).toBe(0);
    const d = ok(await stack.destroy());
    expect(restoredBy(d.runs[0].stdout)).toBe("fallback");
    expect(warnings(d.runs[0].stdout)).toEqual([]);
    expect((await h0.exec(`cat ${RC}`)).stdout).toBe(original);
    expect(await snapshot(h0, { delivery: true })).toBe(before);
  });

  test("engine and journal removed: the adopted lines cannot come back (Pulumi state keeps no copy of rc.local), a warning says so; the rest is restored", async () => {
    await articleRcLocal();
    const tx = (await h0.exec("cat /sys/class/net/eth0/tx_queue_len")).stdout;
    const stack = newStack("rcgone");
    ok(await stack.up(nicProgram(h0, "q", args)));
    const edited = (await h0.exec(`cat ${RC}`)).stdout;
    expect((await h0.exec(NO_HOST_STATE)).code).toBe(0);
    const d = ok(await stack.destroy());
    expect(restoredBy(d.runs[0].stdout)).toBe("fallback");
    expect(warnings(d.runs[0].stdout)).toContain(`the rc.local lines this resource adopted were not given back on ${HOST}: their only copy was in the host's journal, which is gone`);
    expect((await h0.exec(`cat ${RC}`)).stdout).toBe(edited);
    expect((await h0.exec("cat /sys/class/net/eth0/tx_queue_len")).stdout).toBe(tx);
  });

  test("engine removed, rc.local edited after the apply: the original is written next to it, with a warning", async () => {
    const original = await articleRcLocal();
    const stack = newStack("rcedit");
    ok(await stack.up(nicProgram(h0, "q", args)));
    const edited = `${(await h0.exec(`cat ${RC}`)).stdout}echo edited later\n`;
    expect((await h0.exec(`${NO_ENGINE} && echo 'echo edited later' >> ${RC}`)).code).toBe(0);
    const d = ok(await stack.destroy());
    expect(restoredBy(d.runs[0].stdout)).toBe("fallback");
    expect(warnings(d.runs[0].stdout)).toEqual([
      `${RC} was edited after this resource took lines out of it: the original (with the adopted lines) was written to ${RC}.net-tuning-adopted-original; merge it by hand`,
    ]);
    expect((await h0.exec(`cat ${RC}`)).stdout).toBe(edited);
    expect((await h0.exec(`cat ${RC}.net-tuning-adopted-original && stat -c '%a %u:%g %.9Y' ${RC}.net-tuning-adopted-original`)).stdout).toBe(`${original}750 0:4 1709618828.500000000\n`);
  });

  test.each(SHELLS)("under %s: the stored fallback gives rc.local back from the journal (engine gone)", async (shell) => {
    const original = await articleRcLocal();
    const before = await snapshot(h0, { delivery: true });
    const stack = newStack(`rcsh-${shell.split(" ")[0]}`);
    ok(await stack.up(nicProgram(h0, "q", args)));
    expect((await h0.exec(NO_ENGINE)).code).toBe(0);
    const r = await runFallback(shell, String(stack.get("q-restore")!.inputs.stdin));
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(restoredBy(r.stdout)).toBe("fallback");
    expect(warnings(r.stdout)).toEqual([]);
    expect((await h0.exec(`cat ${RC}`)).stdout).toBe(original);
    expect(unstaged(await snapshot(h0, { delivery: true }))).toBe(unstaged(before));
  });
});

test("a bad @adopted or @adopted-data line, or one given to the program of a plan that adopts nothing: exit 5, nothing changed", async () => {
  const TOKEN = "198.18.99.1-00000000"; // no delivery of it exists on the host: nothing to clean up
  const before = await snapshot(h0, { delivery: true });
  const head = "@net-tuning v1\n@kind sysctl\n@owner fb:x:t\n@owner-id fb.x.t-00000000\n@file /etc/sysctl.d/90-x.conf\n@restore 1\n@orig net.core.somaxconn\t4096\n";
  const bad = [
    "@adopted /etc/passwd\tfile\t644\t0:0\t1\t3",
    "@adopted /etc/sysctl.d/../passwd.conf\tfile\t644\t0:0\t1\t3",
    "@adopted /etc/sysctl.d/.x.conf\tfile\t644\t0:0\t1\t3",
    "@adopted /etc/sysctl.d/x.conf.d\tfile\t644\t0:0\t1\t3",
    "@adopted /etc/sysctl.d/x.conf\tlink\t644\t0:0\t1\t3",
    "@adopted /etc/sysctl.d/x.conf\tfile\t644\t0:0\t$(reboot)\t3",
    "@adopted /etc/sysctl.d/x.conf\tfile\t644\t0:0\t1",
    "@adopted /etc/sysctl.d/x.conf\tfile\t644\t\t1\t3",
    "@adopted-data eHl6",
  ];
  for (const line of bad) {
    const r = await h0.ssh(restoreCommand(TOKEN), { who: "root", stdin: restoreStdin("sysctl", `${head}${line}\n`, true) });
    expect([line, r.code, r.stderr]).toEqual([line, 5, expect.stringContaining(`bad plan line '${line}'`)]);
  }
  const good = "@adopted /etc/sysctl.d/x.conf\tfile\t644\t0:0\t1\t3";
  const r = await h0.ssh(restoreCommand(TOKEN), { who: "root", stdin: restoreStdin("sysctl", `${head}${good}\n@adopted-data eHl6!\n`, true) });
  expect([r.code, r.stderr]).toEqual([5, expect.stringContaining("bad plan line '@adopted-data eHl6!'")]);
  // the program without the adoption part (never given such a plan) refuses a valid @adopted line
  const plain = `@restore 1\n${engineLine(engine())}\n${head}${good}\n@adopted-data eHl6\n@program\n${fallbackProgram("sysctl")}`;
  const n = await h0.ssh(restoreCommand(TOKEN), { who: "root", stdin: frameRestore(plain) });
  expect([n.code, n.stderr]).toEqual([5, expect.stringContaining(`bad plan line '${good}'`)]);
  expect(await snapshot(h0, { delivery: true })).toBe(before);
});
