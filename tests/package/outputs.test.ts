/**
 * A bad value that arrives as an Output fails once: the many promises that depend on it reject with one error object
 * (the Pulumi runner reports each object once, as a RunError without a stack trace), and no child Command is
 * registered, so nothing reaches a host. Runs the program in its own process (see the fixture's header).
 */
import * as path from "path";
import { spawnSync } from "child_process";
import { REPO } from "./freshClone";

/** Runs the fixture program (NetTuning, or NicQueues with "nic") and returns what it printed. */
function runLate(...args: string[]) {
  // Its exit code is not the point (the SDK's exit hook flags the promises the failed registrations left pending).
  const p = spawnSync(process.execPath, ["-r", "ts-node/register/transpile-only", path.join(__dirname, "fixtures/late-output-program.ts"), ...args], {
    cwd: REPO,
    timeout: 120_000,
    encoding: "utf8",
    env: { ...process.env, TS_NODE_PROJECT: path.join(REPO, "tsconfig.dev.json") },
  });
  const last = p.stdout.trim().split("\n").pop() ?? "";
  if (!last.startsWith("{")) throw new Error(`no result from the program (status ${p.status}):\n${p.stdout}\n${p.stderr}`);
  return JSON.parse(last);
}

test("a bad value from an Output: one error object listing every problem, no child registered", () => {
  const r = runLate();
  // one rejection: since issue #32 item 14 nothing registered depends on the failing Output, so there is no cascade
  // (it was 16 for a NetTuning before)
  expect(r.rejections).toBe(1);
  expect(r.distinct).toBe(1); // one error, which the runner reports once
  expect(r.inputError).toEqual([true]);
  expect(r.runError).toEqual([true]);
  expect(r.problems).toEqual(['persist "yes" must be true or false (a boolean, not a string or number)', expect.stringMatching(/^net\.core\.somaxconn = -5 is out of range/)]);
  expect(r.registered).toEqual(["late"]); // the component only: neither -apply nor -restore
});

test("NicQueues: a bad value from an Output is one InputError listing every problem, no child registered", () => {
  const r = runLate("nic");
  expect(r.distinct).toBe(1);
  expect(r.inputError).toEqual([true]);
  expect(r.runError).toEqual([true]);
  expect(r.problems).toEqual([expect.stringMatching(/^restoreOnDelete "no" must be true or false/), "txQueueLength must be an integer from 1 to 1000000 (packets)"]);
  expect(r.registered).toEqual(["late"]); // the component only: no child Command
});
