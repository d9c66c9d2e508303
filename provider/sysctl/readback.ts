/**
 * How the kernel stores a sysctl's value, which decides when the value read back equals the one written: the ONE
 * comparator for the apply's read-back (the host engine's `kind_same` in provider/host/sh/sysctl.sh implements the
 * same forms), drift detection and adoption (provider/live). The form of a key comes from the catalogue.
 * Pure; no I/O.
 */
import { nextPowerOfTwo } from "../sizing/units";
import { lookup, readbackPattern } from "./catalogue";

/**
 * exact: the same text; whitespace: the same numbers/words, any whitespace (vectors read back tab-separated);
 * pow2: rounded up to a power of two (0 stays 0); msJiffies: milliseconds kept in jiffies, read back rounded up to
 * the next jiffy (less than 10 ms above at HZ ≥ 100).
 */
export type ReadbackForm = "exact" | "whitespace" | "pow2" | "msJiffies";

/** The largest step of a milliseconds-in-jiffies key: one jiffy at HZ=100. */
export const MS_JIFFY_MAX_STEP = 10;

/** The form of a key (dotted, canonical): the catalogue's, else its pattern's (neigh.*.*_ms), else by its type. */
export function readbackForm(key: string): ReadbackForm {
  const e = lookup(key);
  if (e?.readback) return e.readback;
  const p = readbackPattern(key);
  if (p) return p;
  return e?.type === "multi" ? "whitespace" : "exact";
}

/** The value the kernel keeps for a power-of-2 key: the next power of two, 0 stays 0 (rps_sock_flow_entries = 0 is off). */
export function kernelPow2(n: number): number {
  return n === 0 ? 0 : nextPowerOfTwo(n);
}

/** The value a key reads back as after `declared` was written, when it is known before writing (pow2), else undefined. */
export function expectedReadback(key: string, declared: string): string | undefined {
  if (readbackForm(key) !== "pow2" || !/^\d+$/.test(declared.trim())) return undefined;
  return String(kernelPow2(Number(declared.trim())));
}

/** True when `live` is what the kernel shows after `declared` was written (see {@link ReadbackForm}). */
export function sameValue(key: string, live: string, declared: string): boolean {
  const a = live.trim().split(/\s+/).filter(Boolean);
  const b = declared.trim().split(/\s+/).filter(Boolean);
  if (a.join(" ") === b.join(" ")) return true;
  if (a.length !== 1 || b.length !== 1 || !/^\d+$/.test(a[0]) || !/^\d+$/.test(b[0])) return false;
  const l = Number(a[0]);
  const d = Number(b[0]);
  switch (readbackForm(key)) {
    case "pow2":
      return l === kernelPow2(d);
    case "msJiffies":
      return l >= d && l - d < MS_JIFFY_MAX_STEP;
    default:
      return false;
  }
}

/**
 * The plan directive that tells the host engine how a key reads back, or undefined: `@readback KEY VALUE` when the
 * value is known before writing (pow2: the same line as earlier versions wrote, so upgrades do not change plans; 0
 * stays 0), `@readback KEY ms-jiffies` when it depends on the host's HZ (the host compares within one jiffy).
 */
export function readbackDirective(key: string, declared: string): string | undefined {
  const expected = expectedReadback(key, declared);
  if (expected !== undefined) return `@readback ${key} ${expected}`;
  return readbackForm(key) === "msJiffies" ? `@readback ${key} ms-jiffies` : undefined;
}
