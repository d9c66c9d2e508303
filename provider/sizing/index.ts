/** Sizing: BDP, sysctl profiles from the source tuning guides, the memory guard, NIC presets. Pure; no `@pulumi/*`. */
export * from "./units";
export * from "./profile";
export * from "./guard";
export * from "./nic";
export * from "./profiles";
export * from "./render";
export * from "./spec";
