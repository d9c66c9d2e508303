/**
 * Input schema of NicQueues (zod 4): one definition, the TypeScript types are inferred from it.
 * Messages name the input, the accepted range and the fix; `validateNicArgs` collects every problem.
 */
import { z } from "zod";

/** An integer in [min, max] with a message a user can act on. */
function intIn(min: number, max: number, unit: string) {
  const msg = `must be an integer from ${min} to ${max} (${unit})`;
  return z.number({ error: msg }).int({ error: msg }).min(min, { error: msg }).max(max, { error: msg });
}

/** Linux interface names: 1-15 characters; we also keep them to characters safe in file and unit names. */
export const INTERFACE_NAME = /^[A-Za-z0-9._@+-]{1,15}$/;
export const interfaceSchema = z
  .string({ error: 'must be a string such as "eth0"' })
  .refine((s) => INTERFACE_NAME.test(s) && s !== "." && s !== "..", {
    error: (iss) =>
      `"${String(iss.input)}" is not a valid Linux interface name: 1-15 characters from letters, digits, ".", "_", "-", "@", "+" (no "/", ":", whitespace or quotes; not "." or "..")`,
  });

export const MAX_RING = 1048576;
const ringSize = z.union([intIn(1, MAX_RING, "descriptors"), z.literal("max")], {
  error: `must be a number of descriptors from 1 to ${MAX_RING} or "max" (the driver's pre-set maximum)`,
});
export const ringsSchema = z.strictObject(
  { rx: ringSize.optional(), tx: ringSize.optional(), rxMini: ringSize.optional(), rxJumbo: ringSize.optional() },
  { error: "must be an object with rx, tx, rxMini, rxJumbo" },
);

export const MAX_CHANNELS = 4096;
const channelCount = intIn(0, MAX_CHANNELS, "queues");
export const channelsSchema = z.strictObject(
  { combined: channelCount.optional(), rx: channelCount.optional(), tx: channelCount.optional(), other: channelCount.optional() },
  { error: "must be an object with combined, rx, tx, other" },
);

export const featuresSchema = z.record(z.string(), z.boolean({ error: "must be true (on) or false (off)" }), {
  error: "must be an object of feature name → true/false, e.g. { gro: true, lro: false }",
});

const U32 = 4294967295;
/** camelCase coalescing arg → `ethtool -C` parameter. */
export const COALESCE_PARAMS = {
  adaptiveRx: "adaptive-rx",
  adaptiveTx: "adaptive-tx",
  rxUsecs: "rx-usecs",
  rxFrames: "rx-frames",
  rxUsecsIrq: "rx-usecs-irq",
  rxFramesIrq: "rx-frames-irq",
  txUsecs: "tx-usecs",
  txFrames: "tx-frames",
  txUsecsIrq: "tx-usecs-irq",
  txFramesIrq: "tx-frames-irq",
  statsBlockUsecs: "stats-block-usecs",
  sampleInterval: "sample-interval",
  pktRateLow: "pkt-rate-low",
  pktRateHigh: "pkt-rate-high",
  rxUsecsLow: "rx-usecs-low",
  rxFramesLow: "rx-frames-low",
  txUsecsLow: "tx-usecs-low",
  txFramesLow: "tx-frames-low",
  rxUsecsHigh: "rx-usecs-high",
  rxFramesHigh: "rx-frames-high",
  txUsecsHigh: "tx-usecs-high",
  txFramesHigh: "tx-frames-high",
} as const;
export type CoalesceName = keyof typeof COALESCE_PARAMS;

const onOff = z.boolean({ error: "must be true (on) or false (off)" });
const usecs = intIn(0, U32, "microseconds").optional();
const frames = intIn(0, U32, "frames").optional();
export const coalesceSchema = z.strictObject(
  {
    adaptiveRx: onOff.optional(),
    adaptiveTx: onOff.optional(),
    rxUsecs: usecs,
    rxFrames: frames,
    rxUsecsIrq: usecs,
    rxFramesIrq: frames,
    txUsecs: usecs,
    txFrames: frames,
    txUsecsIrq: usecs,
    txFramesIrq: frames,
    statsBlockUsecs: usecs,
    sampleInterval: intIn(0, U32, "seconds").optional(),
    pktRateLow: intIn(0, U32, "packets per second").optional(),
    pktRateHigh: intIn(0, U32, "packets per second").optional(),
    rxUsecsLow: usecs,
    rxFramesLow: frames,
    txUsecsLow: usecs,
    txFramesLow: frames,
    rxUsecsHigh: usecs,
    rxFramesHigh: frames,
    txUsecsHigh: usecs,
    txFramesHigh: frames,
  },
  { error: `must be an object of ethtool -C parameters (${Object.keys(COALESCE_PARAMS).join(", ")})` },
);

export const MAX_TXQUEUELEN = 1000000;
export const MAX_CPU = 8191;
export const MAX_FLOW_CNT = 1048576;
export const MAX_SOCK_FLOW = 536870912; // 1 << 29: the kernel refuses more

const cpuList = z
  .array(intIn(0, MAX_CPU, "CPU number"), { error: 'must be "all" or a list of CPU numbers such as [0, 1, 2]' })
  .min(1, { error: "must list at least one CPU" })
  .refine((a) => new Set(a).size === a.length, { error: "lists a CPU twice" });

export const rpsSchema = z.strictObject(
  {
    cpus: z.union([z.literal("all"), cpuList], { error: 'must be "all" or a list of CPU numbers such as [0, 1, 2]' }),
    flowEntriesPerQueue: intIn(0, MAX_FLOW_CNT, "flow entries per rx queue").optional(),
    sockFlowEntries: intIn(0, MAX_SOCK_FLOW, "flow entries").optional(),
    onlyWhenQueuesBelowCpus: z.boolean({ error: "must be true or false" }).optional(),
  },
  { error: 'must be an object such as { cpus: "all", flowEntriesPerQueue: 4096, sockFlowEntries: 32768 }' },
);

export const irqAffinitySchema = z.strictObject(
  { cpus: z.union([z.literal("spread"), cpuList], { error: 'must be "spread" or a list of CPU numbers' }) },
  { error: 'must be an object such as { cpus: "spread" }' },
);

export const persistenceSchema = z.enum(["systemd", "rc.local", "none", "auto"], {
  error: 'must be "systemd", "rc.local", "none" or "auto"',
});

/** The settings part of NicQueues' arguments (plain values, after Pulumi resolved them). */
export const nicSettingsSchema = z.strictObject({
  interface: interfaceSchema,
  rings: ringsSchema.optional(),
  channels: channelsSchema.optional(),
  features: featuresSchema.optional(),
  coalesce: coalesceSchema.optional(),
  txQueueLength: intIn(1, MAX_TXQUEUELEN, "packets").optional(),
  rps: rpsSchema.optional(),
  irqAffinity: irqAffinitySchema.optional(),
  persistence: persistenceSchema.optional(),
});

export type NicSettings = z.infer<typeof nicSettingsSchema>;
export type NicRings = z.infer<typeof ringsSchema>;
export type NicChannels = z.infer<typeof channelsSchema>;
export type NicCoalesce = z.infer<typeof coalesceSchema>;
export type NicRps = z.infer<typeof rpsSchema>;
export type NicIrqAffinity = z.infer<typeof irqAffinitySchema>;
export type NicPersistence = z.infer<typeof persistenceSchema>;

/** zod issues as "path: message" lines (every issue, not just the first). */
export function formatIssues(issues: z.core.$ZodIssue[], prefix = ""): string[] {
  return issues.map((i) => {
    const path = [prefix, ...i.path.map(String)].filter(Boolean).join(".").replace(/\.(\d+)(?=\.|$)/g, "[$1]");
    if (i.code === "unrecognized_keys") {
      return `${path ? path + ": " : ""}unknown field${i.keys.length > 1 ? "s" : ""} ${i.keys.map((k) => `"${k}"`).join(", ")} (check the spelling)`;
    }
    return `${path || "(args)"} ${i.message}`;
  });
}
