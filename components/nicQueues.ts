import * as pulumi from "@pulumi/pulumi";
import { NicPlanInput, planNic, renderNicRestoreStdin } from "../provider/nic/plan";
import type { NicPreset } from "../provider/sizing/nic";
import { applyAndRestore, ConnectionInput, isPlain, ownerFor, warnAll } from "./common";

export interface NicQueuesArgs {
  /** How to reach the host: @pulumi/command's `remote.ConnectionArgs` (host, port, user, privateKey, proxy…). Required. */
  connection: ConnectionInput;
  /** `"sudo"` when the SSH user is not root: runs `sudo -n` (never prompts). Defaults to none (the user must be root). */
  become?: pulumi.Input<"sudo">;
  /**
   * The network interface, e.g. `"eth0"`: 1-15 characters from letters, digits, `.`, `_`, `-`, `@`, `+`
   * (no `/`, `:`, whitespace or quotes; not `.`/`..`). It must exist on the host. Required.
   * One NicQueues per interface and host: a second one is refused, naming the first.
   */
  interface: pulumi.Input<string>;
  /**
   * Ring buffer sizes (`ethtool -G`), in descriptors (1-1048576), or `"max"` = the driver's pre-set maximum
   * from `ethtool -g`. Each must be within the driver's maximum (checked on the host before anything changes).
   * `rxMini`/`rxJumbo` exist on few drivers. Defaults to none (rings left as they are).
   */
  rings?: pulumi.Input<{ rx?: number | "max"; tx?: number | "max"; rxMini?: number | "max"; rxJumbo?: number | "max" }>;
  /**
   * Queue counts (`ethtool -L`), 0-4096 each, within the driver's maximums from `ethtool -l`. Applied before
   * everything else, since they change the number of rx queues RPS is set on. Most NICs use `combined`.
   * Defaults to none.
   */
  channels?: pulumi.Input<{ combined?: number; rx?: number; tx?: number; other?: number }>;
  /**
   * Offload features (`ethtool -K`): `true` = on, `false` = off. Names: the short names gro, gso, tso, lro, rx, tx,
   * sg, rxhash, ntuple, rxvlan, txvlan, the names `ethtool -k` shows (generic-receive-offload, rx-gro-list, …)
   * or kernel aliases (rx-gro, rx-lro, …). A `[fixed]` feature cannot change (refused when it would have to).
   * Defaults to none.
   */
  features?: pulumi.Input<Record<string, boolean>>;
  /**
   * Interrupt coalescing (`ethtool -C`): `adaptiveRx`/`adaptiveTx` (adaptive-rx/-tx, on/off), `rxUsecs`, `txUsecs`,
   * `rxUsecsIrq`, `txUsecsIrq`, … (microseconds), `rxFrames`, `txFrames`, `rxFramesIrq`, … (frames),
   * `sampleInterval` (seconds), `pktRateLow`/`pktRateHigh` (packets/s), `*Low`/`*High` variants.
   * Parameters the driver does not support are refused on the host. Defaults to none.
   */
  coalesce?: pulumi.Input<{
    adaptiveRx?: boolean; adaptiveTx?: boolean;
    rxUsecs?: number; rxFrames?: number; rxUsecsIrq?: number; rxFramesIrq?: number;
    txUsecs?: number; txFrames?: number; txUsecsIrq?: number; txFramesIrq?: number;
    statsBlockUsecs?: number; sampleInterval?: number; pktRateLow?: number; pktRateHigh?: number;
    rxUsecsLow?: number; rxFramesLow?: number; txUsecsLow?: number; txFramesLow?: number;
    rxUsecsHigh?: number; rxFramesHigh?: number; txUsecsHigh?: number; txFramesHigh?: number;
  }>;
  /** Transmit queue length (`ip link set dev IF txqueuelen N`), in packets, 1-1000000. Defaults to none. */
  txQueueLength?: pulumi.Input<number>;
  /**
   * Receive Packet/Flow Steering on every rx queue. `cpus`: `"all"` = every possible CPU of the host, or CPU numbers;
   * the hex mask (`rps_cpus`) is computed on the host (32-bit comma groups); a CPU the host lacks is refused.
   * `flowEntriesPerQueue`: `rps_flow_cnt` per rx queue (0-1048576). `sockFlowEntries`: `net.core.rps_sock_flow_entries`
   * (0-536870912; host-wide: refused inside a network namespace or container). The kernel rounds both up to a power of 2.
   * `onlyWhenQueuesBelowCpus`: skip RPS (with a warning) when the NIC has as many rx queues as CPUs. Defaults to none.
   */
  rps?: pulumi.Input<{ cpus: "all" | number[]; flowEntriesPerQueue?: number; sockFlowEntries?: number; onlyWhenQueuesBelowCpus?: boolean }>;
  /**
   * IRQ affinity of the NIC's IRQs (from `/sys/class/net/IF/device/msi_irqs`, else `/proc/interrupts`): one CPU per IRQ,
   * round-robin over `cpus` (CPU numbers) or over every online CPU (`"spread"`). An interface without IRQs of its own
   * (veth, bridge, VLAN) is refused; a running irqbalance that has not banned the IRQs gives a warning.
   * IRQ numbers can change across reboots and driver reloads. Defaults to none.
   */
  irqAffinity?: pulumi.Input<{ cpus: number[] | "spread" }>;
  /**
   * How the settings survive a reboot: `"systemd"` (a oneshot unit `/etc/systemd/system/net-tuning-nic-<if>.service`
   * running `/usr/local/libexec/net-tuning/nic-<if>.sh`, enabled), `"rc.local"` (a marked block in /etc/rc.d/rc.local
   * or /etc/rc.local), `"none"`, or `"auto"` = systemd when /run/systemd/system exists, else rc.local. Defaults to `"auto"`.
   */
  persistence?: pulumi.Input<"systemd" | "rc.local" | "none" | "auto">;
  /** On delete, put every setting back to the value it had before this resource first changed it. Defaults to true. */
  restoreOnDelete?: pulumi.Input<boolean>;
  /** A NIC preset from this package (`nicPresets.throughput()`, `nicPresets.lowLatency()`); explicit args override it. Defaults to none. */
  preset?: NicPreset;
}

/**
 * NIC queue settings of one interface on one host (rings, channels, offloads, coalescing, txqueuelen, RPS/RFS,
 * IRQ affinity): validated at preview, checked against the driver's limits on the host before anything changes,
 * applied all-or-nothing over SSH, persisted for boot, and rolled back to the originals (kept in Pulumi state) on delete.
 */
export class NicQueues extends pulumi.ComponentResource {
  /** setting → value read back from the host after the change (e.g. `eth0/ring.rx` → `4096`, `eth0/rps.rx-0` → `3`). */
  public readonly applied: pulumi.Output<Record<string, string>>;
  /** setting → value before this resource first changed it (the rollback data). */
  public readonly previous: pulumi.Output<Record<string, string>>;
  /** The systemd unit path, or `"<rc.local path> (# BEGIN … marker)"`, or `"none"`. */
  public readonly persistedAs: pulumi.Output<string>;
  /** Advice from validation and from the host's preflight. */
  public readonly warnings: pulumi.Output<string[]>;

  constructor(name: string, args: NicQueuesArgs, opts?: pulumi.ComponentResourceOptions) {
    // Args are deliberately not passed to super(): connection may hold secrets and component args are stored in state.
    super("net-tuning:index:NicQueues", name, {}, opts);
    const owner = ownerFor(name);
    const settings = [args.interface, args.rings, args.channels, args.features, args.coalesce, args.txQueueLength, args.rps, args.irqAffinity, args.persistence] as const;
    const planInput = (v: unknown[]): NicPlanInput => {
      const [iface, rings, channels, features, coalesce, txQueueLength, rps, irqAffinity, persistence] = v;
      return { owner, name, interface: iface, rings, channels, features, coalesce, txQueueLength, rps, irqAffinity, persistence, preset: args.preset };
    };
    if (isPlain(settings)) {
      // Known at preview: fail now, in the program, with every problem listed (nothing reaches a host).
      planNic(planInput([...settings]));
    }
    const plan = pulumi.all([...settings]).apply((v) => {
      const p = planNic(planInput(v));
      warnAll(this, p.warnings);
      return p;
    });
    const restoreOnDelete = pulumi.output(args.restoreOnDelete ?? true);
    const report = applyAndRestore(this, name, "nic", args, plan.stdin, (r) =>
      pulumi.all([plan.request.interface, restoreOnDelete]).apply(([iface, restore]) => renderNicRestoreStdin(owner, iface, r.previous, restore)),
    );
    this.applied = report.applied;
    this.previous = report.previous;
    this.persistedAs = report.extra.apply((e) => e.persisted ?? "");
    this.warnings = pulumi.all([plan.warnings, report.warnings]).apply(([a, b]) => [...a, ...b]);
    this.registerOutputs({
      applied: this.applied,
      previous: this.previous,
      persistedAs: this.persistedAs,
      warnings: this.warnings,
    });
  }
}
