#!/usr/bin/env node
/*
 * `npm test`: the whole suite in two lanes that run at the same time, each a serial (`--runInBand`) jest.
 *   lane 1: the unit, package and lab projects, then the VM files not in lane 2;
 *   lane 2: the VM files listed in LANE2_VM (each boots its own qemu guest; one vCPU each by default), then the
 *           real-CLI project (tests/cli: the real `pulumi` CLI against lab hosts of its own).
 * The VM tier is mostly one TCG guest waiting on itself, the lab tier mostly ssh round trips: side by side on two
 * cores the whole run takes about half the serial time (docs/internals.md, "Test and CI timings", for the figures).
 * The lanes share nothing a test writes: the lab hosts exist only in lane 1, every guest has its own overlay, run
 * directory and free port, and the image builds take a per-suite lock (testkit/vm/build-image.sh).
 *
 * With arguments other than --ci / --json / --outputFile (a path, -t, --selectProjects, …) or NT_TEST_LANES=1 it is
 * plain `jest --runInBand <args>`, as before. With --json --outputFile=F the two lanes' results are merged into F
 * (the counts summed, the test results concatenated), so `.ci/run` reads one file either way.
 */
"use strict";
const { spawn } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

const root = path.resolve(__dirname, "..");
const jestBin = require.resolve("jest/bin/jest", { paths: [root] });
// Balanced on recorded file times (docs/internals.md): the clean-clone run of 0b99a08 (under load) took 3,017 s in
// lane 1 and 3,750 s in lane 2, before the rollout and confirm real-CLI tests (+≈300 s, lane 2) and confirm.vm (≈240 s,
// lane 2): adopt.vm (465 s) and vm.test (264 s) moved to lane 1.
const LANE2_VM = ["tests/vm/nicQueues.vm.test.ts", "tests/vm/trixie.vm.test.ts", "tests/vm/confirm.vm.test.ts"];

const args = process.argv.slice(2);
let outputFile;
let json = false;
const rest = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === "--json") json = true;
  else if (a.startsWith("--outputFile=")) outputFile = a.slice("--outputFile=".length);
  else if (a === "--outputFile" && i + 1 < args.length) outputFile = args[++i];
  else rest.push(a);
}
const lanes = process.env.NT_TEST_LANES !== "1" && rest.every((a) => a === "--ci");

if (!lanes) {
  const p = spawn(process.execPath, [jestBin, "--runInBand", ...args], { cwd: root, stdio: "inherit" });
  p.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  return;
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "nt-lanes-"));
const laneArgs = [
  ["--selectProjects", "unit", "package", "lab", "vm", "--testPathIgnorePatterns", ...LANE2_VM.map((f) => `/${escape(f)}$`)],
  ["--selectProjects", "vm", "cli", "--", ...LANE2_VM.map((f) => `/${escape(f)}$`), "/tests/cli/"],
];
for (const f of LANE2_VM) if (!fs.existsSync(path.join(root, f))) throw new Error(`scripts/test.js: lane 2 lists ${f}, which does not exist`);

function runLane(n, extra) {
  const out = path.join(tmp, `lane${n}.json`);
  const argv = [jestBin, "--runInBand", ...rest, "--json", `--outputFile=${out}`, ...extra];
  const started = Date.now();
  return new Promise((resolve) => {
    const p = spawn(process.execPath, argv, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    const prefix = `[${n}] `;
    for (const [src, dst] of [[p.stdout, process.stdout], [p.stderr, process.stderr]]) {
      let buf = "";
      src.on("data", (d) => {
        buf += d.toString();
        const lines = buf.split("\n");
        buf = lines.pop();
        for (const l of lines) dst.write(prefix + l + "\n");
      });
      src.on("end", () => buf && dst.write(prefix + buf + "\n"));
    }
    p.on("exit", (code, signal) => {
      let result;
      try {
        result = JSON.parse(fs.readFileSync(out, "utf8"));
      } catch {
        result = undefined; // jest died before writing: counted as a failed run below
      }
      resolve({ n, code: code ?? 1, signal, result, secs: Math.round((Date.now() - started) / 1000) });
    });
  });
}

function merge(results) {
  const m = { testResults: [] };
  for (const r of results) {
    for (const [k, v] of Object.entries(r)) {
      if (typeof v === "number") m[k] = k === "startTime" ? Math.min(m[k] ?? v, v) : (m[k] ?? 0) + v;
      else if (k === "testResults") m.testResults.push(...v);
      else if (k === "success") m.success = (m.success ?? true) && v;
      else if (k === "snapshot" && v && typeof v === "object") {
        m.snapshot ??= {};
        for (const [sk, sv] of Object.entries(v)) if (typeof sv === "number") m.snapshot[sk] = (m.snapshot[sk] ?? 0) + sv;
      }
    }
  }
  return m;
}

Promise.all([runLane(1, laneArgs[0]), runLane(2, laneArgs[1])]).then((done) => {
  let failed = false;
  for (const d of done) {
    const r = d.result;
    if (!r) {
      failed = true;
      process.stderr.write(`lane ${d.n}: jest exited ${d.signal ?? d.code} without results (${d.secs} s)\n`);
      continue;
    }
    if (d.code !== 0) failed = true;
    process.stderr.write(
      `lane ${d.n}: ${r.numTotalTestSuites} suites, ${r.numPassedTests} passed, ${r.numFailedTests} failed, ` +
        `${r.numPendingTests + r.numTodoTests} skipped, ${r.numRuntimeErrorTestSuites} suites did not run, ${d.secs} s\n`,
    );
  }
  const present = done.filter((d) => d.result).map((d) => d.result);
  const merged = merge(present);
  if (present.length < done.length) {
    merged.success = false;
    merged.numRuntimeErrorTestSuites = (merged.numRuntimeErrorTestSuites ?? 0) + done.length - present.length;
  }
  if (json && outputFile) fs.writeFileSync(outputFile, JSON.stringify(merged));
  fs.rmSync(tmp, { recursive: true, force: true });
  process.exit(failed ? 1 : 0);
});
