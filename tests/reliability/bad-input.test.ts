/**
 * Bad-input catalogue (issue #8): table-driven. Every case fails with a message naming the input and the fix,
 * before any SSH session when the input alone shows the problem (the harness counts sessions), otherwise in the
 * host preflight (exit 2, "nothing was changed") or — for what only the kernel knows — mid-apply with a rollback
 * (exit 1). In every case the host is byte-identical afterwards (testkit/host.ts snapshot).
 */
import { Stack, UpResult } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { snapshot } from "../../testkit/host";
import * as fs from "fs";
import * as path from "path";
import { ALL_CASES, BadCase, caseSummary, MISSING_FIX, NIC_CASES, SYSCTL_CASES, withoutFix } from "./cases";
import { commands, expectAll, nicProgram, sh, sysProgram } from "./common";
import { planSysctls } from "../../provider/sysctl/plan";
import { planNic } from "../../provider/nic/plan";
import { InputError } from "../../provider/errors";

jest.setTimeout(180000);

let lab: Lab;
let host: LabHost;
beforeAll(async () => {
  lab = await startLab({ hosts: 1, tag: "badin" });
  host = lab.hosts[0];
}, 120000);
afterAll(async () => {
  await lab?.stop();
});

let seq = 0;
async function run(c: BadCase): Promise<{ r: UpResult; stack: Stack }> {
  const stack = new Stack({ project: "rel", stack: `bad${++seq}` });
  const name = `bad${seq}`;
  const r = await stack.up(c.kind === "sysctl" ? sysProgram(host, name, c.args) : nicProgram(host, name, c.args));
  return { r, stack };
}

test("the catalogue has at least 60 cases across both resources, every stage represented", () => {
  expect(ALL_CASES.length).toBeGreaterThanOrEqual(60);
  expect(SYSCTL_CASES.length).toBeGreaterThanOrEqual(25);
  expect(NIC_CASES.length).toBeGreaterThanOrEqual(25);
  for (const stage of ["preview", "host", "apply"]) expect(ALL_CASES.some((c) => c.stage === stage)).toBe(true);
  expect(new Set(ALL_CASES.map((c) => `${c.kind}:${c.id}`)).size).toBe(ALL_CASES.length);
  // Every known no-fix entry names a real case.
  const ids = new Set(ALL_CASES.map((c) => c.id));
  expect([...MISSING_FIX].filter((id) => !ids.has(id))).toEqual([]);
});

test("tests/reliability/README.md states the catalogue's real split", () => {
  const readme = fs.readFileSync(path.join(__dirname, "README.md"), "utf8");
  const stated = /<!-- generated:case-summary -->([^<]*)<!-- \/generated -->/.exec(readme)?.[1];
  expect(stated).toBe(caseSummary());
});

/** A message names a fix for every problem, except the known gaps listed in MISSING_FIX, which must still lack one. */
function expectFix(c: BadCase, error: string): void {
  const missing = withoutFix(error);
  if (MISSING_FIX.has(c.id)) expect(missing).not.toEqual([]);
  else expect(missing).toEqual([]);
}

const PREVIEW_DEADLINE_MS = 20000;
type Outcome = { r: UpResult; stack: Stack } | "TIMEOUT";

/** Runs every case of a group at once (one Stack each), each bounded: an `up` that never returns is a finding too. */
async function runBounded(cases: BadCase[]): Promise<Map<string, Outcome>> {
  const out = new Map<string, Outcome>();
  await Promise.all(
    cases.map(async (c) => {
      let timer: NodeJS.Timeout | undefined;
      const o = await Promise.race<Outcome>([
        run(c),
        new Promise<"TIMEOUT">((res) => { timer = setTimeout(() => res("TIMEOUT"), PREVIEW_DEADLINE_MS); }),
      ]);
      clearTimeout(timer);
      out.set(c.id, o);
    }),
  );
  return out;
}

describe("the validators alone refuse every preview case (pure, no host)", () => {
  const owner = { label: "rel/pure/x", id: "rel.pure.x-00000000" };
  test.each(ALL_CASES.filter((c) => c.stage === "preview").map((c) => [`${c.kind}: ${c.id}`, c] as const))("%s", (_id, c) => {
    let message = "";
    try {
      if (c.kind === "sysctl") planSysctls({ owner, name: "x", ...c.args } as Parameters<typeof planSysctls>[0]);
      else planNic({ owner, name: "x", ...c.args } as Parameters<typeof planNic>[0]);
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      message = (e as Error).message;
    }
    expectAll(message, c.expect);
    expectFix(c, message);
  });
  test.each(ALL_CASES.filter((c) => c.stage !== "preview").map((c) => [`${c.kind}: ${c.id}`, c] as const))("%s is well-formed: left to the host", (_id, c) => {
    if (c.kind === "sysctl") expect(() => planSysctls({ owner, name: "x", ...c.args } as Parameters<typeof planSysctls>[0])).not.toThrow();
    else expect(() => planNic({ owner, name: "x", ...c.args } as Parameters<typeof planNic>[0])).not.toThrow();
  });
});

describe.each(["sysctl", "nic"] as const)("%s: refused by the component before any SSH session", (kind) => {
  const cases = ALL_CASES.filter((c) => c.kind === kind && c.stage === "preview");
  let before: string;
  let outcomes: Map<string, Outcome>;
  beforeAll(async () => {
    before = await snapshot(host);
    outcomes = await runBounded(cases);
  }, PREVIEW_DEADLINE_MS + 60000);
  test("the host is byte-identical after the whole group", async () => {
    expect(await snapshot(host)).toBe(before);
  });
  test.each(cases.map((c) => [c.id, c] as const))("%s", (_id, c) => {
    const o = outcomes.get(c.id)!;
    if (o === "TIMEOUT") {
      throw new Error(
        `stack.up did not return within ${PREVIEW_DEADLINE_MS} ms: the invalid input is only detected inside an Output.apply ` +
          `(the Command's stdin fails to serialize and the program never completes) instead of synchronously in the constructor`,
      );
    }
    const { r, stack } = o;
    expect(r.ok).toBe(false);
    expect(r.sessions.total).toBe(0);
    expect(r.runs).toHaveLength(0);
    expect(commands(stack)).toBe(0);
    const resource = c.kind === "sysctl" ? "NetTuning" : "NicQueues";
    expect(r.error).toMatch(new RegExp(`program failed: ${resource} "bad\\d+": \\d+ invalid inputs?:`));
    expectAll(r.error, c.expect);
    expectFix(c, r.error!);
  });
});

describe("refused on the host: preflight (exit 2, nothing changed) or the kernel mid-apply (exit 1, rolled back)", () => {
  const cases = ALL_CASES.filter((c) => c.stage !== "preview");
  test.each(cases.map((c) => [`${c.kind} [${c.stage}] ${c.id}`, c] as const))("%s", async (_id, c) => {
    const setup = c.kind === "sysctl" ? c.hostSetup : undefined;
    if (setup) await sh(host, setup.apply);
    try {
      await refusedOnHost(c);
    } finally {
      if (setup) await sh(host, setup.undo);
    }
  });
  async function refusedOnHost(c: BadCase): Promise<void> {
    const before = await snapshot(host);
    const { r, stack } = await run(c);
    expect(r.ok).toBe(false);
    // the engine delivery (SFTP) and the refused apply
    expect(r.sessions.total).toBe(2);
    expect(r.runs).toHaveLength(1);
    expect(r.runs[0].exitCode).toBe(c.stage === "host" ? 2 : 1);
    if (c.stage === "host") expect(r.error).toMatch(/preflight refused the change on \S+ \([^)]+\): \d+ problem\(s\), nothing was changed:/);
    else expect(r.error).toMatch(/every change of this run was rolled back/);
    expectAll(r.error, c.expect);
    expectFix(c, r.error!);
    expect(commands(stack)).toBe(0); // a failed create stores nothing
    expect(await snapshot(host)).toBe(before);
    // Nothing left behind by the program itself either.
    expect((await host.exec("find /tmp /var/lib/pulumi-net-tuning -mindepth 1 -path /var/lib/pulumi-net-tuning/incoming -prune -o \\( ! -type d -o -name .lock -o -name 'net-tuning*' \\) -print 2>/dev/null; true")).stdout).toBe("");
  }
});
