/**
 * The sysctl profile type shared by sizing, NetTuning and the CLI, and {@link combine}.
 */
import { InputError } from "../errors";
import type { NicPreset } from "./nic";

/** A sysctl value: a number, a string (e.g. `"bbr"`), or the fields of a multi-value key. */
export type SysctlValue = number | string | number[];

/** A named set of sysctls with a reason for each, as produced by the sizing functions. Plain JSON. */
export interface SysctlProfile {
  /** Always `"net-tuning/sysctl-profile"`: lets NetTuning tell a profile from a plain key/value map. */
  kind: "net-tuning/sysctl-profile";
  /** Human name including the sizing inputs, e.g. `"longFatFlows(10Gbit, 40ms)"`; used in conflicts and previews. */
  name: string;
  /**
   * Dotted sysctl keys → values. Multi-value keys (`net.ipv4.tcp_rmem`, `tcp_wmem`, `tcp_mem`,
   * `ip_local_port_range`) are arrays, written space-separated. Buffer sizes are bytes, `tcp_mem` is pages.
   */
  sysctls: Record<string, SysctlValue>;
  /** One line per key of `sysctls`: why this value, citing the source guide's reasoning. */
  rationale: Record<string, string>;
  /** Things the operator should know: memory guard results, advice for keys deliberately not set. */
  warnings: string[];
  /** Suggested NicQueues settings, if the scenario calls for any. */
  nic?: NicPreset;
}

/** True when `value` looks like a {@link SysctlProfile} (checks `kind` only; use the schema to validate). */
export function isSysctlProfile(value: unknown): value is SysctlProfile {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "net-tuning/sysctl-profile";
}

/** A value as written in a sysctl.d file and read back by `sysctl`: arrays space-separated. */
export function formatSysctlValue(value: SysctlValue): string {
  return Array.isArray(value) ? value.join(" ") : String(value);
}

/** Whether two values mean the same setting (`1` and `"1"` do; `[4096, 87380]` and `"4096 87380"` do). */
function sameValue(a: SysctlValue, b: SysctlValue): boolean {
  const norm = (v: SysctlValue) => formatSysctlValue(v).trim().split(/\s+/).join(" ");
  return norm(a) === norm(b);
}

/** Stable JSON for comparing NIC presets by content. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * Cross-key checks on a profile's multi-value keys and buffer caps, as problem lines:
 * `min ≤ default ≤ max` for tcp_rmem/tcp_wmem/tcp_mem (the kernel does not check it),
 * `low ≤ high` for ip_local_port_range, and `net.core.rmem_max`/`wmem_max` ≥ the TCP max
 * (otherwise applications that set SO_RCVBUF/SO_SNDBUF get less than autotuning would give them).
 */
export function checkProfile(profile: SysctlProfile): string[] {
  const problems: string[] = [];
  const s = profile.sysctls;
  for (const key of ["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_mem"]) {
    const v = s[key];
    if (v === undefined) continue;
    if (!Array.isArray(v) || v.length !== 3) {
      problems.push(`${key} = ${formatSysctlValue(v)}: needs three numbers (min default max)`);
    } else if (!(v[0] <= v[1] && v[1] <= v[2])) {
      problems.push(`${key} = ${v.join(" ")}: needs min ≤ default ≤ max (the kernel does not check it)`);
    }
  }
  const range = s["net.ipv4.ip_local_port_range"];
  if (range !== undefined && (!Array.isArray(range) || range.length !== 2 || range[0] > range[1])) {
    problems.push(`net.ipv4.ip_local_port_range = ${formatSysctlValue(range)}: needs two ports, low ≤ high`);
  }
  for (const [core, tcp] of [
    ["net.core.rmem_max", "net.ipv4.tcp_rmem"],
    ["net.core.wmem_max", "net.ipv4.tcp_wmem"],
  ]) {
    const cap = s[core];
    const t = s[tcp];
    if (typeof cap === "number" && Array.isArray(t) && t.length === 3 && cap < t[2]) {
      problems.push(`${core} = ${cap} is below ${tcp} max ${t[2]}: sockets that set their buffer size explicitly get less than autotuned ones`);
    }
  }
  return problems;
}

/**
 * Merges profiles into one. A key set by several profiles must have the same value in all of them
 * (`1` and `"1"` are the same); otherwise nothing is picked silently: throws an InputError listing
 * every conflicting key with each value and the profile that sets it. Suggested NIC presets conflict
 * the same way when they differ. Rationale lines of a shared key are joined, warnings are
 * concatenated without duplicates, and the cross-key checks of `checkProfile` on the result
 * become warnings (e.g. one profile's `rmem_max` below another's `tcp_rmem` max).
 * @param profiles at least one {@link SysctlProfile}.
 * @returns a profile named `"a + b + …"`.
 * @throws InputError("combine", …) on conflicts or when no profile is given.
 */
export function combine(...profiles: SysctlProfile[]): SysctlProfile {
  return combineProfiles(profiles);
}

/** The fix a conflict names: combine profiles that agree (the `combine` helper), or how NetTuning resolves it. */
const COMBINE_FIX = "combine profiles that agree, or drop one";

/**
 * {@link combine} with the keys a resource sets itself: NetTuning's `sysctls` override every profile, so two
 * profiles that disagree on a key listed in `overridden` are no conflict (the key's value is the resource's; the
 * combined profile keeps the first profile's value, which the resource's entry replaces). Keys are compared in their
 * dotted form (`net/core/somaxconn` = `net.core.somaxconn`). `fix`: the advice a remaining conflict gives.
 */
export function combineProfiles(profiles: SysctlProfile[], opts: { overridden?: Iterable<string>; fix?: string } = {}): SysctlProfile {
  const overridden = new Set([...(opts.overridden ?? [])].map((k) => k.replace(/\//g, ".")));
  if (profiles.length === 0) throw new InputError("combine", ["no profile given: pass at least one SysctlProfile"]);
  const notProfiles = profiles
    .map((p, i) => (isSysctlProfile(p) ? undefined : `argument ${i + 1} is not a SysctlProfile (kind "net-tuning/sysctl-profile")`))
    .filter((p): p is string => p !== undefined);
  if (notProfiles.length > 0) throw new InputError("combine", notProfiles);

  const sysctls: Record<string, SysctlValue> = {};
  const rationale: Record<string, string> = {};
  const setBy: Record<string, string> = {};
  const conflicts = new Map<string, string[]>();
  for (const p of profiles) {
    for (const [key, value] of Object.entries(p.sysctls)) {
      if (!(key in sysctls)) {
        sysctls[key] = value;
        setBy[key] = p.name;
        if (p.rationale[key] !== undefined) rationale[key] = p.rationale[key];
      } else if (!sameValue(sysctls[key], value) && !overridden.has(key.replace(/\//g, "."))) {
        const lines = conflicts.get(key) ?? [`${formatSysctlValue(sysctls[key])} (${setBy[key]})`];
        lines.push(`${formatSysctlValue(value)} (${p.name})`);
        conflicts.set(key, lines);
      } else if (p.rationale[key] !== undefined && rationale[key] !== p.rationale[key]) {
        rationale[key] = rationale[key] === undefined ? p.rationale[key] : `${rationale[key]}; ${p.name}: ${p.rationale[key]}`;
      }
    }
  }
  const problems = [...conflicts].map(([key, values]) => `${key}: conflicting values ${values.join(" vs ")}; ${opts.fix ?? COMBINE_FIX}`);

  const withNic = profiles.filter((p) => p.nic !== undefined);
  const nic = withNic[0]?.nic;
  const nicConflicts = withNic.filter((p) => canonical(p.nic) !== canonical(nic));
  if (nicConflicts.length > 0) {
    const values = [withNic[0], ...nicConflicts].map((p) => `${p.nic?.name} (${p.name})`);
    problems.push(`nic: conflicting presets ${values.join(" vs ")}; keep the \`nic\` of one profile only`);
  }
  if (problems.length > 0) throw new InputError("combine", problems);

  const combined: SysctlProfile = {
    kind: "net-tuning/sysctl-profile",
    name: profiles.map((p) => p.name).join(" + "),
    sysctls,
    rationale,
    warnings: [],
  };
  if (nic !== undefined) combined.nic = nic;
  const warnings = profiles.flatMap((p) => p.warnings).concat(profiles.length > 1 ? checkProfile(combined) : []);
  combined.warnings = [...new Set(warnings)];
  return combined;
}
