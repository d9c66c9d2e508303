/**
 * zod schemas of the sizing data types (strict: unknown fields are refused). Kept apart from the types so that the
 * package's public declarations never reference zod (a user's compile without esModuleInterop/skipLibCheck stays clean).
 */
import { z } from "zod";
import { nicPresetSchema } from "../nic/schema";
import { sysctlValueSchema } from "../sysctl/validate";
import type { NicPreset } from "./nic";
import type { SysctlProfile } from "./profile";

/** zod schema of `NicPreset`: the NIC spec's one schema (the checks of NicQueues' arguments) plus the metadata. */
export const NicPresetSchema: z.ZodType<NicPreset> = nicPresetSchema as unknown as z.ZodType<NicPreset>;

/** zod schema of `SysctlProfile` (strict: unknown fields are refused). */
export const SysctlProfileSchema: z.ZodType<SysctlProfile> = z.strictObject({
  kind: z.literal("net-tuning/sysctl-profile"),
  name: z.string().min(1),
  sysctls: z.record(
    z.string().regex(/^[a-z0-9_-]+(\.[a-z0-9_-]+)+$/i, "a dotted sysctl key such as net.core.somaxconn"),
    sysctlValueSchema,
  ),
  rationale: z.record(z.string(), z.string()),
  warnings: z.array(z.string()),
  nic: NicPresetSchema.optional(),
});

