/**
 * The lab's build of the host engine: the package's engine with the fault-injection overlay testkit/lab-engine.sh
 * after its runtime (kill, stop or hang a run at a mutating step, a shortened deadline, a failing undo or journal
 * copy; see that file). The package's engine has only inert step markers; tests that inject faults deliver this
 * build instead: in-process (the harness) with {@link useLabEngine}, under the real CLI through the program's
 * `labEngine` config (tests/cli/fixtures.ts PROGRAM), which calls the same `assembleEngine` of the built package.
 */
import * as fs from "fs";
import * as path from "path";
import { assembleEngine, type Engine, useEngine } from "../provider/host/engine";

/** The overlay's path (the real CLI's program reads it itself). */
export const LAB_OVERLAY = path.join(__dirname, "lab-engine.sh");

let built: Engine | undefined;
export function labEngine(): Engine {
  built ??= assembleEngine(undefined, undefined, fs.readFileSync(LAB_OVERLAY, "utf8"));
  return built;
}

/** Makes this process's components deliver the lab's engine (for a jest file: call it at load or in beforeAll). */
export function useLabEngine(): void {
  useEngine(labEngine());
}
