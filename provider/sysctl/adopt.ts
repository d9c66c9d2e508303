/**
 * Adoption of hand-written sysctl files (issue #16): NetTuning `adopt` names the files a host was tuned with by hand
 * (`/etc/sysctl.d/99-hk-net-tuning.conf`, `/etc/sysctl.conf`). The apply saves each one byte for byte (content,
 * mode, owner, mtime) in the host's journal and, up to {@link ADOPT_STATE_MAX} bytes, in Pulumi state, then removes
 * it (sysctl.conf: comments out the lines that set declared keys, with a marker); the destroy puts it back exactly
 * and applies its values again. Pure: validation, plan directives, the restore-plan block and the report lines.
 */
import { Problem, problemAt } from "../errors";
import { z } from "zod";
import { gzipFixed } from "../gzip";

/** The directories procps `sysctl --system` and systemd-sysctl read sysctl.d-style files from (boot order). */
export const SYSCTL_DIRS = ["/etc/sysctl.d", "/run/sysctl.d", "/usr/local/lib/sysctl.d", "/usr/lib/sysctl.d", "/lib/sysctl.d"] as const;
/** Of /etc/sysctl.conf only the lines that set declared keys are adopted. */
export const SYSCTL_CONF = "/etc/sysctl.conf";
/** Adopted files up to this size (bytes) are kept in Pulumi state too; larger ones only in the host's journal. */
export const ADOPT_STATE_MAX = 4096;
/** The marker that comments out an adopted line of /etc/sysctl.conf (the restore removes exactly this prefix). */
export const ADOPT_MARKER = "#pulumi-net-tuning-adopted# ";

const BASE = /^[A-Za-z0-9][A-Za-z0-9._-]*\.conf$/;

/** One entry of `adopt`: a file name in /etc/sysctl.d, an absolute path in a sysctl.d directory, or /etc/sysctl.conf. */
const AdoptEntry = z
  .string({ message: "must be a file name in /etc/sysctl.d or an absolute path" })
  .transform((s, ctx) => {
    const p = s.startsWith("/") ? s : `/etc/sysctl.d/${s}`;
    if (p === SYSCTL_CONF) return p;
    const dir = p.slice(0, p.lastIndexOf("/"));
    const base = p.slice(p.lastIndexOf("/") + 1);
    if (!(SYSCTL_DIRS as readonly string[]).includes(dir) || !BASE.test(base) || base.length > 100) {
      ctx.addIssue({
        code: "custom",
        message:
          `"${s}" is not a sysctl file procps or systemd-sysctl reads at boot: give a file name in /etc/sysctl.d ` +
          `("99-hk-net-tuning.conf"), an absolute path in ${SYSCTL_DIRS.join(", ")} ending in ".conf" ([A-Za-z0-9._-], ` +
          `at most 100 characters), or "${SYSCTL_CONF}"`,
      });
      return z.NEVER;
    }
    return p;
  });

/**
 * Validates `adopt` (undefined = none) against the resource's own sysctl.d file: the absolute paths, or the problems
 * (each naming the entry and the fix).
 */
export function validateAdopt(adopt: unknown, ownFile: string): { paths: string[]; problems: Problem[] } {
  if (adopt === undefined || adopt === null) return { paths: [], problems: [] };
  if (!Array.isArray(adopt)) return { paths: [], problems: [problemAt("adopt", `adopt: must be a list of file names, e.g. ["99-hk-net-tuning.conf"]`)] };
  const problems: Problem[] = [];
  const seen = new Set<string>();
  adopt.forEach((entry, i) => {
    const r = AdoptEntry.safeParse(entry);
    if (!r.success) {
      problems.push(...r.error.issues.map((x) => problemAt(`adopt[${i}]`, `adopt[${i}]: ${x.message}`)));
      return;
    }
    const p = r.data;
    if (p === ownFile) problems.push(problemAt(`adopt[${i}]`, `adopt[${i}]: "${p}" is this resource's own file (fileName): adopt it under another fileName, e.g. leave fileName unset`));
    if (seen.has(p)) problems.push(problemAt(`adopt[${i}]`, `adopt[${i}]: "${p}" is listed twice`));
    seen.add(p);
  });
  return { paths: [...seen].sort(), problems };
}

/** The plan directives: one `@adopt PATH` per adopted file (reviewable in the preview's stdin diff). */
export function adoptDirectives(paths: string[]): string[] {
  return paths.map((p) => `@adopt ${p}`);
}

/** What the apply reported about one adopted file (`adopted.N` report lines). */
export interface AdoptedFile {
  path: string;
  /** "file" (removed) or "lines" (/etc/sysctl.conf: lines commented out). */
  how: "file" | "lines";
  /** octal mode, e.g. "644" */
  mode: string;
  /** "uid:gid" */
  owner: string;
  /** modification time, seconds since the epoch (with fraction) */
  mtime: string;
  size: number;
  /** base64 of the exact original content; undefined when larger than ADOPT_STATE_MAX (kept in the journal only) */
  base64?: string;
}

const REPORT_LINE = /^(\/[A-Za-z0-9._/-]+)\t(file|lines)\t([0-7]{3,4})\t(\d+:\d+)\t(\d+(?:\.\d+)?)\t(\d+)\t([A-Za-z0-9+/=]*|-)$/;

/** The adopted files of an apply report (`extra["adopted.N"]`), checked field by field (they go into state). */
export function adoptedFromReport(extra: Record<string, string>): AdoptedFile[] {
  const out: AdoptedFile[] = [];
  for (const k of Object.keys(extra).filter((x) => /^adopted\.\d+$/.test(x)).sort((a, b) => Number(a.slice(8)) - Number(b.slice(8)))) {
    const m = REPORT_LINE.exec(extra[k]);
    if (!m) throw new Error(`pulumi-net-tuning: malformed report line ${k}: ${JSON.stringify(extra[k].slice(0, 200))}`);
    out.push({ path: m[1], how: m[2] as "file" | "lines", mode: m[3], owner: m[4], mtime: m[5], size: Number(m[6]), base64: m[7] === "-" ? undefined : m[7] });
  }
  return out;
}

/** The bound on any string input of a child (issue #12): the -restore stdin stays within it. */
export const STRING_INPUT_MAX = 8192;

/**
 * Which adopted files keep their bytes in Pulumi state: each up to ADOPT_STATE_MAX (the host reports no more), and
 * together only while the -restore stdin (`stdinOf`, the exact text the child gets for these records) stays within
 * `max`: the data of the largest file that still has some is left out (of equal ones the later in plan order) until
 * it fits, so as many files as possible keep theirs. A file left out keeps its record (path, mode, owner, time, size)
 * and is put back from the host's journal; `left` names it for a warning (in plan order). Without any data nothing is
 * measured (no cost for a resource that adopts nothing).
 */
export function fitAdopted(files: AdoptedFile[], stdinOf: (files: AdoptedFile[]) => string, max: number = STRING_INPUT_MAX): { files: AdoptedFile[]; left: AdoptedFile[] } {
  let kept = files;
  for (;;) {
    let drop = -1;
    kept.forEach((f, i) => {
      if (f.base64 !== undefined && (drop < 0 || f.base64.length >= (kept[drop].base64 as string).length)) drop = i;
    });
    if (drop < 0 || Buffer.byteLength(stdinOf(kept)) <= max) break;
    kept = kept.map((f, j) => (j === drop ? { ...f, base64: undefined } : f));
  }
  return { files: kept, left: files.filter((f, i) => f.base64 !== undefined && kept[i].base64 === undefined) };
}

/**
 * The adopted files' part of the restore plan: a clearly delimited block of its own (independent of the originals'
 * format) that the restore program reads as `@adopted` / `@adopted-data` directives. The content is base64, at most
 * ADOPT_STATE_MAX bytes per file before encoding; with `gzip` (the host reported gzip and base64: the restore stdin is
 * compressed too) it is the file gzip'd, then base64, as `@adopted-gzip` lines (both restore tiers gunzip it; gzip's
 * CRC-32 and the recorded size catch a damaged copy), a third to a half of the plain form for a commented sysctl file.
 */
export function renderAdoptedRestore(files: AdoptedFile[], gzip = false): string {
  if (files.length === 0) return "";
  const lines = ["# --- adopted files (NetTuning adopt): put back byte for byte on delete ---"];
  for (const f of files) {
    lines.push(`@adopted ${f.path}\t${f.how}\t${f.mode}\t${f.owner}\t${f.mtime}\t${f.size}`);
    if (f.base64 === undefined) continue;
    const data = gzip ? gzipFixed(Buffer.from(f.base64, "base64")).toString("base64") : f.base64;
    const tag = gzip ? "@adopted-gzip" : "@adopted-data";
    for (let i = 0; i < data.length; i += 76) lines.push(`${tag} ${data.slice(i, i + 76)}`);
  }
  lines.push("# --- end of adopted files ---");
  return lines.join("\n") + "\n";
}
