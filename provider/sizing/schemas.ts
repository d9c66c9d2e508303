/**
 * zod schemas of the sizing data types (strict: unknown fields are refused). Kept apart from the types so that the
 * package's public declarations never reference zod (a user's compile without esModuleInterop/skipLibCheck stays clean).
 */
import { z } from "zod";
import type { NicPreset } from "./nic";
import type { SysctlProfile } from "./profile";

const ringSize = z.union([z.number().int().positive(), z.literal("max")]);

/** zod schema of `NicPreset` (strict: unknown fields are refused). */
export const NicPresetSchema: z.ZodType<NicPreset> = z.strictObject({
  kind: z.literal("net-tuning/nic-preset"),
  name: z.string().min(1),
  rings: z.strictObject({ rx: ringSize.optional(), tx: ringSize.optional() }).optional(),
  features: z.record(z.string().regex(/^[a-z0-9-]+$/), z.boolean()).optional(),
  coalesce: z
    .strictObject({
      adaptiveRx: z.boolean().optional(),
      adaptiveTx: z.boolean().optional(),
      rxUsecs: z.number().int().nonnegative().optional(),
      txUsecs: z.number().int().nonnegative().optional(),
      rxFrames: z.number().int().nonnegative().optional(),
    })
    .optional(),
  txQueueLength: z.number().int().positive().optional(),
  rps: z
    .strictObject({
      cpus: z.union([z.literal("all"), z.array(z.number().int().nonnegative())]),
      flowEntriesPerQueue: z.number().int().positive().optional(),
      sockFlowEntries: z.number().int().positive().optional(),
      onlyWhenQueuesBelowCpus: z.boolean().optional(),
    })
    .optional(),
  rationale: z.record(z.string(), z.string()),
});

/** zod schema of `SysctlProfile` (strict: unknown fields are refused). */
export const SysctlProfileSchema: z.ZodType<SysctlProfile> = z.strictObject({
  kind: z.literal("net-tuning/sysctl-profile"),
  name: z.string().min(1),
  sysctls: z.record(
    z.string().regex(/^[a-z0-9_-]+(\.[a-z0-9_-]+)+$/i, "a dotted sysctl key such as net.core.somaxconn"),
    z.union([z.number(), z.string(), z.array(z.number())]),
  ),
  rationale: z.record(z.string(), z.string()),
  warnings: z.array(z.string()),
  nic: NicPresetSchema.optional(),
});

