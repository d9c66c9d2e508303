/**
 * Sizing (issue #5): every number in the source articles' tables, every error message, combine
 * conflicts, the memory guard, NIC presets, and fast-check properties of the BDP sizing.
 */
import fc from "fast-check";
import { InputError } from "../../provider/errors";
import { settingsOf } from "../../provider/nic/spec";
import {
  KERNEL_INT_MAX,
  SysctlProfile,
  bdp,
  checkProfile,
  combine,
  database,
  formatBandwidth,
  formatBytes,
  formatRtt,
  longFatFlows,
  lowLatency,
  manySmallFlows,
  memoryGuard,
  nicLines,
  nvmeTcpLatency,
  nvmeTcpThroughput,
  parseBandwidth,
  parseBytes,
  parseRtt,
  proxyGateway,
  renderSysctlFile,
  throughput,
  webServer,
  windowFor,
} from "../../provider/sizing";
import { NicPresetSchema, SysctlProfileSchema } from "../../provider/sizing/schemas";

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** Runs `fn` and returns the InputError it throws (fails the test when it does not throw one). */
function inputError(fn: () => unknown): InputError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return e as InputError;
  }
  throw new Error("expected an InputError");
}

const BW_FORMATS =
  'use a number of bits/s or a string like "10Gbit", "500Mbit", "1.5Gbit/s", "1Gbps", "100Mbit/s" (decimal prefixes k, M, G, T: 10Gbit = 10^10 bits/s)';
const RTT_FORMATS = 'use a number of seconds or a string like "40ms", "800us", "0.04s"';
const BYTE_FORMATS =
  'use a number of bytes or a string like "64GiB", "512MiB", "128GB" (KiB/MiB/GiB/TiB = 1024^n, kB/MB/GB/TB = 1000^n)';

describe("bdp: the article's table (decimal MB)", () => {
  it.each([
    ["10Gbit", "10ms", 12_500_000], // 12.50 MB
    ["10Gbit", "20ms", 25_000_000], // 25.00 MB
    ["10Gbit", "40ms", 50_000_000], // 50.00 MB
    ["10Gbit", "80ms", 100_000_000], // 100.00 MB
    ["1Gbit", "40ms", 5_000_000], // 5.00 MB
  ])("%s × %s = %d bytes", (bandwidth, rtt, bytes) => {
    expect(bdp({ bandwidth, rtt })).toBe(bytes);
  });

  it("accepts every documented spelling of the same link and RTT", () => {
    for (const bandwidth of ["10Gbit", "10Gbit/s", "10Gbps", "10 Gbit", "10gbit", "10000Mbit", "10000Mbit/s", "0.01Tbit", 1e10]) {
      for (const rtt of ["40ms", "40 ms", "40000us", "40000µs", "0.04s", 0.04, "40000000ns"]) {
        expect(bdp({ bandwidth, rtt })).toBe(50_000_000);
      }
    }
    expect(bdp({ bandwidth: "1.5Gbit/s", rtt: "800us" })).toBe(150_000);
    expect(bdp({ bandwidth: "500Mbit", rtt: "10ms" })).toBe(625_000);
    expect(bdp({ bandwidth: "100Mbit/s", rtt: "1ms" })).toBe(12_500);
    expect(bdp({ bandwidth: "1Gbps", rtt: "1s" })).toBe(125_000_000);
  });

  it("is exact with decimal fractions and rounds up to a whole byte", () => {
    expect(bdp({ bandwidth: 1e10, rtt: 0.1 + 0.2 })).toBe(375_000_001); // 0.30000000000000004 s really is a bit more
    expect(bdp({ bandwidth: "1.1Gbit", rtt: "0.3s" })).toBe(41_250_000);
    expect(bdp({ bandwidth: 1, rtt: 1 })).toBe(1); // 1/8 byte rounds up
  });

  it("names the value and the accepted formats for every invalid bandwidth", () => {
    const cases: [unknown, string][] = [
      ["10Gb", `bandwidth "10Gb": "Gb" is ambiguous (bits or bytes?); ${BW_FORMATS}`],
      ["10GB/s", `bandwidth "10GB/s": "GB/s" is ambiguous (bits or bytes?); ${BW_FORMATS}`],
      ["1GBps", `bandwidth "1GBps": "GBps" is ambiguous (bits or bytes?); ${BW_FORMATS}`],
      ["10Gibit", `bandwidth "10Gibit": binary prefixes (Ki, Mi, Gi) are not used for link rates; ${BW_FORMATS}`],
      ["10Gbit/min", `bandwidth "10Gbit/min": unknown unit "Gbit/min"; ${BW_FORMATS}`],
      ["10000000000", `bandwidth "10000000000": missing unit (bits/s?); ${BW_FORMATS}`],
      ["fast", `bandwidth "fast": not a number followed by a unit; ${BW_FORMATS}`],
      ["-1Gbit", `bandwidth "-1Gbit": must be > 0; ${BW_FORMATS}`],
      ["0Gbit", `bandwidth "0Gbit": must be > 0; ${BW_FORMATS}`],
      [0, `bandwidth 0: must be a finite number > 0; ${BW_FORMATS}`],
      [-5, `bandwidth -5: must be a finite number > 0; ${BW_FORMATS}`],
      [Infinity, `bandwidth Infinity: must be a finite number > 0; ${BW_FORMATS}`],
      [NaN, `bandwidth NaN: must be a finite number > 0; ${BW_FORMATS}`],
      [true, `bandwidth true: must be a number or a string; ${BW_FORMATS}`],
      ["1e300Tbit", `bandwidth "1e300Tbit": too large (at most ${Number.MAX_VALUE}); ${BW_FORMATS}`],
      ["1e9999Gbit", `bandwidth "1e9999Gbit": not a number followed by a unit; ${BW_FORMATS}`],
    ];
    for (const [bandwidth, problem] of cases) {
      const e = inputError(() => bdp({ bandwidth: bandwidth as string, rtt: "40ms" }));
      expect(e.problems).toEqual([problem]);
      expect(e.message).toBe(`bdp: 1 invalid input:\n  - ${problem}`);
    }
  });

  it("names the value and the accepted formats for every invalid rtt", () => {
    const cases: [unknown, string][] = [
      ["40", `rtt "40": missing unit (ms?); ${RTT_FORMATS}`],
      ["40min", `rtt "40min": unknown unit "min"; ${RTT_FORMATS}`],
      ["soon", `rtt "soon": not a number followed by a unit; ${RTT_FORMATS}`],
      ["-4ms", `rtt "-4ms": must be > 0; ${RTT_FORMATS}`],
      ["0ms", `rtt "0ms": must be > 0; ${RTT_FORMATS}`],
      [0, `rtt 0: must be a finite number > 0; ${RTT_FORMATS}`],
      [null, `rtt null: must be a number or a string; ${RTT_FORMATS}`],
    ];
    for (const [rtt, problem] of cases) {
      expect(inputError(() => bdp({ bandwidth: "10Gbit", rtt: rtt as string })).problems).toEqual([problem]);
    }
  });

  it("lists both problems at once", () => {
    const e = inputError(() => bdp({ bandwidth: "10Gb", rtt: "40" }));
    expect(e.message).toBe(
      "bdp: 2 invalid inputs:\n" +
        `  - bandwidth "10Gb": "Gb" is ambiguous (bits or bytes?); ${BW_FORMATS}\n` +
        `  - rtt "40": missing unit (ms?); ${RTT_FORMATS}`,
    );
  });

  it("parses, formats and reports single values", () => {
    expect(parseBandwidth("1.5Gbit/s")).toBe(1.5e9);
    expect(parseRtt("800us")).toBeCloseTo(0.0008, 12);
    expect(parseBytes("64GiB")).toBe(64 * GiB);
    expect(parseBytes("128GB")).toBe(128e9);
    expect(parseBytes(4096)).toBe(4096);
    expect(formatBandwidth(1e10)).toBe("10Gbit");
    expect(formatBandwidth(1.5e9)).toBe("1.5Gbit");
    expect(formatBandwidth(5e8)).toBe("500Mbit");
    expect(formatRtt(0.04)).toBe("40ms");
    expect(formatRtt(0.0008)).toBe("800us");
    expect(formatRtt(1.5)).toBe("1.5s");
    expect(formatBytes(134217728)).toBe("128 MiB");
    expect(inputError(() => parseBandwidth("10Gb")).message).toBe(`bandwidth: 1 invalid input:\n  - bandwidth "10Gb": "Gb" is ambiguous (bits or bytes?); ${BW_FORMATS}`);
    expect(inputError(() => parseRtt("40")).problems).toEqual([`rtt "40": missing unit (ms?); ${RTT_FORMATS}`]);
    expect(inputError(() => parseBytes("lots")).problems).toEqual([`memory "lots": not a number followed by a unit; ${BYTE_FORMATS}`]);
    expect(inputError(() => parseBytes("64GiBs")).problems).toEqual([`memory "64GiBs": unknown unit "GiBs"; ${BYTE_FORMATS}`]);
    expect(inputError(() => parseBytes("1e300GiB")).problems).toEqual([`memory "1e300GiB": too large (at most 9007199254740991); ${BYTE_FORMATS}`]);
    expect(inputError(() => parseBytes(1e300)).problems).toEqual([`memory 1e+300: too large (at most 9007199254740991); ${BYTE_FORMATS}`]);
  });
});

/** Template A of the cross-border article, verbatim (99-hk-net-tuning.conf). */
const TEMPLATE_A = {
  "net.core.rmem_max": 268435456,
  "net.core.wmem_max": 268435456,
  "net.core.rmem_default": 262144,
  "net.core.wmem_default": 262144,
  "net.ipv4.tcp_rmem": [4096, 16777216, 134217728],
  "net.ipv4.tcp_wmem": [4096, 16777216, 134217728],
  "net.core.netdev_max_backlog": 250000,
  "net.core.somaxconn": 65535,
  "net.ipv4.tcp_max_syn_backlog": 262144,
  "net.ipv4.tcp_window_scaling": 1,
  "net.ipv4.tcp_sack": 1,
  "net.ipv4.tcp_timestamps": 1,
  "net.ipv4.tcp_mtu_probing": 1,
  "net.ipv4.ip_local_port_range": [10000, 65535],
  "net.ipv4.tcp_fin_timeout": 15,
};

describe("Scenario A: templates A and B", () => {
  it("longFatFlows(10Gbit, 40ms) is the article's template A exactly", () => {
    const p = longFatFlows({ bandwidth: "10Gbit", rtt: "40ms" });
    expect(p.kind).toBe("net-tuning/sysctl-profile");
    expect(p.name).toBe("longFatFlows(10Gbit, 40ms)");
    expect(p.sysctls).toEqual(TEMPLATE_A);
    expect(p.warnings).toEqual([]);
    expect(p.nic).toEqual(throughput());
    expect(p.rationale["net.ipv4.tcp_rmem"]).toContain("max 134217728 (128 MiB) ≥ 2 × BDP 50000000 bytes (50 MB = 10Gbit × 40ms / 8)");
  });

  it("manySmallFlows(10Gbit, 40ms) is template B: the same but default 262144", () => {
    const p = manySmallFlows({ bandwidth: "10Gbit", rtt: "40ms" });
    expect(p.name).toBe("manySmallFlows(10Gbit, 40ms)");
    expect(p.sysctls).toEqual({
      ...TEMPLATE_A,
      "net.ipv4.tcp_rmem": [4096, 262144, 134217728],
      "net.ipv4.tcp_wmem": [4096, 262144, 134217728],
    });
  });

  it.each([
    // rtt, BDP, tcp max = power of two ≥ 2 × BDP (at least 16 MiB), core max = 2 × tcp max
    ["10ms", 12_500_000, 32 * MiB, 64 * MiB],
    ["20ms", 25_000_000, 64 * MiB, 128 * MiB],
    ["40ms", 50_000_000, 128 * MiB, 256 * MiB],
    ["80ms", 100_000_000, 256 * MiB, 512 * MiB],
  ])("10Gbit × %s: BDP %d → tcp max %d, core max %d", (rtt, bdpBytes, tcpMax, coreMax) => {
    expect(windowFor({ bandwidth: "10Gbit", rtt })).toEqual({ bitsPerSecond: 1e10, rttSeconds: parseRtt(rtt), bdpBytes, tcpMax, coreMax });
    const p = longFatFlows({ bandwidth: "10Gbit", rtt });
    expect(p.sysctls["net.ipv4.tcp_rmem"]).toEqual([4096, 16777216, tcpMax]);
    expect(p.sysctls["net.core.rmem_max"]).toBe(coreMax);
  });

  it("1Gbit × 40ms: BDP 5 MB, so the max stays at its 16 MiB floor (never below the kernel's defaults)", () => {
    expect(windowFor({ bandwidth: "1Gbit", rtt: "40ms" })).toMatchObject({ bdpBytes: 5_000_000, tcpMax: 16 * MiB, coreMax: 32 * MiB });
    expect(longFatFlows({ bandwidth: "1Gbit", rtt: "40ms" }).sysctls["net.ipv4.tcp_rmem"]).toEqual([4096, 16777216, 16777216]);
  });

  it("refuses a BDP no kernel buffer can cover, and caps core max at the kernel's int", () => {
    const e = inputError(() => longFatFlows({ bandwidth: "400Gbit", rtt: "40ms" }));
    expect(e.problems).toEqual([
      "BDP 2000000000 bytes (1.86 GiB) needs tcp_rmem max ≥ 2 × BDP = 4000000000 bytes, above the largest buffer a kernel int holds " +
        "(1073741824 bytes as a power of two; limit 2147483647): one flow cannot fill this path; use several parallel flows and size for bandwidth / flows",
    ]);
    const p = longFatFlows({ bandwidth: "100Gbit", rtt: "40ms" }); // BDP 500 MB
    expect(p.sysctls["net.ipv4.tcp_rmem"]).toEqual([4096, 16777216, GiB]);
    expect(p.sysctls["net.core.rmem_max"]).toBe(KERNEL_INT_MAX);
  });

  it("lists every invalid option of a flow profile", () => {
    const e = inputError(() => longFatFlows({ bandwidth: "10Gb", rtt: "40", concurrency: -1, memory: "lots", guard: "maybe" as "warn" }));
    expect(e.message).toBe(
      "longFatFlows: 5 invalid inputs:\n" +
        "  - concurrency -1: must be a positive integer (concurrent connections)\n" +
        `  - memory "lots": not a number followed by a unit; ${BYTE_FORMATS}\n` +
        '  - guard "maybe": use "warn" (default) or "error"\n' +
        `  - bandwidth "10Gb": "Gb" is ambiguous (bits or bytes?); ${BW_FORMATS}\n` +
        `  - rtt "40": missing unit (ms?); ${RTT_FORMATS}`,
    );
    expect(inputError(() => longFatFlows({ bandwidth: "10Gbit", rtt: "40ms", warnAt: 0, errorAt: 0.5 })).problems).toEqual([
      "warnAt 0: must be a number > 0 (a ratio; default 0.5)",
    ]);
    expect(inputError(() => webServer({ warnAt: 0.9, errorAt: 0.8 })).problems).toEqual(["warnAt 0.9 is above errorAt 0.8: needs warnAt ≤ errorAt"]);
    expect(inputError(() => manySmallFlows({} as never)).problems).toEqual(['bandwidth is required (e.g. "10Gbit")', 'rtt is required (e.g. "40ms")']);
  });
});

describe("memory guard: max open, default cautious", () => {
  it('reproduces "16 MB default × 10,000 connections ≈ 160 GB"', () => {
    const g = memoryGuard({ profile: longFatFlows({ bandwidth: "10Gbit", rtt: "40ms" }), connections: 10000, memoryBytes: "128GiB" });
    // One direction: 16 MiB × 10000 = 167 772 160 000 bytes = 167.8 GB = 156.25 GiB: the article's "≈ 160 GB".
    expect(16 * MiB * 10000).toBe(167_772_160_000);
    expect(formatBytes(16 * MiB * 10000)).toBe("156.25 GiB");
    // The guard counts both directions (tcp_rmem default + tcp_wmem default): twice that.
    expect(g.perConnectionBytes).toBe(2 * 16 * MiB);
    expect(g.worstCaseBytes).toBe(335_544_320_000);
    expect(g.ratio).toBeCloseTo(2.44140625, 10); // 312.5 GiB / 128 GiB
    expect(g.level).toBe("error");
    expect(g.tcpMemBytes).toBeUndefined();
    expect(g.message).toBe(
      "longFatFlows(10Gbit, 40ms): worst case = (tcp_rmem default 16777216 + tcp_wmem default 16777216 bytes) × 10000 connections = " +
        "335544320000 bytes (312.5 GiB) = 2.441 × memory 137438953472 bytes (128 GiB): error (warn above 0.5, error at 1); " +
        'lower the tcp_rmem/tcp_wmem defaults (256 KiB-1 MiB for many connections: "max open, default cautious") or plan for fewer connections',
    );
  });

  it("levels: ok up to warnAt, warn above it, error from errorAt", () => {
    const profile = longFatFlows({ bandwidth: "10Gbit", rtt: "40ms" }); // 32 MiB per connection
    const at = (connections: number, extra = {}) => memoryGuard({ profile, connections, memoryBytes: 64 * GiB, ...extra }).level;
    expect(at(1024)).toBe("ok"); // exactly 0.5
    expect(at(1025)).toBe("warn");
    expect(at(2047)).toBe("warn");
    expect(at(2048)).toBe("error"); // exactly 1.0
    expect(at(100, { warnAt: 0.01, errorAt: 0.05 })).toBe("warn"); // 100 × 32 MiB / 64 GiB = 0.0488
    expect(at(200, { warnAt: 0.01, errorAt: 0.05 })).toBe("error");
  });

  it("also compares with tcp_mem max (pages × pageSize): the web template's 6 GiB", () => {
    const g = memoryGuard({ profile: webServer(), connections: 48234, memoryBytes: "64GiB" });
    expect(g.perConnectionBytes).toBe(87380 + 65536);
    expect(g.worstCaseBytes).toBe(152916 * 48234);
    expect(g.tcpMemBytes).toBe(1572864 * 4096);
    expect(g.ratio).toBeCloseTo(0.1073, 4);
    expect(g.tcpMemRatio).toBeCloseTo(1.1449, 4);
    expect(g.level).toBe("error");
    expect(g.message).toContain("and 1.145 × tcp_mem max 1572864 pages × 4096 = 6442450944 bytes (6 GiB): error");
    const explicit = memoryGuard({ profile: database(), connections: 1000, memoryBytes: 64 * GiB, tcpMemPages: 100, pageSize: 65536 });
    expect(explicit.tcpMemBytes).toBe(6553600);
    expect(explicit.message).toContain("(kernel tcp_rmem default 131072 + kernel tcp_wmem default 16384 bytes) × 1000 connections");
  });

  it("lists every invalid argument", () => {
    const e = inputError(() =>
      memoryGuard({ profile: database(), connections: 1.5, memoryBytes: "64 apples", pageSize: 0, tcpMemPages: -1, warnAt: 2, errorAt: 1 }),
    );
    expect(e.problems).toEqual([
      "connections 1.5: must be a positive integer",
      `memoryBytes "64 apples": unknown unit "apples"; ${BYTE_FORMATS}`,
      "pageSize 0: must be a positive integer (bytes; usually 4096)",
      "tcpMemPages -1: must be a positive integer (pages)",
      "warnAt 2 is above errorAt 1: needs warnAt ≤ errorAt",
    ]);
  });

  it("profiles put guard results into warnings, and throw only with guard: \"error\"", () => {
    // 300000 × (256 KiB + 256 KiB) = 157 286 400 000 bytes = 0.57 × 256 GiB
    const many = manySmallFlows({ bandwidth: "10Gbit", rtt: "40ms", concurrency: 300000, memory: "256GiB" });
    expect(many.name).toBe("manySmallFlows(10Gbit, 40ms, 300000 connections, 256GiB)");
    expect(many.warnings).toHaveLength(1);
    expect(many.warnings[0]).toMatch(/^memory guard \(warn\): manySmallFlows.*\(tcp_rmem default 262144 \+ tcp_wmem default 262144 bytes\) × 300000 connections = 157286400000 bytes/);
    const e = inputError(() => manySmallFlows({ bandwidth: "10Gbit", rtt: "40ms", concurrency: 300000, memory: "16GiB", guard: "error" }));
    expect(e.problems).toHaveLength(1);
    expect(e.problems[0]).toMatch(/^memory guard: .* = 9.155 × memory 17179869184 bytes \(16 GiB\): error/);
    // warn level never throws
    expect(() => manySmallFlows({ bandwidth: "10Gbit", rtt: "40ms", concurrency: 300000, memory: "256GiB", guard: "error" })).not.toThrow();
    // no memory: the worst case is stated, not judged
    expect(webServer({ concurrency: 1000 }).warnings).toContain(
      "memory guard not run: worst case = (tcp_rmem default 87380 + tcp_wmem default 65536 bytes) × 1000 connections = 152916000 bytes (145.83 MiB); pass memory to check it against the host",
    );
  });

  it("longFatFlows lowers its 16 MiB default until the worst case fits half the memory", () => {
    const rmem = (concurrency: number, memory: string) => longFatFlows({ bandwidth: "10Gbit", rtt: "40ms", concurrency, memory }).sysctls["net.ipv4.tcp_rmem"];
    expect(rmem(2000, "128GiB")).toEqual([4096, 16 * MiB, 128 * MiB]); // the article's few-thousand case keeps template A
    expect(rmem(3000, "128GiB")).toEqual([4096, 8 * MiB, 128 * MiB]);
    expect(rmem(10000, "128GiB")).toEqual([4096, 2 * MiB, 128 * MiB]);
    expect(rmem(1_000_000, "64GiB")).toEqual([4096, 256 * 1024, 128 * MiB]); // never below 256 KiB...
    const p = longFatFlows({ bandwidth: "10Gbit", rtt: "40ms", concurrency: 1_000_000, memory: "64GiB" });
    expect(p.warnings[0]).toMatch(/^memory guard \(error\): /); // ...and then the guard says so
    expect(p.rationale["net.ipv4.tcp_rmem"]).toContain("default 262144 (256 KiB), the floor: even this puts (rmem + wmem default) × 1000000 connections above 0.5 × memory");
  });
});

describe("Scenario B: web, database, proxy templates", () => {
  it("webServer: the article's tuned settings plus the web template's keepalive", () => {
    const p = webServer();
    expect(p.name).toBe("webServer()");
    expect(p.sysctls).toEqual({
      "net.core.somaxconn": 65535,
      "net.ipv4.tcp_max_syn_backlog": 65535,
      "net.netfilter.nf_conntrack_max": 1000000,
      "net.ipv4.tcp_max_tw_buckets": 200000,
      "net.ipv4.tcp_tw_reuse": 1,
      "net.ipv4.tcp_syncookies": 1,
      "net.ipv4.tcp_fin_timeout": 30,
      "net.ipv4.tcp_keepalive_time": 600,
      "net.ipv4.tcp_keepalive_intvl": 60,
      "net.ipv4.tcp_keepalive_probes": 3,
      "net.ipv4.tcp_rmem": [4096, 87380, 16777216],
      "net.ipv4.tcp_wmem": [4096, 65536, 16777216],
      "net.ipv4.tcp_mem": [786432, 1048576, 1572864],
      "net.core.rmem_max": 16777216,
      "net.core.wmem_max": 16777216,
    });
    expect(p.nic).toBeUndefined();
  });

  it("webServer scales tcp_mem from the article's 64 GB host to the given memory", () => {
    expect(webServer({ memory: "64GiB" }).sysctls["net.ipv4.tcp_mem"]).toEqual([786432, 1048576, 1572864]);
    expect(webServer({ memory: "16GiB" }).sysctls["net.ipv4.tcp_mem"]).toEqual([196608, 262144, 393216]);
  });

  it("database", () => {
    expect(database().sysctls).toEqual({
      "vm.swappiness": 10,
      "vm.dirty_ratio": 10,
      "vm.dirty_background_ratio": 5,
      "fs.aio-max-nr": 1048576,
      "net.core.somaxconn": 4096,
      "net.ipv4.tcp_max_syn_backlog": 4096,
    });
  });

  it("proxyGateway", () => {
    expect(proxyGateway().sysctls).toEqual({
      "net.core.somaxconn": 65535,
      "net.ipv4.tcp_max_syn_backlog": 65535,
      "net.ipv4.ip_local_port_range": [1024, 65535],
      "net.ipv4.tcp_tw_reuse": 1,
      "net.netfilter.nf_conntrack_max": 2000000,
      "net.netfilter.nf_conntrack_tcp_timeout_established": 1200,
    });
  });

  it("never sets fs.file-max (it would lower systemd's LONG_MAX) and says so", () => {
    for (const p of [webServer(), database()]) {
      expect(p.sysctls).not.toHaveProperty(["fs.file-max"]);
      expect(p.warnings).toContain(
        "fs.file-max is not set: the article's 1000000 would lower systemd's boot-time default (LONG_MAX); " +
          "raise the per-process limit instead (LimitNOFILE=1048576 in the service's unit, or nofile in /etc/security/limits.conf)",
      );
    }
  });

  it("lists invalid options", () => {
    expect(inputError(() => webServer({ concurrency: 0, memory: -1 })).message).toBe(
      "webServer: 2 invalid inputs:\n" +
        "  - concurrency 0: must be a positive integer (concurrent connections)\n" +
        `  - memory -1: must be a finite number > 0; ${BYTE_FORMATS}`,
    );
  });
});

describe("Scenario C: NVMe/TCP", () => {
  it("latency: autocorking off, BBR with fq, the lowLatency NIC preset", () => {
    const p = nvmeTcpLatency();
    expect(p.sysctls).toEqual({
      "net.ipv4.tcp_autocorking": 0,
      "net.ipv4.tcp_congestion_control": "bbr",
      "net.core.default_qdisc": "fq",
    });
    expect(p.nic).toEqual(lowLatency());
    expect(p.rationale["net.ipv4.tcp_autocorking"]).toContain("450 -> 320 us");
    expect(p.warnings.join("\n")).toMatch(/tcp_nodelay=1 \(no such sysctl.*tcp_notsent_lowat=0 \(makes a socket never writable.*tcp_sack=0/);
  });

  it("throughput: autocorking on and larger send buffers", () => {
    const p = nvmeTcpThroughput();
    expect(p.name).toBe("nvmeTcpThroughput()");
    expect(p.sysctls).toEqual({
      "net.ipv4.tcp_autocorking": 1,
      "net.ipv4.tcp_wmem": [4096, 262144, 16777216],
      "net.core.wmem_max": 33554432,
      "net.core.wmem_default": 262144,
    });
    expect(p.warnings.join("\n")).toContain("tcp_init_cwnd / tcp_cwnd_clamp (no such sysctls");
    const sized = nvmeTcpThroughput({ bandwidth: "100Gbit", rtt: "200us" }); // BDP 2.5 MB → 16 MiB floor
    expect(sized.sysctls["net.ipv4.tcp_wmem"]).toEqual([4096, 262144, 16777216]);
    expect(nvmeTcpThroughput({ bandwidth: "100Gbit", rtt: "2ms" }).sysctls["net.ipv4.tcp_wmem"]).toEqual([4096, 262144, 64 * MiB]);
    expect(inputError(() => nvmeTcpThroughput({ bandwidth: "100Gbit" })).problems).toEqual([
      "bandwidth and rtt go together: pass both (to size tcp_wmem from the BDP) or neither",
    ]);
  });
});

const ALL = (): SysctlProfile[] => [
  longFatFlows({ bandwidth: "10Gbit", rtt: "40ms" }),
  manySmallFlows({ bandwidth: "1Gbit", rtt: "10ms" }),
  webServer(),
  database(),
  proxyGateway(),
  nvmeTcpLatency(),
  nvmeTcpThroughput(),
];

describe("every profile", () => {
  it("never emits what DOMAIN.md §2 says is wrong", () => {
    for (const p of ALL()) {
      const keys = Object.keys(p.sysctls);
      for (const bad of ["net.ipv4.tcp_nodelay", "net.ipv4.tcp_init_cwnd", "net.ipv4.tcp_cwnd_clamp", "net.ipv4.tcp_tw_recycle", "fs.file-max"]) {
        expect(keys).not.toContain(bad);
      }
      expect(p.sysctls["net.ipv4.tcp_notsent_lowat"]).not.toBe(0);
      expect(p.sysctls["net.ipv4.tcp_sack"]).not.toBe(0);
    }
  });

  it("has one rationale line per key, is plain JSON, passes its schema and its own checks", () => {
    for (const p of ALL()) {
      expect(Object.keys(p.rationale).sort()).toEqual(Object.keys(p.sysctls).sort());
      for (const why of Object.values(p.rationale)) expect(why.length).toBeGreaterThan(20);
      expect(JSON.parse(JSON.stringify(p))).toEqual(p);
      expect(SysctlProfileSchema.parse(p)).toEqual(p);
      expect(checkProfile(p)).toEqual([]);
      if (p.nic) expect(Object.keys(p.nic.rationale).length).toBeGreaterThan(0);
    }
    expect(() => SysctlProfileSchema.parse({ ...webServer(), extra: 1 })).toThrow();
  });

  it("renders a sysctl.d file with sorted keys and space-separated multi-values", () => {
    expect(renderSysctlFile(proxyGateway())).toBe(
      "# net-tuning profile: proxyGateway()\n" +
        "net.core.somaxconn = 65535\n" +
        "net.ipv4.ip_local_port_range = 1024 65535\n" +
        "net.ipv4.tcp_max_syn_backlog = 65535\n" +
        "net.ipv4.tcp_tw_reuse = 1\n" +
        "net.netfilter.nf_conntrack_max = 2000000\n" +
        "net.netfilter.nf_conntrack_tcp_timeout_established = 1200\n",
    );
  });
});

describe("combine", () => {
  it("merges disjoint profiles and identical values", () => {
    const c = combine(proxyGateway(), nvmeTcpLatency(), proxyGateway());
    expect(c.name).toBe("proxyGateway() + nvmeTcpLatency() + proxyGateway()");
    expect(c.sysctls).toEqual({ ...proxyGateway().sysctls, ...nvmeTcpLatency().sysctls });
    expect(c.nic).toEqual(lowLatency());
    expect(c.warnings).toEqual(nvmeTcpLatency().warnings);
    // 1 and "1", [1024, 65535] and "1024 65535" are the same setting
    const loose: SysctlProfile = {
      kind: "net-tuning/sysctl-profile",
      name: "loose",
      sysctls: { "net.ipv4.tcp_tw_reuse": "1", "net.ipv4.ip_local_port_range": "1024   65535" },
      rationale: {},
      warnings: [],
    };
    expect(combine(proxyGateway(), loose).sysctls["net.ipv4.tcp_tw_reuse"]).toBe(1);
  });

  it("lists every conflicting key with both values and both profile names", () => {
    const e = inputError(() => combine(webServer(), database(), proxyGateway()));
    expect(e.message).toBe(
      "combine: 3 invalid inputs:\n" +
        "  - net.core.somaxconn: conflicting values 65535 (webServer()) vs 4096 (database()); combine profiles that agree, or drop one\n" +
        "  - net.ipv4.tcp_max_syn_backlog: conflicting values 65535 (webServer()) vs 4096 (database()); combine profiles that agree, or drop one\n" +
        "  - net.netfilter.nf_conntrack_max: conflicting values 1000000 (webServer()) vs 2000000 (proxyGateway()); combine profiles that agree, or drop one",
    );
    expect(inputError(() => combine(longFatFlows({ bandwidth: "10Gbit", rtt: "40ms" }), manySmallFlows({ bandwidth: "10Gbit", rtt: "40ms" }))).problems).toEqual([
      "net.ipv4.tcp_rmem: conflicting values 4096 16777216 134217728 (longFatFlows(10Gbit, 40ms)) vs 4096 262144 134217728 (manySmallFlows(10Gbit, 40ms)); combine profiles that agree, or drop one",
      "net.ipv4.tcp_wmem: conflicting values 4096 16777216 134217728 (longFatFlows(10Gbit, 40ms)) vs 4096 262144 134217728 (manySmallFlows(10Gbit, 40ms)); combine profiles that agree, or drop one",
    ]);
    expect(inputError(() => combine(nvmeTcpLatency(), nvmeTcpThroughput())).problems).toEqual([
      "net.ipv4.tcp_autocorking: conflicting values 0 (nvmeTcpLatency()) vs 1 (nvmeTcpThroughput()); combine profiles that agree, or drop one",
      "nic: conflicting presets lowLatency (nvmeTcpLatency()) vs throughput (nvmeTcpThroughput()); keep the `nic` of one profile only",
    ]);
  });

  it("refuses no profile or a non-profile, and warns on cross-key problems of the result", () => {
    expect(inputError(() => combine()).problems).toEqual(["no profile given: pass at least one SysctlProfile"]);
    expect(inputError(() => combine({ sysctls: {} } as never)).problems).toEqual(['argument 1 is not a SysctlProfile (kind "net-tuning/sysctl-profile")']);
    const bigTcp: SysctlProfile = {
      kind: "net-tuning/sysctl-profile",
      name: "bigTcp",
      sysctls: { "net.ipv4.tcp_rmem": [4096, 131072, 67108864] },
      rationale: { "net.ipv4.tcp_rmem": "test" },
      warnings: [],
    };
    const capped = { ...bigTcp, name: "capped", sysctls: { "net.core.rmem_max": 16777216 }, rationale: {} };
    expect(combine(bigTcp, capped).warnings).toEqual([
      "net.core.rmem_max = 16777216 is below net.ipv4.tcp_rmem max 67108864: sockets that set their buffer size explicitly get less than autotuned ones",
    ]);
    expect(checkProfile({ ...bigTcp, sysctls: { "net.ipv4.tcp_rmem": [4096, 1 << 30, 1 << 20], "net.ipv4.ip_local_port_range": [60000, 1024] } })).toEqual([
      "net.ipv4.tcp_rmem = 4096 1073741824 1048576: needs min ≤ default ≤ max (the kernel does not check it)",
      "net.ipv4.ip_local_port_range = 60000 1024: needs two ports, low ≤ high",
    ]);
  });
});

describe("NIC presets", () => {
  it("throughput: the article's rings, offloads, txqueuelen and RPS/RFS", () => {
    const t = throughput();
    // The values are asserted as the preview shows them (nicLines below) and as the plan renders them (nicPlan.test.ts).
    expect([t.kind, t.name, Object.keys(t).sort()]).toEqual(["net-tuning/nic-preset", "throughput", ["features", "kind", "name", "rationale", "rings", "rps", "txQueueLength"]]);
    expect(Object.keys(t.rationale).sort()).toEqual(["features", "rings", "rps", "txQueueLength"]);
    expect(NicPresetSchema.parse(t)).toEqual(t);
    expect(nicLines(t)).toEqual([
      "rings: rx max, tx max",
      "features: gro on, gso on, lro off, tso on",
      "txqueuelen: 10000",
      "rps: cpus all, rps_flow_cnt 4096 per rx queue, rps_sock_flow_entries 32768, only when rx queues < CPUs",
    ]);
  });

  it("lowLatency: adaptive coalescing off, rx-usecs 10 (not 8: e1000e accepts 0, 1, 3, 4 or 10-10000)", () => {
    const l = lowLatency();
    expect(l.coalesce).toEqual({ adaptiveRx: false, rxUsecs: 10 });
    expect(l.features).toEqual({ gro: true, gso: true, tso: true, lro: false });
    expect(l.rationale.coalesce).toContain("e1000e accepts only 0, 1, 3, 4 or 10-10000");
    expect(NicPresetSchema.parse(l)).toEqual(l);
    expect(nicLines(l)).toEqual(["features: gro on, gso on, lro off, tso on", "coalesce: adaptive-rx off, rx-usecs 10"]);
  });
});

describe("nicLines (net-tuning plan) renders from the NIC spec", () => {
  it("a preset holding every group shows every setting (rings, channels, all 22 coalesce params, irqAffinity)", () => {
    const coalesce = Object.fromEntries(settingsOf("coalesce").map((st, i) => [st.arg, st.type === "onOff" ? i % 2 === 0 : i + 1]));
    const preset = {
      kind: "net-tuning/nic-preset" as const,
      name: "every",
      rationale: {},
      channels: { combined: 4, rx: 1, tx: 1, other: 1 },
      rings: { rx: 4096, rxMini: 64, rxJumbo: 512, tx: "max" as const },
      features: { gro: true, lro: false, "rx-udp-gro-forwarding": true },
      coalesce,
      txQueueLength: 5000,
      rps: { cpus: [0, 1], flowEntriesPerQueue: 4096, sockFlowEntries: 32768, onlyWhenQueuesBelowCpus: true },
      irqAffinity: { cpus: [1, 0] },
    };
    const lines = nicLines(preset as never);
    expect(lines.slice(0, 2)).toEqual(["channels: combined 4, rx 1, tx 1, other 1", "rings: rx 4096, rx-mini 64, rx-jumbo 512, tx max"]);
    expect(lines[2]).toBe("features: gro on, lro off, rx-udp-gro-forwarding on");
    const co = lines.find((l) => l.startsWith("coalesce: "))!;
    expect(co.slice("coalesce: ".length).split(", ")).toHaveLength(22);
    for (const st of settingsOf("coalesce")) {
      const v = coalesce[st.arg];
      expect(co).toContain(`${st.ethtool} ${typeof v === "boolean" ? (v ? "on" : "off") : v}`);
    }
    expect(lines.slice(4)).toEqual([
      "txqueuelen: 5000",
      "rps: cpus 0,1, rps_flow_cnt 4096 per rx queue, rps_sock_flow_entries 32768, only when rx queues < CPUs",
      "irqAffinity: cpus 1,0",
    ]);
    expect(nicLines({ ...preset, irqAffinity: { cpus: "spread" } } as never).at(-1)).toBe("irqAffinity: cpus spread");
  });
});

describe("properties", () => {
  // Links from 1 Mbit/s to 400 Gbit/s, RTTs from 1 us to 2 s, given as numbers or unit strings.
  const link = fc.record({
    bits: fc.integer({ min: 1_000_000, max: 400_000_000_000 }),
    micros: fc.integer({ min: 1, max: 2_000_000 }),
    asString: fc.boolean(),
  });
  const args = ({ bits, micros, asString }: { bits: number; micros: number; asString: boolean }) =>
    asString ? { bandwidth: `${bits / 1e6}Mbit/s`, rtt: `${micros}us` } : { bandwidth: bits, rtt: micros / 1e6 };

  it("bdp = ceil(bits × seconds / 8) for any spelling", () => {
    fc.assert(
      fc.property(link, (l) => {
        expect(bdp(args(l))).toBe(Number((BigInt(l.bits) * BigInt(l.micros) + 8_000_000n - 1n) / 8_000_000n));
      }),
    );
  });

  it("tcp max ≥ 2 × BDP, core max ≥ tcp max, min ≤ default ≤ max, all within a kernel int; or a clear refusal", () => {
    fc.assert(
      fc.property(link, fc.boolean(), (l, many) => {
        const a = args(l);
        const b = bdp(a);
        const make = many ? manySmallFlows : longFatFlows;
        if (2 * b > GiB) {
          expect(inputError(() => make(a)).problems[0]).toMatch(/^BDP \d+ bytes .* use several parallel flows/);
          return;
        }
        const p = make(a);
        for (const [tcpKey, coreKey] of [
          ["net.ipv4.tcp_rmem", "net.core.rmem_max"],
          ["net.ipv4.tcp_wmem", "net.core.wmem_max"],
        ]) {
          const [min, def, max] = p.sysctls[tcpKey] as number[];
          const core = p.sysctls[coreKey] as number;
          expect(max).toBeGreaterThanOrEqual(2 * b);
          expect(max).toBeGreaterThanOrEqual(16 * MiB);
          expect(Math.log2(max) % 1).toBe(0);
          expect(core).toBeGreaterThanOrEqual(max);
          expect(core).toBeLessThanOrEqual(KERNEL_INT_MAX);
          expect(min).toBe(4096);
          expect(min).toBeLessThanOrEqual(def);
          expect(def).toBeLessThanOrEqual(max);
        }
        expect(checkProfile(p)).toEqual([]);
      }),
    );
  });

  it("the concurrency-sized default keeps the worst case within warnAt × memory unless it hits 256 KiB", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5_000_000 }), fc.integer({ min: 1, max: 1024 }), (concurrency, gib) => {
        const p = longFatFlows({ bandwidth: "10Gbit", rtt: "40ms", concurrency, memory: gib * GiB });
        const def = (p.sysctls["net.ipv4.tcp_rmem"] as number[])[1];
        expect(def).toBeGreaterThanOrEqual(256 * 1024);
        expect(def).toBeLessThanOrEqual(16 * MiB);
        const g = memoryGuard({ profile: p, connections: concurrency, memoryBytes: gib * GiB });
        if (def > 256 * 1024) expect(g.level).toBe("ok");
        expect(p.warnings.length > 0).toBe(g.level !== "ok");
      }),
    );
  });

  it("the guard's worst case is linear in connections and its level never improves with more of them", () => {
    const order = { ok: 0, warn: 1, error: 2 };
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 1, max: 1_000_000 }), (a, extra) => {
        const profile = webServer();
        const g1 = memoryGuard({ profile, connections: a, memoryBytes: "64GiB" });
        const g2 = memoryGuard({ profile, connections: a + extra, memoryBytes: "64GiB" });
        expect(g1.worstCaseBytes).toBe(152916 * a);
        expect(order[g2.level]).toBeGreaterThanOrEqual(order[g1.level]);
      }),
    );
  });

  it("formatting a parsed link and RTT parses back to the same values", () => {
    fc.assert(
      fc.property(link, (l) => {
        expect(parseBandwidth(formatBandwidth(l.bits))).toBeCloseTo(l.bits, 0);
        expect(parseRtt(formatRtt(l.micros / 1e6))).toBeCloseTo(l.micros / 1e6, 12);
      }),
    );
  });

  it("combine(p, p) is p, and combine never silently picks one of two different values", () => {
    fc.assert(
      fc.property(fc.constantFrom(...ALL()), fc.constantFrom(...ALL()), (p, q) => {
        expect(combine(p, p).sysctls).toEqual(p.sysctls);
        let merged: SysctlProfile | undefined;
        try {
          merged = combine(p, q);
        } catch (e) {
          expect(e).toBeInstanceOf(InputError);
          return;
        }
        for (const [k, v] of Object.entries(q.sysctls)) expect(merged.sysctls[k]).toEqual(v);
        for (const [k, v] of Object.entries(p.sysctls)) expect(merged.sysctls[k]).toEqual(v);
      }),
    );
  });
});

describe("declarative specs (the form other languages send)", () => {
  const { resolveProfiles, resolvePreset } = require("../../provider/sizing/spec") as typeof import("../../provider/sizing/spec");

  test("every profile name resolves to exactly what its helper returns", () => {
    const flows = { bandwidth: "10Gbit", rtt: "40ms", concurrency: 2000, memory: "128GiB" };
    expect(resolveProfiles({ name: "longFatFlows", ...flows }, undefined)).toEqual({ profile: longFatFlows(flows), problems: [] });
    expect(resolveProfiles({ name: "manySmallFlows", bandwidth: "1Gbit", rtt: "5ms" }, undefined).profile).toEqual(manySmallFlows({ bandwidth: "1Gbit", rtt: "5ms" }));
    for (const [name, fn] of [["webServer", webServer], ["database", database], ["proxyGateway", proxyGateway], ["nvmeTcpLatency", nvmeTcpLatency], ["nvmeTcpThroughput", nvmeTcpThroughput]] as const) {
      expect(resolveProfiles({ name }, undefined).profile).toEqual(fn());
    }
    // A helper's result passes through unchanged; a list is combined.
    expect(resolveProfiles(webServer(), undefined).profile).toEqual(webServer());
    expect(resolveProfiles(undefined, [{ name: "webServer" }, { name: "nvmeTcpLatency" }]).profile).toEqual(combine(webServer(), nvmeTcpLatency()));
  });

  test("problems name the spec path and the fix; a helper's own messages are kept", () => {
    expect(resolveProfiles({ name: "longFatFlows", bandwidth: "fast", rtt: "40ms" }, [{ name: "nope" }, 3]).problems.map((x) => x.message)).toEqual([
      expect.stringMatching(/^profile \(longFatFlows\): .*"fast"/),
      'profiles[0].name: "nope" is not a profile: use one of longFatFlows, manySmallFlows, webServer, database, proxyGateway, nvmeTcpLatency, nvmeTcpThroughput',
      'profiles[1]: must be a profile spec such as { name: "webServer" } or { name: "longFatFlows", bandwidth: "10Gbit", rtt: "40ms" }',
    ]);
    expect(resolveProfiles(undefined, [{ name: "webServer" }, { name: "nvmeTcpLatency" }, { name: "longFatFlows", bandwidth: "10Gbit", rtt: "40ms" }]).problems.every((p) => p.path === "profiles" && p.message.startsWith("profiles (combine): "))).toBe(true);
  });

  test("preset specs", () => {
    expect(resolvePreset({ name: "throughput" })).toEqual({ preset: throughput(), problems: [] });
    expect(resolvePreset({ name: "lowLatency" }).preset).toEqual(lowLatency());
    expect(resolvePreset(lowLatency()).preset).toEqual(lowLatency());
    expect(resolvePreset({ name: "throughput", rings: { rx: 1 } }).problems.map((x) => x.message)).toEqual(['preset: unknown field "rings" (a preset spec has only "name")']);
    expect(resolvePreset("throughput").problems.map((x) => x.message)).toEqual(['preset: must be { name: "throughput" } or { name: "lowLatency" } (or nicPresets.throughput() in TypeScript)']);
  });
});
