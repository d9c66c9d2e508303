import * as pulumi from "@pulumi/pulumi";
import type * as command from "@pulumi/command";
import { planSysctls, planValues, renderSysctlRestoreStdin, SysctlPlan } from "../provider/sysctl/plan";
import { variableOf } from "../provider/sysctl/catalogue";
import { misspeltKeyProblems, sysctlPath } from "../provider/sysctl/validate";
import { adoptedFromReport, fitAdopted, renderAdoptedRestore, STRING_INPUT_MAX } from "../provider/sysctl/adopt";
import { ProfileSpec, resolveProfiles } from "../provider/sizing/spec";
import type { SysctlProfile, SysctlValue } from "../provider/sizing/profile";
import { lazyOutput, outputOfPlan, ownerFor, registeredOfPlan } from "./common";
import { tuneHost } from "./tuning";
import { hostCompresses, type HostReport } from "../provider/report";
import type { LiveBootPlan } from "./live";
import { isPlain } from "./plain";
import { claimOnHost, SOCK_FLOW_KEY } from "./conflicts";
import { Become, commonProblems, inputError, problemsOf } from "./validation";
import { Problem, problemAt, problemsAt } from "../provider/errors";
import { verifyPlan, type VerifyArgs } from "./verify";
import { confirmPlan, type ConfirmArgs } from "./confirm";
import type { Verification } from "../provider/counters/gate";
import { KINDS } from "../provider/kinds";

/**
 * What NetTuning does when a file applied later at boot (a later /etc/sysctl.d file, /etc/sysctl.conf) sets one of
 * its keys to another value.
 */
export const BootOverride = {
  /** Refuse the change (the default). */
  Error: "error",
  /** Apply it and warn. */
  Warn: "warn",
  /** Skip the check. */
  Ignore: "ignore",
} as const;
/** A value of {@link BootOverride}: `"error"`, `"warn"` or `"ignore"`. */
export type BootOverride = (typeof BootOverride)[keyof typeof BootOverride];

/** Arguments of {@link NetTuning}. */
export interface NetTuningArgs {
  /** How to reach the host: `remote.ConnectionArgs` of the Pulumi Command provider (host, port, user, privateKey, proxy…). Required. */
  connection: pulumi.Input<command.types.input.remote.ConnectionArgs>;
  /**
   * Sysctls to set, by dotted key (`"net.core.somaxconn"`; the slash form `net/core/somaxconn` is accepted and normalised).
   * Values: a number, a string, or a list of numbers for multi-value keys
   * (`"net.ipv4.tcp_rmem": [4096, 16777216, 134217728]`, bytes). Units are the kernel's (see the catalogue in README).
   * Entries here override `profile` and `profiles`, key by key (each key is its own setting). A key that is not
   * catalogued but looks like one that is (`net.core.somaxcon`) is refused: the host refuses keys its kernel does not
   * have; list it in `acknowledge` if your kernel has it. Defaults to none.
   */
  sysctls?: pulumi.Input<Record<string, pulumi.Input<SysctlValue>>>;
  /**
   * A sizing profile: a spec such as `{ name: "longFatFlows", bandwidth: "10Gbit", rtt: "40ms" }`, or in TypeScript
   * the profile a helper returns (`longFatFlows({ bandwidth: "10Gbit", rtt: "40ms" })`). `sysctls` entries override it.
   * Defaults to none.
   */
  profile?: pulumi.Input<ProfileSpec | SysctlProfile>;
  /**
   * Several profiles, combined: a key two profiles set to different values is refused, unless `sysctls` sets it (an
   * entry there overrides every profile), e.g. `profiles: [{ name: "webServer" }, { name: "database" }]` with
   * `net.core.somaxconn` and `net.ipv4.tcp_max_syn_backlog` in `sysctls`. Defaults to none.
   */
  profiles?: pulumi.Input<pulumi.Input<ProfileSpec | SysctlProfile>[]>;
  /** File name in /etc/sysctl.d (`[A-Za-z0-9._-]+.conf`). Defaults to `90-net-tuning-<name>.conf`. */
  fileName?: pulumi.Input<string>;
  /** Write the sysctl.d file so values survive a reboot; false = runtime only. Defaults to true. */
  persist?: pulumi.Input<boolean>;
  /** On delete, put every key back to the value it had before this resource first changed it. Defaults to true. */
  restoreOnDelete?: pulumi.Input<boolean>;
  /** `"sudo"` when the SSH user is not root: runs `sudo -n` (never prompts). Defaults to `"none"` (the user must be root). */
  become?: pulumi.Input<Become>;
  /**
   * When a file applied later at boot (a later /etc/sysctl.d file, /etc/sysctl.conf) sets one of these keys to another
   * value: `"error"` refuses the change, `"warn"` applies it and warns, `"ignore"` skips the check. Defaults to `"error"`.
   */
  bootOverride?: pulumi.Input<BootOverride>;
  /**
   * Sysctl keys whose advisory warnings you have read and accept (e.g. `["net.ipv4.tcp_fin_timeout"]`): their advice
   * moves from `warnings` to `acknowledged`. Keys a profile chose are covered by its rationale without being listed.
   * Also the way to keep a key that only looks misspelt (not catalogued, close to a catalogued one) but exists on
   * your kernel. Errors cannot be acknowledged. Defaults to none.
   */
  acknowledge?: pulumi.Input<pulumi.Input<string>[]>;
  /**
   * Read the host during `pulumi preview` and `pulumi up` (read-only, one SSH session per host, at most 10 s): logs
   * `<setting>: <on the host now> → <declared>` on this resource, warns about drift (what changed on the host since
   * this resource last applied it) and shows drift as a pending change that `pulumi up` repairs. `false` = plan-only
   * previews for this resource (NET_TUNING_LIVE_PREVIEW=0 turns them off for a whole run). Defaults to true.
   */
  livePreview?: pulumi.Input<boolean>;
  /**
   * Hand-written sysctl files this resource takes over (moving a hand-tuned host to Pulumi): file names in
   * /etc/sysctl.d (`"99-hk-net-tuning.conf"`) or absolute paths in /etc/sysctl.d, /run/sysctl.d,
   * /usr/local/lib/sysctl.d, /usr/lib/sysctl.d, /lib/sysctl.d; `"/etc/sysctl.conf"` adopts only its lines that set
   * keys declared here. Every key an adopted file sets must be declared (the preflight lists the others with their
   * values, ready to paste). The apply saves each file byte for byte (content, mode, owner, mtime) in the host's
   * journal and, up to 4 KiB, in Pulumi state, then removes it (sysctl.conf: comments those lines out with a marker),
   * so it no longer overrides this resource at boot. Delete puts it back exactly and applies its values again.
   * Defaults to none.
   */
  adopt?: pulumi.Input<pulumi.Input<string>[]>;
  /**
   * A verify gate (safe rollout): counters the host reads before the change and again after `soakSeconds`, inside
   * the apply's SSH session; a limit exceeded rolls the change back (nothing persisted) and fails the resource with a
   * table of name, before, after, limit. E.g. `{ soakSeconds: 60, maxIncrease: { "TcpExt.ListenOverflows": 0 } }`.
   * Ethtool statistics are named `ethtool.<interface>.<stat>`. Defaults to none (no gate, no cost).
   */
  verify?: pulumi.Input<VerifyArgs>;
  /**
   * A confirmed apply (safe rollout): the host arms a revert before the change and puts the values back after
   * `timeoutSeconds` unless a second SSH session (the `-restore` child's create, right after the apply) confirms; the sysctl.d
   * file is written only at the confirm, so a reboot before it boots into the old values. A plan the host reverted is
   * held (refused) until it changes. The timeout must cover the verify gate's soak plus the connection's dial budget
   * (dialErrorLimit × perDialTimeout, 150 s by default), e.g. `{ timeoutSeconds: 300 }`. Defaults to none (off).
   */
  confirm?: pulumi.Input<ConfirmArgs>;
}

/** The arguments of the plan and the resource (validate's values; with livePreview: every argument the component takes). */
const ARG_NAMES = ["connection", "sysctls", "profile", "profiles", "fileName", "persist", "restoreOnDelete", "become", "bootOverride", "acknowledge", "adopt", "verify", "confirm"] as const;
/** Every argument name the component takes (livePreview is not part of the plan). */
const ALL_ARGS: readonly string[] = [...ARG_NAMES, "livePreview"];

/** Every problem of the resolved arguments, or the plan. */
type Checked = SysctlPlan;

/**
 * The keys of `sysctls` whose values are Pulumi secrets (each gets an `@secret` line: 0600 on the host, redacted in
 * every message): every key when the whole map is one secret Output. Plain `[]` when nothing in it is an Output.
 */
function secretKeysOf(sysctls: unknown): string[] | pulumi.Output<string[]> {
  if (isPlain(sysctls) || typeof sysctls !== "object" || sysctls === null) return [];
  if (pulumi.Output.isInstance(sysctls) || sysctls instanceof Promise) {
    const whole = pulumi.output(sysctls as pulumi.Input<unknown>);
    return pulumi.all([whole, pulumi.isSecret(whole)]).apply(([o, s]) => (s && typeof o === "object" && o !== null ? Object.keys(o) : []));
  }
  const entries = Object.entries(sysctls).filter(([, v]) => !isPlain(v));
  return pulumi.all(entries.map(([k, v]) => pulumi.isSecret(pulumi.output(v as pulumi.Input<unknown>)).then((s) => (s ? k : "")))).apply((ks) => ks.filter((k) => k !== ""));
}
function validate(name: string, owner: ReturnType<typeof ownerFor>, v: Record<(typeof ARG_NAMES)[number], unknown> & { secretKeys?: unknown }, extra: Problem[] = [], rolloutLines: string[] = []): Checked {
  const problems = commonProblems({ become: v.become, booleans: { persist: v.persist, restoreOnDelete: v.restoreOnDelete } });
  problems.push(...extra);
  const sysctls = v.sysctls ?? {};
  // the resource's own keys override every profile: profiles that disagree only on them are no conflict
  const resolved = resolveProfiles(v.profile, v.profiles, typeof sysctls === "object" && sysctls !== null && !Array.isArray(sysctls) ? Object.keys(sysctls) : []);
  problems.push(...resolved.problems);
  if (typeof sysctls !== "object" || Array.isArray(sysctls)) problems.push(problemAt("sysctls", `sysctls must be a map of sysctl key to value, e.g. { "net.core.somaxconn": 4096 }`));
  const gate = verifyPlan(v.verify, { kind: "sysctl" });
  problems.push(...problemsAt("verify", gate.problems));
  const confirm = confirmPlan(v.confirm, { kind: "sysctl", verify: v.verify, connection: v.connection });
  problems.push(...problemsAt("confirm", confirm.problems));
  const ack = v.acknowledge ?? [];
  const ackOk = Array.isArray(ack) && ack.every((k) => typeof k === "string");
  let plan: SysctlPlan | undefined;
  problems.push(
    ...problemsOf(() => {
      plan = planSysctls({
        owner,
        name,
        sysctls: typeof sysctls === "object" && !Array.isArray(sysctls) ? (sysctls as Record<string, unknown>) : {},
        profile: resolved.profile,
        profileRefused: resolved.problems.length > 0,
        fileName: v.fileName as string | undefined,
        persist: v.persist === true || v.persist === false ? v.persist : undefined,
        bootOverride: v.bootOverride as BootOverride | undefined,
        acknowledge: ackOk ? (ack as string[]) : undefined,
        adopt: v.adopt,
        secretKeys: Array.isArray(v.secretKeys) ? (v.secretKeys as string[]) : [],
        verifyLines: [...gate.lines, ...confirm.lines, ...rolloutLines],
      });
    }),
  );

  if (!ackOk) problems.push(problemAt("acknowledge", `acknowledge must be a list of sysctl keys, e.g. ["net.ipv4.tcp_fin_timeout"]`));
  // A misspelt key (net.core.somaxcon) is refused by the host preflight, so here too (issue #32 item 11): the advice
  // becomes an error unless the key is in `acknowledge` (then it is in plan.acknowledged, not in plan.warnings).
  if (plan) {
    problems.push(...plan.misspelt.map((a) => problemAt(sysctlPath(a.key), a.text)));
  } else if (typeof sysctls === "object" && !Array.isArray(sysctls)) {
    // the plan failed for other reasons: its misspelt keys join the list (one error lists every problem)
    problems.push(...misspeltKeyProblems(sysctls as Record<string, unknown>, ackOk ? (ack as string[]) : []));
  }
  // (claimed only by a resource whose plan is valid: a refused one claims nothing)
  problems.push(
    ...claimOnHost(
      problems.length === 0 && plan !== undefined,
      v.connection,
      () => Object.keys(plan!.values),
      `NetTuning "${name}"`,
      (key, other, otherKey, host) =>
        problemAt(sysctlPath(key), key === SOCK_FLOW_KEY && other.startsWith("NicQueues")
          ? `${key} is also set by ${other} (its rps.sockFlowEntries) on the same host (${host}): the key is host-wide; set it in only one resource (remove it here or drop rps.sockFlowEntries from ${other})`
          : otherKey !== key
            ? `${key} is the kernel variable ${other} sets as ${otherKey} on the same host (${host}): two names of one variable are one key, which belongs to one NetTuning per host; set it in only one of them (as ${variableOf(key)})`
            : `${key} is also set by ${other} on the same host (${host}): a key belongs to one NetTuning per host; set it in only one of them`),
      variableOf,
    ),
  );
  if (problems.length > 0 || !plan) throw inputError(`NetTuning "${name}"`, problems);
  // planSysctls reconciled the advice with the profile and `acknowledge` (and shows what was acknowledged).
  return plan;
}

/**
 * Sysctls on one host, validated at preview, applied all-or-nothing over SSH, persisted in /etc/sysctl.d and
 * rolled back to their original values (kept in Pulumi state) when the resource is deleted.
 */
export class NetTuning extends pulumi.ComponentResource {
  /** key → value read back from the host after the change. */
  public readonly applied!: pulumi.Output<Record<string, string>>;
  /** key → value before this resource first changed it (the rollback data). */
  public readonly previous!: pulumi.Output<Record<string, string>>;
  /** The sysctl.d file written, or undefined when `persist` is false. */
  public readonly filePath!: pulumi.Output<string | undefined>;
  /** Advice from validation and from the host's preflight. */
  public readonly warnings: pulumi.Output<string[]>;
  /** The exact sysctl.d content rendered for review (also when `persist` is false). */
  public readonly fileContent!: pulumi.Output<string>;
  /** Advisory warnings not logged: for keys in `acknowledge`, or chosen by the profile (each says which). */
  public readonly acknowledged!: pulumi.Output<string[]>;
  /** key → value on the host now, read during this preview or update (empty when the host was not read). */
  public readonly live!: pulumi.Output<Record<string, string>>;
  /** key (or managed file) → `<last applied> → <on the host now>`: what changed on the host since this resource last applied it. */
  public readonly drift!: pulumi.Output<Record<string, string>>;
  /**
   * `user@host:port` of `connection` (user defaults to root, port to 22), not secret: `pulumi stack export` without
   * `--show-secrets` names the host this resource tunes (the children's `connection` is stored as a secret). Undefined
   * when the host is a secret (or the whole connection is one secret Output).
   */
  public readonly endpoint!: pulumi.Output<string | undefined>;
  /**
   * The OpenSSH fingerprint (`SHA256:…`, as `ssh-keygen -lf` prints it) of the key the host (not a proxy) presented
   * to this run's live read, verified or not (docs/operations.md, "Host keys"); not secret, recorded in state. Undefined when the host was not read up to its key exchange (live previews off, the
   * connection not known yet, the host not answering).
   */
  public readonly hostKeyFingerprint!: pulumi.Output<string | undefined>;
  /** The verify gate's readings (before, right after the change, after the soak) and verdict in the last apply; undefined without `verify`. */
  public readonly verification!: pulumi.Output<Verification | undefined>;
  /**
   * What happened on the host in the last run: `"applied"`; inside a rollout (created with the `ctx.opts` of
   * `rollout`) also `"refused"` (the host's checks refused it, nothing changed), `"failed"` (rolled back), `"rolledBack"`
   * (by the verify gate) or `"unconfirmed"` (the host reverted it: its confirm did not arrive). Outside a rollout a
   * failure fails the resource instead. Not stored in state (the -apply child's report holds it).
   */
  public readonly status!: pulumi.Output<string>;

  constructor(name: string, args: NetTuningArgs, opts?: pulumi.ComponentResourceOptions) {
    // Args are deliberately not passed to super(): connection may hold secrets and component args are stored in state.
    super(KINDS.sysctl.type, name, {}, opts);
    const owner = ownerFor(name);
    const a = (args ?? {}) as NetTuningArgs;
    // the keys whose values are Pulumi secrets (one Output for them all; none, plainly, for plain sysctls)
    const values = [a.sysctls, a.profile, a.profiles, a.fileName, a.persist, a.restoreOnDelete, a.become, a.bootOverride, a.acknowledge, a.adopt, a.verify, a.confirm, secretKeysOf(a.sysctls)] as const;
    const named = (v: readonly unknown[]) => {
      const [sysctls, profile, profiles, fileName, persist, restoreOnDelete, become, bootOverride, acknowledge, adopt, verify, confirm, secretKeys] = v;
      return { connection: a.connection, sysctls, profile, profiles, fileName, persist, restoreOnDelete, become, bootOverride, acknowledge, adopt, verify, confirm, secretKeys };
    };
    // adopted files' bytes stay in Pulumi state while the -restore stdin stays within 8 KiB (fitAdopted); the others
    // are put back from the host's journal only, and a warning names them
    const restoreText = (r: HostReport, filePath: string, restore: boolean, stdinOf: (plan: string) => string) => {
      const head = renderSysctlRestoreStdin(owner, filePath, r.previous, restore);
      const gzip = hostCompresses(r); // as the -restore stdin (applyAndRestore)
      const fit = fitAdopted(adoptedFromReport(r.extra), (files) => stdinOf(head + renderAdoptedRestore(files, gzip)));
      for (const f of fit.left) {
        void pulumi.log.warn(
          `NetTuning "${name}": the adopted ${f.path} (${f.size} bytes) is kept only in the host's journal (${KINDS.sysctl.journalDir}/${owner.id}.adopted/), ` +
            `not in Pulumi state: with its bytes the -restore input would exceed ${STRING_INPUT_MAX} bytes. Its rollback depends on this host keeping that journal: keep a copy of the file elsewhere, or adopt fewer or smaller files`,
          this,
        );
      }
      return head + renderAdoptedRestore(fit.files, gzip);
    };
    const t = tuneHost<SysctlPlan>(this, name, owner, a, opts, {
      kind: "sysctl",
      allArgs: ALL_ARGS,
      values: [...values],
      validate: (v, extra, rollout) => validate(name, owner, named(v), extra, rollout?.lines),
      // what adoption takes over, as a diagnostic of the preview (the plan's @adopt lines say it in the diff)
      logPlan: (p) => {
        if (!p.adopt.length) return;
        void pulumi.log.info(
          `NetTuning "${name}" adopts ${p.adopt.join(", ")}: saved byte for byte (up to 4 KiB also in Pulumi state), then removed` +
            ` (sysctl.conf: its lines for the declared keys commented out); delete puts ${p.adopt.length === 1 ? "it" : "them"} back and applies ${p.adopt.length === 1 ? "its" : "their"} values again`,
          this,
        );
      },
      liveRead: (p, known) => {
        // the boot-order check the preflight runs, at preview (the read's nts_live_boot)
        const bootOf = (x: SysctlPlan): LiveBootPlan => ({ check: x.bootCheck, file: x.filePath, label: owner.label, adopt: x.adopt, modules: x.modules });
        return { settings: p.values, options: { secretKeys: known?.secretKeys, boot: pulumi.Output.isInstance(p) ? p.apply(bootOf) : bootOf(p) } };
      },
      restore: { target: (p) => p.filePath, text: restoreText },
      planOf: planValues,
      // a plan not known yet (a preview) counts as secret: nothing of a preview is stored
      secret: (known) => (known ? known.secretKeys.length > 0 : true),
    });
    this.warnings = t.warnings;
    // registered: plain for plain arguments, else from the validation's outcome (see registeredOfPlan)
    const filePath = registeredOfPlan(t.checked, (p) => (p.persist ? p.filePath : undefined), undefined);
    // planSysctls reconciled the advice with the profile and `acknowledge` (and shows what was acknowledged)
    const acknowledged = registeredOfPlan(t.checked, (p) => p.acknowledged, []);
    // fileContent repeats the -apply child's stdin: a property of the program, not a copy in state (see tuneHost); the
    // file holds the values: a secret when one of them is
    lazyOutput(this, "fileContent", () => outputOfPlan(t.checked, (p) => (p.secretKeys.length ? pulumi.secret(p.fileContent) : pulumi.output(p.fileContent))));
    lazyOutput(this, "filePath", () => pulumi.output(filePath));
    lazyOutput(this, "acknowledged", () => pulumi.output(acknowledged));
    const { endpoint, live, drift, hostKeyFingerprint } = t.registered;
    this.registerOutputs({ endpoint, filePath, warnings: this.warnings, acknowledged, live, drift, hostKeyFingerprint });
  }
}
