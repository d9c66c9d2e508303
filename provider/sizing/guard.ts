/**
 * The memory guard: "max open, default cautious". The second field of tcp_rmem/tcp_wmem is what every
 * TCP socket starts with, so a large default times many connections is memory the host may be asked
 * for (the gateway guide: 16 MB default × 10,000 connections ≈ 160 GB).
 */
import { InputError } from "../errors";
import { SysctlProfile } from "./profile";
import { ByteSize, formatBytes, tryParseBytes } from "./units";

/** Kernel defaults used when a profile does not set tcp_rmem/tcp_wmem (Linux ≥ 4.20: 131072 and 16384 bytes). */
export const KERNEL_TCP_RMEM_DEFAULT = 131072;
/** See {@link KERNEL_TCP_RMEM_DEFAULT}. */
export const KERNEL_TCP_WMEM_DEFAULT = 16384;

/** Arguments of {@link memoryGuard}. */
export interface MemoryGuardArgs {
  /** The profile whose `tcp_rmem`/`tcp_wmem` defaults are checked (kernel defaults when it sets none). */
  profile: SysctlProfile;
  /** Concurrent TCP connections expected on the host (a positive integer). */
  connections: number;
  /** Host memory: bytes, or a string such as `"64GiB"`. */
  memoryBytes: ByteSize;
  /** `tcp_mem` max in pages to compare against. Defaults to the profile's `net.ipv4.tcp_mem[2]`; no comparison when neither is known. */
  tcpMemPages?: number;
  /** Page size in bytes for `tcp_mem`. Defaults to 4096. */
  pageSize?: number;
  /** Ratio (worst case / limit) above which the level is `"warn"`. Defaults to 0.5. */
  warnAt?: number;
  /** Ratio at or above which the level is `"error"`. Defaults to 1.0. */
  errorAt?: number;
}

/** What {@link memoryGuard} found. */
export interface MemoryGuardResult {
  /** Bytes per connection: tcp_rmem default + tcp_wmem default. */
  perConnectionBytes: number;
  /** `perConnectionBytes × connections`, in bytes. */
  worstCaseBytes: number;
  /** `worstCaseBytes / memoryBytes`. */
  ratio: number;
  /** `tcp_mem` max in bytes (pages × pageSize), when known. */
  tcpMemBytes?: number;
  /** `worstCaseBytes / tcpMemBytes`, when known. */
  tcpMemRatio?: number;
  /** Worst of both ratios: `"ok"` ≤ warnAt < `"warn"` < errorAt ≤ `"error"`. */
  level: "ok" | "warn" | "error";
  /** One line stating the formula, the numbers and the level, e.g. for a profile's warnings. */
  message: string;
}

function field(profile: SysctlProfile, key: string, index: number): number | undefined {
  const v = profile.sysctls[key];
  return Array.isArray(v) && typeof v[index] === "number" ? v[index] : undefined;
}

/**
 * Bytes every TCP connection starts with: `tcp_rmem` default + `tcp_wmem` default (the second fields),
 * or the kernel defaults for what the profile does not set.
 * @returns the bytes and the formula as text, e.g. `"(tcp_rmem default 16777216 + tcp_wmem default 16777216 bytes)"`.
 */
export function defaultBuffersPerConnection(profile: SysctlProfile): { bytes: number; formula: string } {
  const rmem = field(profile, "net.ipv4.tcp_rmem", 1);
  const wmem = field(profile, "net.ipv4.tcp_wmem", 1);
  const rmemText = rmem === undefined ? `kernel tcp_rmem default ${KERNEL_TCP_RMEM_DEFAULT}` : `tcp_rmem default ${rmem}`;
  const wmemText = wmem === undefined ? `kernel tcp_wmem default ${KERNEL_TCP_WMEM_DEFAULT}` : `tcp_wmem default ${wmem}`;
  return {
    bytes: (rmem ?? KERNEL_TCP_RMEM_DEFAULT) + (wmem ?? KERNEL_TCP_WMEM_DEFAULT),
    formula: `(${rmemText} + ${wmemText} bytes)`,
  };
}

/** Problems with the guard's thresholds: both finite and > 0, `warnAt` ≤ `errorAt` (defaults 0.5 and 1.0). */
export function thresholdProblems(warnAt = 0.5, errorAt = 1.0): string[] {
  const problems: string[] = [];
  if (!(Number.isFinite(warnAt) && warnAt > 0)) problems.push(`warnAt ${warnAt}: must be a number > 0 (a ratio; default 0.5)`);
  if (!(Number.isFinite(errorAt) && errorAt > 0)) problems.push(`errorAt ${errorAt}: must be a number > 0 (a ratio; default 1.0)`);
  else if (Number.isFinite(warnAt) && warnAt > errorAt) problems.push(`warnAt ${warnAt} is above errorAt ${errorAt}: needs warnAt ≤ errorAt`);
  return problems;
}

function levelOf(ratio: number, warnAt: number, errorAt: number): MemoryGuardResult["level"] {
  return ratio >= errorAt ? "error" : ratio > warnAt ? "warn" : "ok";
}

function ratioText(r: number): string {
  return String(Number(r.toFixed(3)));
}

/**
 * Worst-case socket buffer memory if every connection holds its default buffers:
 * `worstCaseBytes = (tcp_rmem default + tcp_wmem default) × connections`, compared with the host's
 * memory and with `tcp_mem` max (pages × pageSize; the kernel's hard limit for all TCP buffers).
 * The level is the worse of the two comparisons.
 * @throws InputError("memoryGuard", …) listing every invalid argument.
 */
export function memoryGuard(args: MemoryGuardArgs): MemoryGuardResult {
  const { profile, connections, tcpMemPages, pageSize = 4096, warnAt = 0.5, errorAt = 1.0 } = args;
  const problems: string[] = [];
  if (!Number.isSafeInteger(connections) || connections <= 0) problems.push(`connections ${connections}: must be a positive integer`);
  const memory = tryParseBytes("memoryBytes", args.memoryBytes);
  if (!memory.ok) problems.push(memory.problem);
  if (!Number.isSafeInteger(pageSize) || pageSize <= 0) problems.push(`pageSize ${pageSize}: must be a positive integer (bytes; usually 4096)`);
  if (tcpMemPages !== undefined && (!Number.isSafeInteger(tcpMemPages) || tcpMemPages <= 0)) {
    problems.push(`tcpMemPages ${tcpMemPages}: must be a positive integer (pages)`);
  }
  problems.push(...thresholdProblems(warnAt, errorAt));
  if (!memory.ok || problems.length > 0) throw new InputError("memoryGuard", problems);
  const memoryBytes = memory.value;

  const { bytes: perConnectionBytes, formula } = defaultBuffersPerConnection(profile);
  const worstCaseBytes = perConnectionBytes * connections;
  const ratio = worstCaseBytes / memoryBytes;

  const pages = tcpMemPages ?? field(profile, "net.ipv4.tcp_mem", 2);
  const tcpMemBytes = pages === undefined ? undefined : pages * pageSize;
  const tcpMemRatio = tcpMemBytes === undefined ? undefined : worstCaseBytes / tcpMemBytes;
  const worst = Math.max(ratio, tcpMemRatio ?? 0);
  const level = levelOf(worst, warnAt, errorAt);

  let message =
    `${profile.name}: worst case = ${formula} × ${connections} connections = ` +
    `${worstCaseBytes} bytes (${formatBytes(worstCaseBytes)}) = ${ratioText(ratio)} × memory ${memoryBytes} bytes (${formatBytes(memoryBytes)})`;
  if (tcpMemBytes !== undefined && tcpMemRatio !== undefined) {
    message += ` and ${ratioText(tcpMemRatio)} × tcp_mem max ${pages} pages × ${pageSize} = ${tcpMemBytes} bytes (${formatBytes(tcpMemBytes)})`;
  }
  message += `: ${level} (warn above ${warnAt}, error at ${errorAt})`;
  if (level !== "ok") {
    message += "; lower the tcp_rmem/tcp_wmem defaults (256 KiB-1 MiB for many connections: \"max open, default cautious\") or plan for fewer connections";
  }
  const result: MemoryGuardResult = { perConnectionBytes, worstCaseBytes, ratio, level, message };
  if (tcpMemBytes !== undefined && tcpMemRatio !== undefined) {
    result.tcpMemBytes = tcpMemBytes;
    result.tcpMemRatio = tcpMemRatio;
  }
  return result;
}
