/**
 * The verify gate's TypeScript side (issue #34): checks at preview (every problem names the key and the fix), the plan
 * lines (none without `verify`: a plan is byte for byte what it was), the report's lines into `verification`.
 */
import { checkVerify, gateDirectives, gateName, gateResult } from "../../provider/counters/gate";
import { planSysctls } from "../../provider/sysctl/plan";
import { planNic } from "../../provider/nic/plan";
import { parseReport } from "../../provider/report";
import { ownerOf } from "../../provider/owner";

const owner = ownerOf("p", "s", "web");

test("no verify: the plans are what they were (no line, no cost)", () => {
  const a = planSysctls({ owner, name: "web", sysctls: { "net.core.somaxconn": 8 } });
  const b = planSysctls({ owner, name: "web", sysctls: { "net.core.somaxconn": 8 }, verifyLines: [] });
  expect(b.stdin).toBe(a.stdin);
  expect(a.stdin).not.toContain("@verify");
  expect(checkVerify(undefined, { kind: "sysctl" })).toEqual({ problems: [] });
  expect(gateDirectives(undefined)).toEqual([]);
});

test("the plan lines: soak, then each limit by kind and name, NicQueues' ethtool names with the interface", () => {
  const s = checkVerify({ soakSeconds: 30, maxIncrease: { "TcpExt.ListenOverflows": 0, "softnet.dropped": 10 }, maxLevel: { "conntrack.fill": 0.8 } }, { kind: "sysctl" });
  expect(s.problems).toEqual([]);
  expect(gateDirectives(s.gate)).toEqual(["@verify-soak 30", "@verify-max-increase TcpExt.ListenOverflows 0", "@verify-max-increase softnet.dropped 10", "@verify-max-level conntrack.fill 0.8"]);
  const n = checkVerify({ soakSeconds: 5, maxIncrease: { "ethtool.rx_missed_errors": 0 } }, { kind: "nic", iface: "eth0" });
  expect(gateDirectives(n.gate)).toEqual(["@verify-soak 5", "@verify-max-increase ethtool.eth0.rx_missed_errors 0"]);
  const plan = planSysctls({ owner, name: "web", sysctls: { "net.core.somaxconn": 8 }, verifyLines: gateDirectives(s.gate) });
  expect(plan.stdin.split("\n@content\n")[0]).toMatch(/@verify-soak 30\n@verify-max-increase TcpExt\.ListenOverflows 0\n/);
  expect(planNic({ owner, name: "q", interface: "eth0", txQueueLength: 1000 }).stdin).not.toContain("@verify");
});

test("refused at preview, each with the key and the fix", () => {
  const p = checkVerify(
    { soakSeconds: 0, maxIncrease: { "TcpExt.ListenOverflow": 0, "sockets.timeWait": 5, "Tcp.RetransSegs": 1.5, "Ip.Forwarding": 0, "ethtool.rx_x": 0 }, maxLevel: { "Tcp.RetransSegs": 3, "conntrack.fill": 2 }, extra: 1 },
    { kind: "sysctl" },
  ).problems;
  expect(p).toEqual([
    "verify.extra is not an argument of verify: use soakSeconds, maxIncrease and maxLevel",
    expect.stringMatching(/^verify\.soakSeconds 0 must be a whole number of seconds from 1 to 900/),
    expect.stringMatching(/^verify\.maxIncrease: "Ip\.Forwarding" is a setting of the kernel/),
    "verify.maxIncrease[\"Tcp.RetransSegs\"] = 1.5 must be a whole number: counters rise by whole counts",
    expect.stringMatching(/^verify\.maxIncrease: "TcpExt\.ListenOverflow" is not a counter the gate knows: did you mean "TcpExt\.ListenOverflows"/),
    expect.stringMatching(/^verify\.maxIncrease: "ethtool\.rx_x" is not ethtool\.<interface>\.<statistic>/),
    expect.stringMatching(/^verify\.maxIncrease: "sockets\.timeWait" is a gauge .*verify\.maxLevel/),
    expect.stringMatching(/^verify\.maxLevel: "Tcp\.RetransSegs" is a counter .*verify\.maxIncrease/),
    expect.stringMatching(/^verify\.maxLevel\["conntrack\.fill"\] = 2 is a fraction/),
  ]);
  expect(checkVerify({ soakSeconds: 10 }, { kind: "sysctl" }).problems).toEqual([expect.stringMatching(/^verify has no limit/)]);
  expect(checkVerify({ soakSeconds: 901, maxIncrease: { "Tcp.RetransSegs": 0 } }, { kind: "sysctl" }).problems).toHaveLength(1);
  expect(checkVerify({ soakSeconds: 10, maxIncrease: { "Tcp.RetransSegs": 1e21 } }, { kind: "sysctl" }).problems).toEqual([expect.stringMatching(/must be a number ≥ 0 \(plain decimal/)]);
  expect(gateName("IcmpMsg.OutType8", { kind: "sysctl" })).toEqual({ kind: "counter", host: "IcmpMsg.OutType8" });
  expect(gateName("ethtool.eth0.rx_queue_0_xdp_packets", { kind: "sysctl" })).toEqual({ kind: "counter", host: "ethtool.eth0.rx_queue_0_xdp_packets" });
  expect(gateName("Tcp.CurrEstab", { kind: "sysctl" })).toEqual({ kind: "gauge", host: "Tcp.CurrEstab" });
});

test("the report's verify lines become verification (NicQueues' ethtool names as written)", () => {
  const r = parseReport(
    ["net-tuning-report v1", "verify\tsoak\t3", "verify\tr\tethtool.eth0.rx_missed\tincrease\t90\t2\t7\t0\t5\tok", "verify\tr\tconntrack.fill\tlevel\t0.1\t0.1\t0.2\t0.8\t0.1\tok", "verify\tverdict\tpass", "end"].join("\n"),
  );
  expect(r.extra.verify).toBeUndefined();
  expect(gateResult(r.verify, true)).toEqual({
    verdict: "pass",
    soakSeconds: 3,
    readings: [
      { name: "ethtool.rx_missed", kind: "counter", before: 90, afterChange: 2, after: 7, limit: 0, change: 5, exceeded: false },
      { name: "conntrack.fill", kind: "gauge", before: 0.1, afterChange: 0.1, after: 0.2, limit: 0.8, change: 0.1, exceeded: false },
    ],
  });
  expect(gateResult(undefined)).toBeUndefined();
});
