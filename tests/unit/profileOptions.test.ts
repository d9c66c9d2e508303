/**
 * Issue #33, "Profiles measured against ESnet": the profiles' `pacing` and `congestionControl` options (provider/sizing/
 * profiles.ts), the preview's verdict on a congestion control (provider/host/messages.ts congestionRefusal, the live
 * read's facts), and the promise that a plan without the options is byte for byte the plan of 99a28ea.
 */
import * as fs from "fs";
import * as path from "path";
import { CC_NOT_ALLOWED, CC_UNAVAILABLE, congestionRefusal } from "../../provider/host/messages";
import { ownerOf } from "../../provider/owner";
import { longFatFlows, manySmallFlows, nvmeTcpLatency, webServer } from "../../provider/sizing";
import { resolveProfiles } from "../../provider/sizing/spec";
import { planSysctls } from "../../provider/sysctl/plan";
import { InputError } from "../../provider/errors";
import { renderPlans } from "./fixtures/profilePlans/render";

test("without the options, every profile's plan and warnings are byte for byte those of 99a28ea (an upgrade changes no host)", () => {
  expect(renderPlans()).toBe(fs.readFileSync(path.join(__dirname, "fixtures/profilePlans/plans.json"), "utf8"));
});

const plan = (spec: Record<string, unknown>) => {
  const r = resolveProfiles(spec, undefined);
  expect(r.problems).toEqual([]);
  return planSysctls({ owner: ownerOf("proj", "dev", "p"), name: "p", sysctls: {}, profile: r.profile! });
};

describe("pacing and congestionControl", () => {
  test("longFatFlows: set only when given, shown in the name, the plan's file lines and (a module) its @module line", () => {
    const base = longFatFlows({ bandwidth: "10Gbit", rtt: "40ms" });
    expect(base.sysctls["net.core.default_qdisc"]).toBeUndefined();
    expect(base.sysctls["net.ipv4.tcp_congestion_control"]).toBeUndefined();
    const p = longFatFlows({ bandwidth: "10Gbit", rtt: "40ms", pacing: "fq", congestionControl: "htcp" });
    expect(p.name).toBe("longFatFlows(10Gbit, 40ms, pacing fq, htcp)");
    expect(p.sysctls).toEqual({ ...base.sysctls, "net.core.default_qdisc": "fq", "net.ipv4.tcp_congestion_control": "htcp" });
    expect(p.rationale["net.core.default_qdisc"]).toMatch(/^pacing: "fq" \(option\): fq paces each flow .*host-wide: a network namespace or container refuses it$/);
    expect(p.rationale["net.ipv4.tcp_congestion_control"]).toContain('congestionControl: "htcp" (option)');
    expect(p.warnings).toContain("net.core.default_qdisc applies to qdiscs created afterwards: existing interfaces keep theirs until `tc qdisc replace dev IFACE root fq` or a reboot");
    const stdin = plan({ name: "longFatFlows", bandwidth: "10Gbit", rtt: "40ms", pacing: "fq", congestionControl: "htcp" }).stdin;
    expect(stdin.split("\n")).toEqual(expect.arrayContaining(["@module tcp_htcp", "net.core.default_qdisc = fq", "net.ipv4.tcp_congestion_control = htcp"]));
    // a built-in algorithm needs no module
    expect(plan({ name: "manySmallFlows", bandwidth: "1Gbit", rtt: "10ms", congestionControl: "cubic" }).stdin.split("\n").filter((l) => l.startsWith("@module"))).toEqual([]);
  });

  test("every profile takes them (the spec's fields too); they replace a value the profile chose itself", () => {
    expect(webServer({ congestionControl: "bbr" }).sysctls["net.ipv4.tcp_congestion_control"]).toBe("bbr");
    expect(manySmallFlows({ bandwidth: "10Gbit", rtt: "1ms", pacing: "fq" }).sysctls["net.core.default_qdisc"]).toBe("fq");
    const n = nvmeTcpLatency({ congestionControl: "htcp" });
    expect(n.sysctls["net.ipv4.tcp_congestion_control"]).toBe("htcp");
    expect(n.rationale["net.ipv4.tcp_congestion_control"]).toContain("(option)");
    expect(n.warnings.filter((w) => w.startsWith("net.core.default_qdisc applies"))).toHaveLength(1);
    expect(nvmeTcpLatency({ pacing: "fq" }).warnings.filter((w) => w.startsWith("net.core.default_qdisc applies"))).toHaveLength(1);
  });

  test("a bad value is refused before anything, naming the option, the value and what it takes", () => {
    const r = resolveProfiles({ name: "longFatFlows", bandwidth: "10Gbit", rtt: "40ms", pacing: "fq_codel", congestionControl: "bbr;reboot" }, undefined);
    expect(r.problems.map((x) => x.message)).toEqual([
      'profile (longFatFlows): pacing "fq_codel": use "fq" (net.core.default_qdisc = fq), or leave it out',
      'profile (longFatFlows): congestionControl "bbr;reboot": must be a congestion-control name of 1-15 characters a-z, 0-9 and _ ' +
        '(the kernel\'s tcp_<name> modules: reno, cubic, bbr, bic, htcp, dctcp, vegas, veno, westwood, illinois, hybla, scalable, lp, yeah, nv, cdg, highspeed), e.g. "bbr" or "htcp"',
    ]);
    for (const bad of ["BBR", "", "a_name_of_16_chr", 7]) {
      expect(() => webServer({ congestionControl: bad as string })).toThrow(InputError);
    }
    // a well-formed name outside the usual ones is the host's to judge (out-of-tree modules such as bbr3)
    expect(webServer({ congestionControl: "bbr3" }).sysctls["net.ipv4.tcp_congestion_control"]).toBe("bbr3");
  });
});

describe("congestionRefusal: the preflight's verdict from the live read's facts", () => {
  const f = { available: "reno cubic bbr", allowed: "reno cubic", modules: "htcp vegas", netns: "0" };
  test("available: none; in a namespace, only when allowed", () => {
    expect(congestionRefusal("bbr", f)).toBeUndefined();
    expect(congestionRefusal("cubic", { ...f, netns: "1" })).toBeUndefined();
    expect(congestionRefusal("bbr", { ...f, netns: "1" })).toBe(CC_NOT_ALLOWED.text({ name: "bbr", allowed: "reno cubic" }));
  });
  test("not available: left to the apply when the host has the module, refused naming the available and loadable ones when not", () => {
    expect(congestionRefusal("htcp", f)).toBeUndefined();
    expect(congestionRefusal("dctcp", f)).toBe(
      "net.ipv4.tcp_congestion_control = dctcp is not available on this kernel (net.ipv4.tcp_available_congestion_control: reno cubic bbr; modules it could load: htcp vegas) " +
        "and module tcp_dctcp cannot be loaded: pick one of the available, or install tcp_dctcp (BBR needs Linux 4.9+)",
    );
    expect(congestionRefusal("dctcp", { ...f, modules: "" })).toBe(CC_UNAVAILABLE.text({ name: "dctcp", available: "reno cubic bbr", loadable: "none" }));
  });
});

describe("ESnet's values, declared once (provider/sizing/esnet.ts)", () => {
  test("the audit's ESnet column is the same table; every profile's difference from it has a reason", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const audit = require("../../provider/audit/findings") as typeof import("../../provider/audit/findings");
    const esnet = require("../../provider/sizing/esnet") as typeof import("../../provider/sizing/esnet"); // eslint-disable-line @typescript-eslint/no-require-imports
    expect(audit.ESNET).toBe(esnet.ESNET);
    expect(audit.ESNET_SOURCE).toBe(esnet.ESNET_SOURCE);
    const rows = esnet.esnetComparison();
    expect(rows.filter((r) => r.verdict !== "same" && !r.why)).toEqual([]);
    // the options make longFatFlows agree with ESnet on pacing and congestion control; 100G × 40 ms reaches ESnet's maxima
    const row = (call: string, key: string) => rows.find((r) => r.call.startsWith(call) && r.key === key)!;
    expect(row("longFatFlows({ …, pacing", "net.core.default_qdisc").verdict).toBe("same");
    expect(row("longFatFlows({ …, pacing", "net.ipv4.tcp_congestion_control").verdict).toBe("same");
    expect(row('longFatFlows({ bandwidth: "10Gbit"', "net.core.default_qdisc").verdict).toBe("unset");
    expect(row('longFatFlows({ bandwidth: "100Gbit"', "net.core.rmem_max").verdict).toBe("same");
    expect(esnet.esnetAgrees("htcp or bbr", "bbr")).toBe(true);
    expect(esnet.esnetAgrees("htcp or bbr", "cubic")).toBe(false);
  });
});
