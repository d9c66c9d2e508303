/**
 * Declarative profiles and presets: the form a Python, Go, C# or YAML program can send (plain data, no functions),
 * resolved to the same {@link SysctlProfile} / {@link NicPreset} the TypeScript helpers return, so both routes
 * render the same plan. Pure; no `@pulumi/*`.
 */
import { InputError, Problem, problemAt } from "../errors";
import { NicPreset, NicPresetName, nicPresets } from "./nic";
import { combineProfiles, isSysctlProfile, SysctlProfile } from "./profile";
import { SysctlProfileSchema } from "./schemas";
import { issueProblems } from "../nic/schema";
import { database, longFatFlows, manySmallFlows, nvmeTcpLatency, nvmeTcpThroughput, proxyGateway, webServer } from "./profiles";

/** The sizing profiles a {@link ProfileSpec} names (the TypeScript helpers of the same names). */
export const ProfileName = {
  /** Few long, fat flows (needs `bandwidth` and `rtt`). */
  LongFatFlows: "longFatFlows",
  /** Many short flows (needs `bandwidth` and `rtt`). */
  ManySmallFlows: "manySmallFlows",
  /** A high-concurrency web server. */
  WebServer: "webServer",
  /** A database server. */
  Database: "database",
  /** A reverse proxy or API gateway. */
  ProxyGateway: "proxyGateway",
  /** NVMe/TCP, latency first. */
  NvmeTcpLatency: "nvmeTcpLatency",
  /** NVMe/TCP, throughput first (optional `bandwidth` + `rtt`). */
  NvmeTcpThroughput: "nvmeTcpThroughput",
} as const;
/** A value of {@link ProfileName}. */
export type ProfileName = (typeof ProfileName)[keyof typeof ProfileName];

/** What a memory guard result at level error does. */
export const GuardAction = {
  /** Only add its message to the warnings (the default). */
  Warn: "warn",
  /** Refuse the plan. */
  Error: "error",
} as const;
/** A value of {@link GuardAction}: `"warn"` or `"error"`. */
export type GuardAction = (typeof GuardAction)[keyof typeof GuardAction];

/** The NIC presets a {@link PresetSpec} names (`nicPresets` of the same names). */
export const PresetName = {
  /** Throughput first: rings at the maximum, GRO/GSO/TSO on, txqueuelen 10000, RPS/RFS where queues are fewer than CPUs. */
  Throughput: "throughput",
  /** Latency first. */
  LowLatency: "lowLatency",
} as const;
/** A value of {@link PresetName}: `"throughput"` or `"lowLatency"`. */
export type PresetName = (typeof PresetName)[keyof typeof PresetName];

// PresetName lists exactly the names of nicPresets (a compile error otherwise).
const SAME_PRESETS: [PresetName] extends [NicPresetName] ? ([NicPresetName] extends [PresetName] ? true : never) : never = true;
void SAME_PRESETS;

/**
 * A sysctl profile by name, with the options of the helper of that name, e.g.
 * `{ name: "longFatFlows", bandwidth: "10Gbit", rtt: "40ms", concurrency: 2000, memory: "128GiB" }`.
 * The TypeScript helpers (`longFatFlows(…)`) return a resolved profile, which NetTuning also accepts here.
 */
export interface ProfileSpec {
  /**
   * The profile: `longFatFlows`, `manySmallFlows` (both need `bandwidth` and `rtt`), `webServer`, `database`,
   * `proxyGateway`, `nvmeTcpLatency` or `nvmeTcpThroughput` (optional `bandwidth` + `rtt`).
   */
  name: ProfileName;
  /** Link rate, e.g. `"10Gbit"`, `"500Mbit"` (decimal prefixes), or bits/s. */
  bandwidth?: string;
  /** Round-trip time, e.g. `"40ms"`, `"800us"`, or seconds. */
  rtt?: string;
  /** Concurrent TCP connections expected; with `memory`, runs the memory guard. */
  concurrency?: number;
  /** Host memory, e.g. `"128GiB"`, or bytes; with `concurrency`, runs the memory guard. */
  memory?: string;
  /** What a memory guard result at level error does: `"warn"` (default) or `"error"` (refuse). */
  guard?: GuardAction;
  /** Guard ratio above which a warning is given. Defaults to 0.5. */
  warnAt?: number;
  /** Guard ratio at or above which the level is error. Defaults to 1.0. */
  errorAt?: number;
  /**
   * `"fq"`: sets net.core.default_qdisc = fq (flow pacing; host-wide, so a network namespace refuses it). Defaults to
   * none: the key is not set.
   */
  pacing?: string;
  /**
   * Sets net.ipv4.tcp_congestion_control, e.g. `"bbr"` or `"htcp"`; the host refuses, before any change, a name it
   * neither has nor can load. Defaults to none: the key is not set.
   */
  congestionControl?: string;
}

/** A NIC preset by name: `{ name: "throughput" }` or `{ name: "lowLatency" }`. `nicPresets.throughput()` is accepted too. */
export interface PresetSpec {
  /** `"throughput"` or `"lowLatency"`. */
  name: PresetName;
}

const PROFILE_FNS: Record<ProfileName, (o: never) => SysctlProfile> = {
  longFatFlows,
  manySmallFlows,
  webServer,
  database,
  proxyGateway,
  nvmeTcpLatency,
  nvmeTcpThroughput,
};
const SPEC_FIELDS = ["name", "bandwidth", "rtt", "concurrency", "memory", "guard", "warnAt", "errorAt", "pacing", "congestionControl"];

/** One profile spec (or an already resolved profile) → the profile, or problems prefixed by `path`. */
function resolveOne(value: unknown, path: string, problems: Problem[]): SysctlProfile | undefined {
  if (isSysctlProfile(value)) {
    // A resolved profile is checked whole (untyped JavaScript may build one): every problem, named by its path.
    const r = SysctlProfileSchema.safeParse(value);
    if (r.success) return value;
    problems.push(...issueProblems(r.error.issues, path));
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    problems.push(problemAt(path, `${path}: must be a profile spec such as { name: "webServer" } or { name: "longFatFlows", bandwidth: "10Gbit", rtt: "40ms" }`));
    return undefined;
  }
  const spec = value as Record<string, unknown>;
  const unknown = Object.keys(spec).filter((k) => !SPEC_FIELDS.includes(k) && spec[k] !== undefined && spec[k] !== null);
  if (unknown.length > 0) problems.push(problemAt(path, `${path}: unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => `"${k}"`).join(", ")} (fields: ${SPEC_FIELDS.join(", ")})`));
  const fn = typeof spec.name === "string" && Object.prototype.hasOwnProperty.call(PROFILE_FNS, spec.name) ? PROFILE_FNS[spec.name as ProfileName] : undefined;
  if (!fn) {
    problems.push(problemAt(`${path}.name`, `${path}.name: ${JSON.stringify(spec.name)} is not a profile: use one of ${Object.keys(PROFILE_FNS).join(", ")}`));
    return undefined;
  }
  if (unknown.length > 0) return undefined;
  const options: Record<string, unknown> = {};
  for (const k of SPEC_FIELDS.slice(1)) if (spec[k] !== undefined && spec[k] !== null) options[k] = spec[k];
  try {
    return fn(options as never);
  } catch (e) {
    if (e instanceof InputError) {
      problems.push(...e.problems.map((p) => problemAt(path, `${path} (${spec.name}): ${p}`)));
      return undefined;
    }
    throw e;
  }
}

/**
 * `profile` and `profiles` of NetTuning → one profile (several are combined), or problems.
 * Each may be a {@link ProfileSpec} or a profile returned by a helper. `overridden`: the keys of the resource's own
 * `sysctls`, which override every profile: two profiles that disagree on one of them are no conflict (the docs'
 * advice for a conflict: set the key in `sysctls`).
 */
export function resolveProfiles(profile: unknown, profiles: unknown, overridden: Iterable<string> = []): { profile?: SysctlProfile; problems: Problem[] } {
  const problems: Problem[] = [];
  const resolved: SysctlProfile[] = [];
  if (profile !== undefined && profile !== null) {
    const p = resolveOne(profile, "profile", problems);
    if (p) resolved.push(p);
  }
  if (profiles !== undefined && profiles !== null) {
    if (!Array.isArray(profiles)) problems.push(problemAt("profiles", "profiles: must be a list of profile specs, e.g. [{ name: \"webServer\" }, { name: \"database\" }]"));
    else
      profiles.forEach((v, i) => {
        const p = resolveOne(v, `profiles[${i}]`, problems);
        if (p) resolved.push(p);
      });
  }
  if (problems.length > 0 || resolved.length === 0) return { problems };
  if (resolved.length === 1) return { profile: resolved[0], problems };
  try {
    return { profile: combineProfiles(resolved, { overridden, fix: "set it in sysctls (an entry there overrides every profile) or drop one profile" }), problems };
  } catch (e) {
    if (e instanceof InputError) return { problems: e.problems.map((p) => problemAt("profiles", `profiles (combine): ${p}`)) };
    throw e;
  }
}

/** `preset` of NicQueues: a {@link PresetSpec} or a preset returned by `nicPresets.*()` → the preset, or problems. */
export function resolvePreset(value: unknown): { preset?: NicPreset; problems: Problem[] } {
  if (value === undefined || value === null) return { problems: [] };
  if (typeof value === "object" && !Array.isArray(value) && (value as { kind?: unknown }).kind === "net-tuning/nic-preset") {
    return { preset: value as NicPreset, problems: [] };
  }
  const names = Object.keys(nicPresets);
  if (typeof value !== "object" || Array.isArray(value)) {
    return { problems: [problemAt("preset", `preset: must be { name: "${names.join('" } or { name: "')}" } (or nicPresets.throughput() in TypeScript)`)] };
  }
  const spec = value as Record<string, unknown>;
  const problems: Problem[] = [];
  const unknown = Object.keys(spec).filter((k) => k !== "name" && spec[k] !== undefined && spec[k] !== null);
  if (unknown.length > 0) problems.push(problemAt("preset", `preset: unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => `"${k}"`).join(", ")} (a preset spec has only "name")`));
  const fn = typeof spec.name === "string" && Object.prototype.hasOwnProperty.call(nicPresets, spec.name) ? nicPresets[spec.name as keyof typeof nicPresets] : undefined;
  if (!fn) problems.push(problemAt("preset.name", `preset.name: ${JSON.stringify(spec.name)} is not a NIC preset: use ${names.map((n) => `"${n}"`).join(" or ")}`));
  if (problems.length > 0 || !fn) return { problems };
  return { preset: fn(), problems };
}
