/** Pure parts of the live read (issue #13 groundwork): the comparator per key form, the parser, the rendering. */
import { compareSysctls, parseSysctlRead, readbackForm, renderComparison, renderSysctlRead, sameValue } from "../../provider/live/sysctl";

describe("sameValue: one comparator per key form", () => {
  test("whitespace-insensitive for multi-value keys", () => {
    expect(sameValue("net.ipv4.tcp_rmem", "4096\t131072\t6291456", "4096 131072  6291456")).toBe(true);
    expect(sameValue("net.ipv4.tcp_rmem", "4096\t131072\t6291456", "4096 131072 6291457")).toBe(false);
  });
  test("power-of-2 keys: the kernel's rounding is not a difference; 0 stays 0", () => {
    expect(readbackForm("net.core.rps_sock_flow_entries")).toBe("pow2");
    expect(sameValue("net.core.rps_sock_flow_entries", "32768", "20000")).toBe(true);
    expect(sameValue("net.core.rps_sock_flow_entries", "16384", "20000")).toBe(false);
    expect(sameValue("net.core.rps_sock_flow_entries", "0", "0")).toBe(true);
  });
  test("millisecond-jiffies keys: 250 written reads back 252 at HZ=250, which is the same", () => {
    expect(readbackForm("net.ipv4.tcp_invalid_ratelimit")).toBe("msJiffies");
    expect(sameValue("net.ipv4.tcp_invalid_ratelimit", "252", "250")).toBe(true);
    expect(sameValue("net.ipv4.tcp_invalid_ratelimit", "260", "250")).toBe(false);
    expect(sameValue("net.ipv4.tcp_invalid_ratelimit", "248", "250")).toBe(false);
    expect(sameValue("net.core.somaxconn", "4097", "4096")).toBe(false);
  });
});

describe("parseSysctlRead", () => {
  const read = renderSysctlRead(["net.core.somaxconn", "net.ipv4.conf.eth0/100.rp_filter", "net.core.busy_poll"], ["/etc/sysctl.d/90-a.conf"]);
  test("maps paths back to keys, VLAN keys included, and reads files verbatim", () => {
    const out = ["net-tuning-live v1", "!missing net/core/busy_poll", "net/core/somaxconn:4096", "net/ipv4/conf/eth0.100/rp_filter:2", "!file /etc/sysctl.d/90-a.conf", "|# x", "|a = 1", "!endfile", "!end", ""].join("\n");
    const live = parseSysctlRead(out, read);
    expect(live.values).toEqual({ "net.core.somaxconn": "4096", "net.ipv4.conf.eth0/100.rp_filter": "2" });
    expect(live.missing).toEqual(["net.core.busy_poll"]);
    expect(live.files).toEqual({ "/etc/sysctl.d/90-a.conf": "# x\na = 1\n" });
  });
  test("refuses an answer that is not one or is truncated", () => {
    expect(() => parseSysctlRead("sh: 1: syntax error\n", read)).toThrow(/not a live-read answer/);
    expect(() => parseSysctlRead("net-tuning-live v1\nnet/core/somaxconn:4096\n", read)).toThrow(/truncated/);
  });
  test("the program quotes every path and refuses unsafe file names", () => {
    expect(read.stdin).toContain("set -- 'net/core/busy_poll' 'net/core/somaxconn' 'net/ipv4/conf/eth0.100/rp_filter'");
    expect(() => renderSysctlRead([], ["/etc/x;rm -rf /"])).toThrow(/unsafe file path/);
  });
});

test("renderComparison: changes, one summary line for the rest, unknowns, drift, files", () => {
  const live = { values: { a: "1", b: "2" }, missing: ["c"], unreadable: [], files: {} };
  const c = compareSysctls({ a: "5", b: "2", c: "3" }, live, { a: "4" });
  expect(renderComparison(`NetTuning "x"`, "h1", c, [{ path: "/etc/sysctl.d/x.conf", declared: "a = 5\n", live: undefined }])).toEqual([
    `NetTuning "x" on h1: 1 of 3 settings will change`,
    "  a: 1 → 5",
    "  1 already as declared: b",
    "  c: absent on this kernel",
    "  drift: a was set to 4 by this resource and is 1 on the host now",
    "  /etc/sysctl.d/x.conf: will be created",
  ]);
});
