/**
 * The catalogue owns each sysctl's rules and read-back form (issue 15): every advice text is used by a rule; the
 * validator has no per-key switch; one comparator per form (TS) and the host engine's kind_expect/kind_same agree
 * with it (run in dash, bash --posix and busybox ash); the plan's `@readback` lines (pow2 value, 0 stays 0;
 * ms-jiffies form) and acknowledged advice.
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CATALOGUE, lookup, moduleOf } from "../../provider/sysctl/catalogue";
import { planSysctls } from "../../provider/sysctl/plan";
import { expectedReadback, kernelPow2, readbackForm, sameValue } from "../../provider/sysctl/readback";
import { validateSysctls } from "../../provider/sysctl/validate";
import { ownerOf } from "../../provider/owner";
import { SH_DIR, SHELLS } from "../../testkit/localsh";

const REPO = path.resolve(__dirname, "../..");

describe("the catalogue carries the rules", () => {
  test("every advice text is used by at least one rule; every entry with rules is checked by the engine", () => {
    const withAdvice = Object.values(CATALOGUE).filter((e) => e.advice);
    expect(withAdvice.length).toBeGreaterThanOrEqual(27); // the 24 of issue 15 + the 3 ms-jiffies keys
    for (const e of withAdvice) expect([e.key, (e.rules ?? []).some((r) => r.advice !== false)]).toEqual([e.key, true]);
  });
  test("validate.ts is a generic engine: no per-key switch, no key-specific example or order names", () => {
    const src = fs.readFileSync(path.join(REPO, "provider/sysctl/validate.ts"), "utf8");
    expect(src).not.toMatch(/case "(net|vm|fs)\./);
    expect(src).not.toMatch(/key === "(net|vm|fs)\./);
    expect(src).not.toMatch(/function nextPow2/);
  });
  test("a warning is the rule's fact followed by the catalogue's advice (word for word) and the rule's fix", () => {
    const w = validateSysctls({ "net.ipv4.tcp_sack": 0, "net.core.somaxconn": 65536 }).advice.map((a) => a.text);
    expect(w).toEqual([
      `net.core.somaxconn = 65536 wraps to 0 on pre-4.1 kernels: ${lookup("net.core.somaxconn")!.advice}. Fix: use at most 65535 on pre-4.1 kernels; also raise the backlog the application passes to listen() (e.g. nginx "listen 80 backlog=65535").`,
      `net.ipv4.tcp_sack = 0: ${lookup("net.ipv4.tcp_sack")!.advice}. Fix: keep net.ipv4.tcp_sack = 1 (the default).`,
    ]);
  });
  test("ms-jiffies keys: accepted, with advice naming the step sizes unless the value is a multiple of 20 ms", () => {
    const r = validateSysctls({ "net.ipv4.tcp_invalid_ratelimit": 250, "net.ipv4.icmp_ratelimit": 1000 });
    expect(r.values).toEqual({ "net.ipv4.icmp_ratelimit": "1000", "net.ipv4.tcp_invalid_ratelimit": "250" });
    expect(r.advice).toHaveLength(1);
    expect(r.advice[0].text).toMatch(/^net\.ipv4\.tcp_invalid_ratelimit = 250 is not a multiple of 20 ms: .*1 ms at HZ=1000, 4 ms at HZ=250, 10 ms at HZ=100.*Fix: .*e\.g\. 260\.$/);
  });
});

describe("modules come from the catalogue", () => {
  test("tcp_congestion_control's entry names tcp_<value> except the built-in ones; conntrack keys need nf_conntrack", () => {
    expect(lookup("net.ipv4.tcp_congestion_control")!.module).toEqual({ perValue: "tcp_{value}", builtin: ["reno", "cubic"] });
    expect([moduleOf("net.ipv4.tcp_congestion_control", "bbr"), moduleOf("net.ipv4.tcp_congestion_control", "cubic")]).toEqual(["tcp_bbr", undefined]);
    expect([moduleOf("net.netfilter.nf_conntrack_buckets", "1"), moduleOf("net.nf_conntrack_max", "1"), moduleOf("net.core.somaxconn", "1")]).toEqual(["nf_conntrack", "nf_conntrack", undefined]);
    expect(fs.readFileSync(path.join(REPO, "provider/sysctl/plan.ts"), "utf8")).not.toMatch(/nf_conntrack|"reno"|tcp_\$\{/);
  });
});

describe("one comparator per read-back form", () => {
  test.each([
    ["net.ipv4.tcp_rmem", "whitespace"], ["net.core.rps_sock_flow_entries", "pow2"], ["net.ipv4.tcp_invalid_ratelimit", "msJiffies"],
    ["net.ipv6.icmp.ratelimit", "msJiffies"], ["net.ipv4.neigh.eth0.retrans_time_ms", "msJiffies"], ["net.core.somaxconn", "exact"],
    ["net.ipv6.conf.eth0.mldv1_unsolicited_report_interval", "msJiffies"], ["net.ipv6.conf.all.mldv2_unsolicited_report_interval", "msJiffies"],
    ["net.ipv4.route.gc_min_interval_ms", "msJiffies"], ["net.ipv6.route.gc_min_interval_ms", "msJiffies"],
    ["net.ipv4.neigh.eth0/100.base_reachable_time_ms", "msJiffies"], ["net.ipv6.neigh.default.interval_probe_time_ms", "msJiffies"],
    // not kernel keys with a milliseconds form (ip-sysctl.rst: delay_first_probe_time is seconds, locktime is USER_HZ)
    ["net.ipv4.neigh.eth0.delay_first_probe_time_ms", "exact"], ["net.ipv4.neigh.eth0.locktime_ms", "exact"],
  ])("%s is %s", (key, form) => expect(readbackForm(key)).toBe(form));
  test("pow2: 0 stays 0 (rps_sock_flow_entries = 0 turns RFS off), 1 is 1, 30000 reads back 32768", () => {
    expect([kernelPow2(0), kernelPow2(1), kernelPow2(30000)]).toEqual([0, 1, 32768]);
    expect(expectedReadback("net.core.rps_sock_flow_entries", "0")).toBe("0");
    expect(sameValue("net.core.rps_sock_flow_entries", "1", "0")).toBe(false);
    expect(sameValue("net.ipv4.tcp_invalid_ratelimit", "252", "250")).toBe(true);
  });
});

describe("the plan", () => {
  const owner = ownerOf("p", "s", "r");
  test("@readback: the value for pow2 keys (0 stays 0: it was rendered as 1), the form for ms-jiffies keys", () => {
    const p = planSysctls({ owner, name: "r", sysctls: { "net.core.rps_sock_flow_entries": 0, "net.ipv4.tcp_invalid_ratelimit": 250, "net.core.somaxconn": 4096 } });
    expect(p.stdin).toContain("\n@readback net.core.rps_sock_flow_entries 0\n");
    expect(planSysctls({ owner, name: "r", sysctls: { "net.core.rps_sock_flow_entries": 30000 } }).stdin).toContain("\n@readback net.core.rps_sock_flow_entries 32768\n");
    expect(p.stdin).toContain("\n@readback net.ipv4.tcp_invalid_ratelimit ms-jiffies\n");
    expect(p.stdin).not.toMatch(/@readback net\.core\.somaxconn/);
    expect(p.fileContent).toContain("net.ipv4.tcp_invalid_ratelimit = 250\n");
  });
  test("shows acknowledged advice as a comment naming the key only (rewording advice changes no plan); it is not logged (advice a profile covers stays out)", () => {
    const p = planSysctls({ owner, name: "r", sysctls: { "net.ipv4.tcp_fin_timeout": 15, "net.ipv4.tcp_sack": 0 }, acknowledge: ["net.ipv4.tcp_fin_timeout"] });
    expect(p.warnings.map((w) => w.split(" ")[0])).toEqual(["net.ipv4.tcp_sack"]);
    expect(p.acknowledged).toHaveLength(1);
    const line = p.stdin.split("\n").find((l) => l.startsWith("# acknowledged: "));
    expect(line).toBe("# acknowledged: net.ipv4.tcp_fin_timeout");
    expect(p.stdin).not.toContain("only shortens orphaned FIN_WAIT_2"); // the prose stays in `acknowledged`
    expect(p.acknowledged[0]).toMatch(/^net\.ipv4\.tcp_fin_timeout \(acknowledged\): net\.ipv4\.tcp_fin_timeout = 15: tcp_fin_timeout only shortens orphaned FIN_WAIT_2/);
    expect(p.stdin.indexOf(line!)).toBeLessThan(p.stdin.indexOf("@content"));
    const profile = { kind: "net-tuning/sysctl-profile" as const, name: "x", sysctls: { "net.ipv4.tcp_fin_timeout": 15 }, rationale: {}, warnings: [] };
    const q = planSysctls({ owner, name: "r", profile });
    expect([q.warnings, q.acknowledged.length, q.stdin.includes("# acknowledged")]).toEqual([[], 1, false]);
  });
});

describe.each(SHELLS)("the host engine implements the same forms (%s)", (shell) => {
  const run = (script: string, readback: string) => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "readback-"));
    try {
      fs.writeFileSync(path.join(tmp, "readback"), readback);
      const [cmd, ...args] = shell.split(" ");
      return execFileSync(cmd, [...args, "-c", `. "$1/runtime.sh"; . "$1/sysctlspec.sh"; . "$1/sysctl.sh"; NT_TMP="$2"; NT_HOSTNAME=h; ${script}`, "t", SH_DIR, tmp], { encoding: "utf8" });
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  };
  const forms = "net.core.rps_sock_flow_entries\tpow2\nnet.ipv4.tcp_invalid_ratelimit\tms-jiffies\nold.key\t32768\n";
  test("kind_expect: pow2 rounds up and keeps 0; ms-jiffies and other keys expect the declared value", () => {
    const out = run(
      'for kv in "net.core.rps_sock_flow_entries 0" "net.core.rps_sock_flow_entries 30000" "net.core.rps_sock_flow_entries 1" "net.ipv4.tcp_invalid_ratelimit 250" "old.key 20000" "other 5"; do kind_expect ${kv% *} ${kv#* }; echo "$NT_EXPECT"; done',
      forms,
    );
    expect(out).toBe("0\n32768\n1\n250\n32768\n5\n");
  });
  test("nt_same with the key: 252 is 250 for an ms-jiffies key only (within one jiffy at HZ >= 100), with one warning naming the step", () => {
    const out = run(
      [
        'nt_same 250 252 net.ipv4.tcp_invalid_ratelimit && echo same1',
        'nt_same 250 252 net.ipv4.tcp_invalid_ratelimit && echo same2',
        'nt_same 250 260 net.ipv4.tcp_invalid_ratelimit || echo differ1',
        'nt_same 250 248 net.ipv4.tcp_invalid_ratelimit || echo differ2',
        'nt_same 250 252 net.core.somaxconn || echo differ3',
        'nt_same 250 252 || echo differ4',
        'NT_FOUND=kept; nt_same 250 252 net.ipv4.tcp_invalid_ratelimit && echo "$NT_FOUND"',
        'cat "$NT_TMP/warnings"',
      ].join("; "),
      forms,
    );
    expect(out).toBe(
      "same1\nsame2\ndiffer1\ndiffer2\ndiffer3\ndiffer4\nkept\n" +
        "net.ipv4.tcp_invalid_ratelimit = 250 reads back 252 on h: the kernel keeps it in jiffies and rounds it up to the next one, a step of 4 ms (HZ=250); the sysctl.d file keeps 250\n",
    );
  });
});
