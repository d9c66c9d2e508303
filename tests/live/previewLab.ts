/**
 * The set-up of the preview-refusal files (tests/live/limits, bootOrder): one lab host for the file, a stack per test
 * destroyed after it (then `cleanup`, a shell command run on the host), and the problems of an error. The file itself
 * sets NET_TUNING_LIVE_PREVIEW before its imports (the harness evaluates programs under setMocks, where live reads are
 * off by default); this clears it after the file (jest runs other files in the same worker).
 */
import { Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";

export interface PreviewLab {
  /** The file's host (once beforeAll ran). */
  host(): LabHost;
  /** A stack of this file's project, destroyed after the test. */
  newStack(name: string): Stack;
}

export function previewLab(tag: string, cleanup = ""): PreviewLab {
  let lab: Lab | undefined;
  let host: LabHost | undefined;
  const stacks: Stack[] = [];
  beforeAll(async () => {
    lab = await startLab({ hosts: 1, tag });
    host = lab.hosts[0];
  }, 120_000);
  afterAll(async () => {
    delete process.env.NET_TUNING_LIVE_PREVIEW;
    await lab?.stop();
  });
  afterEach(async () => {
    for (const s of stacks.splice(0)) if (s.resources().length) await s.destroy();
    if (cleanup && host) await host.exec(cleanup);
  });
  return {
    host: () => {
      if (!host) throw new Error("previewLab: no host before beforeAll");
      return host;
    },
    newStack: (name) => {
      const s = new Stack({ project: tag, stack: name });
      stacks.push(s);
      return s;
    },
  };
}

/** The problems of an error text: its "  - " lines (the preview's InputError and the host preflight list them alike). */
export const problems = (error: string | undefined): string[] =>
  (error ?? "").split("\n").filter((l) => l.startsWith("  - ")).map((l) => l.slice(4)).sort();
