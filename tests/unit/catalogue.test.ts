import {
  CATALOGUE,
  INT_MAX,
  KNOWN_CONGESTION_CONTROL,
  KNOWN_DEFAULT_QDISCS,
  LONG_MAX,
  REJECTED_KEYS,
  lookup,
  rejection,
} from "../../provider/sysctl/catalogue";
import { normaliseKey } from "../../provider/sysctl/validate";

/** Every key named in DOMAIN.md §1-§3 and the seeds. */
const REQUIRED = [
  ...["rmem_max", "wmem_max", "rmem_default", "wmem_default", "netdev_max_backlog", "somaxconn", "rps_sock_flow_entries",
    "default_qdisc", "busy_poll", "busy_read", "netdev_budget", "optmem_max"].map((k) => `net.core.${k}`),
  ...["tcp_rmem", "tcp_wmem", "tcp_mem", "tcp_window_scaling", "tcp_sack", "tcp_timestamps", "tcp_mtu_probing",
    "ip_local_port_range", "ip_unprivileged_port_start", "tcp_fin_timeout", "tcp_max_syn_backlog", "tcp_max_tw_buckets",
    "tcp_tw_reuse", "tcp_syncookies", "tcp_keepalive_time", "tcp_keepalive_intvl", "tcp_keepalive_probes",
    "tcp_congestion_control", "tcp_available_congestion_control", "tcp_allowed_congestion_control", "tcp_autocorking",
    "tcp_notsent_lowat", "tcp_slow_start_after_idle", "tcp_no_metrics_save", "tcp_fastopen", "tcp_adv_win_scale",
    "tcp_low_latency", "ip_forward"].map((k) => `net.ipv4.${k}`),
  "net.netfilter.nf_conntrack_max",
  "net.netfilter.nf_conntrack_tcp_timeout_established",
  "net.nf_conntrack_max",
  "fs.file-max", "fs.nr_open", "fs.aio-max-nr",
  "vm.swappiness", "vm.dirty_ratio", "vm.dirty_background_ratio", "vm.min_free_kbytes",
];

describe("catalogue coverage", () => {
  it.each(REQUIRED)("has %s", (key) => {
    expect(lookup(key)).toBeDefined();
    expect(lookup(key)!.key).toBe(key);
  });
});

describe("catalogue entries are well-formed", () => {
  const entries = Object.entries(CATALOGUE);

  it.each(entries)("%s", (key, e) => {
    expect(e.key).toBe(key);
    expect(normaliseKey(key)).toBe(key);
    expect(["netns", "host"]).toContain(e.scope);
    expect(e.description.length).toBeGreaterThan(10);
    expect(e.description).not.toMatch(/\n/);
    if (e.since !== undefined) expect(e.since).toMatch(/^\d+\.\d+$/);
    if (e.type === "int" || e.type === "bool") {
      expect(e.min).toBeDefined();
      expect(e.max !== undefined || e.maxDecimal !== undefined).toBe(true);
      if (e.max !== undefined) {
        expect(Number.isSafeInteger(e.min)).toBe(true);
        expect(Number.isSafeInteger(e.max)).toBe(true);
        expect(e.min!).toBeLessThanOrEqual(e.max);
      }
      if (e.maxDecimal !== undefined) expect(BigInt(e.maxDecimal) > BigInt(e.min!)).toBe(true);
      expect(e.arity).toBeUndefined();
    }
    if (e.type === "bool") expect(e.max! - e.min!).toBeLessThanOrEqual(2);
    if (e.type === "multi") {
      expect(e.arity).toBeGreaterThanOrEqual(2);
      expect(e.elementMin).toBeDefined();
      expect(e.elementMax).toBeDefined();
      expect(e.elementMin!).toBeLessThanOrEqual(e.elementMax!);
    }
    if (e.type === "string") expect(e.pattern).toBeInstanceOf(RegExp);
    if (e.aliasOf !== undefined) expect(lookup(e.aliasOf)).toBeDefined();
  });

  it("is frozen", () => {
    expect(Object.isFrozen(CATALOGUE)).toBe(true);
    expect(Object.isFrozen(CATALOGUE["net.core.somaxconn"])).toBe(true);
  });
});

describe("catalogue facts (DOMAIN.md §3)", () => {
  it("multi-value keys: arity, order, units", () => {
    for (const k of ["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"]) {
      expect(lookup(k)).toMatchObject({ type: "multi", arity: 3, ordered: true, unit: "bytes", scope: "netns" });
    }
    expect(lookup("net.ipv4.tcp_mem")).toMatchObject({ type: "multi", arity: 3, ordered: true, unit: "pages", scope: "host" });
    expect(lookup("net.ipv4.ip_local_port_range")).toMatchObject({ type: "multi", arity: 2, ordered: true, elementMin: 1, elementMax: 65535 });
  });

  it("accepted ranges", () => {
    expect(lookup("net.ipv4.tcp_tw_reuse")).toMatchObject({ min: 0, max: 2 });
    expect(lookup("net.ipv4.tcp_keepalive_probes")).toMatchObject({ min: 0, max: 255 });
    expect(lookup("net.ipv4.tcp_sack")).toMatchObject({ type: "bool", min: 0, max: 1 });
    expect(lookup("net.core.somaxconn")).toMatchObject({ min: 1, max: INT_MAX });
    expect(lookup("net.core.somaxconn")!.advice).toMatch(/65535/);
    expect(lookup("net.ipv4.tcp_notsent_lowat")!.min).toBe(1);
    expect(lookup("net.ipv4.ip_unprivileged_port_start")).toMatchObject({ min: 0, max: 65535, since: "4.11" });
    expect(lookup("fs.file-max")!.maxDecimal).toBe(LONG_MAX);
    expect(lookup("vm.swappiness")!.max).toBe(200);
  });

  it("versions, modules, scope, read-back", () => {
    expect(lookup("net.ipv4.tcp_autocorking")!.since).toBe("3.14");
    expect(lookup("net.netfilter.nf_conntrack_max")).toMatchObject({ module: "nf_conntrack", scope: "host" });
    expect(lookup("net.netfilter.nf_conntrack_tcp_timeout_established")!.module).toBe("nf_conntrack");
    expect(lookup("net.nf_conntrack_max")!.aliasOf).toBe("net.netfilter.nf_conntrack_max");
    expect(lookup("net.core.rps_sock_flow_entries")!.readback).toBe("pow2");
    for (const k of ["net.core.netdev_max_backlog", "net.core.rps_sock_flow_entries", "net.core.busy_poll", "net.ipv4.tcp_mem",
      "net.core.rmem_max", "net.core.wmem_max", "net.ipv4.tcp_allowed_congestion_control"]) {
      expect(lookup(k)!.scope).toBe("host");
    }
    for (const k of ["net.core.somaxconn", "net.ipv4.tcp_rmem", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_congestion_control"]) {
      expect(lookup(k)!.scope).toBe("netns");
    }
    expect(lookup("net.ipv4.tcp_available_congestion_control")!.readOnly?.fix).toMatch(/tcp_congestion_control/);
    expect(lookup("net.ipv4.tcp_low_latency")!.advice).toMatch(/4\.14/);
    expect(lookup("net.ipv4.tcp_fin_timeout")!.description).toMatch(/TIME_WAIT/);
  });

  it("name patterns", () => {
    const cc = lookup("net.ipv4.tcp_congestion_control")!.pattern!;
    for (const n of KNOWN_CONGESTION_CONTROL) expect(cc.test(n)).toBe(true);
    expect(cc.test("BBR")).toBe(false);
    expect(cc.test("bbr;")).toBe(false);
    expect(cc.test("a".repeat(16))).toBe(false);
    const q = lookup("net.core.default_qdisc")!.pattern!;
    for (const n of KNOWN_DEFAULT_QDISCS) expect(q.test(n)).toBe(true);
    expect(lookup("net.ipv4.tcp_allowed_congestion_control")!.pattern!.test("reno cubic bbr")).toBe(true);
  });
});

describe("lookup and rejected keys", () => {
  it("unknown keys and prototype names are not catalogued", () => {
    expect(lookup("net.ipv4.no_such_key")).toBeUndefined();
    expect(lookup("__proto__")).toBeUndefined();
    expect(lookup("constructor")).toBeUndefined();
    expect(lookup("toString")).toBeUndefined();
    expect(rejection("constructor")).toBeUndefined();
  });

  it("the articles' non-existent keys are rejected, not catalogued", () => {
    for (const k of ["net.ipv4.tcp_nodelay", "net.ipv4.tcp_init_cwnd", "net.ipv4.tcp_cwnd_clamp", "net.ipv4.tcp_tw_recycle", "net.ipv4.tcp_autocork"]) {
      expect(rejection(k)).toBeDefined();
      expect(lookup(k)).toBeUndefined();
      expect(normaliseKey(k)).toBe(k);
    }
    for (const r of Object.values(REJECTED_KEYS)) {
      expect(r.reason.length).toBeGreaterThan(10);
      expect(r.fix.length).toBeGreaterThan(5);
    }
  });
});
