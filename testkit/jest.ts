/**
 * Jest wiring shared by the lab test files: a lab for the whole file, and stacks that are destroyed after each test
 * whatever it left (so one failure does not poison the next test). Call at the top level of a test file.
 */
import * as pulumi from "@pulumi/pulumi";
import { Stack } from "./harness";
import { LabHost, Lab, startLab } from "./lab";

/**
 * Starts `hosts` lab hosts before the file's tests (given to `onStart`, which may prepare them) and stops them after
 * (`beforeStop` first, e.g. to clear test hooks).
 */
export function useLab(tag: string, hosts: number, onStart: (hosts: LabHost[]) => void | Promise<void>, beforeStop?: () => Promise<unknown>): void {
  let lab: Lab | undefined;
  beforeAll(async () => {
    lab = await startLab({ hosts, tag });
    await onStart(lab.hosts);
  }, 120_000);
  afterAll(async () => {
    if (lab && beforeStop) await beforeStop().catch(() => undefined);
    await lab?.stop();
  });
}

/** A `newStack(name)` for `project` whose stacks are destroyed after each test if they still hold resources. */
export function stacksDestroyedAfterEach(project: string): (name: string) => Stack {
  const stacks: Stack[] = [];
  afterEach(async () => {
    for (const s of stacks.splice(0)) if (s.resources().length) await s.destroy().catch(() => undefined);
  });
  return (name: string) => {
    const s = new Stack({ project, stack: name });
    stacks.push(s);
    return s;
  };
}

/** Runs `f` with `pulumi.log.info` and `pulumi.log.warn` collected instead of printed (the components' diagnostics). */
export async function withLogs<T>(f: () => Promise<T>): Promise<{ r: T; info: string[]; warn: string[] }> {
  const info: string[] = [];
  const warn: string[] = [];
  const spies = [
    jest.spyOn(pulumi.log, "info").mockImplementation(((m: string) => (info.push(m), Promise.resolve())) as never),
    jest.spyOn(pulumi.log, "warn").mockImplementation(((m: string) => (warn.push(m), Promise.resolve())) as never),
  ];
  try {
    return { r: await f(), info, warn };
  } finally {
    for (const s of spies) s.mockRestore();
  }
}

/**
 * `p`, or a rejection naming `what` after `ms`: for a harness operation that must end (a preview that a refusal once
 * left waiting forever; issue #30). The timer is cleared when `p` settles.
 */
export async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
