/**
 * pulumi-net-tuning: validated, reversible Linux network tuning as Pulumi components.
 *
 * - `NetTuning`: sysctls, persisted in /etc/sysctl.d, rolled back from state on delete.
 * - `NicQueues`: ethtool rings/channels/offloads/coalescing, txqueuelen, RPS/RFS, persisted by systemd or rc.local.
 * - Sizing helpers (`bdp`, `longFatFlows`, `webServer`, …) that return profiles and NIC presets.
 */
export * from "./components";
export * from "./provider/sizing";
export { InputError } from "./provider/errors";
export { validateSysctls } from "./provider/sysctl/validate";
export { CATALOGUE, REJECTED_KEYS } from "./provider/sysctl/catalogue";
export type { Owner } from "./provider/owner";
export type { CatalogueEntry, RejectedKey } from "./provider/sysctl/catalogue";
export { planSysctls } from "./provider/sysctl/plan";
export type { BootOverride, SysctlPlan, SysctlPlanInput } from "./provider/sysctl/plan";
export type { ValidatedSysctls } from "./provider/sysctl/validate";
export { planNic, renderNicRestoreStdin } from "./provider/nic/plan";
export type { NicPlan, NicPlanInput } from "./provider/nic/plan";
export { validateNic } from "./provider/nic/validate";
export type { NicInput, NicRequest } from "./provider/nic/validate";
export { PACKAGE_VERSION } from "./provider/version";
