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
  CHILD_NETNS_NOTE, HOST_WIDE_FIX, keysAbsentRefusal, LIMIT_EXCEEDED, LIMIT_FIELD_UNSUPPORTED, LIMIT_GROUP_UNSUPPORTED, nicLimitRefusal, OR_MAX,
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
  test("an answer without the new lines (an older read) parses with empty maxima, drivers and host facts", () => {
    const old = parseLiveRead("net-tuning-live v2\n!owner q\n!no-record\nvalue\teth0/ring.rx\t512\n!end\n");
    expect(old.q).toMatchObject({ maxima: {}, drivers: {}, host: {} });
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

  const strace = spawnSync("strace", ["-V"]).status === 0;
  (ring && strace ? test : test.skip)("the process budget: ONE ethtool -g and one ethtool -i per interface, whatever the number of ring keys", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nt-livelimits-"));
    try {
      const execs = (keys: string[]) => {
        const out = path.join(dir, `trace-${keys.length}`);
        execFileSync("strace", ["-f", "-qq", "-e", "trace=execve", "-o", out, "dash", "-s", "live", "live"], { input: renderLiveRead([{ kind: "nic", ownerId: "a.b.c-1", keys }]), encoding: "utf8" });
        const lines = fs.readFileSync(out, "utf8").split("\n").filter((l) => / execve\(/.test(l) && !/ENOENT/.test(l));
        const pids = new Set(fs.readFileSync(out, "utf8").split("\n").filter(Boolean).map((l) => l.split(/\s+/)[0]));
        return { ethtool: lines.filter((l) => /ethtool", \["ethtool", "-[gi]"/.test(l)).map((l) => /"(-[gi])"/.exec(l)![1]).sort(), processes: pids.size - 1 };
      };
      const two = execs([`${ring}/ring.rx`, `${ring}/ring.tx`]);
      const four = execs([`${ring}/ring.rx`, `${ring}/ring.tx`, `${ring}/ring.rx-mini`, `${ring}/ring.rx-jumbo`]);
      expect(two.ethtool).toEqual(["-g", "-i"]);
      expect(four.ethtool).toEqual(["-g", "-i"]);
      // no process per key: four keys cost what two cost (measured 5: ethtool -g | awk in a subshell, ethtool -i)
      expect(four.processes).toBe(two.processes);
      expect(four.processes).toBeLessThanOrEqual(6);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
