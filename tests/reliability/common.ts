/** Shared helpers of the reliability tests (issue #8). */
import { NetTuning, NetTuningArgs } from "../../components/netTuning";
import { NicQueues, NicQueuesArgs } from "../../components/nicQueues";
import type { Stack, UpResult } from "../../testkit/harness";
import type { LabHost } from "../../testkit/lab";

export type Who = "root" | "sudo" | "plain";
export type SysArgs = Omit<NetTuningArgs, "connection">;
export type NicArgs = Omit<NicQueuesArgs, "connection">;

export function sysProgram(host: LabHost, name: string, args: SysArgs, who: Who = "root") {
  return () => {
    const t = new NetTuning(name, { connection: host.connection(who), ...args });
    return { applied: t.applied, previous: t.previous, filePath: t.filePath, warnings: t.warnings };
  };
}

export function nicProgram(host: LabHost, name: string, args: NicArgs, who: Who = "root") {
  return () => {
    const n = new NicQueues(name, { connection: host.connection(who), ...args });
    return { applied: n.applied, previous: n.previous, persistedAs: n.persistedAs, warnings: n.warnings };
  };
}

export function ok(r: UpResult): UpResult {
  if (!r.ok) throw new Error(`operation failed: ${r.error}`);
  return r;
}

/** Command resources left in a stack's state. */
export function commands(stack: Stack): number {
  return stack.resources().filter((e) => e.type === "command:remote:Command").length;
}

/** Raw value of a /proc/sys key inside a lab host (whitespace collapsed). */
export async function readSysctl(host: LabHost, key: string): Promise<string> {
  const r = await host.exec(`cat /proc/sys/${key.split(".").join("/")}`);
  if (r.code !== 0) throw new Error(`cannot read ${key}: ${r.stderr}`);
  return r.stdout.trim().split(/\s+/).join(" ");
}

export async function sh(host: LabHost, cmd: string, timeoutMs = 30000): Promise<string> {
  const r = await host.exec(cmd, { timeoutMs });
  if (r.code !== 0) throw new Error(`${cmd} failed on ${host.name} (exit ${r.code}): ${r.stderr}`);
  return r.stdout;
}

/** Every message string must contain every expectation. */
export function expectAll(text: string | undefined, parts: (string | RegExp)[]): void {
  expect(typeof text).toBe("string");
  for (const p of parts) {
    if (typeof p === "string") expect(text).toContain(p);
    else expect(text).toMatch(p);
  }
}
