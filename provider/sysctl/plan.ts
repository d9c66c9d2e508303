import { InputError, Problem, problemAt } from "../errors";
import { origLines, planHeader } from "../planText";
import { Owner, safeName } from "../owner";
import { PACKAGE_NAME } from "../version";
import type { SysctlProfile } from "../sizing/profile";
import { isSecretKey, lookup, moduleOf, otherNames } from "./catalogue";
import { readbackDirective } from "./readback";
import { acknowledgedText, Advice, canonicalKey, reconcileAdvice, SYSCTL_KEY_CHARS, SYSCTL_VALUE_CHARS, validateSysctls, ValidatedSysctls } from "./validate";
import { adoptDirectives, validateAdopt } from "./adopt";

/** What bootOverride does when a file read later at boot sets one of our keys to another value. */
export type BootOverride = "error" | "warn" | "ignore";

/** Plain (resolved) inputs of a NetTuning resource. */
export interface SysctlPlanInput {
  owner: Owner;
  /** Resource name, for messages and the default file name. */
  name: string;
  sysctls?: Record<string, unknown>;
  profile?: SysctlProfile;
  fileName?: string;
  persist?: boolean;
  bootOverride?: BootOverride;
  /** Keys whose advisory warnings the user accepted: shown in the plan, not logged. */
  acknowledge?: string[];
  /** `profile` or `profiles` were given and refused (their problems are reported): "no sysctls" is not one more. */
  profileRefused?: boolean;
  /** NetTuning `adopt` (unchecked; see ./adopt.ts). */
  adopt?: unknown;
  /** Keys whose values were given as Pulumi secrets (the catalogue's secret keys are secret anyway). */
  secretKeys?: string[];
  /** The verify gate's plan lines (provider/counters/gate.ts gateDirectives; none without `verify`). */
  verifyLines?: string[];
}

export interface SysctlPlan {
  /** key → canonical value (sorted keys). */
  values: Record<string, string>;
  filePath: string;
  /** Whether the file is written (`persist`, default true): the `filePath` output is undefined otherwise. */
  persist: boolean;
  /** The exact sysctl.d file content (written only when persist is true; always part of stdin for review). */
  fileContent: string;
  /** The apply program's stdin: directives + the file content (a line diff in `pulumi preview --diff`). */
  stdin: string;
  modules: string[];
  /** The adopted files, absolute paths (NetTuning `adopt`). */
  adopt: string[];
  /**
   * What the host's boot-order check (sysctl.sh kind_preflight) makes of a file read later at boot that sets a key to
   * another value, or of a same-named file ours would mask: "error" (refused), "warn"; undefined when it does not run
   * (persist false, bootOverride "ignore"). The live read runs the same check at preview.
   */
  bootCheck?: "error" | "warn";
  /** The keys whose values are secret (`@secret` lines of the plan): the catalogue's, and those given as secrets. */
  secretKeys: string[];
  /** Advice for `pulumi.log.warn` at preview, each naming key, value and fix. */
  warnings: string[];
  /**
   * The advice about keys that are not catalogued but look like ones that are, unless acknowledged: NetTuning refuses
   * them at preview, as the host preflight refuses a key its kernel does not have. Not among `warnings`.
   */
  misspelt: Advice[];
  /**
   * Advice not logged: about keys in `acknowledge`, or about a value the profile chose (its rationale covers it).
   * The keys of `acknowledge` are also `# acknowledged: KEY` lines of the plan, so the review sees them.
   */
  acknowledged: string[];
}

const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*\.conf$/;

/** The kernel module a key or value needs, loaded at apply time and listed in /etc/modules-load.d. */
function moduleFor(key: string, value: string): string | undefined {
  return moduleOf(key, value);
}

/** A rationale as one safe comment line (no control characters, bounded). */
function oneLine(text: string | undefined): string {
  const t = (text ?? "").replace(/[\x00-\x1f\x7f]+/g, " ").trim();
  return t.length <= 400 ? t : `${t.slice(0, t.lastIndexOf(" ", 397))}...`;
}

/**
 * The warnings a NetTuning logs for its keys, in order: the validator's advice reconciled with the profile (advice
 * about a value the profile chose is covered by its rationale) and with `acknowledge`, then the profile's own
 * warnings prefixed with its name. `net-tuning plan` prints exactly this list for the same profile.
 */
export function planWarnings(
  validatorAdvice: Advice[],
  profile: SysctlProfile | undefined,
  opts: { ownKeys?: Set<string>; acknowledge?: string[] } = {},
): { warnings: string[]; misspelt: Advice[]; acknowledged: string[]; acknowledgedKeys: string[] } {
  const advice = reconcileAdvice(validatorAdvice, { profileKeys: Object.keys(profile?.sysctls ?? {}), ownKeys: opts.ownKeys, acknowledge: opts.acknowledge });
  const warnings = advice.warnings.filter((a) => !a.misspelt).map((a) => a.text);
  for (const w of profile?.warnings ?? []) warnings.push(`profile ${profile?.name}: ${w}`);
  return {
    warnings,
    misspelt: advice.warnings.filter((a) => a.misspelt),
    acknowledged: advice.acknowledged.map(acknowledgedText),
    acknowledgedKeys: [...new Set(advice.acknowledged.filter((a) => a.by === "acknowledge").map((a) => a.key))].sort(),
  };
}

/** Validates and renders a NetTuning resource. Pure and deterministic: identical inputs give identical text. */
export function planSysctls(input: SysctlPlanInput): SysctlPlan {
  const resource = `NetTuning "${input.name}"`;
  const problems: Problem[] = [];
  const fileName = input.fileName ?? `90-net-tuning-${safeName(input.name)}.conf`;
  if (!FILE_NAME.test(fileName) || fileName.length > 100) {
    problems.push(
      problemAt("fileName", `fileName "${fileName}" is not a plain sysctl.d file name: use letters, digits, ".", "_" and "-" ending in ".conf" (e.g. "90-web.conf"), at most 100 characters, no "/"`),
    );
  }
  if (input.bootOverride !== undefined && !["error", "warn", "ignore"].includes(input.bootOverride)) {
    problems.push(problemAt("bootOverride", `bootOverride "${String(input.bootOverride)}" is not one of "error", "warn", "ignore"`));
  }
  if (input.profile !== undefined && (typeof input.profile !== "object" || input.profile.kind !== "net-tuning/sysctl-profile")) {
    problems.push(problemAt("profile", `profile is not a sizing profile: pass the object returned by a helper such as longFatFlows({ bandwidth, rtt })`));
  }
  const adopted = validateAdopt(input.adopt, `/etc/sysctl.d/${fileName}`);
  problems.push(...adopted.problems);
  if (adopted.paths.length > 0 && input.persist === false) {
    problems.push(problemAt("adopt", `adopt needs persist: true (the adopted files are removed and this resource's file takes over at boot); with persist: false the hand values would be lost at the next boot`));
  }
  // the resource's own entries override the profile's, whichever form names the key (net.core.somaxconn, net/core/somaxconn)
  const merged: Record<string, unknown> = { ...(input.profile?.sysctls ?? {}) };
  const own = new Set(Object.keys(input.sysctls ?? {}).map(canonicalKey));
  for (const k of Object.keys(merged)) if (own.has(canonicalKey(k))) delete merged[k];
  for (const [k, v] of Object.entries(input.sysctls ?? {})) merged[k] = v;
  let validated: ValidatedSysctls = { values: {}, advice: [] };
  try {
    validated = validateSysctls(merged, resource, input.secretKeys ?? []);
  } catch (e) {
    if (e instanceof InputError) problems.push(...e.details);
    else throw e;
  }
  // (a profile that was refused already explains why nothing is left)
  if (problems.length === 0 && Object.keys(validated.values).length === 0 && !input.profileRefused) {
    problems.push(problemAt("sysctls", `no sysctls: set \`sysctls\` (e.g. { "net.core.somaxconn": 4096 }) or \`profile\``));
  }
  if (problems.length > 0) throw new InputError(resource, problems);

  const values = validated.values;
  const fromProfile = new Set(Object.keys(input.profile?.sysctls ?? {}).map(canonicalKey).filter((k) => !own.has(k)));
  const keys = Object.keys(values).sort();
  const modules = [...new Set(keys.map((k) => moduleFor(k, values[k])).filter((m): m is string => !!m))].sort();
  const fileContent =
    [
      `# Managed by Pulumi: edits are overwritten.`,
      `# pulumi-net-tuning owner: ${input.owner.label}`,
      ...keys.flatMap((k) => {
        // The profile's reason for each key it chose travels with the value: in the preview diff and on the host.
        const why = fromProfile.has(k) ? oneLine(input.profile?.rationale?.[k]) : "";
        return why ? [`# ${why}`, `${k} = ${values[k]}`] : [`${k} = ${values[k]}`];
      }),
    ].join("\n") + "\n";
  const directives = [
    ...planHeader("sysctl", input.owner),
    `@file /etc/sysctl.d/${fileName}`,
    // the defaults (persist, boot-override error) are the engine's: only a choice made here is a line of the plan
    ...(input.persist === false ? ["@persist 0"] : []),
    ...(input.bootOverride !== undefined && input.bootOverride !== "error" ? [`@boot-override ${input.bootOverride}`] : []),
    ...modules.map((m) => `@module ${m}`),
    ...adoptDirectives(adopted.paths),
  ];
  // secret values (issue #32): the host writes the file 0600, redacts them in its messages, records their sha256
  const given = new Set((input.secretKeys ?? []).map(canonicalKey));
  const secretKeys = keys.filter((k) => isSecretKey(k) || given.has(k));
  directives.push(...secretKeys.map((k) => `@secret ${k}`));
  for (const k of keys) {
    const readback = readbackDirective(k, values[k]);
    if (readback) directives.push(readback);
    // the key's other names (one kernel variable): the host's owner check refuses them like the key itself
    const others = otherNames(k);
    if (others.length) directives.push(`@alias ${k} ${others.join(" ")}`);
  }
  const advice = planWarnings(validated.advice, input.profile, { ownKeys: own, acknowledge: input.acknowledge });
  // The review sees which keys the user acknowledged (the host ignores comment lines); the key only, so rewording the
  // advice in an upgrade changes no resource's plan (the prose is in `acknowledged`). Advice a profile's rationale
  // covers stays out of the plan: it is in the file as the rationale, and plans of earlier versions stay byte for byte.
  for (const k of advice.acknowledgedKeys) directives.push(`# acknowledged: ${k}`);
  directives.push(...(input.verifyLines ?? []));
  return {
    values,
    filePath: `/etc/sysctl.d/${fileName}`,
    persist: input.persist !== false,
    fileContent,
    stdin: `${directives.join("\n")}\n@content\n${fileContent}`,
    modules,
    adopt: adopted.paths,
    ...(input.persist === false || input.bootOverride === "ignore" ? {} : { bootCheck: input.bootOverride === "warn" ? ("warn" as const) : ("error" as const) }),
    secretKeys,
    warnings: advice.warnings,
    misspelt: advice.misspelt,
    acknowledged: advice.acknowledged,
  };
}

/**
 * The keys (in the plan's order, which is the order the host reads them in) and values of a NetTuning plan's file
 * lines (after `@content`; comment and blank lines skipped), as the host's sysctl kind reads them (kind_content).
 * Reports are completed from the plan of the run that printed them: the -apply child's stdin output, which always
 * belongs to its stdout (not the plan of this program run, which a `pulumi up --target` may leave unapplied).
 */
export function planValues(stdin: string): { keys: string[]; values: Record<string, string> } {
  const keys: string[] = [];
  const values: Record<string, string> = {};
  const lines = stdin.split("\n");
  for (let i = lines.indexOf("@content") + 1; i > 0 && i < lines.length; i++) {
    const l = lines[i];
    if (l === "" || l.startsWith("#") || l.startsWith(";")) continue;
    const at = l.indexOf(" = ");
    if (at < 0) continue;
    const k = l.slice(0, at);
    if (!(k in values)) keys.push(k);
    values[k] = l.slice(at + 3);
  }
  return { keys, values };
}

/** A key and an original as a restore plan stores them: the plan's key characters; a value's, and tab (read from /proc/sys). */
const ORIG_KEY = new RegExp(`^[${SYSCTL_KEY_CHARS}]+$`);
const ORIG_VALUE = new RegExp(`^[\t${SYSCTL_VALUE_CHARS}]*$`);

/** The restore program's stdin: originals from Pulumi state, so a delete works without the host's journal. */
export function renderSysctlRestoreStdin(
  owner: Owner,
  filePath: string,
  previous: Record<string, string>,
  restoreOnDelete: boolean,
  secretKeys: string[] = [],
): string {
  const keys = Object.keys(previous).sort();
  const lines = [...planHeader("sysctl", owner), `@file ${filePath}`, `@restore ${restoreOnDelete ? 1 : 0}`];
  lines.push(...keys.filter((k) => secretKeys.includes(k) || isSecretKey(k)).map((k) => `@secret ${k}`));
  lines.push(...origLines(previous, keys, ORIG_KEY, ORIG_VALUE));
  return lines.join("\n") + "\n";
}
