/**
 * Issue #32 item 11: the live read reports what the host preflight checks for rings and channels (the driver's pre-set
 * maximums, `max<TAB>key<TAB>value`, and the driver, `driver<TAB>IF<TAB>name`) and, after sysctl keys this kernel
 * lacks, the host facts its refusal names (`host<TAB>kernel|netns<TAB>value`); the refusals are written once
 * (provider/host/messages.ts) and the host's sh functions generated from them give the same text.
 */
import { execFileSync, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parseLiveRead, renderLiveRead } from "../../provider/live/read";
import {
  camel, CHILD_NETNS_NOTE, COALESCE_DRIVER_RANGES, COALESCE_DRIVER_REFUSES, COALESCE_FIELD_UNSUPPORTED, COALESCE_UNSUPPORTED, coalesceDriverRefuses, FEATURE_ABSENT,
  FEATURE_FIXED, FEATURES_UNREADABLE, HOST_WIDE_FIX, keysAbsentRefusal, LIMIT_EXCEEDED, LIMIT_FIELD_UNSUPPORTED, LIMIT_GROUP_UNSUPPORTED, nicLimitRefusal, NicReadFacts,
  nicRefusals, OR_MAX,
} from "../../provider/host/messages";
import { absenceHint, isHostWide } from "../../provider/sysctl/catalogue";
import { execShell, SHELLS } from "../../testkit/shells";

const SH = path.resolve(__dirname, "../../provider/host/sh");

describe("parseLiveRead: the lines added to v2", () => {
  const answer = [
    "net-tuning-live v2",
    "!owner q",
    "!no-record",
    "driver\teth0\tixgbe",
    "value\teth0/ring.rx\t512",
    "max\teth0/ring.rx\t4096",
    "unreadable\teth0/ring.rx-mini",
    "max\teth0/ring.rx-mini\tn/a",
    "max\teth0/ring.rx-jumbo\t",
    "some-future-line\twhatever",
    "!owner f",
    "!no-record",
    "unsupported\teth1\tring\tnetlink error: Operation not supported",
    "unsupported\teth1\tcoalesce\tCannot get device coalesce settings:\tOperation not supported",
    "value\teth0/feature.large-receive-offload\toff",
    "shown\teth0/feature.large-receive-offload\toff [fixed]",
    "shown\teth0/coalesce.rx-usecs\tn/a",
    "unreadable\teth0/feature.zz",
    "absent\teth0/feature.zz",
    "!owner s",
    "!no-record",
    "missing\tnet.core.netdev_max_backlog",
    "host\tkernel\t6.1.0-21-amd64",
    "host\tnetns\t1",
    "!end",
  ].join("\n");
  const s = parseLiveRead(answer);
  test("maxima by key (n/a and empty kept), the driver by interface, host facts; unknown line types ignored", () => {
    expect(s.q.maxima).toEqual({ "eth0/ring.rx": "4096", "eth0/ring.rx-mini": "n/a", "eth0/ring.rx-jumbo": "" });
    expect(s.q.drivers).toEqual({ eth0: "ixgbe" });
    expect(s.q.values).toEqual({ "eth0/ring.rx": "512" });
    expect(s.q.unreadable).toEqual(["eth0/ring.rx-mini"]);
    expect(s.s.host).toEqual({ kernel: "6.1.0-21-amd64", netns: "1" });
    expect(s.s.maxima).toEqual({});
  });
  test("groups ethtool could not read (with what it said, tabs kept), what ethtool shows for features and coalescing, absent keys", () => {
    expect(s.f.unsupported).toEqual({ "eth1/ring": "netlink error: Operation not supported", "eth1/coalesce": "Cannot get device coalesce settings:\tOperation not supported" });
    expect(s.f.shown).toEqual({ "eth0/feature.large-receive-offload": "off [fixed]", "eth0/coalesce.rx-usecs": "n/a" });
    expect(s.f.absent).toEqual(["eth0/feature.zz"]);
    expect(s.f.unreadable).toEqual(["eth0/feature.zz"]);
    expect(s.f.values).toEqual({ "eth0/feature.large-receive-offload": "off" });
    expect(s.q).toMatchObject({ unsupported: {}, shown: {}, absent: [] });
  });
  test("an answer without the new lines (an older read) parses with empty maxima, drivers and host facts", () => {
    const old = parseLiveRead("net-tuning-live v2\n!owner q\n!no-record\nvalue\teth0/ring.rx\t512\n!end\n");
    expect(old.q).toMatchObject({ maxima: {}, drivers: {}, host: {}, unsupported: {}, shown: {}, absent: [] });
  });
});

describe("nicLimitRefusal: the preflight's nn_check_limits", () => {
  const f = { cur: "512", max: "4096", driver: "ixgbe" };
  test("within, equal to the maximum, or \"max\": no refusal", () => {
    expect(nicLimitRefusal("ring", "rings.rx", "rx", "eth0", "2048", f)).toBeUndefined();
    expect(nicLimitRefusal("ring", "rings.rx", "rx", "eth0", "4096", f)).toBeUndefined();
    expect(nicLimitRefusal("ring", "rings.rx", "rx", "eth0", "max", f)).toBeUndefined();
  });
  test("above: the message names value, maximum, driver and the ethtool option; rings also offer \"max\"", () => {
    expect(nicLimitRefusal("ring", "rings.rx", "rx", "eth0", "8192", f)).toBe('rings.rx 8192 exceeds eth0 maximum 4096 (driver ixgbe, ethtool -g eth0); use at most 4096 or "max"');
    expect(nicLimitRefusal("channel", "channels.combined", "combined", "eth0", "64", { cur: "8", max: "16", driver: "ixgbe" })).toBe(
      "channels.combined 64 exceeds eth0 maximum 16 (driver ixgbe, ethtool -l eth0); use at most 16",
    );
  });
  test("a ring or channel the driver does not report (n/a, absent, 0 and 0): not supported, even as \"max\"", () => {
    const msg = "rings.rxMini is not supported by eth0 (driver ixgbe: ethtool -g shows no rx-mini ring parameters); remove it";
    for (const x of [{ cur: "", max: "n/a" }, { cur: "", max: "" }, { cur: "0", max: "0" }, { cur: "n/a", max: "2048" }]) {
      expect(nicLimitRefusal("ring", "rings.rxMini", "rx-mini", "eth0", "max", { ...x, driver: "ixgbe" })).toBe(msg);
    }
    expect(nicLimitRefusal("channel", "channels.combined", "combined", "eth0", "2", { cur: "0", max: "4", driver: "veth" })).toBeUndefined();
  });
});

describe("nicRefusals: the preflight's nn_check_limits, nn_check_features and nn_check_coalesce from the read", () => {
  const facts = (x: Partial<NicReadFacts>): NicReadFacts => ({ values: {}, maxima: {}, drivers: { eth0: "veth" }, unsupported: {}, shown: {}, absent: [], ...x });
  const said = "netlink error: Operation not supported";
  test("a group ethtool cannot read: ONE refusal per interface and group, whatever the keys (\"max\" too), in the preflight's group order", () => {
    const declared = { "eth0/coalesce.rx-usecs": "50", "eth0/feature.generic-receive-offload": "on", "eth0/ring.rx": "max", "eth0/ring.tx": "512", "eth0/channel.rx": "2", "eth0/coalesce.tx-usecs": "50" };
    const f = facts({ unsupported: { "eth0/ring": said, "eth0/channel": said, "eth0/feature": said, "eth0/coalesce": said } });
    expect(nicRefusals(declared, f).map((x) => x.message)).toEqual([
      LIMIT_GROUP_UNSUPPORTED.text({ arg: "channels", iface: "eth0", driver: "veth", what: "channels", option: "-l", said }),
      `rings cannot be changed: eth0 (driver veth) does not support ring parameters (ethtool -g eth0 says: ${said}); remove rings`,
      `features cannot be read on eth0 (ethtool -k eth0 says: ${said})`,
      `coalesce: interrupt coalescing is not supported by eth0 (driver veth; ethtool -c eth0 says: ${said}); remove coalesce`,
    ]);
    // another interface's failure says nothing about this one
    expect(nicRefusals({ "eth0/ring.rx": "512" }, facts({ unsupported: { "eth1/ring": said } }))).toEqual([]);
  });
  test("features: a name ethtool -k does not list; [fixed] at the other value refused, at the same value passes; a changeable one passes", () => {
    const f = facts({
      absent: ["eth0/feature.zz-nope"],
      shown: { "eth0/feature.large-receive-offload": "off [fixed]", "eth0/feature.ntuple-filters": "off [fixed]", "eth0/feature.generic-receive-offload": "off" },
    });
    const declared = { "eth0/feature.generic-receive-offload": "on", "eth0/feature.large-receive-offload": "on", "eth0/feature.ntuple-filters": "off", "eth0/feature.zz-nope": "off" };
    expect(nicRefusals(declared, f).map((x) => x.message)).toEqual([
      "features: large-receive-offload is [fixed] off on eth0 (driver veth): it cannot be turned on; remove it",
      "features: zz-nope does not exist on eth0 (driver veth; ethtool -k eth0 lists the features); check the name",
    ]);
    expect(nicRefusals({ "eth0/feature.generic-receive-offload": "on" }, f)).toEqual([]);
  });
  test("coalescing: a parameter shown as n/a or not at all; e1000e/igb values those drivers refuse; supported values pass", () => {
    const f = facts({ drivers: { eth0: "e1000e" }, absent: ["eth0/coalesce.rx-frames-low"], shown: { "eth0/coalesce.rx-usecs": "3", "eth0/coalesce.tx-usecs": "n/a", "eth0/coalesce.adaptive-rx": "off" } });
    expect(nicRefusals({ "eth0/coalesce.rx-frames-low": "8", "eth0/coalesce.tx-usecs": "50", "eth0/coalesce.rx-usecs": "5", "eth0/coalesce.adaptive-rx": "on" }, f).map((x) => x.message)).toEqual([
      "coalesce.rxFramesLow (rx-frames-low) is not supported by eth0 (driver e1000e; ethtool -c eth0 shows it as absent); remove it",
      "coalesce.txUsecs (tx-usecs) is not supported by eth0 (driver e1000e; ethtool -c eth0 shows it as n/a); remove it",
      "coalesce.rxUsecs 5 is refused by the e1000e driver of eth0: it accepts 0, 1, 3, 4 (0 off, 1, 3 and 4 dynamic modes) or 10-10000 microseconds; use 10 or more",
    ]);
    expect(nicRefusals({ "eth0/coalesce.rx-usecs": "4", "eth0/coalesce.adaptive-rx": "on" }, f)).toEqual([]);
    expect(nicRefusals({ "eth0/coalesce.rx-usecs": "4" }, facts({ drivers: { eth0: "igb" }, shown: { "eth0/coalesce.rx-usecs": "3" } })).map((x) => x.message)).toEqual([
      "coalesce.rxUsecs 4 is refused by the igb driver of eth0: it accepts 0, 1, 3 (0 off, 1 and 3 dynamic modes) or 10-10000 microseconds; use 10 or more",
    ]);
    // the argument each refusal is about, as the engine shows it beside the argument
    expect(nicRefusals({ "eth0/coalesce.rx-usecs": "4" }, facts({ drivers: { eth0: "igb" }, shown: { "eth0/coalesce.rx-usecs": "3" } })).map((x) => x.path)).toEqual(["coalesce.rxUsecs"]);
  });
  test("an older read (none of the new lines) or a key the read did not report on: nothing refused (left to the host)", () => {
    const declared = { "eth0/ring.rx": "9999", "eth0/feature.large-receive-offload": "on", "eth0/feature.zz": "on", "eth0/coalesce.rx-usecs": "5" };
    expect(nicRefusals(declared, facts({ drivers: { eth0: "e1000e" }, values: { "eth0/feature.large-receive-offload": "off" } }))).toEqual([]);
  });
  test("camel is the host's nn_camel", () => {
    expect(["rx-usecs", "rx-frames-low", "combined", "rx-mini", "stats-block-usecs"].map(camel)).toEqual(["rxUsecs", "rxFramesLow", "combined", "rxMini", "statsBlockUsecs"]);
  });
});

describe("one text: the host's generated sh functions give the TypeScript messages, under every shell", () => {
  /** Runs `call` after sourcing the generated spec files; prints the variable. */
  function sh(shell: (typeof SHELLS)[number], call: string, variable: string): string {
    const script = `. ${SH}/nicspec.sh; . ${SH}/sysctlspec.sh; ${call}; printf '%s' "$${variable}"`;
    return execShell(shell, ["-c", script], { encoding: "utf8" });
  }
  test.each(SHELLS)("%s", (shell) => {
    expect(sh(shell, `nn_limit_group ring; nn_msg_exceeds rings.rx 8192 eth0 4096 ixgbe "$NN_LG_OPT" "$NN_LG_ORMAX"`, "NN_MSG")).toBe(
      LIMIT_EXCEEDED.text({ setting: "rings.rx", value: "8192", iface: "eth0", max: "4096", driver: "ixgbe", option: "-g", orMax: OR_MAX }),
    );
    expect(sh(shell, `nn_limit_group channel; nn_msg_exceeds channels.rx 8 eth0 4 veth "$NN_LG_OPT" "$NN_LG_ORMAX"`, "NN_MSG")).toBe(
      nicLimitRefusal("channel", "channels.rx", "rx", "eth0", "8", { cur: "4", max: "4", driver: "veth" }),
    );
    expect(sh(shell, `nn_limit_group ring; nn_msg_nofield rings.rxJumbo eth0 ixgbe "$NN_LG_OPT" rx-jumbo "$NN_LG_WHAT"`, "NN_MSG")).toBe(
      LIMIT_FIELD_UNSUPPORTED.text({ setting: "rings.rxJumbo", iface: "eth0", driver: "ixgbe", option: "-g", name: "rx-jumbo", what: "ring parameters" }),
    );
    expect(sh(shell, `nn_limit_group ring; nn_msg_nogroup "$NN_LG_ARG" eth0 veth "$NN_LG_WHAT" "$NN_LG_OPT" 'netlink error: Operation not supported'`, "NN_MSG")).toBe(
      LIMIT_GROUP_UNSUPPORTED.text({ arg: "rings", iface: "eth0", driver: "veth", what: "ring parameters", option: "-g", said: "netlink error: Operation not supported" }),
    );
    const nic = (call: string) => sh(shell, call, "NN_MSG");
    expect(nic("nn_msg_features_unreadable eth0 'netlink error: x'")).toBe(FEATURES_UNREADABLE.text({ iface: "eth0", said: "netlink error: x" }));
    expect(nic("nn_msg_feature_absent zz eth0 veth")).toBe(FEATURE_ABSENT.text({ name: "zz", iface: "eth0", driver: "veth" }));
    expect(nic("nn_msg_feature_fixed large-receive-offload off eth0 veth on")).toBe(FEATURE_FIXED.text({ name: "large-receive-offload", cur: "off", iface: "eth0", driver: "veth", want: "on" }));
    expect(nic("nn_msg_coalesce_none eth0 veth 'netlink error: x'")).toBe(COALESCE_UNSUPPORTED.text({ iface: "eth0", driver: "veth", said: "netlink error: x" }));
    expect(nic("nn_msg_coalesce_nofield coalesce.txUsecs tx-usecs eth0 igb n/a")).toBe(COALESCE_FIELD_UNSUPPORTED.text({ setting: "coalesce.txUsecs", name: "tx-usecs", iface: "eth0", driver: "igb", shown: "n/a" }));
    expect(nic("nn_msg_coalesce_range coalesce.rxUsecs 5 e1000e eth0 'A B'")).toBe(COALESCE_DRIVER_REFUSES.text({ setting: "coalesce.rxUsecs", value: "5", driver: "e1000e", iface: "eth0", accepts: "A B" }));
    // the driver ranges: the same verdict for every value around their edges, per driver and parameter
    const cases = Object.keys(COALESCE_DRIVER_RANGES).flatMap((d) => ["rx-usecs", "tx-usecs", "rx-frames"].flatMap((n) => [0, 1, 2, 3, 4, 5, 9, 10, 10000, 10001, 4294967295].map((v) => [d, n, String(v)])));
    cases.push(["veth", "rx-usecs", "5"]);
    const got = sh(shell, `for c in ${cases.map((c) => `'${c.join(":")}'`).join(" ")}; do IFS=:; set -- $c; IFS=' '; nn_coalesce_range "$1" "$2" "$3"; printf '%s\\n' "$NN_ACCEPTS"; done`, "NN_MSG");
    expect(got.split("\n").slice(0, -1)).toEqual(cases.map(([d, n, v]) => coalesceDriverRefuses(d, n, v) ?? ""));
    // refused: e1000e 2, 5, 9, 10001, 4294967295; igb also 4; for rx-usecs and tx-usecs only
    expect(cases.filter(([d, n, v]) => coalesceDriverRefuses(d, n, v)).length).toBe((5 + 6) * 2);
    // sysctl.sh's loop: nts_hint + nts_msg_item per key, joined by NTS_MSG_SEP; the host-wide fix when a key is host-wide
    const keys = ["net.core.netdev_max_backlog", "net.core.zz_typo", "net.ipv4.tcp_autocorking"];
    const loop =
      `l=''; f=''; for k in ${keys.join(" ")}; do nts_hint "$k"; nts_msg_item "$k" "$NTS_HINT"; l=\${l:+$l$NTS_MSG_SEP}$NTS_ITEM; ` +
      `[ "$NTS_HOSTWIDE" = 1 ] && f=$NTS_MSG_HOSTWIDE; done; nts_msg_absent 6.1.0-21-amd64 "$NTS_MSG_NETNS" "$l" "$f"`;
    const ts = keysAbsentRefusal(keys, absenceHint, isHostWide, "6.1.0-21-amd64", true);
    expect(sh(shell, loop, "NTS_MSG")).toBe(ts);
    expect(ts).toBe(
      `these keys do not exist on this kernel (6.1.0-21-amd64${CHILD_NETNS_NOTE}): net.core.netdev_max_backlog (host-wide: absent inside a network namespace or container); ` +
        `net.core.zz_typo; net.ipv4.tcp_autocorking (added in Linux 3.14) — check the spelling, the kernel version, or load the module that provides them${HOST_WIDE_FIX}`,
    );
    // no host-wide key, not a namespace: neither the note nor the fix
    expect(sh(shell, `nts_hint net.core.zz_typo; f=''; [ "$NTS_HOSTWIDE" = 1 ] && f=x; nts_msg_absent 5.10.0 '' net.core.zz_typo "$f"`, "NTS_MSG")).toBe(
      keysAbsentRefusal(["net.core.zz_typo"], absenceHint, isHostWide, "5.10.0", false),
    );
  });
});

/** Interfaces of this machine whose `ethtool -g` shows numeric pre-set maximums (a virtio_net or real NIC; read only). */
function ringNics(): string[] {
  return fs.readdirSync("/sys/class/net").filter((i) => {
    const r = spawnSync("ethtool", ["-g", i], { encoding: "utf8" });
    return r.status === 0 && /Pre-set maximums:\n(?:.*\n)*?RX:\s+\d+/.test(r.stdout);
  });
}

describe("the read program on this machine's own interfaces (read only)", () => {
  const nics = ringNics();
  const ring = nics[0];
  (ring ? test : test.skip)(`${ring ?? "(no NIC here reports ring maxima)"}: value and max as ethtool -g shows them, under every shell`, () => {
    const g = execFileSync("ethtool", ["-g", ring], { encoding: "utf8" });
    const [maxPart, curPart] = g.split("Current hardware settings:");
    const field = (t: string, name: string) => new RegExp(`^${name}:\\s+(\\S+)`, "m").exec(t)?.[1];
    const keys = [`${ring}/ring.rx`, `${ring}/ring.tx`, `${ring}/ring.rx-mini`];
    const text = renderLiveRead([{ kind: "nic", ownerId: "a.b.c-1", keys }]);
    const answers = SHELLS.map((sh) => execShell(sh, ["-s", "live", "live"], { input: text, encoding: "utf8" }));
    for (const a of answers) expect(a).toBe(answers[0]);
    const s = parseLiveRead(answers[0])["a.b.c-1"];
    expect(s.maxima[`${ring}/ring.rx`]).toBe(field(maxPart, "RX"));
    expect(s.maxima[`${ring}/ring.tx`]).toBe(field(maxPart, "TX"));
    expect(s.values[`${ring}/ring.rx`]).toBe(field(curPart, "RX"));
    expect(s.maxima[`${ring}/ring.rx-mini`]).toBe(field(maxPart, "RX Mini") ?? "");
    expect(s.drivers[ring]).toBe(/^driver:\s+(\S+)/m.exec(execFileSync("ethtool", ["-i", ring], { encoding: "utf8" }))?.[1]);
  });

  /** The read's answer for `keys` (one nic resource) under every shell, checked identical; `before`: sh run first. */
  const readAll = (keys: string[], before = "") => {
    const text = before + renderLiveRead([{ kind: "nic", ownerId: "a.b.c-1", keys }]);
    const answers = SHELLS.map((sh) => execShell(sh, ["-s", "live", "live"], { input: text, encoding: "utf8" }));
    for (const a of answers) expect(a).toBe(answers[0]);
    return { answer: answers[0], section: parseLiveRead(answers[0])["a.b.c-1"] };
  };

  test("features and coalescing: what ethtool -k / -c shows, a name it does not list absent, under every shell", () => {
    const k = execFileSync("ethtool", ["-k", "lo"], { encoding: "utf8" });
    const fixed = /^(\S+): (on|off) \[fixed\]$/m.exec(k)!;
    const free = /^(\S+): (on|off)$/m.exec(k)!;
    const { section } = readAll([`lo/feature.${fixed[1]}`, `lo/feature.${free[1]}`, "lo/feature.zz-no-such"]);
    expect(section.shown).toEqual({ [`lo/feature.${fixed[1]}`]: `${fixed[2]} [fixed]`, [`lo/feature.${free[1]}`]: free[2] });
    expect(section.values).toEqual({ [`lo/feature.${fixed[1]}`]: fixed[2], [`lo/feature.${free[1]}`]: free[2] });
    expect(section.absent).toEqual(["lo/feature.zz-no-such"]);
    expect(section.unreadable).toEqual(["lo/feature.zz-no-such"]);
    // ([fixed] → the driver, which a refusal names; lo has none: "unknown", as the preflight's nn_driver says)
    expect(section.drivers).toEqual({ lo: /^driver:\s+(\S+)/m.exec(spawnSync("ethtool", ["-i", "lo"], { encoding: "utf8" }).stdout)?.[1] ?? "unknown" });
  });

  test("an ethtool that fails: the group is reported once with what it said on stderr (lines joined, as nn_said), its keys unreadable; not for an interface that does not exist", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nt-livelimits-"));
    try {
      fs.writeFileSync(path.join(dir, "ethtool"), [
        "#!/bin/sh",
        'case "$1" in',
        '  -g) echo "Ring parameters for $2:"; printf \'netlink error: Operation not supported\\nsecond  line  \\n\' >&2; exit 1 ;;',
        '  -k) printf \'Features for %s:\\nrx-checksumming: on [fixed]\\ngeneric-receive-offload: off\\n\' "$2"; echo "a warning on stderr" >&2; exit 0 ;;',
        '  -c) printf \'Coalesce parameters for %s:\\nAdaptive RX: off  TX: n/a\\nrx-usecs: 3\\ntx-usecs: n/a\\n\' "$2"; exit 0 ;;',
        "  -i) printf 'driver: fakedrv\\nversion: 1\\n' ;;",
        "esac",
        "",
      ].join("\n"), { mode: 0o755 });
      const keys = ["lo/ring.rx", "lo/ring.tx", "lo/feature.rx-checksumming", "lo/feature.generic-receive-offload", "lo/coalesce.rx-usecs", "lo/coalesce.tx-usecs", "lo/coalesce.rx-frames", "zz0nope/ring.rx"];
      // (the program puts the system's directories first in PATH: a function stands in for the command)
      const { answer, section } = readAll(keys, `ethtool() { ${dir}/ethtool "$@"; }\n`);
      expect(answer.split("\n").filter((l) => l.startsWith("unsupported\t"))).toEqual(["unsupported\tlo\tring\tnetlink error: Operation not supported second  line"]);
      expect(section.unsupported).toEqual({ "lo/ring": "netlink error: Operation not supported second  line" });
      expect(section.unreadable.sort()).toEqual(["lo/coalesce.rx-frames", "lo/coalesce.tx-usecs", "lo/ring.rx", "lo/ring.tx", "zz0nope/ring.rx"]);
      expect(section.shown).toEqual({ "lo/feature.rx-checksumming": "on [fixed]", "lo/feature.generic-receive-offload": "off", "lo/coalesce.rx-usecs": "3", "lo/coalesce.tx-usecs": "n/a" });
      expect(section.absent).toEqual(["lo/coalesce.rx-frames"]);
      expect(section.drivers).toEqual({ lo: "fakedrv" });
      expect(nicRefusals({ "lo/ring.rx": "max", "lo/ring.tx": "512", "lo/feature.rx-checksumming": "off", "lo/coalesce.tx-usecs": "8", "lo/coalesce.rx-frames": "8", "zz0nope/ring.rx": "9" }, section).map((x) => x.message)).toEqual([
        "rings cannot be changed: lo (driver fakedrv) does not support ring parameters (ethtool -g lo says: netlink error: Operation not supported second  line); remove rings",
        "features: rx-checksumming is [fixed] on on lo (driver fakedrv): it cannot be turned off; remove it",
        "coalesce.txUsecs (tx-usecs) is not supported by lo (driver fakedrv; ethtool -c lo shows it as n/a); remove it",
        "coalesce.rxFrames (rx-frames) is not supported by lo (driver fakedrv; ethtool -c lo shows it as absent); remove it",
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  const strace = spawnSync("strace", ["-V"]).status === 0;
  (ring && strace ? test : test.skip)("the process budget: ONE ethtool -g|-k|-c and at most one ethtool -i per interface, whatever the number of keys", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nt-livelimits-"));
    try {
      const execs = (keys: string[]) => {
        const out = path.join(dir, `trace-${keys.length}`);
        execFileSync("strace", ["-f", "-qq", "-e", "trace=execve", "-o", out, "dash", "-s", "live", "live"], { input: renderLiveRead([{ kind: "nic", ownerId: "a.b.c-1", keys }]), encoding: "utf8" });
        const lines = fs.readFileSync(out, "utf8").split("\n").filter((l) => / execve\(/.test(l) && !/ENOENT/.test(l));
        const pids = new Set(fs.readFileSync(out, "utf8").split("\n").filter(Boolean).map((l) => l.split(/\s+/)[0]));
        return { ethtool: lines.filter((l) => /ethtool", \["ethtool", "-[gikc]"/.test(l)).map((l) => /"(-[gikc])"/.exec(l)![1]).sort(), processes: pids.size - 1 };
      };
      const two = execs([`${ring}/ring.rx`, `${ring}/ring.tx`]);
      const four = execs([`${ring}/ring.rx`, `${ring}/ring.tx`, `${ring}/ring.rx-mini`, `${ring}/ring.rx-jumbo`]);
      expect(two.ethtool).toEqual(["-g", "-i"]);
      expect(four.ethtool).toEqual(["-g", "-i"]);
      // no process per key: four keys cost what two cost (measured 5: ethtool -g | awk in a subshell, ethtool -i)
      expect(four.processes).toBe(two.processes);
      expect(four.processes).toBeLessThanOrEqual(6);
      // features and coalescing the same way: one ethtool -k / -c per interface (one process per key before: 12 for 3
      // features, 25 for rings + 3 features + 2 coalescing parameters); -i only for coalescing here (no feature is [fixed])
      const k = execFileSync("ethtool", ["-k", ring], { encoding: "utf8" });
      const free = [...k.matchAll(/^(\S+): (?:on|off)$/gm)].map((m) => `${ring}/feature.${m[1]}`);
      const one = execs(free.slice(0, 1));
      const three = execs(free.slice(0, 3));
      expect([one.ethtool, three.ethtool]).toEqual([["-k"], ["-k"]]);
      expect(three.processes).toBe(one.processes);
      const all = execs([`${ring}/ring.rx`, `${ring}/ring.tx`, ...free.slice(0, 3), `${ring}/coalesce.rx-usecs`, `${ring}/coalesce.tx-usecs`]);
      expect(all.ethtool).toEqual(["-c", "-g", "-i", "-k"]);
      expect(all.processes).toBeLessThanOrEqual(13); // measured 13
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
