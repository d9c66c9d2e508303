/**
 * Offload feature names. `ethtool -k` shows the legacy groups by their long names (generic-receive-offload, …)
 * and every other feature by its kernel name (rx-gro-list, highdma, …). NicQueues keys features by the name
 * `ethtool -k` shows, so the host can find, compare and read them back; `ethtool -K` short names and the kernel
 * names of single-feature groups are accepted as aliases.
 */

import { FEATURE_SHORT_NAMES } from "./spec";

export { FEATURE_SHORT_NAMES };

/**
 * Kernel feature names that `ethtool -k` shows under a legacy group name because the group has only that feature
 * (ethtool's off_flag_def): `rx-gro` is shown as `generic-receive-offload`.
 */
export const FEATURE_KERNEL_ALIASES: Readonly<Record<string, string>> = {
  "rx-gro": "generic-receive-offload",
  "tx-generic-segmentation": "generic-segmentation-offload",
  "rx-lro": "large-receive-offload",
  "rx-checksum": "rx-checksumming",
  "rx-hashing": "receive-hashing",
  "rx-ntuple-filter": "ntuple-filters",
  "rx-vlan-hw-parse": "rx-vlan-offload",
  "tx-vlan-hw-insert": "tx-vlan-offload",
  "tx-udp-fragmentation": "udp-fragmentation-offload",
};

const FEATURE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The name `ethtool -k` shows for a user's feature name, or undefined when it is not a well-formed name. */
export function canonicalFeature(name: string): string | undefined {
  const lower = name.trim().toLowerCase();
  if (!FEATURE_NAME.test(lower)) return undefined;
  return FEATURE_SHORT_NAMES[lower] ?? FEATURE_KERNEL_ALIASES[lower] ?? lower;
}
