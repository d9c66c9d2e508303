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
  // "error" is the host's default: no line for it, so plans of earlier versions stay byte for byte (an upgrade
  // rewrites no resource).
  if (bootOverride === undefined || bootOverride === null) return { lines: [], problems: [] };
  const r = NicBootOverrideSchema.safeParse(bootOverride);
  if (!r.success) return { lines: [], problems: [`bootOverride ${JSON.stringify(bootOverride)}: ${r.error.issues[0].message}`] };
  return { lines: r.data === "error" ? [] : [`@boot-override ${r.data}`], problems: [] };
}

const RC_LINE_MAX = 500;
const RC_ENTRY_LINES = 50;

/**
 * NicQueues `adoptRcLocalLines`: each entry one line of rc.local, or several (separated by "\n": matched as
 * consecutive lines, e.g. the gateway guide's `for q in …; do` loop with its body and `done`), compared trimmed.
 * Returns the plan directives (`@adopt-rc K TEXT`, one per line) or the problems.
 */
export function rcLocalAdoptDirectives(entries: unknown): { lines: string[]; problems: string[] } {
  if (entries === undefined || entries === null) return { lines: [], problems: [] };
  if (!Array.isArray(entries)) return { lines: [], problems: [`adoptRcLocalLines must be a list of rc.local lines, e.g. ["ip link set dev eth0 txqueuelen 10000"]`] };
  const lines: string[] = [];
  const problems: string[] = [];
  entries.forEach((e, k) => {
    if (typeof e !== "string") return problems.push(`adoptRcLocalLines[${k}] must be a string (one rc.local line, or several separated by "\\n")`);
    const parts = e.split("\n").map((l) => l.trim());
    while (parts.length && parts[parts.length - 1] === "") parts.pop();
    while (parts.length && parts[0] === "") parts.shift();
    if (parts.length === 0) return problems.push(`adoptRcLocalLines[${k}] is empty`);
    if (parts.length > RC_ENTRY_LINES) problems.push(`adoptRcLocalLines[${k}] has ${parts.length} lines: at most ${RC_ENTRY_LINES}`);
    parts.forEach((p, j) => {
      // eslint-disable-next-line no-control-regex
      if (/[\x00-\x1f\x7f]/.test(p)) problems.push(`adoptRcLocalLines[${k}] line ${j + 1} contains a control character (tab, CR…): give the line as printable text`);
      else if (p.length > RC_LINE_MAX) problems.push(`adoptRcLocalLines[${k}] line ${j + 1} is longer than ${RC_LINE_MAX} characters`);
      else if (p.startsWith("# BEGIN pulumi-net-tuning") || p.startsWith("# END pulumi-net-tuning")) problems.push(`adoptRcLocalLines[${k}] names a pulumi-net-tuning block marker: only foreign lines can be adopted`);
      lines.push(`@adopt-rc ${k} ${p}`);
    });
  });
  return { lines: problems.length ? [] : lines, problems };
}

/**
 * The restore plan's note that rc.local lines were adopted (the apply reported `rc-adopted <path>`): the restore
 * program then carries the code that gives rc.local back from the host's journal (provider/host/programs.ts).
 */
export function rcAdoptedRestoreNote(rcLocal: string | undefined): string {
  if (!rcLocal || !/^\/[A-Za-z0-9._/-]+$/.test(rcLocal)) return "";
  return `# adopted: rc.local lines (adoptRcLocalLines) of ${rcLocal}, given back from the host's journal on delete\n`;
}
