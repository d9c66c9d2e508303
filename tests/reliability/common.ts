/** Helpers of the reliability tests (issue #8) that only they use; the shared ones live in testkit/host.ts. */
import type { Stack } from "../../testkit/harness";

export { ok, sysProgram, nicProgram, readSysctl, sh } from "../../testkit/host";
export type { Who, SysArgs, NicArgs } from "../../testkit/host";

/** Command resources left in a stack's state. */
export function commands(stack: Stack): number {
  return stack.resources().filter((e) => e.type === "command:remote:Command").length;
}

/** Every message string must contain every expectation. */
export function expectAll(text: string | undefined, parts: (string | RegExp)[]): void {
  expect(typeof text).toBe("string");
  for (const p of parts) {
    if (typeof p === "string") expect(text).toContain(p);
    else expect(text).toMatch(p);
  }
}
