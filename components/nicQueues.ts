import * as pulumi from "@pulumi/pulumi";
import type * as command from "@pulumi/command";
import { NicPlan, planNic, renderNicRestoreStdin } from "../provider/nic/plan";
import { nicBootDirectives, rcAdoptedRestoreNote, rcLocalAdoptDirectives } from "../provider/nic/adopt";
import { PresetSpec, resolvePreset } from "../provider/sizing/spec";
import { applyAndRestore, isPlain, ownerFor, warnAll } from "./common";
import { claim, knownHost } from "./conflicts";
import { becomeOf, Become, commonProblems, inputError, problemsOf } from "./validation";
import { BootOverride } from "./netTuning";

/** Ring buffer sizes (`ethtool -G`): each a number of descriptors (1-1048576) or `"max"` (the driver's pre-set maximum). */
export interface NicRings {
  /** rx ring: descriptors, or `"max"`. */
  rx?: pulumi.Input<any>;
  /** tx ring: descriptors, or `"max"`. */
  tx?: pulumi.Input<any>;
  /** rx-mini ring (few drivers): descriptors, or `"max"`. */
  rxMini?: pulumi.Input<any>;
  /** rx-jumbo ring (few drivers): descriptors, or `"max"`. */
  rxJumbo?: pulumi.Input<any>;
}

/** Queue counts (`ethtool -L`), 0-4096 each. */
export interface NicChannels {
  /** Combined rx/tx queues (what most NICs use). */
  combined?: pulumi.Input<number>;
  /** rx-only queues. */
  rx?: pulumi.Input<number>;
  /** tx-only queues. */
  tx?: pulumi.Input<number>;
  /** Other (link/management) queues. */
  other?: pulumi.Input<number>;
}

/** Interrupt coalescing (`ethtool -C`): microseconds, frames, packets/s; `adaptiveRx`/`adaptiveTx` on/off. */
export interface NicCoalesce {
  /** adaptive-rx on/off. */
  adaptiveRx?: pulumi.Input<boolean>;
  /** adaptive-tx on/off. */
  adaptiveTx?: pulumi.Input<boolean>;
  /** rx-usecs (microseconds). */
  rxUsecs?: pulumi.Input<number>;
  /** rx-frames (frames). */
  rxFrames?: pulumi.Input<number>;
  /** rx-usecs-irq (microseconds). */
  rxUsecsIrq?: pulumi.Input<number>;
  /** rx-frames-irq (frames). */
  rxFramesIrq?: pulumi.Input<number>;
  /** tx-usecs (microseconds). */
  txUsecs?: pulumi.Input<number>;
  /** tx-frames (frames). */
  txFrames?: pulumi.Input<number>;
  /** tx-usecs-irq (microseconds). */
  txUsecsIrq?: pulumi.Input<number>;
  /** tx-frames-irq (frames). */
  txFramesIrq?: pulumi.Input<number>;
  /** stats-block-usecs (microseconds). */
  statsBlockUsecs?: pulumi.Input<number>;
  /** sample-interval (seconds). */
  sampleInterval?: pulumi.Input<number>;
  /** pkt-rate-low (packets/s). */
  pktRateLow?: pulumi.Input<number>;
  /** pkt-rate-high (packets/s). */
  pktRateHigh?: pulumi.Input<number>;
  /** rx-usecs-low (microseconds). */
  rxUsecsLow?: pulumi.Input<number>;
  /** rx-frames-low (frames). */
  rxFramesLow?: pulumi.Input<number>;
  /** tx-usecs-low (microseconds). */
  txUsecsLow?: pulumi.Input<number>;
  /** tx-frames-low (frames). */
  txFramesLow?: pulumi.Input<number>;
  /** rx-usecs-high (microseconds). */
  rxUsecsHigh?: pulumi.Input<number>;
  /** rx-frames-high (frames). */
  rxFramesHigh?: pulumi.Input<number>;
  /** tx-usecs-high (microseconds). */
  txUsecsHigh?: pulumi.Input<number>;
  /** tx-frames-high (frames). */
  txFramesHigh?: pulumi.Input<number>;
}

/** Receive Packet/Flow Steering on every rx queue. */
export interface NicRps {
  /** `"all"` = every possible CPU of the host, or a list of CPU numbers (the hex mask is computed on the host). Required. */
  cpus: pulumi.Input<any>;
  /** `rps_flow_cnt` per rx queue (0-1048576; the kernel rounds up to a power of 2). */
  flowEntriesPerQueue?: pulumi.Input<number>;
  /** `net.core.rps_sock_flow_entries` (0-536870912; host-wide: refused inside a network namespace). */
  sockFlowEntries?: pulumi.Input<number>;
  /** Skip RPS (with a warning) when the NIC has as many rx queues as CPUs. Defaults to false. */
  onlyWhenQueuesBelowCpus?: pulumi.Input<boolean>;
}

/** IRQ affinity of the NIC's IRQs. */
export interface NicIrqAffinity {
  /** A list of CPU numbers (one CPU per IRQ, round-robin), or `"spread"` = over every online CPU. Required. */
  cpus: pulumi.Input<any>;
}

/** How NicQueues settings survive a reboot. */
export const Persistence = {
  /** A oneshot systemd unit running the boot script, enabled. */
  Systemd: "systemd",
  /** A marked block in /etc/rc.d/rc.local or /etc/rc.local. */
  RcLocal: "rc.local",
  /** Not persisted (runtime only). */
  None: "none",
  /** systemd when /run/systemd/system exists, else rc.local (the default). */
  Auto: "auto",
} as const;
/** A value of {@link Persistence}. */
export type Persistence = (typeof Persistence)[keyof typeof Persistence];

/** Arguments of {@link NicQueues}. */
export interface NicQueuesArgs {
  /** How to reach the host: `remote.ConnectionArgs` of the Pulumi Command provider (host, port, user, privateKey, proxy…). Required. */
  connection: pulumi.Input<command.types.input.remote.ConnectionArgs>;
  /** `"sudo"` when the SSH user is not root: runs `sudo -n` (never prompts). Defaults to `"none"` (the user must be root). */
  become?: pulumi.Input<Become>;
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
  rings?: pulumi.Input<NicRings>;
  /**
   * Queue counts (`ethtool -L`), 0-4096 each, within the driver's maximums from `ethtool -l`. Applied before
   * everything else, since they change the number of rx queues RPS is set on. Most NICs use `combined`.
   * Defaults to none.
   */
  channels?: pulumi.Input<NicChannels>;
  /**
   * Offload features (`ethtool -K`): `true` = on, `false` = off. Names: the short names gro, gso, tso, lro, rx, tx,
   * sg, rxhash, ntuple, rxvlan, txvlan, the names `ethtool -k` shows (generic-receive-offload, rx-gro-list, …)
   * or kernel aliases (rx-gro, rx-lro, …). A `[fixed]` feature cannot change (refused when it would have to).
   * Defaults to none.
   */
  features?: pulumi.Input<Record<string, pulumi.Input<boolean>>>;
  /**
   * Interrupt coalescing (`ethtool -C`): `adaptiveRx`/`adaptiveTx` (adaptive-rx/-tx, on/off), `rxUsecs`, `txUsecs`,
   * `rxUsecsIrq`, `txUsecsIrq`, … (microseconds), `rxFrames`, `txFrames`, `rxFramesIrq`, … (frames),
   * `sampleInterval` (seconds), `pktRateLow`/`pktRateHigh` (packets/s), `*Low`/`*High` variants.
   * Parameters the driver does not support are refused on the host. Defaults to none.
   */
  coalesce?: pulumi.Input<NicCoalesce>;
  /** Transmit queue length (`ip link set dev IF txqueuelen N`), in packets, 1-1000000. Defaults to none. */
  txQueueLength?: pulumi.Input<number>;
  /**
   * Receive Packet/Flow Steering on every rx queue. `cpus`: `"all"` = every possible CPU of the host, or CPU numbers;
   * the hex mask (`rps_cpus`) is computed on the host (32-bit comma groups); a CPU the host lacks is refused.
   * `flowEntriesPerQueue`: `rps_flow_cnt` per rx queue (0-1048576). `sockFlowEntries`: `net.core.rps_sock_flow_entries`
   * (0-536870912; host-wide: refused inside a network namespace or container). The kernel rounds both up to a power of 2.
   * `onlyWhenQueuesBelowCpus`: skip RPS (with a warning) when the NIC has as many rx queues as CPUs. Defaults to none.
   */
  rps?: pulumi.Input<NicRps>;
  /**
   * IRQ affinity of the NIC's IRQs (from `/sys/class/net/IF/device/msi_irqs`, else `/proc/interrupts`): one CPU per IRQ,
   * round-robin over `cpus` (CPU numbers) or over every online CPU (`"spread"`). An interface without IRQs of its own
   * (veth, bridge, VLAN) is refused; a running irqbalance that has not banned the IRQs gives a warning.
   * IRQ numbers can change across reboots and driver reloads. Defaults to none.
   */
  irqAffinity?: pulumi.Input<NicIrqAffinity>;
  /**
   * How the settings survive a reboot: `"systemd"` (a oneshot unit `/etc/systemd/system/net-tuning-nic-<if>.service`
   * running `/usr/local/libexec/net-tuning/nic-<if>.sh`, enabled), `"rc.local"` (a marked block in /etc/rc.d/rc.local
   * or /etc/rc.local), `"none"`, or `"auto"` = systemd when /run/systemd/system exists, else rc.local. Defaults to `"auto"`.
   */
  persistence?: pulumi.Input<Persistence>;
  /** On delete, put every setting back to the value it had before this resource first changed it. Defaults to true. */
  restoreOnDelete?: pulumi.Input<boolean>;
  /**
   * A NIC preset: `{ name: "throughput" }` or `{ name: "lowLatency" }`, or in TypeScript `nicPresets.throughput()`.
   * Explicit args override it; its values get the same checks as arguments. Defaults to none.
   */
  preset?: pulumi.Input<PresetSpec>;
  /**
   * When another mechanism re-applies a setting of this interface at boot: `"error"` refuses the change, `"warn"`
   * applies it and warns, `"ignore"` skips the check. Checked exactly: rc.local lines, the systemd .link file
   * udevadm names for the interface, NetworkManager keyfiles' `[ethtool]` of a connection with
   * `interface-name=<interface>`, ifupdown's stanza for it (`up`/`post-up`/`pre-up` commands, ethtool options),
   * tuned's `[net]` plugin of the active profile; other units and hook scripts naming the interface with
   * ethtool / ip link only warn. Each finding names the file and line. Defaults to `"error"`.
   */
  bootOverride?: pulumi.Input<BootOverride>;
  /**
   * Lines of /etc/rc.d/rc.local or /etc/rc.local this resource takes over (moving a hand-tuned host to Pulumi):
   * each entry one line, or several separated by `"\n"` that match consecutive lines (the article's
   * `for q in /sys/class/net/eth0/queues/rx-*; do` … `done` loop), compared trimmed; each must match exactly once.
   * The apply takes them out of rc.local (the edited file must still parse: `sh -n`, `bash -n` for a bash script),
   * keeps the original byte for byte in the host's journal, and they no longer count as boot overrides; delete
   * gives rc.local back byte for byte (content, mode, owner, mtime). Needs persistence `"systemd"` or `"none"`.
   * Defaults to none.
   */
  adoptRcLocalLines?: pulumi.Input<pulumi.Input<string>[]>;
}

/** Argument names, for property paths in errors. */
const ARG_NAMES = ["connection", "become", "interface", "rings", "channels", "features", "coalesce", "txQueueLength", "rps", "irqAffinity", "persistence", "restoreOnDelete", "preset", "bootOverride", "adoptRcLocalLines"] as const;
const SETTINGS = ["interface", "rings", "channels", "features", "coalesce", "txQueueLength", "rps", "irqAffinity", "persistence"] as const;

/** Every problem of the resolved arguments, or the plan. */
function validate(name: string, owner: ReturnType<typeof ownerFor>, v: Record<string, unknown>): NicPlan {
  const problems = commonProblems({ become: v.become, booleans: { restoreOnDelete: v.restoreOnDelete } });
  const preset = resolvePreset(v.preset);
  problems.push(...preset.problems);
  let plan: NicPlan | undefined;
  problems.push(
    ...problemsOf(() => {
      plan = planNic({
        owner,
        name,
        interface: v.interface,
        rings: v.rings,
        channels: v.channels,
        features: v.features,
        coalesce: v.coalesce,
        txQueueLength: v.txQueueLength,
        rps: v.rps,
        irqAffinity: v.irqAffinity,
        persistence: v.persistence,
        preset: preset.preset,
      });
    }).filter((p) => !(preset.problems.length > 0 && p.startsWith("nothing to set"))),
  );
  const host = knownHost(v.connection);
  if (problems.length === 0 && plan && host) {
    problems.push(
      ...claim(host, [plan.request.interface], `NicQueues "${name}"`, (iface, other) =>
        `interface "${iface}" is also tuned by ${other} on the same host (${host}): one NicQueues per interface and host; merge their settings into one`,
      ),
    );
  }
  const boot = nicBootDirectives(v.bootOverride);
  const rc = rcLocalAdoptDirectives(v.adoptRcLocalLines);
  problems.push(...boot.problems, ...rc.problems);
  if (problems.length > 0 || !plan) throw inputError(`NicQueues "${name}"`, problems, ARG_NAMES);
  return { ...plan, stdin: `${plan.stdin}${[...boot.lines, ...rc.lines].map((l) => `${l}\n`).join("")}` };
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
    const a = (args ?? {}) as NicQueuesArgs;
    const values = [...SETTINGS.map((k) => a[k]), a.become, a.restoreOnDelete, a.preset, a.bootOverride, a.adoptRcLocalLines];
    const named = (v: unknown[]): Record<string, unknown> => {
      const o: Record<string, unknown> = {};
      SETTINGS.forEach((k, i) => (o[k] = v[i]));
      [o.become, o.restoreOnDelete, o.preset, o.bootOverride, o.adoptRcLocalLines] = v.slice(SETTINGS.length);
      o.connection = a.connection;
      return o;
    };
    if (isPlain(values)) {
      // Known at preview: fail now, in the program, with every problem listed (nothing reaches a host).
      validate(name, owner, named(values));
    }
    // Values known only later are validated here, once, before any child Command can be registered.
    const plan = pulumi.all(values).apply((v) => {
      const p = validate(name, owner, named(v as unknown[]));
      warnAll(this, p.warnings);
      return p;
    });
    const become = pulumi.output(a.become).apply(becomeOf) as pulumi.Output<"sudo">; // undefined = no sudo
    const restoreOnDelete = pulumi.output(a.restoreOnDelete).apply((r) => r !== false);
    const report = applyAndRestore(this, name, "nic", { connection: a.connection, become }, plan.stdin, (r) =>
      pulumi.all([plan.request.interface, restoreOnDelete]).apply(([iface, restore]) => renderNicRestoreStdin(owner, iface, r.previous, restore) + rcAdoptedRestoreNote(r.extra["rc-adopted"])),
    );
    this.applied = report.applied;
    this.previous = report.previous;
    this.persistedAs = report.extra.apply((e) => e.persisted ?? "");
    this.warnings = pulumi.all([plan.warnings, report.warnings]).apply(([x, y]) => [...x, ...y]);
    this.registerOutputs({
      applied: this.applied,
      previous: this.previous,
      persistedAs: this.persistedAs,
      warnings: this.warnings,
    });
  }
}
