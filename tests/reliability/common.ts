/** Helpers of the reliability tests (issue #8) that only they use; the shared ones live in testkit/host.ts. */
import { Stack } from "../../testkit/harness";

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

/**
 * `newStack(project, stack)` for a test file: every stack it makes that still holds resources after a test is
 * destroyed (latest first) before the next test starts, so a failed assertion leaves the next test a clean host.
 */
export function trackedStacks(): (project: string, stack: string) => Stack {
  const stacks: Stack[] = [];
  afterEach(async () => {
    for (const s of stacks.splice(0).reverse()) if (s.resources().length) await s.destroy().catch(() => undefined);
  });
  return (project, stack) => {
    const s = new Stack({ project, stack });
    stacks.push(s);
    return s;
  };
}

/** Every prefix of `text` that ends at a line boundary, except the whole: where a session can be cut between lines. */
export function lineCuts(text: string): string[] {
  const out: string[] = [];
  for (let i = text.indexOf("\n"); i >= 0 && i < text.length - 1; i = text.indexOf("\n", i + 1)) out.push(text.slice(0, i + 1));
  return out;
}
