/**
 * NIC presets for the NicQueues resource (rings, offloads, interrupt coalescing, txqueuelen, RPS/RFS),
 * from the 10G cross-border gateway guide (Scenario A), with its mistakes corrected.
 * Pure data: NicQueues validates them against the host's real limits before changing anything.
 */
import type { NicSettingsValues } from "../nic/values.generated";

/**
 * Suggested NicQueues settings: the NIC spec's settings as plain values (every field optional: an absent field leaves
 * that setting as it is), validated by NicQueues with exactly the checks of its arguments.
 */
export interface NicPreset extends NicSettingsValues {
  /** Always `"net-tuning/nic-preset"`: lets a consumer tell a preset from hand-written settings. */
  kind: "net-tuning/nic-preset";
  /** Preset name, e.g. `"throughput"`; shown in previews and in combine conflicts. */
  name: string;
  /** One line per set field (`rings`, `features`, `coalesce`, `txQueueLength`, `rps`): why, citing the gateway guide. */
  rationale: Record<string, string>;
}

/**
 * Throughput preset (Scenario A: 10G gateway, RX drops and one ksoftirqd core at 100 %):
 * rings at the driver maximum, GRO/GSO/TSO on and LRO off, txqueuelen 10000, and RPS/RFS on all CPUs
 * only where the NIC has fewer rx queues than CPUs (rps_flow_cnt 4096 per queue, rps_sock_flow_entries 32768).
 * Interrupt coalescing is left to the driver.
 */
export function throughput(): NicPreset {
  return {
    kind: "net-tuning/nic-preset",
    name: "throughput",
    rings: { rx: "max", tx: "max" },
    features: { gro: true, gso: true, tso: true, lro: false },
    txQueueLength: 10000,
    rps: { cpus: "all", flowEntriesPerQueue: 4096, sockFlowEntries: 32768, onlyWhenQueuesBelowCpus: true },
    rationale: {
      rings:
        "deeper rings absorb bursts: the article's rx_no_buffer_count stopped rising at 4096 (the X520/ixgbe maximum); \"max\" takes each driver's own maximum instead of a number some NICs refuse",
      features:
        "GRO/GSO/TSO on, LRO off: the article disabled GRO/TSO \"for latency\" once and CPU saturated, throughput collapsed and tail latency got worse; LRO merges frames irreversibly and breaks forwarding",
      txQueueLength: "txqueuelen 10000 (article) keeps a 10G link's qdisc from dropping bursts; it adds queueing delay, so it is not in lowLatency",
      rps:
        "RPS/RFS spreads softirq work when hardware RSS has fewer queues than CPUs (the article saw one ksoftirqd core at 100 %); rps_flow_cnt 4096 per queue, rps_sock_flow_entries 32768 as in the article; the CPU mask is computed from the host (6.x rejects bits beyond the possible CPUs, so never ffffffff)",
    },
  };
}

/**
 * Low-latency preset: adaptive interrupt coalescing off and rx-usecs 10, GRO/GSO/TSO kept on, LRO off.
 * Rings, txqueuelen and RPS are left as they are.
 */
export function lowLatency(): NicPreset {
  return {
    kind: "net-tuning/nic-preset",
    name: "lowLatency",
    features: { gro: true, gso: true, tso: true, lro: false },
    coalesce: { adaptiveRx: false, rxUsecs: 10 },
    rationale: {
      coalesce:
        "fixed, short interrupt coalescing trades CPU for tail latency (the article lowered rx-usecs); 10 us instead of the article's 8 because e1000e accepts only 0, 1, 3, 4 or 10-10000 (verified in a VM), and 10 is also valid for ixgbe, i40e and mlx5; adaptive-rx off so the driver does not raise it again under load",
      features:
        "GRO/GSO/TSO stay on even for latency: turning them off cost the article CPU, throughput and tail latency; LRO off (it holds frames back to merge them)",
    },
  };
}

/** The NIC presets by name, as accepted by the CLI's `--nic`. */
export const nicPresets = { throughput, lowLatency } as const;

/** A name of {@link nicPresets}. */
export type NicPresetName = keyof typeof nicPresets;
