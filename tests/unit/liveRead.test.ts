/** Pure parts of the live preview (issue #13): the read's answer, drift against the record, the repair token, the lines. */
import { execFileSync } from "child_process";
import { compareLive, CONVERGED_DIR, driftOf, LiveBootCheck, LiveSection, NO_TOKEN, parseLiveRead, renderLive, renderLiveRead, repairToken, requestModules, secretWant } from "../../provider/live/read";
import { engine } from "../../provider/host/engine";
import { createHash } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { engineCommand, LIVE_PROGRAM_HEAD, liveProgram } from "../../provider/host/programs";
import { bootRefusal, MODULE_UNLOADABLE, nicRefusals } from "../../provider/host/messages";
import { execShell, SHELLS, spawnShell } from "../../testkit/shells";

const ANSWER = [
  "net-tuning-live v2",
  "!owner p.s.web-12345678",
  "!record",
  "|net-tuning-converged v1\tp.s.web-12345678\tabc123\tp/s/web",
  "|value\tnet.core.somaxconn\t4096",
  "|value\tnet.ipv4.tcp_rmem\t4096 131072 6291456",
  "|value\tnet.core.rps_sock_flow_entries\t32768",
  "|file\t/etc/sysctl.d/90-web.conf\t123 45",
  "digest\t/etc/sysctl.d/90-web.conf\t123 45",
  "value\tnet.core.somaxconn\t1234",
  "value\tnet.ipv4.tcp_rmem\t4096 131072 6291456",
  "value\tnet.core.rps_sock_flow_entries\t32768",
  "unreadable\tnet.ipv4.tcp_fastopen_key",
  "missing\tnet.core.busy_poll",
  "!owner p.s.nic-87654321",
  "!no-record",
  "value\teth0/txqueuelen\t1000",
  "value\teth0/rps.rx-0\t0",
  "value\teth0/rps.rx-1\t0",
  "value\teth0/ring.rx\t256",
  "!end",
  "host\tgzip base64",
].join("\n");

describe("parseLiveRead", () => {
  const s = parseLiveRead(ANSWER);
  test("sections by owner id: the record, values now, missing and unreadable keys, file digests", () => {
    expect(Object.keys(s)).toEqual(["p.s.web-12345678", "p.s.nic-87654321"]);
    const web = s["p.s.web-12345678"];
    expect(web.recordState).toBe("ok");
    expect(web.record).toEqual({
      token: "abc123", owner: "p/s/web",
      values: { "net.core.somaxconn": "4096", "net.ipv4.tcp_rmem": "4096 131072 6291456", "net.core.rps_sock_flow_entries": "32768" },
      files: { "/etc/sysctl.d/90-web.conf": "123 45" },
    });
    expect(web.values["net.core.somaxconn"]).toBe("1234");
    expect(web.unreadable).toEqual(["net.ipv4.tcp_fastopen_key"]);
    expect(web.missing).toEqual(["net.core.busy_poll"]);
    expect(s["p.s.nic-87654321"].recordState).toBe("none");
  });
  test("refuses what is not an answer, or a truncated one", () => {
    expect(() => parseLiveRead("sh: 1: syntax error\n")).toThrow(/not a live-read answer/);
    expect(() => parseLiveRead("net-tuning-live v2\n!owner x\n")).toThrow(/truncated/);
  });
  test("a token that is not hex is no token", () => {
    const t = parseLiveRead("net-tuning-live v2\n!owner a\n!record\n|net-tuning-converged v1\ta\t$(x)\to\n!end\n");
    expect(t.a.record?.token).toBe(NO_TOKEN);
  });
});

describe("drift and the repair token", () => {
  const web = () => parseLiveRead(ANSWER)["p.s.web-12345678"];
  test("drift = live differs from the record by the apply's comparator; unreadable keys are not drift", () => {
    expect(driftOf(web())).toEqual([{ key: "net.core.somaxconn", applied: "4096", live: "1234" }]);
  });
  test("no drift: the recorded token again (no change); drift: a new one, different for the same drift after a repair", () => {
    const clean: LiveSection = { ...web(), values: { ...web().values, "net.core.somaxconn": "4096" } };
    expect(repairToken(clean)).toBe("abc123");
    const t1 = repairToken(web());
    expect(t1).toMatch(/^[0-9a-f]{16}$/);
    expect(t1).not.toBe("abc123");
    expect(repairToken(web())).toBe(t1); // deterministic: preview and up agree
    const afterRepair: LiveSection = { ...web(), record: { ...web().record!, token: t1 } };
    expect(repairToken(afterRepair)).not.toBe(t1);
    // a record this user cannot read: none (the stored token is kept, components/live.ts)
    expect(repairToken({ recordState: "unreadable", values: {}, missing: [], unreadable: [], digests: {}, maxima: {}, drivers: {}, host: {}, unsupported: {}, shown: {}, absent: [], boot: [], bootUnreadable: [], refusals: [], warnings: [] })).toBe(NO_TOKEN);
  });
  test("no record (#32 item 3): 0 before any apply; a fresh token each read when the journal says it was applied here", () => {
    const none: LiveSection = { recordState: "none", values: {}, missing: [], unreadable: [], digests: {}, maxima: {}, drivers: {}, host: {}, unsupported: {}, shown: {}, absent: [], boot: [], bootUnreadable: [], refusals: [], warnings: [] };
    expect(repairToken(none)).toBe(NO_TOKEN);
    const gone: LiveSection = { ...none, recordState: "gone" };
    const [a, b] = [repairToken(gone), repairToken(gone)];
    expect([a, b]).toEqual([expect.stringMatching(/^[0-9a-f]{16}$/), expect.stringMatching(/^[0-9a-f]{16}$/)]);
    expect(a).not.toBe(b);
    expect(parseLiveRead("net-tuning-live v2\n!owner a\n!no-record journal\n!end\n").a.recordState).toBe("gone");
    expect(renderLive("r", "h:22", { changes: [], unchanged: [], onHost: [], unknown: [] }, [], "gone").info).toContain("the record of this resource's last apply is gone from the host");
  });
  test("the host converged to another plan than the declared one (#32 item 3): a fresh token each read; the same plan: none", () => {
    const clean: LiveSection = { ...web(), values: { ...web().values, "net.core.somaxconn": "4096" } };
    const withPlan: LiveSection = { ...clean, record: { ...clean.record!, plan: "a".repeat(64) } };
    expect(repairToken(withPlan, undefined, "a".repeat(64))).toBe("abc123");
    const other = repairToken(withPlan, undefined, "b".repeat(64));
    expect(other).toMatch(/^[0-9a-f]{16}$/);
    expect(other).not.toBe("abc123");
    // not derived from the record: a failed run stored the token derived from it, and must be retried
    expect(repairToken(withPlan, undefined, "b".repeat(64))).not.toBe(other);
    // a record of 0.3.0 or older has no plan line: taken as converged (an upgrade changes no token)
    expect(repairToken(clean, undefined, "b".repeat(64))).toBe("abc123");
  });
  test("the record's plan line is parsed", () => {
    const head = "|net-tuning-converged v1\tp.s.web-12345678\tabc123\tp/s/web";
    const text = ANSWER.replace(head, `${head}\n|plan\t${"c".repeat(64)}`);
    expect(text).not.toBe(ANSWER);
    expect(parseLiveRead(text)["p.s.web-12345678"].record!.plan).toBe("c".repeat(64));
  });
  test("a managed file edited or removed on the host is drift", () => {
    expect(driftOf({ ...web(), values: { "net.core.somaxconn": "4096" }, digests: { "/etc/sysctl.d/90-web.conf": "999 46" } })).toEqual([
      { key: "/etc/sysctl.d/90-web.conf", applied: "content of the last apply", live: "edited on the host" },
    ]);
    expect(driftOf({ ...web(), values: {}, digests: { "/etc/sysctl.d/90-web.conf": "-" } })[0].live).toBe("removed");
  });
  test("a managed file this user cannot read (digest ?) is not drift, nor is a record digest ?", () => {
    const unreadable = parseLiveRead(ANSWER.replace("digest\t/etc/sysctl.d/90-web.conf\t123 45", "digest\t/etc/sysctl.d/90-web.conf\t?"))["p.s.web-12345678"];
    expect(unreadable.digests["/etc/sysctl.d/90-web.conf"]).toBe("?");
    expect(driftOf({ ...unreadable, values: { "net.core.somaxconn": "4096" } })).toEqual([]);
    expect(driftOf({ ...web(), values: {}, record: { ...web().record!, files: { "/etc/sysctl.d/90-web.conf": "?" } }, digests: { "/etc/sysctl.d/90-web.conf": "1 2" } })).toEqual([]);
  });
  test("the token rides on the update's operation; 0 leaves the command as without live previews", () => {
    const plain = engineCommand("sysctl", "update", "198.18.0.2-12345678");
    expect(engineCommand("sysctl", "update", "198.18.0.2-12345678", undefined, false, "0")).toBe(plain);
    expect(engineCommand("sysctl", "update", "198.18.0.2-12345678", undefined, false, "abc123")).toBe(plain.replace(" apply-update ", " apply-update@abc123 "));
    expect(() => engineCommand("sysctl", "update", "198.18.0.2-12345678", undefined, false, "a;b")).toThrow(/invalid repair token/);
    expect(() => engineCommand("sysctl", "update", "a b;rm")).toThrow(/invalid delivery token/);
  });
});

test("renderLive: changes, host-resolved values, one summary line, unknowns; drift as a separate warning", () => {
  const s = parseLiveRead(ANSWER);
  const web = s["p.s.web-12345678"];
  const c = compareLive({ "net.core.somaxconn": "4096", "net.ipv4.tcp_rmem": "4096 131072   6291456", "net.core.rps_sock_flow_entries": "20000", "net.core.busy_poll": "50", "net.ipv4.tcp_fastopen_key": "x" }, web);
  const out = renderLive(`NetTuning "web"`, "h1:22", c, driftOf(web), web.recordState);
  expect(out.info.split("\n")).toEqual([
    `NetTuning "web" on h1:22: 1 of 5 settings will change (live → declared)`,
    "  net.core.somaxconn: 1234 → 4096",
    "  2 already as declared: net.core.rps_sock_flow_entries, net.ipv4.tcp_rmem",
    "  net.core.busy_poll: absent on this kernel",
    "  net.ipv4.tcp_fastopen_key: not readable by this user",
  ]);
  expect(out.warn?.split("\n")).toEqual([
    `NetTuning "web" on h1:22: drift since its last apply: 1 setting or file changed on the host; pulumi up puts the declared state back`,
    "  net.core.somaxconn: 4096 (last applied) → 1234 (on the host now)",
  ]);
  const nic = s["p.s.nic-87654321"];
  const n = renderLive(`NicQueues "nic"`, "h1:22", compareLive({ "eth0/txqueuelen": "1000", "eth0/rps.rx-*": "all", "eth0/ring.rx": "max", "eth0/irq.*": "spread" }, nic), [], nic.recordState);
  expect(n.info.split("\n")).toEqual([
    `NicQueues "nic" on h1:22: 0 of 5 settings will change (live → declared)`,
    "  eth0/ring.rx: 256 → max (resolved on the host)",
    "  eth0/rps.rx-0: 0 → all (resolved on the host)",
    "  eth0/rps.rx-1: 0 → all (resolved on the host)",
    "  1 already as declared: eth0/txqueuelen",
    "  eth0/irq.*: none on this host now",
  ]);
  expect(n.warn).toBeUndefined();
});

describe("renderLiveRead", () => {
  test("the requests in one quoted variable after the program's comment lines, then the program; keys and owner ids are checked", () => {
    const text = renderLiveRead([{ kind: "sysctl", ownerId: "p.s.web-1", keys: ["net.core.somaxconn", "net.core.somaxconn"] }, { kind: "nic", ownerId: "p.s.n-2", keys: ["eth0/rps.rx-*"] }]);
    const lines = text.split("\n");
    const program = liveProgram(false, false, false, false).split("\n");
    expect(lines.slice(0, LIVE_PROGRAM_HEAD)).toEqual(program.slice(0, LIVE_PROGRAM_HEAD));
    expect(program.slice(0, LIVE_PROGRAM_HEAD).every((l) => l.startsWith("# "))).toBe(true);
    expect(lines[LIVE_PROGRAM_HEAD]).toBe("NT_LIVE_REQ='sysctl\tp.s.web-1\tnet.core.somaxconn");
    expect(lines[LIVE_PROGRAM_HEAD + 1]).toBe("nic\tp.s.n-2\teth0/rps.rx-*'");
    expect(lines.slice(LIVE_PROGRAM_HEAD + 2).join("\n")).toBe(program.slice(LIVE_PROGRAM_HEAD).join("\n"));
    expect(() => renderLiveRead([{ kind: "sysctl", ownerId: "a b", keys: [] }])).toThrow(/invalid owner id/);
    expect(() => renderLiveRead([{ kind: "sysctl", ownerId: "a", keys: ["x'y"] }])).toThrow(/invalid key/);
  });
  test("the program passes shellcheck -s sh, with and without NicQueues' bootOverride scan", () => {
    const text = renderLiveRead([{ kind: "sysctl", ownerId: "p.s.web-1", keys: ["net.core.somaxconn"] }]);
    expect(() => execFileSync("shellcheck", ["-s", "sh", "-"], { input: text, encoding: "utf8" })).not.toThrow();
    const nic = renderLiveRead([{ kind: "nic", ownerId: "p.s.n-2", keys: ["eth0/txqueuelen"], iface: "eth0", nicChecks: { persistence: "systemd", label: "p/s/n", boot: "error" } }]);
    expect(nic).toMatch(/^nn_boot_scan\(\) \{/m);
    expect(() => execFileSync("shellcheck", ["-s", "sh", "-"], { input: nic, encoding: "utf8" })).not.toThrow();
  });
});

describe("the boot-order check and the interface facts (issue #32, preview equals up)", () => {
  test("request fields after the keys: sysctl's boot-order check (no secret values: the caller leaves them out), nic's interface; each checked", () => {
    const boot: LiveBootCheck = { file: "/etc/sysctl.d/90-web.conf", label: "p/s/web", adopt: ["/etc/sysctl.d/60-x.conf", "/etc/sysctl.conf"], want: { "net.ipv4.tcp_rmem": "4096 131072 6291456", "net.core.somaxconn": "4096" } };
    const text = renderLiveRead([{ kind: "sysctl", ownerId: "p.s.web-1", keys: ["net.core.somaxconn"], boot }, { kind: "nic", ownerId: "p.s.n-2", keys: ["eth0/txqueuelen"], iface: "eth0" }]);
    const lines = text.split("\n");
    expect(lines[LIVE_PROGRAM_HEAD]).toBe("NT_LIVE_REQ='sysctl\tp.s.web-1\tnet.core.somaxconn\t/etc/sysctl.d/90-web.conf\tp/s/web\t/etc/sysctl.d/60-x.conf;/etc/sysctl.conf\tnet.core.somaxconn=4096;net.ipv4.tcp_rmem=4096 131072 6291456");
    expect(lines[LIVE_PROGRAM_HEAD + 1]).toBe("nic\tp.s.n-2\teth0/txqueuelen\teth0'");
    const one = (b: Partial<typeof boot>) => () => renderLiveRead([{ kind: "sysctl", ownerId: "a", keys: [], boot: { ...boot, ...b } }]);
    expect(one({ file: "/etc/sysctl.d/../x.conf" })).toThrow(/invalid sysctl.d file/);
    expect(one({ label: "a\tb" })).toThrow(/invalid owner label/);
    expect(one({ adopt: ["/etc/x;y"] })).toThrow(/invalid adopted file/);
    expect(one({ want: { "net.core.somaxconn": "1;2" } })).toThrow(/invalid value/);
    expect(() => renderLiveRead([{ kind: "nic", ownerId: "a", keys: [], iface: "a b" }])).toThrow(/invalid interface/);
  });

  test("a secret value goes as the sha256 of its words as the host normalizes them; nic's RPS, IRQ and persistence fields, each checked", () => {
    // sysctl.sh nts_boot_conflicts: blanks and CRs as one space, none at either end (the same value in other blanks is no conflict)
    expect(secretWant(" 0123abcd-4567ef01 \t\r x ")).toBe(secretWant("0123abcd-4567ef01 x"));
    expect(secretWant("0123abcd-4567ef01 x")).toBe(`#sha256:${createHash("sha256").update("0123abcd-4567ef01 x").digest("hex")}`);
    const want = { "net.ipv4.tcp_fastopen_key": secretWant("0123abcd-4567ef01-89abcdef-01234567") };
    const boot: LiveBootCheck = { file: "/etc/sysctl.d/90-web.conf", label: "p/s/web", adopt: [], want };
    expect(renderLiveRead([{ kind: "sysctl", ownerId: "a", keys: [], boot }]).split("\n")[LIVE_PROGRAM_HEAD]).toContain(`net.ipv4.tcp_fastopen_key=${want["net.ipv4.tcp_fastopen_key"]}'`);
    const nic = (n: Record<string, unknown>) => renderLiveRead([{ kind: "nic", ownerId: "a", keys: [], iface: "eth0", nicChecks: n }]).split("\n")[LIVE_PROGRAM_HEAD];
    expect(nic({ rpsCpus: "0,2-3", irqCpus: "spread", sockFlow: true, persistence: "rc.local", label: "p/s/q" })).toBe("NT_LIVE_REQ='nic\ta\t\teth0\t0,2-3\tspread\t1\trc.local\tp/s/q'");
    expect(nic({ sockFlow: false, persistence: "auto", label: "p/s/q" })).toBe("NT_LIVE_REQ='nic\ta\t\teth0\t\t\t\tauto\tp/s/q'");
    // bootOverride's fields only when the check is on (and then the program carries the scan)
    expect(nic({ persistence: "auto", label: "p/s/q", boot: "warn", rpsOnlyBelow: true })).toBe("NT_LIVE_REQ='nic\ta\t\teth0\t\t\t\tauto\tp/s/q\twarn\t1'");
    expect(nic({ persistence: "systemd", label: "p/s/q", boot: "error" })).toBe("NT_LIVE_REQ='nic\ta\t\teth0\t\t\t\tsystemd\tp/s/q\terror\t'");
    expect(() => nic({ boot: "ignore" })).toThrow(/invalid bootOverride/);
    // adoptRcLocalLines: one entry a field, the last ones (a quote inside is the shell quoting's business)
    expect(nic({ persistence: "none", label: "p/s/q", adoptRc: ["0 ip link set dev eth0 txqueuelen 10000", "1 echo 'x' > /y"] })).toBe(
      "NT_LIVE_REQ='nic\ta\t\teth0\t\t\t\tnone\tp/s/q\t\t\t0 ip link set dev eth0 txqueuelen 10000\t1 echo '\"'\"'x'\"'\"' > /y'",
    );
    expect(() => nic({ adoptRc: ["x"] })).toThrow(/invalid adoptRcLocalLines entry/);
    expect(() => nic({ adoptRc: ["0 a\tb"] })).toThrow(/invalid adoptRcLocalLines entry/);
    const withScan = (n: Record<string, unknown>) => /^nn_boot_scan\(\) \{/m.test(renderLiveRead([{ kind: "nic", ownerId: "a", keys: [], iface: "eth0", nicChecks: n }]));
    expect([withScan({ persistence: "systemd", boot: "error" }), withScan({ persistence: "none", boot: "error" }), withScan({ persistence: "systemd" }), withScan({ persistence: "none", adoptRc: ["0 x"] })]).toEqual([true, false, false, true]);
    expect(() => nic({ rpsCpus: "0;1" })).toThrow(/invalid rps CPU list/);
    expect(() => nic({ irqCpus: "all" })).toThrow(/invalid IRQ CPU list/);
    expect(() => nic({ persistence: "cron" })).toThrow(/invalid persistence/);
    expect(() => nic({ label: "p/s/q\tx" })).toThrow(/invalid owner label/);
  });

  test("parsed: boot findings, a missing interface, no ethtool; refused in the host preflight's words", () => {
    const s = parseLiveRead([
      "net-tuning-live v2",
      "!owner a",
      "boot\tmask\tfileName 90-a.conf: /etc/sysctl.d/90-a.conf would mask /run/sysctl.d/90-a.conf (…)",
      "boot\toverride\tnet.core.somaxconn = 2222 is overridden at boot by /etc/sysctl.d/99-x.conf:1 which sets 777",
      "!owner n",
      "host\thostname\tweb1",
      "no-interface\teth9\teth0 lo",
      "!owner m",
      "host\thostname\tweb1",
      "no-ethtool",
      "!end",
    ].join("\n"));
    expect(s.a.boot.map((b) => b.kind)).toEqual(["mask", "override"]);
    expect(bootRefusal("override", s.a.boot[1].text)).toBe(
      'net.core.somaxconn = 2222 is overridden at boot by /etc/sysctl.d/99-x.conf:1 which sets 777: remove that line, adopt that file (NetTuning adopt), or set bootOverride to "warn" to accept it',
    );
    expect(nicRefusals({ "eth9/ring.rx": "512" }, s.n).map((x) => x.message)).toEqual(["interface eth9 does not exist on web1 (interfaces: eth0 lo): check the name"]);
    expect(nicRefusals({ "eth0/txqueuelen": "5000" }, s.m).map((x) => x.message)).toEqual(["ethtool is not installed on web1: install the ethtool package"]);
    expect(nicRefusals({ "eth0/txqueuelen": "5000" }, s.a)).toEqual([]);
  });
});

describe("liveProgram: the engine tree-shaken to the live read", () => {
  test("deterministic, cached, and a small part of the engine: no apply, restore or lock code", () => {
    const p = liveProgram(false, false, false, false);
    expect(liveProgram(false, false, false, false)).toBe(p);
    expect(createHash("sha256").update(p).digest("hex")).toBe(createHash("sha256").update(liveProgram(false, false, false, false)).digest("hex"));
    expect(Buffer.byteLength(p)).toBeLessThan(Buffer.byteLength(engine().text) / 7.5); // (1/8 until the read took the preflight's bootOverride, adoption and root-only checks, issue #32)
    // 18,468 bytes before the boot-order check and the interface/ethtool facts (issue #32 "Preview equals up"); +4,762:
    // sysctl.sh nts_boot_conflicts (the preflight's awk, shared), nts_boot_mask, nts_adopt_links, nts_live_boot, nic.sh
    // nn_live_iface and nn_ifaces, the request's extra fields in nt_live_main; +154: the shared awk's redaction of a
    // secret key's value in another file (23,422 bytes); +46: nt_cleanup stops the run's watchdog (issue #32: 23,468);
    // +415: the check compares a secret value by its sha256 and names the files the login user cannot read (23,883);
    // about +3,060: NicQueues' RPS and IRQ refusals (nic.sh nn_rps_refusals, nn_irq_refusals and what they call:
    // nn_irqs, nn_cpus_outside, nn_cpulist_expand, the five messages: 27,005); about +3,320: NicQueues' persistence
    // refusals (nn_persist_refusals, nn_boot_paths, nn_rc_scan, nn_is_ours and four messages: 30,321); +826: the
    // planned sysctl.d file's owner (nts_file_refusals, nts_is_ours, two messages: 31,147)
    // (+~950: the bootOverride check's request fields and classes in nn_live_iface, nn_boot_class, nn_live_boot_cb:
    // 32,126; its scan is in the other variant; +~810: the adoption check's part of nts_live_boot (which index, the
    // record): 32,938, nts_adopt_check itself is in the other variant; +~720: nn_live_iface reads NicQueues'
    // adoptRcLocalLines entries (33,660; nn_rc_adopt_check is in the other variant))
    expect(Buffer.byteLength(p)).toBeLessThan(18_468 + 4_800 + 700 + 3_300 + 3_500 + 900 + 1_000 + 900 + 800 + 200); // +~130: the root-only checks' gate in nn_live_iface (34,393)
    // with NicQueues' bootOverride scan (nic.sh nn_boot_scan and the awk programs it runs, nn_boot_findings; sent only
    // when a NicQueues of the read persists with the check on) and its adoptRcLocalLines check (nn_rc_adopt_check):
    // about +11,200 bytes
    const full = liveProgram(true, false, false, false);
    expect(full.length - liveProgram(false, false, false, false).length).toBeGreaterThan(5_000);
    // with NetTuning's adoption checks (sysctl.sh nts_adopt_check, sent only when a NetTuning of the read adopts files)
    expect(liveProgram(false, true, false, false).length - p.length).toBeGreaterThan(2_000);
    expect(liveProgram(false, true, false, false).length - p.length).toBeLessThan(5_000);
    expect(liveProgram(false, true, false, false)).toMatch(/^nts_adopt_check\(\) \{/m);
    expect(p).not.toMatch(/^nts_adopt_check\(\) \{/m);
    // with the check of other owners' journals (runtime.sh nt_owner_conflicts, nic.sh nn_other_owners; a read as root: NT_LIVE_ROOT=1)
    expect(liveProgram(false, false, true, false)).toMatch(/^nt_owner_conflicts\(\) \{/m);
    expect(p).not.toMatch(/^nt_owner_conflicts\(\) \{/m);
    expect(liveProgram(false, false, true, false).length - p.length).toBeLessThan(3_000); // 2,198 bytes; +~400 with the writability checks
    const asRoot = renderLiveRead([{ kind: "sysctl", ownerId: "a", keys: ["net.core.somaxconn"] }], { root: true }).split("\n");
    expect(asRoot[LIVE_PROGRAM_HEAD + 1]).toBe("NT_LIVE_ROOT=1");
    expect(renderLiveRead([{ kind: "sysctl", ownerId: "a", keys: ["net.core.somaxconn"] }])).not.toMatch(/^NT_LIVE_ROOT=/m);
    expect(Buffer.byteLength(full)).toBeLessThan(Buffer.byteLength(p) + 12_000);
    for (const f of ["nn_boot_scan", "nn_boot_findings", "nn_boot_cmds", "nn_boot_tuned"]) {
      expect(full).toMatch(new RegExp(`^${f}\\(\\) \\{`, "m"));
      expect(p).not.toMatch(new RegExp(`^${f}\\(\\) \\{`, "m"));
    }
    for (const f of ["nt_live_main", "nt_live_key", "nt_digest", "nt_norm", "nt_kind_sysctl", "nt_kind_nic"]) expect(p).toMatch(new RegExp(`^${f}\\(\\) \\{`, "m"));
    for (const f of ["nt_apply_main", "nt_restore_main", "nt_lock", "nt_commit", "nt_write_atomic", "kind_set", "nt_converged_write"]) expect(p).not.toMatch(new RegExp(`^${f}\\(\\) \\{`, "m"));
    expect(p.endsWith("\nnt_live_main\n")).toBe(true);
  });

  test("the same answer as the whole engine's `live` operation, under every supported shell (this machine's /proc/sys, lo, a fake record)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nt-liveprog-"));
    try {
      // a record (the answer echoes it and digests its files): the converged dir is a constant of the runtime, so the
      // record dir is swapped in both texts alike
      const conf = path.join(dir, "90-x.conf");
      fs.writeFileSync(conf, "net.core.somaxconn = 4096\n");
      fs.writeFileSync(path.join(dir, "a.b.c-1"), `net-tuning-converged v1\ta.b.c-1\t0\ta/b/c\nvalue\tnet.core.somaxconn\t4096\nfile\t${conf}\t1 2\n`);
      const req = [
        {
          kind: "sysctl" as const, ownerId: "a.b.c-1", keys: ["net.core.somaxconn", "net.ipv4.tcp_rmem", "net.core.nosuch_key", "net.ipv4.tcp_fastopen_key"],
          boot: { file: "/etc/sysctl.d/00-nt-unit.conf", label: "a/b/c", adopt: ["/etc/sysctl.d/zz-nt-unit.conf"], want: { "net.core.somaxconn": "4096", "net.ipv4.tcp_rmem": "4096 131072 6291456" } },
        },
        { kind: "nic" as const, ownerId: "a.b.d-2", keys: ["lo/txqueuelen", "lo/rps.rx-*", "lo/rfs.rx-*", "lo/feature.generic-receive-offload", "lo/channel.rx", "lo/ring.rx", "lo/coalesce.rx-usecs", "lo/irq.*", "net.core.rps_sock_flow_entries"], iface: "lo" },
        { kind: "nic" as const, ownerId: "a.b.e-3", keys: ["ntnosuch0/txqueuelen"], iface: "ntnosuch0" },
      ];
      const swap = (t: string) => t.split(CONVERGED_DIR).join(dir);
      const shaken = swap(renderLiveRead(req));
      // the whole engine with the same assignment (two requests: its two lines) before it
      const whole = swap(`${renderLiveRead(req).split("\n").slice(LIVE_PROGRAM_HEAD, LIVE_PROGRAM_HEAD + 3).join("\n")}\n${engine().text}`);
      expect(whole.startsWith("NT_LIVE_REQ='sysctl\ta.b.c-1\t") && whole.includes("\tntnosuch0'\n#!/bin/sh\n")).toBe(true);
      expect(shaken).not.toBe(whole);
      const answers = SHELLS.flatMap((sh) => [shaken, whole].map((input) => execShell(sh, ["-s", "live", "live"], { input, encoding: "utf8" })));
      for (const a of answers) expect(a).toBe(answers[0]);
      const s = parseLiveRead(answers[0]);
      expect(s["a.b.c-1"].recordState).toBe("ok");
      expect(s["a.b.c-1"].digests[conf]).toMatch(/^\d+ \d+$/);
      expect(s["a.b.d-2"].values["lo/txqueuelen"]).toMatch(/^\d+$/);
      // the interface facts: lo exists, ntnosuch0 does not (the host's interfaces listed), the host's name for both
      expect(s["a.b.d-2"].noInterface).toBeUndefined();
      expect(s["a.b.e-3"].noInterface).toEqual({ iface: "ntnosuch0", list: expect.stringMatching(/(^| )lo( |$)/) });
      expect(s["a.b.e-3"].host.hostname).toBe(os.hostname());
      expect(s["a.b.c-1"].boot).toEqual(s["a.b.c-1"].boot.filter((b) => b.kind === "override" && !b.text.includes("zz-nt-unit.conf")));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

test("the read program gives the same answer under every supported shell (read-only: this machine's /proc/sys and lo)", () => {
  const text = renderLiveRead([
    { kind: "sysctl", ownerId: "a.b.c-1", keys: ["net.core.somaxconn", "net.ipv4.tcp_rmem", "net.core.nosuch_key"] },
    { kind: "nic", ownerId: "a.b.d-2", keys: ["lo/txqueuelen", "lo/rps.rx-*"] },
  ]);
  const answers = SHELLS.map((sh) => execShell(sh, ["-s", "live", "live"], { input: text, encoding: "utf8" }));
  for (const a of answers) expect(a).toBe(answers[0]);
  const s = parseLiveRead(answers[0]);
  expect(s["a.b.c-1"].values["net.core.somaxconn"]).toMatch(/^\d+$/);
  expect(s["a.b.c-1"].missing).toEqual(["net.core.nosuch_key"]);
  expect(s["a.b.d-2"].values["lo/rps.rx-0"]).toMatch(/^[0-9a-f,]+$/);
  expect(s["a.b.d-2"].recordState).toBe("none");
});

test("an IRQ or RPS setting declared as CPU numbers is shown as the live mask and the declared CPUs, not as a number change", () => {
  const c = { changes: [], unchanged: [], unknown: [], onHost: [{ key: "eth0/irq.24", live: "1", declared: "0" }, { key: "eth0/rps.rx-0", live: "0", declared: "all" }] };
  const { info } = renderLive("NicQueues \"q\"", "h:22", c, [], "ok");
  expect(info).toContain("  eth0/irq.24: mask 1 → CPUs 0 (resolved on the host)");
  expect(info).toContain("  eth0/rps.rx-0: 0 → all (resolved on the host)");
});

describe("kernel modules the settings need (issue #32: the preview refuses what up refuses)", () => {
  const CC = "net.ipv4.tcp_congestion_control";
  const CT = "net.netfilter.nf_conntrack_tcp_timeout_established";
  const boot = (want: Record<string, string>): LiveBootCheck => ({ file: "/etc/sysctl.d/90-web.conf", label: "p/s/web", adopt: [], want });

  test("requestModules: the request's own list, else what the catalogue says of its keys and the boot-order check's values (not a secret's)", () => {
    expect(requestModules({ kind: "sysctl", ownerId: "a", keys: [CT, "net.core.somaxconn"] })).toEqual(["nf_conntrack"]);
    // a congestion control's module depends on its value: known from the boot-order check's declared values only
    expect(requestModules({ kind: "sysctl", ownerId: "a", keys: [CC] })).toEqual([]);
    expect(requestModules({ kind: "sysctl", ownerId: "a", keys: [CC, CT], boot: boot({ [CC]: "bbr", [CT]: "600" }) })).toEqual(["nf_conntrack", "tcp_bbr"]);
    expect(requestModules({ kind: "sysctl", ownerId: "a", keys: [CC], boot: boot({ [CC]: "cubic" }) })).toEqual([]); // built in
    expect(requestModules({ kind: "sysctl", ownerId: "a", keys: [CC], boot: boot({ [CC]: secretWant("bbr") }) })).toEqual([]);
    // the plan's modules (SysctlPlan.modules, passed by NetTuning), when the caller gives them
    expect(requestModules({ kind: "sysctl", ownerId: "a", keys: [CC], modules: ["tcp_htcp", "tcp_htcp"] })).toEqual(["tcp_htcp"]);
    expect(requestModules({ kind: "nic", ownerId: "a", keys: [CT], modules: ["x"] })).toEqual([]);
    expect(() => requestModules({ kind: "sysctl", ownerId: "a", keys: [], modules: ["../x"] })).toThrow(/invalid kernel module/);
  });

  test("the request's last field, with or without the boot-order check's; the dry run is in the program only then", () => {
    const line = (r: Parameters<typeof renderLiveRead>[0][0]) => renderLiveRead([r]).split("\n")[LIVE_PROGRAM_HEAD];
    expect(line({ kind: "sysctl", ownerId: "a", keys: [CT] })).toBe(`NT_LIVE_REQ='sysctl\ta\t${CT}\t\t\t\t\tnf_conntrack'`);
    expect(line({ kind: "sysctl", ownerId: "a", keys: [CC], boot: boot({ [CC]: "bbr" }) })).toBe(`NT_LIVE_REQ='sysctl\ta\t${CC}\t/etc/sysctl.d/90-web.conf\tp/s/web\t\t${CC}=bbr\ttcp_bbr'`);
    expect(line({ kind: "sysctl", ownerId: "a", keys: ["net.core.somaxconn"], boot: boot({}) })).toBe("NT_LIVE_REQ='sysctl\ta\tnet.core.somaxconn\t/etc/sysctl.d/90-web.conf\tp/s/web\t\t'");
    const has = (t: string) => /^nts_live_modules\(\) \{/m.test(t);
    expect(has(renderLiveRead([{ kind: "sysctl", ownerId: "a", keys: [CT] }]))).toBe(true);
    expect(has(renderLiveRead([{ kind: "sysctl", ownerId: "a", keys: ["net.core.somaxconn"] }]))).toBe(false);
    // measured: 1,054 bytes of program (nts_live_modules, nts_module_present: a congestion control the kernel offers needs no module, nts_modprobe, nts_msg_module; the call in nts_live_boot is in both)
    const extra = liveProgram(false, false, false, true).length - liveProgram(false, false, false, false).length;
    expect(extra).toBeGreaterThan(400);
    expect(extra).toBeLessThan(1_100);
    expect(() => execFileSync("shellcheck", ["-s", "sh", "-"], { input: renderLiveRead([{ kind: "sysctl", ownerId: "a", keys: [CT] }]), encoding: "utf8" })).not.toThrow();
  });

  /**
   * The read under each shell with `modprobe` as a shell function (it comes before PATH): it answers as kmod, busybox
   * and an unreadable module tree would, and notes every call; the read asks only `-D` (a dry run) and refuses in the
   * preflight's words (provider/host/messages.ts MODULE_UNLOADABLE) only when modprobe itself says the module cannot
   * be loaded; a loaded module (/sys/module/M) is not asked about.
   */
  test("the read's dry run: modprobe's refusal in the preflight's words; a check it cannot make says nothing; a loaded module is not asked", () => {
    const loaded = fs.readdirSync("/sys/module").find((m) => /^[a-z0-9_]+$/.test(m))!;
    const MODPROBE = [
      "exec 5>&2", // (the read's stderr: the test's record of the calls; modprobe's own stderr is what the read captures)
      "modprobe() {",
      "  echo \"modprobe $*\" >&5",
      "  case $2 in",
      "    tcp_gone) echo \"modprobe: FATAL: Module tcp_gone not found in directory /lib/modules/x\" >&2; echo \"second line\" >&2; return 1 ;;",
      "    tcp_ok) echo \"insmod /lib/modules/x/tcp_ok.ko\"; return 0 ;;",
      "    tcp_builtin) echo \"builtin tcp_builtin\"; return 0 ;;",
      "    tcp_old) echo \"modprobe: invalid option -- 'D'\" >&2; echo \"BusyBox v1.22 multi-call binary.\" >&2; echo \"Usage: modprobe [-alrqvsb] MODULE\" >&2; return 1 ;;",
      "    tcp_bbx) echo \"modprobe: module tcp_bbx not found in modules.dep\" >&2; return 1 ;;",
      "    tcp_denied) echo \"modprobe: FATAL: could not load /lib/modules/x/modules.dep: Permission denied\" >&2; return 1 ;;",
      "    tcp_quiet) return 1 ;;",
      "    tcp_none) return 127 ;;",
      "  esac",
      "  return 1",
      "}",
    ].join("\n");
    const modules = [loaded, "tcp_gone", "tcp_ok", "tcp_builtin", "tcp_old", "tcp_bbx", "tcp_denied", "tcp_quiet", "tcp_none"];
    const text = renderLiveRead([{ kind: "sysctl", ownerId: "a.b.c-1", keys: ["net.core.somaxconn"], modules }]).split("\n");
    const input = [...text.slice(0, LIVE_PROGRAM_HEAD + 1), MODPROBE, ...text.slice(LIVE_PROGRAM_HEAD + 1)].join("\n");
    const runs = SHELLS.map((sh) => spawnShell(sh, ["-s", "live", "live"], { input }));
    for (const r of runs) expect([r.status, r.stdout, r.stderr]).toEqual([0, runs[0].stdout, runs[0].stderr]);
    // only dry runs, of every module not loaded, in the request's order (sorted)
    expect(runs[0].stderr.trim().split("\n")).toEqual(modules.slice(1).sort().map((m) => `modprobe -D ${m}`));
    const said = (m: string, s: string) => MODULE_UNLOADABLE.text({ module: m, said: s });
    expect(parseLiveRead(runs[0].stdout)["a.b.c-1"].refusals).toEqual([
      said("tcp_bbx", "modprobe: module tcp_bbx not found in modules.dep"),
      said("tcp_gone", "modprobe: FATAL: Module tcp_gone not found in directory /lib/modules/x; second line"),
      said("tcp_quiet", "modprobe failed"),
    ]);
  });
});
