/**
 * jest globalSetup for the lab project: removes leftovers (namespaces, veths, state dirs) of lab runs
 * whose owner process died (SIGKILL, OOM, crash) before the lab tests start. No-op when not root.
 * Add to the "lab" project in jest.config.js:  globalSetup: "<rootDir>/testkit/lab/globalSetup.ts"
 */
import globalSetup from "./index";

export default globalSetup;
