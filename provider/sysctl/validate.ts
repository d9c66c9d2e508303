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
 * Rules, advice and examples
 * --------------------------
 * What is known about a key is in its catalogue entry (catalogue.ts): range, arity, order names, example, advice and
 * `rules` (when the advice applies: a value, a comparison with another key of the same input, a power of two, an
 * unknown name, …). This file is the generic engine: it parses values, checks them against the entry, runs every
 * rule and words each message as `KEY = VALUE <fact>: <advice>. Fix: <fix>.` Error rules refuse the input; the
 * others are advisory warnings, which `acknowledge` (or a profile's rationale) can cover (`reconcileAdvice`).
 * Unknown keys only get a "did you mean" warning (`nearMiss`), which NetTuning turns into an error unless the key is
 * in `acknowledge` ({@link Advice} `misspelt`): the host refuses a key its kernel does not have.
 */
import { z } from "zod";
import { InputError, Problem, problemAt } from "../errors";
import { CatalogueEntry, CATALOGUE, isSecretKey, KeyRef, lookup, otherNames, rejection, SysctlRule, valueForm, variableOf } from "./catalogue";
import { kernelPow2 } from "./readback";

/** A finding of the validator about one key: the canonical key (or the key as given, when malformed) and the text. */
export interface KeyProblem {
  key: string;
  /** "KEY = VALUE why. Fix: fix." */
  text: string;
}

/**
 * An advisory warning about one key. `misspelt`: the key is not catalogued but looks like one that is
 * (`net.core.somaxcon`); the host refuses keys its kernel does not have, so NetTuning refuses it unless acknowledged.
 */
export interface Advice extends KeyProblem {
  misspelt?: true;
}

export interface ValidatedSysctls {
  /** Dotted canonical key → canonical value text; keys sorted. */
  values: Record<string, string>;
  /** Advice for pulumi.log.warn, in key order; each text names key, value, why and fix. */
  advice: Advice[];
}

/**
 * The validator's errors: an InputError whose `problems` are the texts, with each one's key ({@link KeyProblem}) kept
 * beside them, so a caller (the component's property paths, the audit's findings) never reads a key back out of a text.
 */
export class SysctlInputError extends InputError {
  constructor(resource: string, readonly keyProblems: KeyProblem[]) {
    super(resource, keyProblems.map((p) => problemAt(sysctlPath(p.key), p.text)));
  }
}

/** The property path of a sysctl key among NetTuning's arguments: `sysctls["net.core.somaxconn"]`. */
export function sysctlPath(key: string): string {
  return `sysctls[${JSON.stringify(key)}]`;
}

export const KEY_MAX_LENGTH = 200;
export const VALUE_MAX_LENGTH = 256;
/**
 * The characters of a sysctl value, as the body of a bracket expression that means the same in a JavaScript RegExp
 * and in a sh `case` pattern: the one declaration of the set. The host checks plans with it (sysctl.sh kind_content,
 * through NTS_VALUE_CHARS in the generated sysctlspec.sh), and an original read from the host may also hold tabs
 * (NT_ORIG_CHARS; renderSysctlRestoreStdin). A tab in an input value is collapsed to a space.
 */
export const SYSCTL_VALUE_CHARS = "A-Za-z0-9 ._:,+-";
/** The characters of a key as a plan carries it (the host: NTS_KEY_CHARS; a restore plan's `@orig` keys). */
export const SYSCTL_KEY_CHARS = "A-Za-z0-9._/:-";
const VALUE_CHAR = new RegExp(`[${SYSCTL_VALUE_CHARS}]`);
const VALUE_SAFE = new RegExp(`^[${SYSCTL_VALUE_CHARS}]*$`);
const KEY_CHAR = /[A-Za-z0-9_./-]/;
const FIRST_COMPONENT = /^[a-z0-9_][a-z0-9_-]*$/;
const PATH_COMPONENT = /^[A-Za-z0-9_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$/;
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
 * The shape of one sysctl value, independent of the key: a safe integer, a safe string, or a list of safe integers.
 * The same check `validateSysctls` runs first (`parseRaw`), as a zod schema for the profile schema; the key's own
 * rules (type, range, arity, order) are in the catalogue.
 */
export const sysctlValueSchema: z.ZodType<number | string | number[]> = z.custom<number | string | number[]>((v) => !isFail(parseRaw(v, undefined)), {
  error: (iss) => {
    const r = parseRaw(iss.input, undefined);
    return isFail(r) ? `${r.why}: ${r.fix}` : "is not a sysctl value";
  },
});

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
  const joiner = /^(is|has|are|contains|separates|sets|produced|wraps|will|gives|value \d)\b/.test(why) ? " " : ": ";
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

/** " (why the range is what it is)" for an entry that says so, else "". */
function rangeWhyText(e: CatalogueEntry): string {
  return e.rangeWhy ? ` (${e.rangeWhy})` : "";
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
    // Error rules (e.g. tcp_notsent_lowat = 0) say more than the range check would.
    const refused = errorRuleProblem(key, e, n);
    if (refused) return refused;
    const min = lo(e);
    const max = hi(e);
    if ((min !== undefined && n < min) || (max !== undefined && n > max)) {
      return {
        why: `is out of range: ${key} takes ${rangeText(min, max)}${e.type === "int" ? unitText(e) : ""}${rangeWhyText(e)}`,
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
        return { why: `value ${i + 1} (${x}) is out of range: each value must be ${rangeText(emin, emax)}${unitText(e)}${rangeWhyText(e)}`, fix: `give values ${rangeText(emin, emax)}` };
      }
    }
    if (e.ordered) {
      for (let i = 1; i < items.length; i++) {
        if (items[i - 1] > items[i]) return orderProblem(e, items);
      }
    }
    return { text: items.map(String).join(" "), ints: items };
  }

  // string
  if (raw.form !== "string") {
    return { why: `is a ${raw.form === "array" ? "list" : "number"}, but the key takes a ${valueForm(e, { usual: false })}`, fix: `give e.g. ${exampleOf(e)}` };
  }
  if (e.pattern && !e.pattern.test(raw.text)) {
    return { why: `is not a valid ${valueForm(e, { usual: false })}`, fix: `give e.g. ${exampleOf(e)}` };
  }
  return { text: raw.text };
}


function exampleOf(e: CatalogueEntry): string {
  return e.example ?? (e.type === "multi" ? `"${Array.from({ length: e.arity ?? 1 }, (_, i) => i + 1).join(" ")}"` : "\"name\"");
}

/** min <= default <= max (names from the catalogue), or low < high for a pair. */
function orderProblem(e: CatalogueEntry, items: bigint[]): Fail {
  const names = e.names ?? ["min", "default", "max"];
  if (items.length === 2) {
    return {
      why: `the ${names[0]} ${items[0]} is above the ${names[1]} ${items[1]} (the kernel refuses it with EINVAL)`,
      fix: `swap them: "${items[1]} ${items[0]}"`,
    };
  }
  const sorted = [...items].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const [a, b, c] = items;
  const which = a > b ? `${names[0]} ${a} > ${names[1]} ${b}` : `${names[1]} ${b} > ${names[2]} ${c}`;
  return {
    why: `the values must satisfy ${names.join(" <= ")} but ${which}; the kernel does not check this and would accept a broken setting`,
    fix: `order them ${names.join(" <= ")}, e.g. "${sorted.join(" ")}"`,
  };
}

// ------------------------------------------------------------------ the rule engine (rules are in the catalogue)

function mib(n: bigint): string {
  const m = Number(n) / (1024 * 1024);
  return Number.isInteger(m) ? `${m} MiB` : `${m.toFixed(1)} MiB`;
}

interface Item {
  raw: unknown;
  shown: string;
  checked: Checked;
  /** The value is secret (the catalogue's secret keys, values given as Pulumi secrets): no message shows it. */
  secret: boolean;
}

/** Shown in messages instead of a secret value (the same word as the live preview's). */
export const SECRET_SHOWN = "(secret)";

const isKeyRef = (x: unknown): x is KeyRef => typeof x === "object" && x !== null && "key" in x;

/**
 * The placeholders of a rule that fires for `it` (see SysctlRule), or undefined when it does not. `items` is the
 * whole input (for rules comparing with another key); a rule naming a key that is absent does not fire.
 */
function fires(rule: SysctlRule, e: CatalogueEntry, it: Pick<Item, "checked">, items?: Map<string, Item>): Record<string, string> | undefined {
  const w = rule.when;
  const ints = it.checked.ints ?? [];
  const valueAt = (i: number | undefined) => ints[i ?? 0];
  if (rule.unlessSet && (!items || items.has(rule.unlessSet))) return undefined;
  if (rule.with) {
    if (!items) return undefined;
    if (items.get(rule.with.key)?.checked.ints?.[0] !== BigInt(rule.with.eq)) return undefined;
  }
  switch (w.op) {
    case "always":
      return {};
    case "eq":
    case "lt":
    case "gt":
    case "gte": {
      const n = valueAt(w.index);
      if (n === undefined) return undefined;
      let than: bigint;
      const vars: Record<string, string> = {};
      if (isKeyRef(w.than)) {
        const other = items?.get(w.than.key)?.checked.ints?.[w.than.index ?? 0];
        if (other === undefined || (w.nonZeroRef && other === 0n)) return undefined;
        than = other;
        Object.assign(vars, { ref: String(other), refKey: w.than.key, half: String(other / 2n) });
      } else than = BigInt(w.than);
      const hit = w.op === "eq" ? n === than : w.op === "lt" ? n < than : w.op === "gt" ? n > than : n >= than;
      if (!hit) return undefined;
      return { ...vars, n: String(n), wrap16: String(n % 65536n), mib: mib(n), gib10k: String((n * 10000n) / (1024n * 1024n * 1024n)) };
    }
    case "notPow2": {
      const n = valueAt(0);
      if (n === undefined || n <= 0n || (n & (n - 1n)) === 0n) return undefined;
      return { n: String(n), pow2: String(kernelPow2(Number(n))) };
    }
    case "notMultipleOf": {
      const n = valueAt(0);
      const of = BigInt(w.of);
      if (n === undefined || n % of === 0n) return undefined;
      return { n: String(n), up20: String(((n + of - 1n) / of) * of) };
    }
    case "bitsOutside": {
      const n = valueAt(0);
      if (n === undefined || n < 0n || (n & ~BigInt(w.mask)) === 0n) return undefined;
      return { n: String(n), hex: `0x${n.toString(16)}` };
    }
    case "unknownName": {
      const known = e.known ?? [];
      const unknown = it.checked.text.split(" ").filter((x) => !known.includes(x));
      if (unknown.length === 0) return undefined;
      return { unknown: unknown.map((u) => JSON.stringify(u)).join(", "), first: unknown[0], known: known.join(", ") };
    }
    case "sameParity": {
      const [low, high] = ints;
      if (ints.length !== 2 || (low - high) % 2n !== 0n) return undefined;
      return { low: String(low), high: String(high), parityFix: String(high < 65535n ? high + 1n : high - 1n) };
    }
  }
}

function fill(template: string, vars: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (m, name: string) => vars[name] ?? m);
}

/** The why of a rule's message: its fact, then the entry's advice (unless the rule says the fact is all). */
function ruleMessage(rule: SysctlRule, e: CatalogueEntry, vars: Record<string, string>): Fail {
  const why = [rule.fact ? fill(rule.fact, vars) : "", rule.advice === false ? "" : e.advice ?? ""].filter(Boolean).join(": ");
  return { why, fix: fill(rule.fix, vars) };
}

const comparesKeys = (r: SysctlRule) => ("than" in r.when && isKeyRef(r.when.than)) || r.with !== undefined || r.unlessSet !== undefined;

/** The first error rule of one value that fires on its own (no other key involved), as a problem. */
function errorRuleProblem(key: string, e: CatalogueEntry, n: bigint): Fail | undefined {
  for (const rule of e.rules ?? []) {
    if (rule.level !== "error" || comparesKeys(rule)) continue;
    const vars = fires(rule, e, { checked: { text: n.toString(), ints: [n] } });
    if (vars) return ruleMessage(rule, e, vars);
  }
  return undefined;
}

/** Every rule of every catalogued key of the input (error rules on their own were applied in checkValue). */
function applyRules(items: Map<string, Item>, problems: KeyProblem[], advice: Advice[]): void {
  for (const key of [...items.keys()].sort()) {
    const it = items.get(key)!;
    // Two names of one kernel variable (aliasOf / aliases): one setting, refused even with equal values.
    const v = variableOf(key);
    const also = key === v ? undefined : [v, ...otherNames(key)].find((k) => items.has(k) && k !== key);
    if (also !== undefined) {
      problems.push({ key, text: fmt(key, it.shown, `sets the same kernel variable as ${also} (= ${items.get(also)!.shown}), also given here: one variable, two names`, `give only ${v}`) });
    }
    const e = lookup(key);
    if (!e) {
      const near = nearMiss(key);
      if (near) advice.push({ key, text: misspeltKeyText(key, it.shown, near), misspelt: true });
      continue;
    }
    for (const rule of e.rules ?? []) {
      if (rule.level === "error" && !comparesKeys(rule)) continue;
      const found = fires(rule, e, it, items);
      if (!found) continue;
      // a secret value (this key's, or the other key's the rule compares with) appears in no placeholder
      const ref = "than" in rule.when && isKeyRef(rule.when.than) ? items.get(rule.when.than.key) : undefined;
      const vars = it.secret || ref?.secret ? Object.fromEntries(Object.keys(found).map((k) => [k, SECRET_SHOWN])) : found;
      const m = ruleMessage(rule, e, vars);
      (rule.level === "error" ? problems : advice).push({ key, text: fmt(key, it.shown, m.why, m.fix) });
    }
  }
}

/** The words of the advice about an unknown key that looks like a catalogued one ({@link Advice}'s `misspelt`). */
const UNKNOWN_NEAR = "is not a catalogued key; it looks like";

function misspeltKeyText(key: string, shown: string, near: string): string {
  return fmt(key, shown, `${UNKNOWN_NEAR} ${near}, and the host preflight refuses keys that do not exist`, `rename it to ${near} if that is what you meant, or list ${key} in acknowledge if this kernel has that key`);
}


/**
 * The misspelt-key errors of an input that failed validation for other reasons (validateSysctls then returns no
 * warnings): each well-formed key of `input` that is not catalogued, looks like a catalogued key and is not in
 * `acknowledge`, worded as {@link validateSysctls} words the advice. Lets one error list every problem.
 */
export function misspeltKeyProblems(input: Record<string, unknown>, acknowledge: string[] = []): Problem[] {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return [];
  const ack = new Set(acknowledge.map(canonicalKey));
  const out: Problem[] = [];
  for (const [rawKey, v] of Object.entries(input).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const a = analyseKey(rawKey);
    if (!a.ok || lookup(a.key) || rejection(a.key) || ack.has(a.key)) continue;
    const near = nearMiss(a.key);
    if (near) out.push(problemAt(sysctlPath(a.key), misspeltKeyText(a.key, show(v), near)));
  }
  return out;
}

/** Edit distance of a and b, or cap + 1 when it exceeds cap. */
export function levenshtein(a: string, b: string, cap: number): number {
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
export function validateSysctls(input: Record<string, unknown>, resource = "sysctls", secretKeys: readonly string[] = []): ValidatedSysctls {
  const entries = typeof input === "object" && input !== null && !Array.isArray(input) ? Object.entries(input) : undefined;
  const memo = entries && memoKey(entries);
  const key = memo && (secretKeys.length ? `${memo}\n${JSON.stringify([...secretKeys].sort())}` : memo);
  if (key === undefined) return validateUncached(input, resource, secretKeys);
  let hit = validated.get(key);
  if (!hit) {
    // only a success is kept (an error names the resource); the entries as read for the key are what is validated
    hit = validateUncached(Object.fromEntries(entries!), resource, secretKeys);
    if (validated.size >= VALIDATED_MAX) validated.clear();
    validated.set(key, hit);
  }
  return { values: { ...hit.values }, advice: [...hit.advice] };
}

/**
 * Successful validations by input, per process: a fleet declares the same sysctls for every host, and validating 40
 * keys (catalogue rules, near-miss search) per resource shows at 1,000 hosts. The result is a pure function of the
 * entries (the resource name appears only in an error, which is never kept); callers get copies.
 */
const validated = new Map<string, ValidatedSysctls>();
const VALIDATED_MAX = 256;

/**
 * The cache key of the entries, or undefined when a value is not a string, a finite number (not -0) or a list of
 * them: for those JSON is exact (no undefined dropped, no NaN/Infinity turned into null, no toJSON).
 */
function memoKey(entries: [string, unknown][]): string | undefined {
  const simple = (v: unknown) => typeof v === "string" || (typeof v === "number" && Number.isFinite(v) && !Object.is(v, -0));
  for (const [, v] of entries) {
    if (simple(v)) continue;
    if (!Array.isArray(v) || Object.getPrototypeOf(v) !== Array.prototype || "toJSON" in v) return undefined;
    for (let i = 0; i < v.length; i++) if (!(i in v) || !simple(v[i])) return undefined;
  }
  return JSON.stringify(entries);
}

function validateUncached(input: Record<string, unknown>, resource: string, secretKeys: readonly string[]): ValidatedSysctls {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new InputError(resource, [`sysctls = ${show(input)}: must be an object mapping sysctl keys to values. Fix: give e.g. { "net.core.somaxconn": 4096 }.`]);
  }
  const problems: KeyProblem[] = [];
  const items = new Map<string, Item>();
  const rawNames = new Map<string, { raw: string; shown: string }>();

  const entries = Object.entries(input).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const given = new Set(secretKeys);
  for (const [rawKey, v] of entries) {
    const a = analyseKey(rawKey);
    // a secret value (the catalogue's secret keys; a value given as a Pulumi secret) is never shown
    const secret = given.has(rawKey) || (a.ok && (given.has(a.key) || isSecretKey(a.key)));
    const shown = secret ? SECRET_SHOWN : show(v);
    if (!a.ok) {
      problems.push({ key: rawKey, text: keyMessage(rawKey, a, shown) });
      continue;
    }
    const key = a.key;
    const other = rawNames.get(key);
    if (other !== undefined) {
      problems.push({ key, text: fmt(key, shown, `is given twice, as ${quote(other.raw)} = ${other.shown} and ${quote(rawKey)} = ${shown}`, "keep only one of them") });
      continue;
    }
    rawNames.set(key, { raw: rawKey, shown });
    const rej = rejection(key);
    if (rej) {
      problems.push({ key, text: fmt(key, shown, rej.reason, rej.fix) });
      continue;
    }
    const e = lookup(key);
    if (e?.readOnly) {
      problems.push({ key, text: fmt(key, shown, e.readOnly.why, e.readOnly.fix) });
      continue;
    }
    const c = checkValue(key, v, e);
    if (isFail(c)) {
      // the why and fix of a secret may quote the value (an element, a rounded value): the key's form instead
      if (secret) problems.push({ key, text: fmt(key, shown, e ? `is not accepted: the key takes a ${valueForm(e, { usual: false })}` : "is not a valid sysctl value", e ? `give a ${valueForm(e, { usual: false })}` : "use only letters, digits, spaces and . _ : , + -") });
      else problems.push({ key, text: fmt(key, shown, c.why, c.fix) });
      continue;
    }
    if (!VALUE_SAFE.test(c.text)) {
      // Defence in depth: never reached with the rules above.
      problems.push({ key, text: fmt(key, shown, "produced an unsafe canonical value", "report this as a bug") });
      continue;
    }
    items.set(key, { raw: v, shown, checked: c, secret });
  }

  const advice: Advice[] = [];
  const keys = [...items.keys()].sort();
  applyRules(items, problems, advice);

  if (problems.length > 0) throw new SysctlInputError(resource, problems);
  const values: Record<string, string> = {};
  for (const key of keys) values[key] = items.get(key)!.checked.text;
  return { values, advice };
}


/** The canonical form of a key as the validator writes it ("/" kept inside a VLAN interface name), or the key itself when malformed. */
export function canonicalKey(key: string): string {
  let c = canonical.get(key);
  if (c === undefined) {
    const a = analyseKey(key);
    c = a.ok ? a.key : key;
    if (canonical.size >= 4096) canonical.clear();
    canonical.set(key, c);
  }
  return c;
}
/** canonicalKey's results (a pure function of the key; planning calls it for every key of every resource). */
const canonical = new Map<string, string>();

/** Advice moved out of the warnings: the user listed its key in `acknowledge`, or a profile chose the value. */
export interface AcknowledgedAdvice extends Advice {
  by: "acknowledge" | "profile";
}

/**
 * Reconciles the validator's advisory warnings with a profile and the user's acknowledgements, so that the component
 * and `net-tuning plan` give the same advice: a warning about a key the profile chose (and the user did not override)
 * is covered by the profile's rationale, and a warning about a key in `acknowledge` was accepted by the user; both
 * move to `acknowledged` instead of being logged. An acknowledged key without any warning is itself a warning.
 */
export function reconcileAdvice(
  advice: Advice[],
  opts: { profileKeys?: Iterable<string>; ownKeys?: Iterable<string>; acknowledge?: string[] },
): { warnings: Advice[]; acknowledged: AcknowledgedAdvice[] } {
  const own = new Set([...(opts.ownKeys ?? [])].map(canonicalKey));
  const covered = new Set([...(opts.profileKeys ?? [])].map(canonicalKey).filter((k) => !own.has(k)));
  const ack = new Set((opts.acknowledge ?? []).map(canonicalKey));
  const kept: Advice[] = [];
  const acknowledged: AcknowledgedAdvice[] = [];
  const used = new Set<string>();
  for (const a of advice) {
    if (ack.has(a.key)) {
      acknowledged.push({ ...a, by: "acknowledge" });
      used.add(a.key);
    } else if (covered.has(a.key)) acknowledged.push({ ...a, by: "profile" });
    else kept.push(a);
  }
  for (const k of ack) {
    if (!used.has(k)) kept.push({ key: k, text: `acknowledge lists ${k}, which has no advisory warning: remove it from acknowledge` });
  }
  return { warnings: kept, acknowledged };
}

/** An acknowledged advice as the `acknowledged` output shows it. */
export function acknowledgedText(a: AcknowledgedAdvice): string {
  return `${a.key} (${a.by === "acknowledge" ? "acknowledged" : "chosen by the profile, see its rationale"}): ${a.text}`;
}
