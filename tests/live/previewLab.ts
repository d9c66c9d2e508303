/**
 * The set-up of the preview-refusal files (tests/live/limits, bootOrder): one lab host for the file, a stack per test
 * destroyed after it (then `cleanup`, a shell command run on the host), and the problems of an error. The file itself
 * sets NET_TUNING_LIVE_PREVIEW before its imports (the harness evaluates programs under setMocks, where live reads are
 * off by default); this clears it after the file (jest runs other files in the same worker).
 */
import { NetTuning } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";
import { Stack } from "../../testkit/harness";
import { snapshot } from "../../testkit/host";
import { withLogs, within } from "../../testkit/jest";
import { Lab, LabHost, startLab } from "../../testkit/lab";

export type Kind = "NetTuning" | "NicQueues";

export interface PreviewLab {
  /** The file's host (once beforeAll ran). */
  host(): LabHost;
  /** A stack of this file's project named `name` and a sequence number, destroyed after the test. */
  newStack(name: string): Stack;
  /** A program with one `kind` resource on the host. */
  program(kind: Kind, name: string, args: Record<string, unknown>): () => void;
  /** A preview through the harness with the real live read: its outcome, what it registered, its sessions and logs. */
  preview(kind: Kind, name: string, args: Record<string, unknown>): Promise<{ ok: boolean; error?: string; registered: string[]; sessions: number; info: string[]; warn: string[]; logs: string[] }>;
  /**
   * The preview of `args` is refused with exactly `expected` (no child registered, no session, nothing changed on the
   * host); `up` with the live preview off reaches the host, whose preflight refuses with the same problems.
   */
  refusedAlike(kind: Kind, args: Record<string, unknown>, expected: string[]): Promise<void>;
}

export function previewLab(tag: string, cleanup = ""): PreviewLab {
  let started: Lab | undefined;
  let host: LabHost | undefined;
  const stacks: Stack[] = [];
  let seq = 0;
  beforeAll(async () => {
    started = await startLab({ hosts: 1, tag });
    host = started.hosts[0];
  }, 120_000);
  afterAll(async () => {
    delete process.env.NET_TUNING_LIVE_PREVIEW;
    await started?.stop();
  });
  afterEach(async () => {
    for (const s of stacks.splice(0)) if (s.resources().length) await s.destroy();
    if (cleanup && host) await host.exec(cleanup);
  });
  const lab: PreviewLab = {
    host: () => {
      if (!host) throw new Error("previewLab: no host before beforeAll");
      return host;
    },
    newStack: (name) => {
      const s = new Stack({ project: tag, stack: `${name}${++seq}` });
      stacks.push(s);
      return s;
    },
    program: (kind, name, args) => () => {
      const connection = lab.host().connection();
      if (kind === "NetTuning") new NetTuning(name, { connection, ...args } as never);
      else new NicQueues(name, { connection, ...args } as never);
    },
    preview: async (kind, name, args) => {
      const s = lab.newStack("p");
      const { r, info, warn } = await within(60_000, `the preview of ${kind} "${name}"`, withLogs(() => s.preview(lab.program(kind, name, args))));
      const logs = [...info.map((m) => `info: ${m}`), ...warn.map((m) => `warn: ${m}`)];
      return { ok: r.ok, error: r.error, registered: r.resources.map((x) => `${x.type}::${x.name}`), sessions: r.sessions.total, info, warn, logs };
    },
    refusedAlike: async (kind, args, expected) => {
      const before = await snapshot(lab.host());
      const p = await lab.preview(kind, "r", args);
      expect(p.ok).toBe(false);
      expect(p.error).toContain(`${kind} "r": ${expected.length} invalid input`);
      expect(problems(p.error)).toEqual([...expected].sort());
      expect(p.registered.filter((x) => x.startsWith("command:"))).toEqual([]);
      expect(p.sessions).toBe(0);
      expect(await snapshot(lab.host())).toBe(before);
      const up = await lab.newStack("r").up(lab.program(kind, "r", { ...args, livePreview: false }));
      expect(up.ok).toBe(false);
      expect(up.error).toContain("preflight refused the change");
      expect(problems(up.error)).toEqual([...expected].sort());
      expect(await snapshot(lab.host())).toBe(before);
    },
  };
  return lab;
}

/** The problems of an error text: its "  - " lines (the preview's InputError and the host preflight list them alike). */
export const problems = (error: string | undefined): string[] =>
  (error ?? "").split("\n").filter((l) => l.startsWith("  - ")).map((l) => l.slice(4)).sort();
