/**
 * NicQueues and the host's other boot-time mechanisms (issue #16): `bootOverride` (what the preflight does when
 * rc.local, a systemd .link file, a NetworkManager keyfile, ifupdown or tuned re-applies a setting of the interface
 * at boot) as a plan directive. Pure.
 */
import { z } from "zod";

/** What NicQueues does when another mechanism re-applies one of its settings at boot. */
export const NicBootOverrideSchema = z.enum(["error", "warn", "ignore"], { message: `bootOverride must be one of "error", "warn", "ignore"` });

/** The plan directives of the NicQueues boot-override check, or the problems of its argument. */
export function nicBootDirectives(bootOverride: unknown): { lines: string[]; problems: string[] } {
  if (bootOverride === undefined || bootOverride === null) return { lines: ["@boot-override error"], problems: [] };
  const r = NicBootOverrideSchema.safeParse(bootOverride);
  if (!r.success) return { lines: [], problems: [`bootOverride ${JSON.stringify(bootOverride)}: ${r.error.issues[0].message}`] };
  return { lines: [`@boot-override ${r.data}`], problems: [] };
}
