/**
 * Input schema of NicQueues (zod 4), built from the NIC spec (`spec.ts`): one definition for arguments, presets and
 * profiles' `nic` parts. Messages name the input, the accepted range and the fix; `formatIssues` lists every problem.
 */
import { z } from "zod";
import { Problem, problemAt } from "../errors";
import { INTERFACE_NAME, interfaceNameRule, NIC_GROUPS, NIC_GROUP_SPECS, NIC_PERSISTENCE_VALUES, NicGroup, NicPersistence, NicSetting, settingByArg, settingsOf } from "./spec";

/** An integer in [min, max] with a message a user can act on. */
function intIn(min: number, max: number, unit: string) {
  const msg = `must be an integer from ${min} to ${max} (${unit})`;
  return z.number({ error: msg }).int({ error: msg }).min(min, { error: msg }).max(max, { error: msg });
}

/** Linux interface names (the rule is declared in the spec). */
export { INTERFACE_NAME };
export const interfaceSchema = z
  .string({ error: 'must be a string such as "eth0"' })
  .refine((s) => INTERFACE_NAME.test(s) && s !== "." && s !== "..", {
    error: (iss) =>
      `"${String(iss.input)}" is not a valid Linux interface name: ${interfaceNameRule((c) => `"${c}"`)} (no "/", ":", whitespace or quotes; not "." or "..")`,
  });

const onOff = z.boolean({ error: "must be true (on) or false (off)" });

/** The zod schema of one setting, from its spec row. */
function settingSchema(s: NicSetting): z.ZodType {
  const min = s.min ?? 0;
  const max = s.max ?? 0;
  switch (s.type) {
    case "count":
      return intIn(min, max, s.unit ?? "");
    case "ring":
      return z.union([intIn(min, max, s.unit ?? ""), z.literal("max")], {
        error: `must be a number of ${s.unit} from ${min} to ${max} or "max" (the driver's pre-set maximum)`,
      });
    case "onOff":
      return onOff;
    case "flag":
      return z.boolean({ error: "must be true or false" });
    case "cpus": {
      const listMsg = s.group === "rps" ? `must be "${s.keyword}" or a list of CPU numbers such as [0, 1, 2]` : `must be "${s.keyword}" or a list of CPU numbers`;
      const list = z
        .array(intIn(min, max, s.unit ?? ""), { error: listMsg })
        .min(1, { error: "must list at least one CPU" })
        .refine((a) => new Set(a).size === a.length, { error: "lists a CPU twice" });
      return z.union([z.literal(s.keyword as string), list], { error: listMsg });
    }
  }
}

/** The example of a group object in the "must be an object …" message. */
const GROUP_EXAMPLE: Partial<Record<NicGroup, string>> = {
  rps: `must be an object such as { cpus: "${settingByArg("rps", "cpus")?.keyword}", flowEntriesPerQueue: 4096, sockFlowEntries: 32768 }`,
  irq: `must be an object such as { cpus: "${settingByArg("irq", "cpus")?.keyword}" }`,
  coalesce: `must be an object of ethtool -C parameters (${settingsOf("coalesce").map((s) => s.arg).join(", ")})`,
};

/**
 * The strict object schema of a group's settings. `requireAll: false` leaves the spec's required settings optional:
 * NicQueues' arguments may override a preset's group field by field, and `requiredAfterMerge` checks them after.
 */
function groupSchema(group: NicGroup, requireAll = true) {
  const shape: Record<string, z.ZodType> = {};
  for (const s of settingsOf(group)) shape[s.arg] = s.required && requireAll ? settingSchema(s) : settingSchema(s).optional();
  const fields = settingsOf(group).map((s) => s.arg);
  return z.strictObject(shape, { error: GROUP_EXAMPLE[group] ?? `must be an object with ${fields.join(", ")}` });
}

export const featuresSchema = z.record(z.string(), onOff, {
  error: "must be an object of feature name → true/false, e.g. { gro: true, lro: false }",
});

const quotedPersistence = NIC_PERSISTENCE_VALUES.map((v) => `"${v}"`);
export const persistenceSchema = z.enum(NIC_PERSISTENCE_VALUES, {
  error: `must be ${quotedPersistence.slice(0, -1).join(", ")} or ${quotedPersistence[quotedPersistence.length - 1]}`,
});
export type { NicPersistence };

/** Top-level settings of a group without an object argument (`link`: txQueueLength). */
const linkShapeOf = (g: NicGroup): Record<string, z.ZodType> => Object.fromEntries(settingsOf(g).map((s) => [s.arg, settingSchema(s).optional()]));

/**
 * The settings a preset or profile `nic` part may hold: every group of the spec (same checks as the arguments), in
 * the spec's group order; a group without an object argument (`link`) contributes its settings as top-level fields.
 */
const settingsShape: Record<string, z.ZodType> = Object.fromEntries(
  NIC_GROUPS.flatMap((g): [string, z.ZodType][] => {
    const arg = NIC_GROUP_SPECS[g].arg;
    if (arg === undefined) return Object.entries(linkShapeOf(g));
    return [[arg, (g === "features" ? featuresSchema : groupSchema(g)).optional()]];
  }),
);

/** The groups whose spec has a required setting: in the arguments they are checked only after the merge with a preset. */
const REQUIRED_GROUPS = (Object.keys(NIC_GROUP_SPECS) as NicGroup[]).filter((g) => NIC_GROUP_SPECS[g].arg !== undefined && settingsOf(g).some((s) => s.required));

/** The settings part of NicQueues' arguments (plain values, after Pulumi resolved them); required fields may come from a preset. */
export const nicSettingsSchema = z.strictObject({
  interface: interfaceSchema,
  ...settingsShape,
  ...Object.fromEntries(REQUIRED_GROUPS.map((g) => [NIC_GROUP_SPECS[g].arg as string, groupSchema(g, false).optional()])),
  persistence: persistenceSchema.optional(),
});

/** The strict schema of each group with a required setting, built once per process (a schema is immutable). */
const requiredSchemas = new Map<NicGroup, ReturnType<typeof groupSchema>>();

/** Problems of the merged settings (preset, then arguments): a group given without its required setting (e.g. rps.cpus). */
export function requiredAfterMerge(merged: Record<string, unknown>): Problem[] {
  return REQUIRED_GROUPS.flatMap((g) => {
    const arg = NIC_GROUP_SPECS[g].arg as string;
    if (merged[arg] === undefined) return [];
    let schema = requiredSchemas.get(g);
    if (!schema) requiredSchemas.set(g, (schema = groupSchema(g)));
    const r = schema.safeParse(merged[arg]);
    return r.success ? [] : issueProblems(r.error.issues, arg);
  });
}

/** A NIC preset: the same settings schema (ranges included), plus its metadata. */
export const nicPresetSchema = z.strictObject({
  kind: z.literal("net-tuning/nic-preset", { error: 'must be "net-tuning/nic-preset"' }),
  name: z.string({ error: "must be a non-empty string" }).min(1, { error: "must be a non-empty string" }),
  ...settingsShape,
  rationale: z.record(z.string(), z.string(), { error: "must be an object of setting → reason" }),
});

/** zod issues as "path: message" lines (every issue, not just the first). */
export function formatIssues(issues: z.core.$ZodIssue[], prefix = ""): string[] {
  return issueProblems(issues, prefix).map((p) => p.message);
}

/** {@link formatIssues} with each message's property path (the issue's path under `prefix`). */
export function issueProblems(issues: z.core.$ZodIssue[], prefix = ""): Problem[] {
  return issues.map((i) => {
    const path = [prefix, ...i.path.map(String)].filter(Boolean).join(".").replace(/\.(\d+)(?=\.|$)/g, "[$1]");
    if (i.code === "unrecognized_keys") {
      return problemAt(path, `${path ? path + ": " : ""}unknown field${i.keys.length > 1 ? "s" : ""} ${i.keys.map((k) => `"${k}"`).join(", ")} (check the spelling)`);
    }
    return problemAt(path, `${path || "(args)"} ${i.message}`);
  });
}
