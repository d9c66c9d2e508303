/**
 * Live view of a NetTuning's host for previews: a read-only program (sent on stdin, nothing installed, no lock, no
 * temporary file, no root needed: /proc/sys and /etc/sysctl.d are world-readable), the parser of its answer, the
 * comparison of what the host has now with what is declared, and the lines a reviewer reads.
 *
 * Pure: no I/O here. `provider/live/ssh.ts` runs the program.
 *
 * The components read hosts with `provider/live/read.ts` (the engine's own getters, both kinds, the converged record);
 * this module keeps the comparator (`sameValue`, shared by apply read-back, drift and adoption) and the standalone
 * sysctl read of the groundwork (`tests/live/read.test.ts`).
 */
import { shQuote } from "../shell";
import { sameValue } from "../sysctl/readback";
import { keyToPath } from "../sysctl/validate";

export const LIVE_HEADER = "net-tuning-live v1";

/** The command a live read runs: the login shell starts /bin/sh, which reads the program from stdin. */
export const LIVE_COMMAND = "/bin/sh -s";

export interface SysctlRead {
  /** stdin for {@link LIVE_COMMAND}. */
  stdin: string;
  /** /proc/sys-relative path → key, to map the answer back. */
  keyOfPath: Record<string, string>;
}

/** The read-only program for these keys and files (absolute paths). Keys must already be validated. */
export function renderSysctlRead(keys: string[], files: string[] = []): SysctlRead {
  const keyOfPath: Record<string, string> = {};
  for (const k of [...keys].sort()) keyOfPath[keyToPath(k)] = k;
  const paths = Object.keys(keyOfPath);
  for (const f of files) {
    if (!/^\/[A-Za-z0-9._/-]+$/.test(f) || f.includes("/../")) throw new Error(`pulumi-net-tuning: unsafe file path ${JSON.stringify(f)}`);
  }
  const lines = [
    "# pulumi-net-tuning live read: reads only, writes nothing.",
    "LC_ALL=C; export LC_ALL",
    "cd /proc/sys || { echo 'net-tuning: /proc/sys is not readable on this host' >&2; exit 2; }",
    `echo ${shQuote(LIVE_HEADER)}`,
    `set -- ${paths.map(shQuote).join(" ")}`,
    // One process reads every value: the /proc/sys handlers answer one read at offset 0, which grep does.
    'if [ "$#" -gt 0 ]; then',
    '  for p do if [ ! -e "$p" ]; then echo "!missing $p"; elif [ ! -r "$p" ]; then echo "!unreadable $p"; fi; done',
    "  grep -H '' -- \"$@\" 2>/dev/null",
    "fi",
    ...files.flatMap((f) => [
      `if [ -f ${shQuote(f)} ] && [ -r ${shQuote(f)} ]; then echo ${shQuote(`!file ${f}`)}; sed 's/^/|/' ${shQuote(f)}; echo '!endfile';`,
      `elif [ -e ${shQuote(f)} ]; then echo ${shQuote(`!unreadable-file ${f}`)}; else echo ${shQuote(`!nofile ${f}`)}; fi`,
    ]),
    "echo '!end'",
  ];
  return { stdin: lines.join("\n") + "\n", keyOfPath };
}

export interface SysctlLive {
  /** key → value on the host now, whitespace-collapsed. */
  values: Record<string, string>;
  /** Keys the host lacks (no /proc/sys file). */
  missing: string[];
  /** Keys this user may not read (e.g. 0600 keys as non-root). */
  unreadable: string[];
  /** path → content (undefined: the file does not exist). Files that could not be read are absent. */
  files: Record<string, string | undefined>;
}

/** Parses the read program's answer; throws when it is not one (a shell error, a truncated answer). */
export function parseSysctlRead(stdout: string, read: SysctlRead): SysctlLive {
  const lines = stdout.split("\n");
  if (lines[0] !== LIVE_HEADER) throw new Error(`not a live-read answer (first line ${JSON.stringify(lines[0] ?? "")})`);
  if (!lines.includes("!end")) throw new Error("live-read answer is truncated");
  const live: SysctlLive = { values: {}, missing: [], unreadable: [], files: {} };
  let file: string | undefined;
  let content: string[] = [];
  for (const line of lines.slice(1)) {
    if (line === "!end") break;
    if (file !== undefined) {
      if (line === "!endfile") {
        live.files[file] = content.length ? content.join("\n") + "\n" : "";
        file = undefined;
        content = [];
      } else if (line.startsWith("|")) content.push(line.slice(1));
      continue;
    }
    const marker = /^!(missing|unreadable|file|nofile|unreadable-file) (.*)$/.exec(line);
    if (marker) {
      const [, what, arg] = marker;
      if (what === "missing" && read.keyOfPath[arg]) live.missing.push(read.keyOfPath[arg]);
      else if (what === "unreadable" && read.keyOfPath[arg]) live.unreadable.push(read.keyOfPath[arg]);
      else if (what === "file") file = arg;
      else if (what === "nofile") live.files[arg] = undefined;
      continue;
    }
    const colon = line.indexOf(":");
    const key = colon > 0 ? read.keyOfPath[line.slice(0, colon)] : undefined;
    if (key !== undefined) live.values[key] = line.slice(colon + 1).trim().split(/\s+/).filter(Boolean).join(" ");
  }
  return live;
}

// The one comparator per read-back form lives with the catalogue (provider/sysctl/readback.ts); re-exported here.
export { readbackForm, sameValue } from "../sysctl/readback";
export type { ReadbackForm } from "../sysctl/readback";

export interface SysctlComparison {
  /** Keys whose host value differs from the declared one: `pulumi up` changes them. */
  changes: { key: string; live: string; declared: string }[];
  /** Keys already as declared. */
  unchanged: string[];
  /** Keys the host lacks or this user cannot read. */
  unknown: { key: string; why: string }[];
  /** Keys this resource last applied whose host value has changed since. */
  drift: { key: string; applied: string; live: string }[];
}

/** Compares the host with the declaration and, when known, with what this resource last applied there. */
export function compareSysctls(declared: Record<string, string>, live: SysctlLive, lastApplied: Record<string, string> = {}): SysctlComparison {
  const out: SysctlComparison = { changes: [], unchanged: [], unknown: [], drift: [] };
  for (const key of Object.keys(declared).sort()) {
    const now = live.values[key];
    if (now === undefined) {
      out.unknown.push({ key, why: live.missing.includes(key) ? "absent on this kernel" : live.unreadable.includes(key) ? "not readable by this user" : "not read" });
      continue;
    }
    if (sameValue(key, now, declared[key])) out.unchanged.push(key);
    else out.changes.push({ key, live: now, declared: declared[key] });
    const applied = lastApplied[key];
    if (applied !== undefined && !sameValue(key, now, applied)) out.drift.push({ key, applied, live: now });
  }
  return out;
}

/** The lines a reviewer reads in the preview: one per setting that changes, unchanged ones summarised in one line. */
export function renderComparison(resource: string, host: string, c: SysctlComparison, files: { path: string; declared?: string; live?: string | null }[] = []): string[] {
  const n = c.changes.length + c.unchanged.length + c.unknown.length;
  const lines = [`${resource} on ${host}: ${c.changes.length} of ${n} setting${n === 1 ? "" : "s"} will change`];
  for (const ch of c.changes) lines.push(`  ${ch.key}: ${ch.live} → ${ch.declared}`);
  if (c.unchanged.length) lines.push(`  ${c.unchanged.length} already as declared: ${c.unchanged.join(", ")}`);
  for (const u of c.unknown) lines.push(`  ${u.key}: ${u.why}`);
  for (const d of c.drift) lines.push(`  drift: ${d.key} was set to ${d.applied} by this resource and is ${d.live} on the host now`);
  for (const f of files) {
    if (f.declared === undefined) continue;
    if (f.live === null) lines.push(`  ${f.path}: not readable by this user`);
    else if (f.live === undefined) lines.push(`  ${f.path}: will be created`);
    else if (f.live !== f.declared) lines.push(`  ${f.path}: differs on the host from the declared content (hand edit or older version): rewritten`);
  }
  return lines;
}
