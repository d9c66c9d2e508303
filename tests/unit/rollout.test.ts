/**
 * The rollout helper's pure parts (components/rollout.ts): waves, the fleet-wide budget verdict with `resume`, the
 * summary table, and the refusal of bad options before anything is created. The helper itself runs under the real
 * CLI on 10 lab hosts: tests/cli/rollout.test.ts.
 */
import { haltId, HostResult, planWaves, rollout, summaryTable, verdict } from "../../components/rollout";

const r = (label: string, wave: number, status: HostResult["status"] = "applied"): HostResult => ({ label, wave, status, reason: status === "applied" ? "" : `why ${label}` });

describe("waves", () => {
  const hosts = Array.from({ length: 10 }, (_, i) => `h${i + 1}`);
  it("a canary, then groups of waveSize; the last group holds the rest", () => {
    expect(planWaves(hosts, 1, 3)).toEqual([["h1"], ["h2", "h3", "h4"], ["h5", "h6", "h7"], ["h8", "h9", "h10"]]);
    expect(planWaves(hosts, 0, 4)).toEqual([["h1", "h2", "h3", "h4"], ["h5", "h6", "h7", "h8"], ["h9", "h10"]]);
    expect(planWaves(hosts, 2, 100)).toEqual([["h1", "h2"], hosts.slice(2)]);
    expect(planWaves(["a"], 1, 5)).toEqual([["a"]]);
  });
});

describe("the budget check's verdict", () => {
  const results = [r("h1", 0), r("h2", 1), r("h3", 1), r("h4", 1, "refused"), r("h5", 2), r("h6", 2, "failed"), r("h7", 2)];
  it("counts the failures of every wave so far against the budget, not per wave", () => {
    expect(verdict(results, 1, 1).halt).toBe(false);
    const v = verdict(results, 2, 1);
    expect(v.halt).toBe(true);
    expect(v.counted.map((x) => x.label)).toEqual(["h4", "h6"]);
    expect(v.id).toBe(haltId(2, ["h6", "h4"]));
    expect(verdict(results, 2, 2).halt).toBe(false);
  });
  it("resume excuses exactly the failures of the halt it names", () => {
    const id = verdict(results, 2, 1).id;
    expect(verdict(results, 2, 1, id)).toMatchObject({ halt: false, counted: [] });
    // a new failure in a later wave is counted
    const later = [...results, r("h8", 3, "rolledBack"), r("h9", 3, "unconfirmed")];
    expect(verdict(later, 3, 1, id)).toMatchObject({ halt: true, counted: [{ label: "h8" }, { label: "h9" }] });
    expect(verdict(later, 3, 2, id).halt).toBe(false);
    // not the failures it counted any more (h4 now applied): nothing excused, the budget decides
    const fixed = results.map((x) => (x.label === "h4" ? r("h4", 1) : x));
    expect(verdict(fixed, 2, 0, id)).toMatchObject({ halt: true, excused: [] });
    expect(verdict(fixed, 2, 1, id).halt).toBe(false);
  });
  it("the halt id names the wave and is stable whatever the order", () => {
    expect(haltId(2, ["h6", "h4"])).toMatch(/^wave-2-[0-9a-f]{8}$/);
    expect(haltId(2, ["h6", "h4"])).toBe(haltId(2, ["h4", "h6"]));
    expect(haltId(2, ["h4"])).not.toBe(haltId(2, ["h4", "h6"]));
  });
});

describe("the summary table", () => {
  it("names every host with its wave and status, the host's message for the ones not applied, and the hosts not started", () => {
    const t = summaryTable([["h1"], ["h2", "h3"], ["h4"]], [r("h1", 0), r("h2", 1, "failed"), r("h3", 1)], 1);
    expect(t.split("\n")).toEqual(["  canary  h1  applied", "  wave 1  h2  failed  why h2", "  wave 1  h3  applied", "  wave 2  h4  not started"]);
  });
  it("marks the failures a resume excused", () => {
    const rs = [r("h1", 0), r("h2", 1, "failed"), r("h3", 1), r("h4", 2, "refused")];
    const v = verdict(rs, 2, 0, haltId(1, ["h2"]));
    expect([v.halt, v.excused.map((x) => x.label), v.counted.map((x) => x.label)]).toEqual([true, ["h2"], ["h4"]]);
    const t = summaryTable([["h1"], ["h2", "h3"], ["h4"]], rs, 2, true, v.excused);
    expect(t.split("\n")).toEqual(["  canary  h1  applied", "  wave 1  h2  failed (excused by resume)  why h2", "  wave 1  h3  applied", "  wave 2  h4  refused  why h4"]);
  });
});

describe("bad options are refused before anything is created, naming the option and the fix", () => {
  const make = () => {
    throw new Error("make must not run");
  };
  const cases: [unknown, string][] = [
    [{}, "waveSize: "],
    [{ waveSize: 0 }, "waveSize: waveSize must be at least 1"],
    [{ waveSize: "25" }, 'waveSize: waveSize must be a number or a share such as "25%"'],
    [{ waveSize: 2, maxFailures: -1 }, "maxFailures: maxFailures must be at least 0"],
    [{ waveSize: 2, canary: 1.5 }, "canary: canary must be a whole number of hosts"],
    [{ waveSize: 2, bakeSeconds: 100_000 }, "bakeSeconds: bakeSeconds must be at most 86400"],
    [{ waveSize: 2, resume: "yes" }, 'resume: resume must be the id a halt printed, such as "wave-2-1a2b3c4d"'],
    [{ waveSize: 2, serial: 3 }, "Unrecognized key"],
  ];
  it.each(cases)("%j", (options, message) => {
    expect(() => rollout(["a", "b"], options as never, make)).toThrow(message);
  });
  it("no hosts, or two hosts with one label", () => {
    expect(() => rollout([], { waveSize: 1 }, make)).toThrow("rollout: hosts must be a non-empty list");
    expect(() => rollout(["a", "a"], { waveSize: 1 }, make)).toThrow('two hosts have the label "a"');
  });
});
