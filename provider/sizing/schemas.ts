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

/**
 * zod schema of `SysctlProfile` (strict: unknown fields are refused): the one check of a resolved profile, whether a
 * helper returned it or untyped JavaScript built it. Keys as `analyseKey` accepts them (dotted or slash form, "/" in a
 * VLAN interface name); the key's validity itself is the validator's.
 */
export const SysctlProfileSchema: z.ZodType<SysctlProfile> = z.strictObject({
  kind: z.literal("net-tuning/sysctl-profile"),
  name: z.string({ error: 'must be a non-empty string, e.g. "myProfile"' }).min(1, { error: 'must be a non-empty string, e.g. "myProfile"' }),
  sysctls: z.record(
    z.string().regex(/^[A-Za-z0-9_-]+([./][A-Za-z0-9_-]+)+$/, { error: "must be a sysctl key such as net.core.somaxconn (or net.ipv4.conf.eth0/100.rp_filter)" }),
    sysctlValueSchema,
    { error: 'must be an object of sysctl key → value, e.g. { "net.core.somaxconn": 4096 }' },
  ),
  rationale: z.record(z.string(), z.string(), { error: 'must be an object of sysctl key → reason (strings)' }),
  warnings: z.array(z.string(), { error: 'must be a list of strings, e.g. ["tcp_mem is sized for 64 GiB"] (or [])' }),
  nic: NicPresetSchema.optional(),
});
