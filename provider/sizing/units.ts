/**
 * Units for sizing: link rates, round-trip times, byte sizes and the bandwidth-delay product.
 *
 * Parsing is exact (decimal strings are read as fractions, not floats), so `bdp("10Gbit", "40ms")` is
 * exactly 50 000 000 bytes, as in the gateway guide's table. Every parser returns either a value or a problem
 * string naming the input, the value and the accepted formats; callers collect problems into one
 * {@link InputError}.
 */
import { InputError } from "../errors";

/** A link rate: a number of bits per second, or a string such as `"10Gbit"`, `"500Mbit"`, `"1.5Gbit/s"`, `"1Gbps"`. */
export type Bandwidth = number | string;
/** A round-trip time: a number of seconds, or a string such as `"40ms"`, `"800us"`, `"0.04s"`. */
export type Rtt = number | string;
/** A byte size: a number of bytes, or a string such as `"64GiB"`, `"512MiB"`, `"128GB"`. */
export type ByteSize = number | string;

/** The largest value a kernel `int` sysctl (tcp_rmem, rmem_max, …) holds: 2^31 - 1 bytes. */
export const KERNEL_INT_MAX = 2147483647;

/** Accepted bandwidth formats, quoted in every bandwidth error. */
export const BANDWIDTH_FORMATS =
  'a number of bits/s or a string like "10Gbit", "500Mbit", "1.5Gbit/s", "1Gbps", "100Mbit/s" (decimal prefixes k, M, G, T: 10Gbit = 10^10 bits/s)';
/** Accepted round-trip-time formats, quoted in every rtt error. */
export const RTT_FORMATS = 'a number of seconds or a string like "40ms", "800us", "0.04s"';
/** Accepted byte-size formats, quoted in every memory error. */
export const BYTE_SIZE_FORMATS =
  'a number of bytes or a string like "64GiB", "512MiB", "128GB" (KiB/MiB/GiB/TiB = 1024^n, kB/MB/GB/TB = 1000^n)';

/** An exact non-negative rational number `num / den`. */
interface Ratio {
  num: bigint;
  den: bigint;
}

/** Parses a plain decimal ("1.5", "40", "1e+21", "2.5e-7") exactly; undefined when it is not one. */
function parseDecimal(text: string): Ratio | undefined {
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(text);
  if (!m) return undefined;
  const frac = m[2] ?? "";
  const exp = Number(m[3] ?? "0") - frac.length;
  if (Math.abs(exp) > 400) return undefined; // beyond any double: refuse rather than build a huge BigInt
  const digits = BigInt(m[1] + frac);
  return exp >= 0 ? { num: digits * 10n ** BigInt(exp), den: 1n } : { num: digits, den: 10n ** BigInt(-exp) };
}

function show(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/** Number → exact ratio, or a problem when it is not a finite positive number. */
function positiveNumber(what: string, value: number, formats: string): Ratio | string {
  if (!Number.isFinite(value) || value <= 0) return `${what} ${show(value)}: must be a finite number > 0; use ${formats}`;
  const r = parseDecimal(String(value));
  // String(n) of a finite positive number is always a plain or exponent decimal.
  return r ?? `${what} ${show(value)}: not a decimal number; use ${formats}`;
}

function toNumber(r: Ratio): number {
  return Number(r.num) / Number(r.den);
}

/** `r`, or a problem when it exceeds `limit` (a double's range; for bytes, exact integers). */
function tooLarge(what: string, value: unknown, r: Ratio, limit: number, formats: string): Ratio | string {
  return toNumber(r) <= limit ? r : `${what} ${show(value)}: too large (at most ${limit}); use ${formats}`;
}

const BANDWIDTH_PREFIX: Record<string, bigint> = { "": 1n, k: 10n ** 3n, m: 10n ** 6n, g: 10n ** 9n, t: 10n ** 12n };

function bandwidthRatio(value: Bandwidth): Ratio | string {
  const what = "bandwidth";
  if (typeof value === "number") return positiveNumber(what, value, BANDWIDTH_FORMATS);
  if (typeof value !== "string") return `${what} ${show(value)}: must be a number or a string; use ${BANDWIDTH_FORMATS}`;
  if (/^\s*-/.test(value)) return `${what} ${show(value)}: must be > 0; use ${BANDWIDTH_FORMATS}`;
  const m = /^\s*([0-9.eE+-]+)\s*([a-zA-Z/]*)\s*$/.exec(value);
  const number = m ? parseDecimal(m[1]) : undefined;
  if (!m || !number) return `${what} ${show(value)}: not a number followed by a unit; use ${BANDWIDTH_FORMATS}`;
  const unit = m[2];
  if (unit === "") return `${what} ${show(value)}: missing unit (bits/s?); use ${BANDWIDTH_FORMATS}`;
  // bits: "bit", "bit/s", "bits", "bits/s", "bps" (lower-case b only: "GBps" means bytes).
  const u = /^([kKmMgGtT]?)(bits?(?:\/s)?|bps)$/.exec(unit);
  if (!u) {
    const hint = /^[kKmMgGtT]i/.test(unit)
      ? "binary prefixes (Ki, Mi, Gi) are not used for link rates"
      : /^[kKmMgGtT]?b$/i.test(unit) || /B/.test(unit)
        ? `"${unit}" is ambiguous (bits or bytes?)`
        : `unknown unit "${unit}"`;
    return `${what} ${show(value)}: ${hint}; use ${BANDWIDTH_FORMATS}`;
  }
  const r = { num: number.num * BANDWIDTH_PREFIX[u[1].toLowerCase()], den: number.den };
  if (r.num === 0n) return `${what} ${show(value)}: must be > 0; use ${BANDWIDTH_FORMATS}`;
  return tooLarge(what, value, r, Number.MAX_VALUE, BANDWIDTH_FORMATS);
}

const RTT_DIVISOR: Record<string, bigint> = { s: 1n, ms: 10n ** 3n, us: 10n ** 6n, "µs": 10n ** 6n, ns: 10n ** 9n };

function rttRatio(value: Rtt): Ratio | string {
  const what = "rtt";
  if (typeof value === "number") return positiveNumber(what, value, RTT_FORMATS);
  if (typeof value !== "string") return `${what} ${show(value)}: must be a number or a string; use ${RTT_FORMATS}`;
  if (/^\s*-/.test(value)) return `${what} ${show(value)}: must be > 0; use ${RTT_FORMATS}`;
  const m = /^\s*([0-9.eE+-]+)\s*(\S*)\s*$/.exec(value);
  const number = m ? parseDecimal(m[1]) : undefined;
  if (!m || !number) return `${what} ${show(value)}: not a number followed by a unit; use ${RTT_FORMATS}`;
  const unit = m[2];
  if (unit === "") return `${what} ${show(value)}: missing unit (ms?); use ${RTT_FORMATS}`;
  const divisor = RTT_DIVISOR[unit];
  if (divisor === undefined) return `${what} ${show(value)}: unknown unit "${unit}"; use ${RTT_FORMATS}`;
  if (number.num === 0n) return `${what} ${show(value)}: must be > 0; use ${RTT_FORMATS}`;
  return tooLarge(what, value, { num: number.num, den: number.den * divisor }, Number.MAX_VALUE, RTT_FORMATS);
}

const BYTE_MULTIPLIER: Record<string, bigint> = {
  b: 1n,
  kib: 1n << 10n,
  mib: 1n << 20n,
  gib: 1n << 30n,
  tib: 1n << 40n,
  kb: 10n ** 3n,
  mb: 10n ** 6n,
  gb: 10n ** 9n,
  tb: 10n ** 12n,
};

function byteRatio(what: string, value: ByteSize): Ratio | string {
  if (typeof value === "number") {
    const r = positiveNumber(what, value, BYTE_SIZE_FORMATS);
    return typeof r === "string" ? r : tooLarge(what, value, r, Number.MAX_SAFE_INTEGER, BYTE_SIZE_FORMATS);
  }
  if (typeof value !== "string") return `${what} ${show(value)}: must be a number or a string; use ${BYTE_SIZE_FORMATS}`;
  if (/^\s*-/.test(value)) return `${what} ${show(value)}: must be > 0; use ${BYTE_SIZE_FORMATS}`;
  const m = /^\s*([0-9.eE+-]+)\s*([a-zA-Z]*)\s*$/.exec(value);
  const number = m ? parseDecimal(m[1]) : undefined;
  if (!m || !number) return `${what} ${show(value)}: not a number followed by a unit; use ${BYTE_SIZE_FORMATS}`;
  const multiplier = BYTE_MULTIPLIER[m[2] === "" ? "b" : m[2].toLowerCase()];
  if (multiplier === undefined) return `${what} ${show(value)}: unknown unit "${m[2]}"; use ${BYTE_SIZE_FORMATS}`;
  if (number.num === 0n) return `${what} ${show(value)}: must be > 0; use ${BYTE_SIZE_FORMATS}`;
  return tooLarge(what, value, { num: number.num * multiplier, den: number.den }, Number.MAX_SAFE_INTEGER, BYTE_SIZE_FORMATS);
}


function ceilDiv(num: bigint, den: bigint): bigint {
  return (num + den - 1n) / den;
}

/** Result of a parser: the value, or a problem line for an {@link InputError}. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

function parsed<T>(r: Ratio | string, convert: (r: Ratio) => T): Parsed<T> {
  return typeof r === "string" ? { ok: false, problem: r } : { ok: true, value: convert(r) };
}

/**
 * Parses a link rate without throwing.
 * @returns bits per second, or a problem naming the value and {@link BANDWIDTH_FORMATS}.
 */
export function tryParseBandwidth(value: Bandwidth): Parsed<number> {
  return parsed(bandwidthRatio(value), toNumber);
}

/**
 * Parses a round-trip time without throwing.
 * @returns seconds, or a problem naming the value and {@link RTT_FORMATS}.
 */
export function tryParseRtt(value: Rtt): Parsed<number> {
  return parsed(rttRatio(value), toNumber);
}

/**
 * Parses a byte size without throwing; fractional sizes round up to a whole byte.
 * @param what the input's name used in the problem text (e.g. `"memory"`).
 * @returns bytes, or a problem naming the value and {@link BYTE_SIZE_FORMATS}.
 */
export function tryParseBytes(what: string, value: ByteSize): Parsed<number> {
  return parsed(byteRatio(what, value), (r) => Number(ceilDiv(r.num, r.den)));
}

function orThrow<T>(resource: string, result: Parsed<T>): T {
  if (!result.ok) throw new InputError(resource, [result.problem]);
  return result.value;
}

/** Parses a link rate. @returns bits per second. @throws InputError naming the value and the accepted formats. */
export function parseBandwidth(value: Bandwidth): number {
  return orThrow("bandwidth", tryParseBandwidth(value));
}

/** Parses a round-trip time. @returns seconds. @throws InputError naming the value and the accepted formats. */
export function parseRtt(value: Rtt): number {
  return orThrow("rtt", tryParseRtt(value));
}

/** Parses a byte size (e.g. `"64GiB"`). @returns bytes. @throws InputError naming the value and the accepted formats. */
export function parseBytes(value: ByteSize, what = "memory"): number {
  return orThrow(what, tryParseBytes(what, value));
}

/** Arguments of {@link bdp}. */
export interface BdpArgs {
  /** Link rate: bits/s as a number, or `"10Gbit"`, `"500Mbit"`, `"1.5Gbit/s"`, `"1Gbps"`, `"100Mbit/s"` (decimal prefixes). */
  bandwidth: Bandwidth;
  /** Round-trip time: seconds as a number, or `"40ms"`, `"800us"`, `"0.04s"`. */
  rtt: Rtt;
}

/**
 * BDP computed without throwing.
 * @returns `value` in bytes with the parsed `bitsPerSecond` and `seconds`, or every problem found in the arguments.
 */
export function tryBdp(
  args: BdpArgs,
): { ok: true; value: number; bitsPerSecond: number; seconds: number } | { ok: false; problems: string[] } {
  const bw = bandwidthRatio(args.bandwidth);
  const rtt = rttRatio(args.rtt);
  const problems = [bw, rtt].filter((r): r is string => typeof r === "string");
  if (typeof bw === "string" || typeof rtt === "string") return { ok: false, problems };
  return {
    ok: true,
    value: Number(ceilDiv(bw.num * rtt.num, bw.den * rtt.den * 8n)),
    bitsPerSecond: toNumber(bw),
    seconds: toNumber(rtt),
  };
}

/**
 * The bandwidth-delay product: how many bytes are in flight on a link that is kept full, i.e. the window
 * one flow needs to fill it. `bandwidth (bits/s) × rtt (s) / 8`, computed exactly and rounded up to a
 * whole byte. Decimal units: `bdp({ bandwidth: "10Gbit", rtt: "40ms" })` = 50 000 000 bytes (50 MB).
 * @returns bytes.
 * @throws InputError("bdp", …) listing every invalid argument with the accepted formats.
 */
export function bdp(args: BdpArgs): number {
  const r = tryBdp(args);
  if (!r.ok) throw new InputError("bdp", r.problems);
  return r.value;
}

function trimNumber(n: number): string {
  return String(Number(n.toPrecision(12)));
}

/** Formats bits/s with the largest decimal prefix that keeps the number ≥ 1: `1e10` → `"10Gbit"`. */
export function formatBandwidth(bitsPerSecond: number): string {
  for (const [prefix, scale] of [["T", 1e12], ["G", 1e9], ["M", 1e6], ["k", 1e3]] as const) {
    if (bitsPerSecond >= scale) return `${trimNumber(bitsPerSecond / scale)}${prefix}bit`;
  }
  return `${trimNumber(bitsPerSecond)}bit`;
}

/** Formats seconds as s, ms or us: `0.04` → `"40ms"`, `0.0008` → `"800us"`. */
export function formatRtt(seconds: number): string {
  if (seconds >= 1) return `${trimNumber(seconds)}s`;
  if (seconds >= 1e-3) return `${trimNumber(seconds * 1e3)}ms`;
  return `${trimNumber(seconds * 1e6)}us`;
}

/** Formats bytes with binary units for messages: `134217728` → `"128 MiB"`, `167772160000` → `"156.25 GiB"`. */
export function formatBytes(bytes: number): string {
  const units = ["TiB", "GiB", "MiB", "KiB"] as const;
  for (let i = 0; i < units.length; i++) {
    const scale = 2 ** (10 * (units.length - i));
    if (bytes >= scale) return `${trimNumber(Number((bytes / scale).toFixed(2)))} ${units[i]}`;
  }
  return `${bytes} B`;
}

/** Formats bytes with decimal units for messages: `167772160000` → `"167.77 GB"` (the guides' "MB"/"GB" are decimal). */
export function formatBytesDecimal(bytes: number): string {
  for (const [unit, scale] of [["TB", 1e12], ["GB", 1e9], ["MB", 1e6], ["kB", 1e3]] as const) {
    if (bytes >= scale) return `${trimNumber(Number((bytes / scale).toFixed(2)))} ${unit}`;
  }
  return `${bytes} B`;
}

/** Smallest power of two ≥ `n` (n ≥ 1, finite). */
export function nextPowerOfTwo(n: number): number {
  if (!Number.isFinite(n)) throw new RangeError(`nextPowerOfTwo(${n}): needs a finite number`);
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/** Largest power of two ≤ `n` (n ≥ 1, finite). */
export function previousPowerOfTwo(n: number): number {
  if (!Number.isFinite(n)) throw new RangeError(`previousPowerOfTwo(${n}): needs a finite number`);
  let p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}
