/**
 * Issue #16, the pure parts: NetTuning `adopt` validation, the plan lines, the report → restore-plan block round
 * trip; NicQueues `bootOverride` / `adoptRcLocalLines` plan lines; the fallback restore carries its adoption part
 * only when its plan needs it.
 */
import { ADOPT_MARKER, adoptDirectives, adoptedFromReport, renderAdoptedRestore, validateAdopt } from "../../provider/sysctl/adopt";
import { nicBootDirectives, rcAdoptedRestoreNote, rcLocalAdoptDirectives } from "../../provider/nic/adopt";
import { planSysctls } from "../../provider/sysctl/plan";
import { fallbackProgram, restoreStdin } from "../../provider/host/programs";
import { ownerOf } from "../../provider/owner";

const OWN = "/etc/sysctl.d/90-net-tuning-edge.conf";

test("adopt entries: names in /etc/sysctl.d, absolute paths in the boot directories, /etc/sysctl.conf; anything else refused", () => {
  expect(validateAdopt(["99-hk-net-tuning.conf", "/usr/lib/sysctl.d/50-x.conf", "/run/sysctl.d/a.conf", "/etc/sysctl.conf"], OWN)).toEqual({
    paths: ["/etc/sysctl.conf", "/etc/sysctl.d/99-hk-net-tuning.conf", "/run/sysctl.d/a.conf", "/usr/lib/sysctl.d/50-x.conf"],
    problems: [],
  });
  for (const bad of ["../x.conf", "a/b.conf", "/etc/x.conf", "/etc/sysctl.d/.hidden.conf", "/etc/sysctl.d/x.txt", "x y.conf", "/etc/sysctl.d/../passwd"]) {
    expect([bad, validateAdopt([bad], OWN).problems]).toEqual([bad, [{ path: "adopt[0]", message: expect.stringContaining(`adopt[0]: "${bad}" is not a sysctl file`) }]]);
  }
  // each problem with the property path it is about (adopt, adopt[i])
  const messages = (v: unknown) => validateAdopt(v, OWN).problems.map((p) => `${p.path}: ${p.message}`);
  expect(messages("x.conf")).toEqual([`adopt: adopt: must be a list of file names, e.g. ["99-hk-net-tuning.conf"]`]);
  expect(messages([3])).toEqual(["adopt[0]: adopt[0]: must be a file name in /etc/sysctl.d or an absolute path"]);
  expect(messages(["a.conf", "/etc/sysctl.d/a.conf"])).toEqual([`adopt[1]: adopt[1]: "/etc/sysctl.d/a.conf" is listed twice`]);
  expect(validateAdopt(["90-net-tuning-edge.conf"], OWN).problems[0].message).toContain("is this resource's own file");
  expect(adoptDirectives(["/etc/sysctl.conf"])).toEqual(["@adopt /etc/sysctl.conf"]);
});

test("the NetTuning plan carries one @adopt line per file (the preview's stdin diff); persist: false is refused", () => {
  const owner = ownerOf("p", "s", "edge");
  const plan = planSysctls({ owner, name: "edge", sysctls: { "net.core.somaxconn": 4096 }, adopt: ["99-hk-net-tuning.conf"] });
  expect(plan.stdin).toContain("\n@adopt /etc/sysctl.d/99-hk-net-tuning.conf\n@content\n");
  expect(plan.adopt).toEqual(["/etc/sysctl.d/99-hk-net-tuning.conf"]);
  expect(planSysctls({ owner, name: "edge", sysctls: { "net.core.somaxconn": 4096 } }).stdin).not.toContain("@adopt");
  expect(() => planSysctls({ owner, name: "edge", sysctls: { "net.core.somaxconn": 4096 }, adopt: ["a.conf"], persist: false })).toThrow(/adopt needs persist: true/);
});

test("report lines → restore-plan block: content base64 in 76-character lines, delimited; malformed lines refused", () => {
  const content = Buffer.from("net.core.somaxconn = 65535\n".repeat(10));
  const extra = {
    "adopted.2": `/etc/sysctl.conf\tlines\t644\t0:0\t1700000000\t3000\t-`,
    "adopted.1": `/etc/sysctl.d/99-hk-net-tuning.conf\tfile\t640\t0:0\t1709618828.123456789\t${content.length}\t${content.toString("base64")}`,
    file: "/etc/sysctl.d/90-x.conf",
  };
  const files = adoptedFromReport(extra);
  expect(files.map((f) => f.path)).toEqual(["/etc/sysctl.d/99-hk-net-tuning.conf", "/etc/sysctl.conf"]);
  const block = renderAdoptedRestore(files);
  const lines = block.trimEnd().split("\n");
  expect(lines[0]).toBe("# --- adopted files (NetTuning adopt): put back byte for byte on delete ---");
  expect(lines[1]).toBe(`@adopted /etc/sysctl.d/99-hk-net-tuning.conf\tfile\t640\t0:0\t1709618828.123456789\t${content.length}`);
  const data = lines.filter((l) => l.startsWith("@adopted-data ")).map((l) => l.slice(14));
  expect(Math.max(...data.map((d) => d.length))).toBe(76);
  expect(Buffer.from(data.join(""), "base64")).toEqual(content);
  expect(lines).toContain("@adopted /etc/sysctl.conf\tlines\t644\t0:0\t1700000000\t3000");
  expect(lines[lines.length - 1]).toBe("# --- end of adopted files ---");
  expect(renderAdoptedRestore([])).toBe("");
  expect(() => adoptedFromReport({ "adopted.1": "/etc/x\tfile\t644\t0:0\t1\t1\t$(reboot)" })).toThrow(/malformed report line adopted\.1/);
});

test("NicQueues: @boot-override (default error: no line) and @adopt-rc lines; bad values refused", () => {
  // the host's default "error" has no line: a NicQueues plan of 0.1.0/0.2.0 stays byte for byte
  expect(nicBootDirectives(undefined)).toEqual({ lines: [], problems: [] });
  expect(nicBootDirectives("error")).toEqual({ lines: [], problems: [] });
  expect(nicBootDirectives("warn").lines).toEqual(["@boot-override warn"]);
  expect(nicBootDirectives("maybe").problems[0]).toContain(`bootOverride "maybe"`);
  const rc = rcLocalAdoptDirectives(["  ip link set dev eth0 txqueuelen 10000  ", "for q in /sys/class/net/eth0/queues/rx-*; do\n  echo ffffffff > $q/rps_cpus\ndone\n"]);
  expect(rc).toEqual({
    lines: ["@adopt-rc 0 ip link set dev eth0 txqueuelen 10000", "@adopt-rc 1 for q in /sys/class/net/eth0/queues/rx-*; do", "@adopt-rc 1 echo ffffffff > $q/rps_cpus", "@adopt-rc 1 done"],
    problems: [],
  });
  expect(rcLocalAdoptDirectives(["a\tb", "", 5, "# BEGIN pulumi-net-tuning x eth0"]).problems).toEqual([
    "adoptRcLocalLines[0] line 1 contains a control character (tab, CR…): give the line as printable text",
    "adoptRcLocalLines[1] is empty",
    `adoptRcLocalLines[2] must be a string (one rc.local line, or several separated by "\\n")`,
    "adoptRcLocalLines[3] names a pulumi-net-tuning block marker: only foreign lines can be adopted",
  ]);
  expect(rcAdoptedRestoreNote("/etc/rc.d/rc.local")).toMatch(/^# adopted: rc\.local lines/);
  expect(rcAdoptedRestoreNote("x; rm -rf /")).toBe("");
});

test("the fallback restore carries its adoption part only when its plan gives something back", () => {
  // the adoption part's functions redefine the kind part's stubs (a_dir refuses @adopted lines, a_put does nothing)
  expect(fallbackProgram("sysctl")).toContain("a_dir() { return 1; }");
  expect(fallbackProgram("sysctl")).not.toContain("base64 -d");
  expect(fallbackProgram("sysctl", true)).toMatch(/^a_dir\(\) \{\n/m);
  expect(fallbackProgram("sysctl", true)).toContain("base64 -d");
  expect(fallbackProgram("nic")).not.toContain("rc-adopted");
  expect(fallbackProgram("nic", true)).toContain("rc-adopted");
  expect(restoreStdin("sysctl", "@net-tuning v1\n", false)).not.toContain("base64 -d");
  expect(restoreStdin("sysctl", "@net-tuning v1\n@adopted /etc/sysctl.conf\tlines\t644\t0:0\t1\t1\n", false)).toContain(fallbackProgram("sysctl", true));
  expect(restoreStdin("nic", "@net-tuning v1\n# adopted: rc.local lines\n", false)).toContain(fallbackProgram("nic", true));
  // never the engine's restore
  for (const k of ["sysctl", "nic"] as const) expect(fallbackProgram(k, true)).not.toContain("nt_restore_main");
  // the marker the fallback takes out of /etc/sysctl.conf is the one the apply puts in
  expect(fallbackProgram("sysctl", true)).toContain(`sed 's/^${ADOPT_MARKER}//'`);
});
