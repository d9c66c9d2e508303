/**
 * jest globalSetup of the `cli` project: the lab's clean-up of dead runs (testkit/lab/globalSetup.ts), then the real
 * Pulumi toolchain (scripts/pulumi-toolchain.sh: about 5 minutes the first time, then cached), so that no test's
 * set-up waits for a build within its own timeout, whether the suite runs from `npm test`, `.ci/run` or jest directly.
 */
import labSetup from "../lab";
import { toolchain } from "./index";

export default async function globalSetup(): Promise<void> {
  await labSetup();
  const tc = toolchain();
  process.stderr.write(`real-CLI suite: pulumi ${tc.version} (${tc.dir})\n`);
}
