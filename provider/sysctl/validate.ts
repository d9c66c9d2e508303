/**
 * Validation of declared sysctls, run at `pulumi preview` (pure, no host access).
 *
 * `validateSysctls` checks every key and value, collects EVERY problem and throws one `InputError`;
 * otherwise it returns canonical values (safe to write into a sysctl.d file) and warnings for
 * `pulumi.log.warn`. Every message names the key, the value, why, and the fix ("Fix: ...").
 *
 * Keys
 * ----
 * Accepted forms (as sysctl(8) and sysctl.d(5) accept them):
 *  - dotted: `net.ipv4.conf.eth0.rp_filter`. A "/" inside a dotted component stands for a "." in the
 *    /proc/sys path component (a VLAN interface): `net.ipv4.conf.eth0/100.rp_filter`.
 *  - slash: `net/ipv4/conf/eth0.100/rp_filter`. Recognised when the FIRST separator is "/"; then "/"
 *    separates components and a "." belongs to the component (systemd's rule).
 * Canonical form: dotted, with dots inside a component written as "/". `keyToPath` gives the path
 * under /proc/sys. Both forms round-trip.
 * Decisions:
 *  - allowed characters: letters, digits, "_", "-", "." and "/" only; whitespace, shell metacharacters,
 *    quotes, backslash, "*", "?", ":" and non-ASCII are refused (no globbing: sysctl.d's "*" is refused).
 *  - at least two components; the first is lowercase `[a-z0-9_][a-z0-9_-]*` (so no sysctl.d "-" prefix);
 *    every component starts with a letter, digit or "_"; empty components ("..", "//", leading or
 *    trailing separator) are refused; a leading "/" (e.g. "/proc/sys/...") is refused.
 *  - a "." inside a path component (a VLAN interface name) is only allowed in the middle components
 *    (never the first two nor the last), where interface names live: `net/ipv4.tcp_rmem` is refused as
 *    an ambiguous mix of separators instead of being read as a component named "ipv4.tcp_rmem".
 *  - at most 200 characters.
 *
 * Values
 * ------
 *  - number: finite safe integer (beyond 2^53 pass a decimal string, e.g. fs.file-max "9223372036854775807").
 *  - string: trimmed, 1-256 characters, only `[A-Za-z0-9 ._:,+-]` and tab; runs of spaces/tabs are
 *    collapsed to one space in the canonical text (sysctl integer vectors split on any whitespace).
 *  - number[]: for multi-value keys, each a safe integer.
 *  - int/bool keys also accept decimal strings ("65535") and hex ("0x603"); a leading zero ("0100") is
 *    refused because the kernel would read it as octal.
 * Canonical: integers in decimal, multi values single-space-separated, strings trimmed and collapsed.
 * Unknown but well-formed keys are allowed (the host preflight checks that they exist).
 *
 * Warnings (not errors) — decisions:
 *  - tcp_fin_timeout below the default 60: it does not shorten TIME_WAIT (that is the usual intent).
 *  - fs.file-max below LONG_MAX: systemd sets LONG_MAX at boot, so a finite value lowers it.
 *  - 16 MiB or more as a default buffer (rmem_default, wmem_default, tcp_rmem[1], tcp_wmem[1]).
 *  - rmem_max / wmem_max below tcp_rmem[2] / tcp_wmem[2] in the same input (informational).
 *  - ip_local_port_range with equal parity; low below 1024 without ip_unprivileged_port_start.
 *  - tcp_sack / tcp_window_scaling / tcp_timestamps = 0, tcp_low_latency, tcp_adv_win_scale,
 *    somaxconn > 65535, rps_sock_flow_entries not a power of two, swappiness > 100,
 *    dirty_background_ratio >= dirty_ratio, unknown congestion control / qdisc names, an unknown key
 *    that looks like a misspelt catalogue key.
 */
import { z } from "zod";
import { InputError } from "../errors";
import {
  CatalogueEntry,
  CATALOGUE,
  LONG_MAX,
  lookup,
  rejection,
} from "./catalogue";

export interface ValidatedSysctls {
  /** Dotted canonical key → canonical value text; keys sorted. */
  values: Record<string, string>;
  /** Advice for pulumi.log.warn; each names key, value, why and fix. */
  warnings: string[];
}

export const KEY_MAX_LENGTH = 200;
export const VALUE_MAX_LENGTH = 256;
/** Characters allowed in a string value (besides tab, which is collapsed to a space). */
const VALUE_CHAR = /[A-Za-z0-9 ._:,+-]/;
const VALUE_SAFE = /^[A-Za-z0-9 ._:,+\t-]*$/;
const KEY_CHAR = /[A-Za-z0-9_./-]/;
const FIRST_COMPONENT = /^[a-z0-9_][a-z0-9_-]*$/;
const PATH_COMPONENT = /^[A-Za-z0-9_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$/;
const MIB16 = 16n * 1024n * 1024n;
const MAX_LIST = 16;

// ------------------------------------------------------------------ keys

type KeyAnalysis = { ok: true; key: string; path: string[] } | { ok: false; why: string; fix: string };

const KEY_FIX = 'write it as a dotted name such as net.ipv4.tcp_rmem (or net/ipv4/tcp_rmem): letters, digits, "_" and "-", with "." (or "/") between components';

function quote(s: string, limit = 60): string {
  return JSON.stringify(s.length > limit ? s.slice(0, limit) + "…" : s);
}

function analyseKey(raw: string): KeyAnalysis {
  if (raw.length === 0) return { ok: false, why: "is empty", fix: KEY_FIX };
  if (raw.length > KEY_MAX_LENGTH) {
    return { ok: false, why: `is ${raw.length} characters long (the limit is ${KEY_MAX_LENGTH})`, fix: KEY_FIX };
  }
  const bad = [...new Set([...raw].filter((c) => !KEY_CHAR.test(c)))];
  if (bad.length > 0) {
    return {
      ok: false,
      why: `contains ${bad.map((c) => JSON.stringify(c)).join(", ")}, which cannot appear in a sysctl name`,
      fix: KEY_FIX,
    };
  }
  if (raw.startsWith("/")) {
    return { ok: false, why: "is an absolute path", fix: 'drop the leading "/proc/sys/" (or "/"): e.g. net/ipv4/tcp_rmem or net.ipv4.tcp_rmem' };
  }
  const firstSep = raw.search(/[./]/);
  if (firstSep < 0) {
    return { ok: false, why: "has a single component (that is a sysctl directory, not a key)", fix: "name the full key, e.g. vm.swappiness or net.core.somaxconn" };
  }
  const slashForm = raw[firstSep] === "/";
  const comps = raw.split(slashForm ? "/" : ".");
  if (comps.some((c) => c === "")) {
    return {
      ok: false,
      why: 'has an empty component (a leading or trailing separator, or ".." / "//")',
      fix: 'remove the extra separator, e.g. net.ipv4.tcp_rmem',
    };
  }
  const path = slashForm ? comps : comps.map((c) => c.split("/").join("."));
  if (!FIRST_COMPONENT.test(path[0])) {
    return { ok: false, why: `starts with ${quote(path[0])}; the first component must be lowercase letters, digits or "_" (e.g. net, vm, fs, kernel)`, fix: KEY_FIX };
  }
  for (let i = 0; i < path.length; i++) {
    const pc = path[i];
    if (pc === "." || pc === "..") {
      return { ok: false, why: `has a relative path component ${quote(pc)}`, fix: KEY_FIX };
    }
    if (!PATH_COMPONENT.test(pc)) {
      return {
        ok: false,
        why: `has an invalid component ${quote(slashForm ? pc : comps[i])} (components start with a letter, digit or "_"; dots inside an interface name must separate non-empty parts)`,
        fix: KEY_FIX,
      };
    }
    if (pc.includes(".") && (i < 2 || i > path.length - 2)) {
      return {
        ok: false,
        why: `mixes "/" and "." ambiguously (component ${quote(slashForm ? pc : comps[i])}); a separator inside a component is only allowed for an interface name in the middle of the key`,
        fix: 'use one separator throughout, e.g. net.ipv4.tcp_rmem or net/ipv4/tcp_rmem; for a VLAN interface write net/ipv4/conf/eth0.100/rp_filter or net.ipv4.conf.eth0/100.rp_filter',
      };
    }
  }
  return { ok: true, key: path.map((pc) => pc.split(".").join("/")).join("."), path };
}

function keyMessage(raw: string, a: { why: string; fix: string }, shownValue?: string): string {
  const value = shownValue === undefined ? "" : ` (value ${shownValue})`;
  return `sysctl key ${quote(raw)}${value} ${a.why}. Fix: ${a.fix}.`;
}

/**
 * "net/ipv4/tcp_rmem" → "net.ipv4.tcp_rmem"; "net/ipv4/conf/eth0.100/rp_filter" →
 * "net.ipv4.conf.eth0/100.rp_filter". Idempotent. Throws InputError on a malformed key.
 */
export function normaliseKey(key: string): string {
  if (typeof key !== "string") throw new InputError("sysctl key", [`sysctl key ${String(key)} is not a string. Fix: ${KEY_FIX}.`]);
  const a = analyseKey(key);
  if (!a.ok) throw new InputError("sysctl key", [keyMessage(key, a)]);
  return a.key;
}

/** The path of a key under /proc/sys: "net.ipv4.conf.eth0/100.rp_filter" → "net/ipv4/conf/eth0.100/rp_filter". */
export function keyToPath(key: string): string {
  const a = analyseKey(key);
  if (!a.ok) throw new InputError("sysctl key", [keyMessage(key, a)]);
  return a.path.join("/");
}

// ------------------------------------------------------------------ values

/**
 * The shape of one sysctl value, independent of the key: a safe integer, a safe string, or a list of
 * safe integers. Key-specific rules (type, range, arity, order) are in `validateSysctls`.
 */
export const sysctlValueSchema: z.ZodType<number | string | number[]> = z.union([
  z.number().int({ message: "must be a whole number within ±2^53 (pass larger values as a decimal string)" }),
  z
    .string()
    .refine((s) => s.trim().length > 0, { message: "must not be empty" })
    .refine((s) => s.trim().length <= VALUE_MAX_LENGTH, { message: `must be at most ${VALUE_MAX_LENGTH} characters` })
    .refine((s) => VALUE_SAFE.test(s.trim()), {
      message: "may only contain letters, digits, spaces, tabs and . _ : , + -",
    }),
  z.array(z.number().int()).min(1).max(MAX_LIST),
]);

/** How a value is shown in messages. */
function show(v: unknown): string {
  if (typeof v === "string") return quote(v);
  if (typeof v === "number") return String(v);
  if (typeof v === "bigint") return `${v}n`;
  if (Array.isArray(v)) return `[${v.slice(0, MAX_LIST).map(show).join(", ")}${v.length > MAX_LIST ? ", …" : ""}]`;
  if (v === null) return "null";
  if (v === undefined) return "undefined";
  if (typeof v === "boolean") return String(v);
  return `(${typeof v})`;
}

/** "KEY = VALUE is out of range…. Fix: ….", or "KEY = VALUE: there is no such sysctl…. Fix: …." */
function fmt(key: string, shown: string, why: string, fix: string): string {
  const joiner = /^(is|has|are|contains|separates|sets|produced|value \d)\b/.test(why) ? " " : ": ";
  return `${key} = ${shown}${joiner}${why}. Fix: ${fix}.`;
}

type Raw =
  | { form: "number"; n: bigint }
  | { form: "array"; items: bigint[] }
  | { form: "string"; text: string };

type Fail = { why: string; fix: string };

function isFail(x: unknown): x is Fail {
  return typeof x === "object" && x !== null && "why" in x;
}

function parseNumber(n: number): bigint | Fail {
  if (!Number.isFinite(n)) return { why: "is not a finite number", fix: "give a whole number" };
  if (!Number.isInteger(n)) return { why: "is not a whole number (sysctls take integers)", fix: `give a whole number, e.g. ${Math.round(n)}` };
  if (!Number.isSafeInteger(n)) {
    return { why: "is too large to be represented exactly as a JavaScript number", fix: "pass it as a decimal string, e.g. \"9223372036854775807\"" };
  }
  return BigInt(n);
}

function parseRaw(v: unknown, keyType: CatalogueEntry["type"] | undefined): Raw | Fail {
  if (typeof v === "number") {
    const n = parseNumber(v);
    return isFail(n) ? n : { form: "number", n };
  }
  if (typeof v === "string") {
    const t = v.trim();
    if (t.length === 0) return { why: "is empty", fix: "give a value, or remove the key" };
    if (t.length > VALUE_MAX_LENGTH) return { why: `is ${t.length} characters long (the limit is ${VALUE_MAX_LENGTH})`, fix: "give a shorter value" };
    // eslint-disable-next-line no-control-regex
    if (/[\x00-\x08\x0a-\x1f\x7f]/.test(t)) {
      return { why: "contains a control character (newline, carriage return, …)", fix: "give the value on one line; separate multiple numbers with spaces" };
    }
    const bad = [...new Set([...t].filter((c) => c !== "\t" && !VALUE_CHAR.test(c)))];
    if (bad.length > 0) {
      return {
        why: `contains ${bad.map((c) => JSON.stringify(c)).join(", ")}, which is not allowed in a sysctl value`,
        fix: "use only letters, digits, spaces and . _ : , + - (numbers in ASCII digits, separated by spaces)",
      };
    }
    return { form: "string", text: t.replace(/[ \t]+/g, " ") };
  }
  if (Array.isArray(v)) {
    if (v.length === 0 || v.length > MAX_LIST) {
      return { why: `is a list of ${v.length} values`, fix: keyType === "multi" ? "give the values the key expects" : "give a single value" };
    }
    const items: bigint[] = [];
    for (const [i, x] of v.entries()) {
      if (typeof x !== "number") return { why: `has a non-number element at index ${i} (${show(x)})`, fix: "give a list of whole numbers, or one space-separated string" };
      const n = parseNumber(x);
      if (isFail(n)) return { why: `has element ${show(x)} that ${n.why}`, fix: n.fix };
      items.push(n);
    }
    return { form: "array", items };
  }
  if (typeof v === "boolean") return { why: "is a boolean", fix: `use ${v ? 1 : 0} (sysctl booleans are the integers 0 and 1)` };
  return { why: `is ${v === null ? "null" : `of type ${typeof v}`}`, fix: "give a number, a string, or a list of numbers" };
}

/** A decimal (or 0x hex) integer token → bigint; a leading zero is refused (the kernel reads it as octal). */
function parseIntToken(tok: string, allowHex: boolean): bigint | Fail {
  if (/^-?(0|[1-9][0-9]*)$/.test(tok)) return BigInt(tok);
  if (/^-?0[0-9]+$/.test(tok)) {
    const neg = tok.startsWith("-");
    const digits = tok.replace(/^-?0+/, "") || "0";
    return {
      why: `${JSON.stringify(tok)} has a leading zero, which the kernel reads as an octal number`,
      fix: `write it without the leading zero (${neg ? "-" : ""}${digits}), or in hex as 0x…`,
    };
  }
  if (allowHex && /^0[xX][0-9a-fA-F]{1,16}$/.test(tok)) return BigInt(tok);
  if (/^\+[0-9]+$/.test(tok)) return { why: `${JSON.stringify(tok)} has a "+" sign`, fix: `write ${tok.slice(1).replace(/^0+(?=.)/, "")}` };
  return { why: `${JSON.stringify(tok)} is not an integer`, fix: "give a whole number in decimal digits" };
}

function lo(e: CatalogueEntry): bigint | undefined {
  return e.min === undefined ? undefined : BigInt(e.min);
}
function hi(e: CatalogueEntry): bigint | undefined {
  if (e.maxDecimal !== undefined) return BigInt(e.maxDecimal);
  return e.max === undefined ? undefined : BigInt(e.max);
}

function rangeText(min: bigint | undefined, max: bigint | undefined): string {
  if (min !== undefined && max !== undefined) {
    if (max - min <= 3n) {
      const vals: string[] = [];
      for (let x = min; x <= max; x++) vals.push(String(x));
      return vals.length === 2 ? `${vals[0]} or ${vals[1]}` : `one of ${vals.join(", ")}`;
    }
    return `between ${min} and ${max}`;
  }
  if (min !== undefined) return `at least ${min}`;
  if (max !== undefined) return `at most ${max}`;
  return "an integer";
}

function unitText(e: CatalogueEntry): string {
  return e.unit ? ` ${e.unit}` : "";
}

interface Checked {
  /** Canonical text. */
  text: string;
  /** Integer values (int/bool: one; multi: arity). */
  ints?: bigint[];
}

/** Specific rejections that replace the generic range message. */
function specialIntProblem(key: string, n: bigint): Fail | undefined {
  if (key === "net.ipv4.tcp_notsent_lowat" && n === 0n) {
    return {
      why: "0 makes every TCP socket permanently non-writable (poll/epoll never report POLLOUT), so senders stall — a 2 MB send stalled completely; it does not \"cheaply disable autocorking\"",
      fix: "use a small positive value such as 16384 (16 KiB), or remove the key to keep the default 4294967295 (off); to disable autocorking set net.ipv4.tcp_autocorking = 0",
    };
  }
  if (key === "net.ipv4.tcp_fastopen" && n >= 0n && (n & ~0x607n) !== 0n) {
    return {
      why: `has bits outside the documented flags 0x1, 0x2, 0x4, 0x200, 0x400 (0x${n.toString(16)})`,
      fix: "combine only the documented flags, e.g. 3 (client and server) or 0x603",
    };
  }
  return undefined;
}

function checkValue(key: string, v: unknown, e: CatalogueEntry | undefined): Checked | Fail {
  const raw = parseRaw(v, e?.type);
  if (isFail(raw)) return raw;

  if (!e) {
    // Unknown key: only shape and safety — and numbers as the kernel reads them (base 0: "010" is 8, "0x10" is 16).
    if (raw.form === "number") return { text: raw.n.toString() };
    if (raw.form === "array") return { text: raw.items.map(String).join(" "), ints: raw.items };
    const odd = raw.text.split(" ").find((w) => /^[+-]?0[0-9]+$/.test(w) || /^[+-]?0[xX]/.test(w));
    if (odd !== undefined) {
      return {
        why: `contains ${JSON.stringify(odd)}, which the kernel reads as ${/^[+-]?0[xX]/.test(odd) ? "hexadecimal" : "octal"} (base 0), so the value read back would differ`,
        fix: "write every number in plain decimal without leading zeros",
      };
    }
    return { text: raw.text };
  }

  if (e.type === "int" || e.type === "bool") {
    let n: bigint;
    if (raw.form === "number") n = raw.n;
    else if (raw.form === "array") {
      return { why: "is a list, but the key takes a single integer", fix: `give one integer ${rangeText(lo(e), hi(e))}` };
    } else {
      if (raw.text.includes(" ")) return { why: "has several values, but the key takes a single integer", fix: `give one integer ${rangeText(lo(e), hi(e))}` };
      const p = parseIntToken(raw.text, true);
      if (isFail(p)) return p;
      n = p;
    }
    const special = specialIntProblem(key, n);
    if (special) return special;
    const min = lo(e);
    const max = hi(e);
    if ((min !== undefined && n < min) || (max !== undefined && n > max)) {
      return {
        why: `is out of range: ${key} takes ${rangeText(min, max)}${e.type === "int" ? unitText(e) : ""}`,
        fix: `give a value ${rangeText(min, max)}`,
      };
    }
    return { text: n.toString(), ints: [n] };
  }

  if (e.type === "multi") {
    const arity = e.arity ?? 1;
    let items: bigint[];
    if (raw.form === "number") {
      return { why: `is a single number, but the key takes ${arity} integers`, fix: `give ${arity} space-separated integers (e.g. ${exampleOf(e)}) or a list of ${arity} numbers` };
    } else if (raw.form === "array") items = raw.items;
    else {
      items = [];
      for (const tok of raw.text.split(" ")) {
        const p = parseIntToken(tok, false);
        if (isFail(p)) {
          return {
            why: tok.includes(",") ? `separates values with "," ` + `(${JSON.stringify(tok)})` : p.why,
            fix: tok.includes(",") ? `separate the ${arity} values with spaces, e.g. ${exampleOf(e)}` : p.fix,
          };
        }
        items.push(p);
      }
    }
    if (items.length !== arity) {
      return { why: `has ${items.length} value${items.length === 1 ? "" : "s"}, but the key takes ${arity}`, fix: `give exactly ${arity} integers, e.g. ${exampleOf(e)}` };
    }
    const emin = e.elementMin === undefined ? undefined : BigInt(e.elementMin);
    const emax = e.elementMax === undefined ? undefined : BigInt(e.elementMax);
    for (const [i, x] of items.entries()) {
      if ((emin !== undefined && x < emin) || (emax !== undefined && x > emax)) {
        return { why: `value ${i + 1} (${x}) is out of range: each value must be ${rangeText(emin, emax)}${unitText(e)}`, fix: `give values ${rangeText(emin, emax)}` };
      }
    }
    if (e.ordered) {
      for (let i = 1; i < items.length; i++) {
        if (items[i - 1] > items[i]) return orderProblem(key, items);
      }
    }
    return { text: items.map(String).join(" "), ints: items };
  }

  // string
  if (raw.form !== "string") {
    return { why: "is a number, but the key takes a name", fix: `give a name, e.g. ${exampleOf(e)}` };
  }
  if (e.pattern && !e.pattern.test(raw.text)) {
    return {
      why: `is not a valid ${e.pattern.source.includes("( ") ? "list of names" : "name"} (lowercase letters, digits and "_", at most 15 characters${e.pattern.source.includes("( ") ? " each, separated by spaces" : ""})`,
      fix: `give e.g. ${exampleOf(e)}`,
    };
  }
  return { text: raw.text };
}

function exampleOf(e: CatalogueEntry): string {
  switch (e.key) {
    case "net.ipv4.tcp_rmem": return "\"4096 131072 16777216\"";
    case "net.ipv4.tcp_wmem": return "\"4096 16384 16777216\"";
    case "net.ipv4.tcp_mem": return "\"786432 1048576 1572864\"";
    case "net.ipv4.ip_local_port_range": return "\"10000 65535\"";
    case "net.core.default_qdisc": return "\"fq\"";
    case "net.ipv4.tcp_congestion_control": return "\"bbr\"";
    case "net.ipv4.tcp_allowed_congestion_control": return "\"reno cubic bbr\"";
    default: return e.type === "multi" ? `"${Array.from({ length: e.arity ?? 1 }, (_, i) => i + 1).join(" ")}"` : "\"name\"";
  }
}

function orderProblem(key: string, items: bigint[]): Fail {
  if (key === "net.ipv4.ip_local_port_range") {
    return {
      why: `the low port ${items[0]} is above the high port ${items[1]} (the kernel refuses it with EINVAL)`,
      fix: `swap them: "${items[1]} ${items[0]}"`,
    };
  }
  const sorted = [...items].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const names = key === "net.ipv4.tcp_mem" ? ["low", "pressure", "high"] : ["min", "default", "max"];
  const [a, b, c] = items;
  const which = a > b ? `${names[0]} ${a} > ${names[1]} ${b}` : `${names[1]} ${b} > ${names[2]} ${c}`;
  return {
    why: `the values must satisfy ${names.join(" <= ")} but ${which}; the kernel does not check this and would accept a broken setting`,
    fix: `order them ${names.join(" <= ")}, e.g. "${sorted.join(" ")}"`,
  };
}

// ------------------------------------------------------------------ warnings

function isPow2(n: bigint): boolean {
  return n > 0n && (n & (n - 1n)) === 0n;
}
function nextPow2(n: bigint): bigint {
  let p = 1n;
  while (p < n) p <<= 1n;
  return p;
}
function mib(n: bigint): string {
  const m = Number(n) / (1024 * 1024);
  return Number.isInteger(m) ? `${m} MiB` : `${m.toFixed(1)} MiB`;
}

interface Item {
  raw: unknown;
  shown: string;
  checked: Checked;
}

function perKeyWarnings(key: string, it: Item, e: CatalogueEntry | undefined): string[] {
  const w: string[] = [];
  const n = it.checked.ints?.[0];
  const s = it.shown;
  if (!e) {
    const near = nearMiss(key);
    if (near) {
      w.push(fmt(key, s, `not a catalogued key; it looks like ${near}, and the host preflight refuses keys that do not exist`, `rename it to ${near} if that is what you meant`));
    }
    return w;
  }
  switch (key) {
    case "net.ipv4.tcp_sack":
      if (n === 0n) w.push(fmt(key, s, "disabling SACK does not make ACKs faster; it slows loss recovery to one hole per round trip, hurting lossy and long-RTT paths", "keep net.ipv4.tcp_sack = 1 (the default)"));
      break;
    case "net.ipv4.tcp_window_scaling":
      if (n === 0n) w.push(fmt(key, s, "without window scaling the TCP window is capped at 64 KiB (about 13 Mbit/s at 40 ms RTT)", "keep net.ipv4.tcp_window_scaling = 1 (the default)"));
      break;
    case "net.ipv4.tcp_timestamps":
      if (n === 0n) w.push(fmt(key, s, "disabling timestamps turns off PAWS and accurate RTT measurement, and makes tcp_tw_reuse ineffective", "keep net.ipv4.tcp_timestamps = 1 (the default)"));
      break;
    case "net.ipv4.tcp_fin_timeout":
      if (n !== undefined && n < 60n) {
        w.push(fmt(key, s, "tcp_fin_timeout only shortens orphaned FIN_WAIT_2; it does NOT shorten TIME_WAIT, which is fixed at 60 s (TCP_TIMEWAIT_LEN)", "for many TIME_WAIT sockets reuse connections (keepalive), set net.ipv4.tcp_tw_reuse = 1 for outgoing connections or widen net.ipv4.ip_local_port_range; keep this only if orphaned FIN_WAIT_2 sockets are the problem"));
      }
      break;
    case "fs.file-max":
      if (n !== undefined && n < BigInt(LONG_MAX)) {
        w.push(fmt(key, s, `systemd sets fs.file-max to LONG_MAX (${LONG_MAX}) at boot, so this finite value LOWERS the limit on systemd hosts (the host preflight compares with the live value)`, "remove the key (the limit is already effectively unlimited) and raise per-process limits instead (LimitNOFILE / nofile, fs.nr_open)"));
      }
      break;
    case "net.ipv4.tcp_low_latency":
      w.push(fmt(key, s, "has no effect since Linux 4.14 (prequeue was removed)", "remove the key"));
      break;
    case "net.ipv4.tcp_adv_win_scale":
      w.push(fmt(key, s, "is obsolete since Linux 6.6 (the receive window comes from a measured per-socket ratio); it only matters on older kernels", "remove the key on 6.6+ hosts; size net.ipv4.tcp_rmem[2] at about 2 × BDP instead"));
      break;
    case "net.core.somaxconn":
      if (n !== undefined && n > 65535n) {
        w.push(fmt(key, s, `before Linux 4.1 the accept backlog was 16 bits, so ${n} wraps to ${n % 65536n} there (CentOS 7 runs 3.10)`, "use at most 65535 on pre-4.1 kernels; also raise the backlog the application passes to listen() (e.g. nginx \"listen 80 backlog=65535\")"));
      }
      break;
    case "net.core.rps_sock_flow_entries":
      if (n !== undefined && n > 0n && !isPow2(n)) {
        w.push(fmt(key, s, `the kernel rounds it up to a power of two, so ${nextPow2(n)} will be read back`, `set ${nextPow2(n)}`));
      }
      break;
    case "vm.swappiness":
      if (n !== undefined && n > 100n) w.push(fmt(key, s, "values above 100 are only accepted by Linux 5.8+", "use 0-100 on older kernels (the host preflight will refuse it there)"));
      break;
    case "net.ipv4.tcp_mem": {
      const high = it.checked.ints?.[2];
      if (high !== undefined && high > 268435456n) {
        w.push(fmt(key, s, `tcp_mem is in pages (4 KiB), so a high mark of ${high} pages is more than 1 TiB — it looks like bytes`, "divide byte values by 4096, e.g. \"786432 1048576 1572864\" (3/4/6 GiB)"));
      }
      break;
    }
    case "net.ipv4.tcp_congestion_control":
    case "net.core.default_qdisc":
    case "net.ipv4.tcp_allowed_congestion_control": {
      const known = e.known ?? [];
      const unknown = it.checked.text.split(" ").filter((x) => !known.includes(x));
      if (unknown.length > 0) {
        const what = key === "net.core.default_qdisc" ? "queueing discipline" : "congestion-control algorithm";
        const mod = key === "net.core.default_qdisc" ? "sch_" : "tcp_";
        w.push(fmt(key, s, `${unknown.map((u) => JSON.stringify(u)).join(", ")} is not a usual ${what}; the kernel will try to load module ${mod}${unknown[0]} and fail with ENOENT if it does not exist`, `check the spelling (known: ${known.join(", ")})`));
      }
      break;
    }
  }
  return w;
}

function levenshtein(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) > cap) return cap + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      best = Math.min(best, cur[j]);
    }
    if (best > cap) return cap + 1;
    prev = cur;
  }
  return prev[b.length];
}

/**
 * A catalogued key the unknown key probably meant, or undefined. Conservative, because real keys sit
 * next to catalogued ones (tcp_dsack / tcp_sack, netdev_budget_usecs / netdev_budget):
 *  - same directory and a last component within edit distance 1 (10+ characters) or 2 (14+);
 *  - the same last component in another directory (net.core.tcp_rmem → net.ipv4.tcp_rmem);
 *  - a catalogued key plus up to 8 characters not starting a new word (somaxconnvalue), or a
 *    catalogued key missing its last 1-4 characters (tcp_keepalive_prob).
 */
export function nearMiss(key: string): string | undefined {
  const keys = Object.keys(CATALOGUE);
  const dot = key.lastIndexOf(".");
  const dir = key.slice(0, dot);
  const last = key.slice(dot + 1);
  const limit = last.length >= 14 ? 2 : last.length >= 10 ? 1 : 0;
  for (const k of keys) {
    const kd = k.lastIndexOf(".");
    if (limit > 0 && k.slice(0, kd) === dir && levenshtein(last, k.slice(kd + 1), limit) <= limit) return k;
  }
  for (const k of keys) {
    if (k.slice(k.lastIndexOf(".") + 1) === last) return k;
  }
  for (const k of keys) {
    if (key.startsWith(k) && key.length - k.length <= 8 && !/^[_.\-/]/.test(key.slice(k.length))) return k;
    if (k.startsWith(key) && k.length - key.length <= 4 && last.length >= 6 && !/^[_.\-/]/.test(k.slice(key.length))) return k;
  }
  return undefined;
}

// ------------------------------------------------------------------ main

/**
 * Validates declared sysctls. `resource` names the resource in the error, e.g. 'NetTuning "web"'.
 * Throws one InputError listing EVERY problem; otherwise returns canonical values (keys sorted) and warnings.
 */
export function validateSysctls(input: Record<string, unknown>, resource = "sysctls"): ValidatedSysctls {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new InputError(resource, [`sysctls = ${show(input)}: must be an object mapping sysctl keys to values. Fix: give e.g. { "net.core.somaxconn": 4096 }.`]);
  }
  const problems: string[] = [];
  const items = new Map<string, Item>();
  const rawNames = new Map<string, { raw: string; shown: string }>();

  const entries = Object.entries(input).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [rawKey, v] of entries) {
    const shown = show(v);
    const a = analyseKey(rawKey);
    if (!a.ok) {
      problems.push(keyMessage(rawKey, a, shown));
      continue;
    }
    const key = a.key;
    const other = rawNames.get(key);
    if (other !== undefined) {
      problems.push(fmt(key, shown, `is given twice, as ${quote(other.raw)} = ${other.shown} and ${quote(rawKey)} = ${shown}`, "keep only one of them"));
      continue;
    }
    rawNames.set(key, { raw: rawKey, shown });
    const rej = rejection(key);
    if (rej) {
      problems.push(fmt(key, shown, rej.reason, rej.fix));
      continue;
    }
    const e = lookup(key);
    if (e?.readOnly) {
      problems.push(fmt(key, shown, "is read-only (the kernel lists what is loaded)", key === "net.ipv4.tcp_available_congestion_control"
        ? "remove it; load the module (e.g. tcp_bbr) and set net.ipv4.tcp_congestion_control or net.ipv4.tcp_allowed_congestion_control"
        : "remove it"));
      continue;
    }
    const c = checkValue(key, v, e);
    if (isFail(c)) {
      problems.push(fmt(key, shown, c.why, c.fix));
      continue;
    }
    if (!VALUE_SAFE.test(c.text)) {
      // Defence in depth: never reached with the rules above.
      problems.push(fmt(key, shown, "produced an unsafe canonical value", "report this as a bug"));
      continue;
    }
    items.set(key, { raw: v, shown, checked: c });
  }

  const warnings: string[] = [];
  const keys = [...items.keys()].sort();
  for (const key of keys) warnings.push(...perKeyWarnings(key, items.get(key)!, lookup(key)));
  crossChecks(items, problems, warnings);

  if (problems.length > 0) throw new InputError(resource, problems);
  const values: Record<string, string> = {};
  for (const key of keys) values[key] = items.get(key)!.checked.text;
  return { values, warnings };
}

function ints(items: Map<string, Item>, key: string): bigint[] | undefined {
  return items.get(key)?.checked.ints;
}

function crossChecks(items: Map<string, Item>, problems: string[], warnings: string[]): void {
  const shown = (k: string) => items.get(k)!.shown;

  // Aliases of one kernel variable.
  for (const [key, it] of items) {
    const e = lookup(key);
    if (e?.aliasOf && items.has(e.aliasOf) && items.get(e.aliasOf)!.checked.text !== it.checked.text) {
      problems.push(fmt(key, it.shown, `sets the same kernel variable as ${e.aliasOf} (= ${shown(e.aliasOf)}) to a different value`, `give only ${e.aliasOf}`));
    }
  }

  // ip_local_port_range: parity, and the unprivileged port start.
  const range = ints(items, "net.ipv4.ip_local_port_range");
  if (range && range.length === 2 && range[0] <= range[1]) {
    const k = "net.ipv4.ip_local_port_range";
    const [low, high] = range;
    if ((low - high) % 2n === 0n) {
      const fixHigh = high < 65535n ? high + 1n : high - 1n;
      warnings.push(fmt(k, shown(k), `${low} and ${high} have the same parity; the kernel prefers one even and one odd bound (connect() uses one parity, bind() the other) and logs a warning`, `use e.g. "${low} ${fixHigh}"`));
    }
    const unpriv = ints(items, "net.ipv4.ip_unprivileged_port_start");
    if (unpriv) {
      if (low < unpriv[0]) {
        problems.push(fmt(k, shown(k), `the low port ${low} is below net.ipv4.ip_unprivileged_port_start = ${unpriv[0]} in the same input; the kernel refuses it with EINVAL`, `raise the low port to at least ${unpriv[0]} or lower ip_unprivileged_port_start to at most ${low}`));
      }
    } else if (low < 1024n) {
      warnings.push(fmt(k, shown(k), `the low port ${low} is below the default net.ipv4.ip_unprivileged_port_start (1024); the kernel refuses it with EINVAL unless ip_unprivileged_port_start <= ${low} (the host preflight checks the live value)`, `use a low port of at least 1024, or also set net.ipv4.ip_unprivileged_port_start = ${low}`));
    }
  }

  // rmem_max/wmem_max vs the TCP maxima: informational.
  for (const [core, tcp, opt] of [
    ["net.core.rmem_max", "net.ipv4.tcp_rmem", "SO_RCVBUF"],
    ["net.core.wmem_max", "net.ipv4.tcp_wmem", "SO_SNDBUF"],
  ] as const) {
    const c = ints(items, core);
    const t = ints(items, tcp);
    if (c && t && t.length === 3 && c[0] < t[2]) {
      warnings.push(fmt(core, shown(core), `is below the ${tcp} max ${t[2]} given in the same input; that is fine for auto-tuned TCP sockets (bounded by ${tcp}[2]) but applications that set ${opt} themselves are capped at ${c[0]} and lose auto-tuning`, `if such applications need large buffers raise ${core} to at least ${t[2]}`));
    }
  }

  // "max open, default cautious".
  for (const [key, idx] of [
    ["net.core.rmem_default", 0],
    ["net.core.wmem_default", 0],
    ["net.ipv4.tcp_rmem", 1],
    ["net.ipv4.tcp_wmem", 1],
  ] as const) {
    const v = ints(items, key)?.[idx];
    if (v !== undefined && v >= MIB16) {
      const total = (v * 10000n) / (1024n * 1024n * 1024n);
      warnings.push(fmt(key, shown(key), `the default buffer ${mib(v)} is given to every new socket: 10,000 connections × ${mib(v)} ≈ ${total} GiB of potential buffer memory ("max open, default cautious")`, `keep the default at 256 KiB-1 MiB (e.g. 262144) and raise only the maximum${idx === 1 ? ` (the third value of ${key})` : ""}`));
    }
  }

  // rmem_default above rmem_max.
  for (const [def, max] of [["net.core.rmem_default", "net.core.rmem_max"], ["net.core.wmem_default", "net.core.wmem_max"]] as const) {
    const d = ints(items, def);
    const m = ints(items, max);
    if (d && m && d[0] > m[0]) {
      warnings.push(fmt(def, shown(def), `is above ${max} = ${m[0]} in the same input`, `make ${def} <= ${max}`));
    }
  }

  // dirty ratios.
  const dr = ints(items, "vm.dirty_ratio");
  const dbr = ints(items, "vm.dirty_background_ratio");
  if (dr && dbr && dr[0] > 0n && dbr[0] >= dr[0]) {
    warnings.push(fmt("vm.dirty_background_ratio", shown("vm.dirty_background_ratio"), `is not below vm.dirty_ratio = ${dr[0]}; the kernel then uses half of dirty_ratio instead`, `make it smaller than vm.dirty_ratio, e.g. ${dr[0] / 2n}`));
  }

  // tcp_tw_reuse needs timestamps.
  const reuse = ints(items, "net.ipv4.tcp_tw_reuse");
  const ts = ints(items, "net.ipv4.tcp_timestamps");
  if (reuse && ts && reuse[0] >= 1n && ts[0] === 0n) {
    warnings.push(fmt("net.ipv4.tcp_tw_reuse", shown("net.ipv4.tcp_tw_reuse"), "has no effect with net.ipv4.tcp_timestamps = 0 in the same input (reuse relies on timestamps)", "keep net.ipv4.tcp_timestamps = 1"));
  }
}

/** The sysctl key an advisory warning is about (warnings start with `key = value`), or undefined. */
export function warningKey(warning: string): string | undefined {
  return /^([a-z0-9_-]+(?:\.[A-Za-z0-9_@:+-]+)+) = /.exec(warning)?.[1];
}

/**
 * Reconciles the validator's advisory warnings with a profile and the user's acknowledgements, so that the component
 * and `net-tuning plan` give the same advice: a warning about a key the profile chose (and the user did not override)
 * is covered by the profile's rationale, and a warning about a key in `acknowledge` was accepted by the user; both
 * move to `acknowledged` instead of being logged. An acknowledged key without any warning is itself a warning.
 */
export function reconcileAdvice(
  warnings: string[],
  opts: { profileKeys?: Iterable<string>; ownKeys?: Iterable<string>; acknowledge?: string[] },
): { warnings: string[]; acknowledged: string[] } {
  const own = new Set([...(opts.ownKeys ?? [])].map((k) => k.replace(/\//g, ".")));
  const covered = new Set([...(opts.profileKeys ?? [])].filter((k) => !own.has(k)));
  const ack = new Set((opts.acknowledge ?? []).map((k) => k.replace(/\//g, ".")));
  const kept: string[] = [];
  const acknowledged: string[] = [];
  const used = new Set<string>();
  for (const w of warnings) {
    const key = warningKey(w);
    if (key && ack.has(key)) {
      acknowledged.push(`${key} (acknowledged): ${w}`);
      used.add(key);
    } else if (key && covered.has(key)) acknowledged.push(`${key} (chosen by the profile, see its rationale): ${w}`);
    else kept.push(w);
  }
  for (const k of ack) {
    if (!used.has(k)) kept.push(`acknowledge lists ${k}, which has no advisory warning: remove it from acknowledge`);
  }
  return { warnings: kept, acknowledged };
}
