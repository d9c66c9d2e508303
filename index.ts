/**
 * net-tuning: validated, reversible Linux network tuning as Pulumi components.
 *
 * - {@link NetTuning}: sysctls, persisted in /etc/sysctl.d, rolled back from state on delete.
 * - {@link NicQueues}: ethtool rings/channels/offloads/coalescing, txqueuelen, RPS/RFS, persisted by systemd or rc.local.
 * - Sizing helpers ({@link bdp}, {@link longFatFlows}, {@link webServer}, …) that return profiles, and NIC presets.
 *
 * @packageDocumentation
 */
export { NetTuning, BootOverride } from "./components/netTuning";
export type { NetTuningArgs } from "./components/netTuning";
export { NicQueues, Persistence } from "./components/nicQueues";
export type { NicQueuesArgs, NicSettingsArgs, NicRings, NicChannels, NicCoalesce, NicRps, NicIrqAffinity } from "./components/nicQueues";
export { Become } from "./components/validation";
export type { VerifyArgs } from "./components/verify";
export type { ConfirmArgs } from "./components/confirm";
export { rollout } from "./components/rollout";
export type { Rollout, RolloutOptions, RolloutContext, RolloutSummary, HostStatus } from "./components/rollout";
export type { Verification, VerificationReading } from "./provider/counters/gate";
export type { ProfileSpec, PresetSpec } from "./provider/sizing/spec";
export { ProfileName, PresetName, GuardAction } from "./provider/sizing/spec";
export {
  longFatFlows,
  manySmallFlows,
  webServer,
  database,
  proxyGateway,
  nvmeTcpLatency,
  nvmeTcpThroughput,
} from "./provider/sizing/profiles";
export type { GuardOptions, FlowOptions, NvmeThroughputOptions } from "./provider/sizing/profiles";
export { combine } from "./provider/sizing/profile";
export type { SysctlProfile, SysctlValue } from "./provider/sizing/profile";
export { nicPresets, throughput, lowLatency } from "./provider/sizing/nic";
export type { NicPreset, NicPresetName } from "./provider/sizing/nic";
export type { NicSettingsValues, NicRingsValues, NicChannelsValues, NicCoalesceValues, NicRpsValues, NicIrqAffinityValues } from "./provider/nic/values.generated";
export { bdp } from "./provider/sizing/units";
export type { BdpArgs, Bandwidth, Rtt, ByteSize } from "./provider/sizing/units";
export { CATALOGUE, REJECTED_KEYS } from "./provider/sysctl/catalogue";
export type { CatalogueEntry, RejectedKey, SysctlRule, RuleCondition, KeyRef } from "./provider/sysctl/catalogue";
export { InputError } from "./provider/errors";
export type { Problem } from "./provider/errors";
