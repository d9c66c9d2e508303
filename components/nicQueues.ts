import * as pulumi from "@pulumi/pulumi";
import type * as command from "@pulumi/command";
import { NicPlan, planNic, renderNicRestoreStdin } from "../provider/nic/plan";
import { NIC_SETTING_ARGS, Persistence } from "../provider/nic/spec";
import type { NicInput } from "../provider/nic/validate";
import { nicBootDirectives, rcAdoptedRestoreNote, rcLocalAdoptDirectives } from "../provider/nic/adopt";
import { PresetSpec, resolvePreset } from "../provider/sizing/spec";
import type { NicPreset } from "../provider/sizing/nic";
import { ownerFor } from "./common";
import { tuneHost } from "./tuning";
import { claimOnHost, SOCK_FLOW_KEY } from "./conflicts";
import type { NicSettingsArgs } from "./nicArgs.generated";
import { Become, commonProblems, inputError, problemsOf } from "./validation";
import { Problem, problemAt, problemsAt } from "../provider/errors";
import { BootOverride } from "./netTuning";
import { verifyPlan, type VerifyArgs } from "./verify";
import type { Verification } from "../provider/counters/gate";
import { confirmPlan, type ConfirmArgs } from "./confirm";
import { KINDS } from "../provider/kinds";

// The settings' interfaces are generated from the NIC spec (provider/nic/spec.ts) by `npm run gen`.
export type { NicChannels, NicCoalesce, NicIrqAffinity, NicRings, NicRps, NicSettingsArgs } from "./nicArgs.generated";

// How NicQueues settings survive a reboot: the `Persistence` object and type are declared in the NIC spec.
export { Persistence };

/** Arguments of {@link NicQueues}: the NIC settings (generated from the NIC spec) and how to reach and persist them. */
export interface NicQueuesArgs extends NicSettingsArgs {
  /** How to reach the host: `remote.ConnectionArgs` of the Pulumi Command provider (host, port, user, privateKey, proxy…). Required. */
  connection: pulumi.Input<command.types.input.remote.ConnectionArgs>;
  /** `"sudo"` when the SSH user is not root: runs `sudo -n` (never prompts). Defaults to `"none"` (the user must be root). */
  become?: pulumi.Input<Become>;
  /**
   * The network interface, e.g. `"eth0"`: a Linux interface name (the rule: `INTERFACE_NAME_CHARS` and
   * `INTERFACE_NAME_MAX` of the NIC spec, stated in the README table and in the message for a bad name). It must
   * exist on the host. Required.
   * One NicQueues per interface and host: a second one is refused, naming the first.
   */
  interface: pulumi.Input<string>;
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
   * Explicit args override it, each as a whole: a group object given here (`rings`, `channels`, `features`,
   * `coalesce`, `rps`, `irqAffinity`) replaces the preset's object of that group, none of its fields carried over
   * (`rps: { cpus: "all" }` with the throughput preset has no `onlyWhenQueuesBelowCpus`, no flow entries); a group not
   * given is the preset's. Its values get the same checks as arguments. Defaults to none.
   */
  preset?: pulumi.Input<PresetSpec | NicPreset>;
  /**
   * Read the host during `pulumi preview` and `pulumi up` (read-only, one SSH session per host, at most 10 s): logs
   * `<setting>: <on the host now> → <declared>` (rings, channels, features, coalescing, txqueuelen, RPS/RFS, IRQs) on this resource, warns about drift (what changed on the host since
   * this resource last applied it) and shows drift as a pending change that `pulumi up` repairs. `false` = plan-only
   * previews for this resource (NET_TUNING_LIVE_PREVIEW=0 turns them off for a whole run). Defaults to true.
   */
  livePreview?: pulumi.Input<boolean>;
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
   * each entry one line, or several separated by `"\n"` that match consecutive lines (the gateway guide's
   * `for q in /sys/class/net/eth0/queues/rx-*; do` … `done` loop), compared trimmed; each must match exactly once.
   * The apply takes them out of rc.local (the edited file must still parse: `sh -n`, `bash -n` for a bash script),
   * keeps the original byte for byte in the host's journal, and they no longer count as boot overrides; delete
   * gives rc.local back byte for byte (content, mode, owner, mtime). Needs persistence `"systemd"` or `"none"`.
   * Defaults to none.
   */
  adoptRcLocalLines?: pulumi.Input<pulumi.Input<string>[]>;
  /**
   * A verify gate (safe rollout): counters the host reads before the change and again after `soakSeconds`, inside
   * the apply's SSH session; a limit exceeded rolls the change back (nothing persisted) and fails the resource with a
   * table of name, before, after, limit. E.g. `{ soakSeconds: 30, maxIncrease: { "ethtool.rx_missed_errors": 0 } }`:
   * `ethtool.<stat>` is this interface's `ethtool -S` statistic. Defaults to none (no gate, no cost).
   */
  verify?: pulumi.Input<VerifyArgs>;
  /**
   * A confirmed apply (safe rollout): the host arms a revert before the change and puts the values back after
   * `timeoutSeconds` unless a second SSH session (the `-restore` child's create, right after the apply) confirms; the unit or
   * rc.local block is written only at the confirm, so a reboot before it boots into the old values. A plan the host
   * reverted is held (refused) until it changes. The timeout must cover the verify gate's soak plus the connection's
   * dial budget (dialErrorLimit × perDialTimeout, 150 s by default). Defaults to on when `channels`, `rings`,
   * `features` or a `preset` are declared: an apply that changes a channel, ring or feature (they can reset the link)
   * waits for a confirm of max(120, soak + 150) s (more when the connection's dial budget needs it); an apply that
   * changes only other settings commits at once. `{ timeoutSeconds: 0 }` turns it off; a timeout confirms any change.
   */
  confirm?: pulumi.Input<ConfirmArgs>;
}

/**
 * The arguments planNic validates: interface, the setting arguments of the NIC spec (NIC_SETTING_ARGS: a group added
 * to the spec reaches the schema and the plan without an edit here) and persistence. Exported for the unit test.
 */
export const SETTINGS: readonly (keyof NicQueuesArgs)[] = ["interface", ...(NIC_SETTING_ARGS as readonly (keyof NicSettingsArgs)[]), "persistence"];
/** The arguments that are not NIC settings (checked here, not by planNic). */
const OTHER_ARGS = ["become", "restoreOnDelete", "preset", "bootOverride", "adoptRcLocalLines", "verify", "confirm"] as const;
/** The arguments of the plan and the resource (with livePreview: every argument, which unknownArgProblems checks against). */
const ARG_NAMES: readonly string[] = ["connection", ...SETTINGS, ...OTHER_ARGS];
/** Every argument name the component takes (livePreview is not part of the plan). */
const ALL_ARGS: readonly string[] = [...ARG_NAMES, "livePreview"];

/** Every problem of the resolved arguments, or the plan. */
function validate(name: string, owner: ReturnType<typeof ownerFor>, v: Record<string, unknown>, extra: Problem[] = [], rolloutLines: string[] = []): NicPlan {
  const problems = commonProblems({ become: v.become, booleans: { restoreOnDelete: v.restoreOnDelete } });
  problems.push(...extra);
  const preset = resolvePreset(v.preset);
  problems.push(...preset.problems);
  let plan: NicPlan | undefined;
  problems.push(
    ...problemsOf(() => {
      const settings: Record<string, unknown> = {};
      for (const k of SETTINGS) settings[k] = v[k];
      plan = planNic({ ...(settings as NicInput), owner, name, preset: preset.preset, presetRefused: preset.problems.length > 0 });
    }),
  );
  const boot = nicBootDirectives(v.bootOverride);
  const rc = rcLocalAdoptDirectives(v.adoptRcLocalLines);
  problems.push(...problemsAt("bootOverride", boot.problems), ...problemsAt("adoptRcLocalLines", rc.problems));
  const gate = verifyPlan(v.verify, { kind: "nic", iface: plan?.request.interface ?? "<interface>" });
  problems.push(...problemsAt("verify", gate.problems));
  const nicDefault = ["channels", "rings", "features", "preset"].some((k) => v[k] !== undefined && v[k] !== null);
  const confirm = confirmPlan(v.confirm, { kind: "nic", verify: v.verify, connection: v.connection, nicDefault });
  problems.push(...problemsAt("confirm", confirm.problems));
  // (claimed only by a resource whose plan is valid: a refused one claims nothing)
  problems.push(
    ...claimOnHost(
      problems.length === 0 && plan !== undefined,
      v.connection,
      () => [plan!.request.interface, ...(plan!.request.rps?.sockFlowEntries !== undefined ? [SOCK_FLOW_KEY] : [])],
      `NicQueues "${name}"`,
      (item, other, _otherItem, host) =>
        item === SOCK_FLOW_KEY
          ? problemAt("rps.sockFlowEntries", `rps.sockFlowEntries writes the host-wide ${SOCK_FLOW_KEY}, which ${other} also sets on the same host (${host}): set it in only one resource (${
              other.startsWith("NicQueues") ? `drop rps.sockFlowEntries here or from ${other}` : `drop rps.sockFlowEntries here or the key from ${other}`
            })`)
          : problemAt("interface", `interface "${item}" is also tuned by ${other} on the same host (${host}): one NicQueues per interface and host; merge their settings into one`),
    ),
  );
  if (problems.length > 0 || !plan) throw inputError(`NicQueues "${name}"`, problems);
  // the live read's boot-override check (nic.sh nn_live_iface): as the plan's @boot-override says (default "error")
  const bootCheck = v.bootOverride === "warn" ? "warn" : v.bootOverride === "ignore" ? undefined : "error";
  // and its adoptRcLocalLines checks: the plan's entries ("K line", from its @adopt-rc lines)
  const readChecks: NicPlan["readChecks"] = { ...plan.readChecks, ...(bootCheck ? { boot: bootCheck } : {}), ...(rc.lines.length ? { adoptRc: rc.lines.map((l) => l.replace(/^@adopt-rc /, "")) } : {}) };
  return { ...plan, readChecks, stdin: `${plan.stdin}${[...boot.lines, ...rc.lines, ...gate.lines, ...confirm.lines, ...rolloutLines].map((l) => `${l}\n`).join("")}` };
}

/**
 * NIC queue settings of one interface on one host (rings, channels, offloads, coalescing, txqueuelen, RPS/RFS,
 * IRQ affinity): validated at preview, checked against the driver's limits on the host before anything changes,
 * applied all-or-nothing over SSH, persisted for boot, and rolled back to the originals (kept in Pulumi state) on delete.
 */
export class NicQueues extends pulumi.ComponentResource {
  /** setting → value read back from the host after the change (e.g. `eth0/ring.rx` → `4096`, `eth0/rps.rx-0` → `3`). */
  public readonly applied!: pulumi.Output<Record<string, string>>;
  /** setting → value before this resource first changed it (the rollback data). */
  public readonly previous!: pulumi.Output<Record<string, string>>;
  /** The systemd unit path, or `"<rc.local path> (# BEGIN … marker)"`, or `"none"`. */
  public readonly persistedAs: pulumi.Output<string>;
  /** Advice from validation and from the host's preflight. */
  public readonly warnings: pulumi.Output<string[]>;
  /** setting → value on the host now, read during this preview or update (every rx queue and IRQ for RPS/IRQ settings). */
  public readonly live!: pulumi.Output<Record<string, string>>;
  /** setting (or managed file) → `<last applied> → <on the host now>`: what changed on the host since this resource last applied it. */
  public readonly drift!: pulumi.Output<Record<string, string>>;
  /**
   * The host this resource tunes, as `user@host:port` (defaults root, 22), not secret, so that a `pulumi stack export`
   * without `--show-secrets` names it; undefined when the host is a secret (or the whole connection one secret Output).
   */
  public readonly endpoint!: pulumi.Output<string | undefined>;
  /**
   * `SHA256:…` (the form `ssh-keygen -lf` prints) of the key this host, not a proxy, showed the live read of this run,
   * whether it was verified or trusted on first use (docs/operations.md, "Host keys"); not secret, kept in state.
   * Undefined without a read that got as far as the key exchange (live previews off, connection unknown, no answer).
   */
  public readonly hostKeyFingerprint!: pulumi.Output<string | undefined>;
  /** The verify gate's readings (before, right after the change, after the soak) and verdict in the last apply; undefined without `verify`. */
  public readonly verification!: pulumi.Output<Verification | undefined>;
  /**
   * What happened on the host in the last run: `"applied"`; inside a rollout (created with the `ctx.opts` of
   * `rollout`) also `"refused"`, `"failed"`, `"rolledBack"` or `"unconfirmed"` (see NetTuning's `status`). Outside a
   * rollout a failure fails the resource instead.
   */
  public readonly status!: pulumi.Output<string>;

  constructor(name: string, args: NicQueuesArgs, opts?: pulumi.ComponentResourceOptions) {
    // Args are deliberately not passed to super(): connection may hold secrets and component args are stored in state.
    super(KINDS.nic.type, name, {}, opts);
    const owner = ownerFor(name);
    const a = (args ?? {}) as NicQueuesArgs;
    const names = [...SETTINGS, ...OTHER_ARGS];
    const named = (v: unknown[]): Record<string, unknown> => {
      const o: Record<string, unknown> = {};
      names.forEach((k, i) => (o[k] = v[i]));
      o.connection = a.connection;
      return o;
    };
    const t = tuneHost<NicPlan>(this, name, owner, a, opts, {
      kind: "nic",
      allArgs: ALL_ARGS,
      values: names.map((k) => a[k]),
      validate: (v, extra, rollout) => validate(name, owner, named(v), extra, rollout?.lines),
      // what adoption takes over, as a diagnostic of the preview (the plan's lines say it in the diff)
      logPlan: (_p, v) => {
        const adopted = named(v).adoptRcLocalLines;
        if (!Array.isArray(adopted) || !adopted.length) return;
        void pulumi.log.info(
          `NicQueues "${name}" takes over ${adopted.length} rc.local entr${adopted.length === 1 ? "y" : "ies"} (removed now, rc.local given back byte for byte on delete):\n` +
            adopted.map((e) => `  ${String(e).split("\n").join("\n  ")}`).join("\n"),
          this,
        );
      },
      liveRead: (p) => ({ settings: p.settings, options: { iface: p.request.interface, nicChecks: p.readChecks } }),
      restore: {
        target: (p) => p.request.interface,
        text: (r, iface, restore) => renderNicRestoreStdin(owner, iface, r.previous, restore) + rcAdoptedRestoreNote(r.extra["rc-adopted"]),
      },
      nicVerification: true,
    });
    this.warnings = t.warnings;
    this.persistedAs = t.report.apply((r) => r.extra.persisted ?? "");
    const { endpoint, live, drift, hostKeyFingerprint } = t.registered;
    this.registerOutputs({ endpoint, persistedAs: this.persistedAs, warnings: this.warnings, live, drift, hostKeyFingerprint });
  }
}
