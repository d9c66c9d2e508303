/**
 * The one wiring of both resource kinds (issue #31: one generic base with kind hooks): validation, the plan, the live
 * read, the children and their delivery (common.ts applyAndRestore), drift and the report, and the outputs every
 * resource has. NetTuning and NicQueues call {@link tuneHost} from their constructors with their kind's hooks
 * ({@link KindHooks}) and add only their own outputs. (A function, not a base class: @pulumi/pulumi's schema analyzer,
 * which scripts/gen-schema.ts runs for other languages, takes a class as a component only when it extends
 * ComponentResource itself, and reads only the class's own members as outputs.)
 */
import * as pulumi from "@pulumi/pulumi";
import type { Problem } from "../provider/errors";
import type { HostKind } from "../provider/kinds";
import type { Owner } from "../provider/owner";
import type { HostReport } from "../provider/report";
import type { Verification } from "../provider/counters/gate";
import { adviceLabel, resourceClass } from "./advice";
import {
  applyAndRestore,
  becomeAndRestore,
  checkArgs,
  type CheckedArgs,
  type ConnectionInput,
  lazyOutput,
  NOT_WIRED,
  outputsOfEveryResource,
  refusalGate,
  warnAll,
  whenValid,
  wiredOutputs,
} from "./common";
import { confirmMayRun } from "./confirm";
import { liveReadIfOn, type LivePlan } from "./live";
import { joinRollout, type RolloutMember, statusOf } from "./rollout";
import { verificationOf } from "./verify";

/** What the wiring needs of every kind's plan. */
export interface KindPlan {
  /** The plan's text, sent as the apply's stdin (its end line added on the way: programs.ts engineStdin). */
  stdin: string;
  /** Advice from validation, logged once and part of the `warnings` output. */
  warnings: string[];
}

/** A kind's part of the wiring. `P`: its plan. */
export interface KindHooks<P extends KindPlan> {
  kind: HostKind;
  /** Every argument name the resource takes (another name is refused, naming the closest). */
  allArgs: readonly string[];
  /** The argument values validated together (plain, or Outputs resolved in one: common.ts checkArgs). */
  values: unknown[];
  /** The plan of `values`, or an InputError listing every problem (with `extra`: the connection's and the names'). */
  validate(values: unknown[], extra: Problem[], rollout: RolloutMember | undefined): P;
  /** What else a plan says once at preview, besides its warnings (adoption). */
  logPlan?(plan: P, values: unknown[]): void;
  /** The live read's settings (key → declared value) and options of a plan; `known`: the plan once its values are known. */
  liveRead(
    plan: P & pulumi.Output<P>,
    known: P | undefined,
  ): { settings: Record<string, string> | pulumi.Output<Record<string, string>>; options: Omit<LivePlan, "plan" | "after"> };
  /**
   * The -restore child's plan from the apply's report: `target` is where the plan applies (the file, the
   * interface), `restore` whether the originals are put back (restoreOnDelete); `stdinOf` gives the exact stdin a plan
   * becomes (to measure it).
   */
  restore: { target(plan: P): string; text(r: HostReport, target: string, restore: boolean, stdinOf: (plan: string) => string): string };
  /** The keys and values of a plan's text, to complete the report with (a kind whose report leaves them out). */
  planOf?: (plan: string) => { keys: string[]; values: Record<string, string> };
  /** Whether the children's stdout holds secret values (a plan not known yet counts as secret). Default: never. */
  secret?(known: P | undefined): boolean;
  /** Whether `verification` is NicQueues' (its readings per interface). */
  nicVerification?: boolean;
}

/** What {@link tuneHost} gives the resource for its own outputs. */
export interface Tuned<P> {
  /** The apply's report (an empty one during a preview and for an invalid deferred plan). */
  report: pulumi.Output<HostReport>;
  /** The validated arguments: `early` (a plain plan) or `deferred`. */
  checked: CheckedArgs<P>;
  /** Advice from validation and from the host's preflight. */
  warnings: pulumi.Output<string[]>;
  /** The outputs every resource registers, as registered (plain where the arguments were plain). */
  registered: { endpoint: pulumi.Input<string | undefined>; live: pulumi.Input<Record<string, string>>; drift: pulumi.Input<Record<string, string>>; hostKeyFingerprint: pulumi.Input<string | undefined> };
}

/**
 * Wires one resource of a kind: validates its arguments (every problem in one error, before anything reaches a host),
 * logs the plan, reads the host live when on, registers the children, and defines the outputs every resource has
 * (`applied`, `previous`, `verification`, `status` as Outputs made when read; `live`, `drift`, `hostKeyFingerprint`,
 * `endpoint` too, and returned as registered, with `warnings`). `owner`: the resource's (ownerFor), which the kind's
 * hooks use too.
 */
export function tuneHost<P extends KindPlan>(
  resource: pulumi.ComponentResource,
  name: string,
  owner: Owner,
  a: { connection: ConnectionInput; livePreview?: pulumi.Input<boolean>; become?: unknown; restoreOnDelete?: unknown; confirm?: unknown },
  opts: pulumi.ComponentResourceOptions | undefined,
  hooks: KindHooks<P>,
): Tuned<P> {
  const label = `${resourceClass(hooks.kind)} "${name}"`;
  const rollout = joinRollout(resource, opts);
  const logPlan = (p: P, v: unknown[]) => {
    warnAll(resource, adviceLabel(hooks.kind, name, a.connection), p.warnings);
    hooks.logPlan?.(p, v);
  };
  // Plain arguments (`early`): validated now, in the program, with every problem listed (nothing reaches a host), and
  // the children get plain values, not Outputs of them: the same registered inputs, fewer Output chains per resource
  // (each costs some 20 to 60 promises; 1,000 hosts show them). Values known only later are validated in one Output,
  // once, and the children are registered only once it is valid (an invalid one is one error: checkArgs).
  const checked = checkArgs(resource, name, label, a, hooks.allArgs, hooks.values, (v, extra) => hooks.validate(v, extra, rollout), logPlan);
  const early = checked.early;
  const { become, restoreOnDelete } = becomeAndRestore(a);
  const wired = whenValid(checked, (plan, known) => {
    const p = plan as P & pulumi.Output<P>; // a value (early) or the Output (its properties lifted)
    const read = hooks.liveRead(p, known);
    const live = liveReadIfOn(resource, label, hooks.kind, owner.id, a.connection, read.settings, a.livePreview, { ...read.options, plan: p.stdin, after: rollout?.passed });
    const report = applyAndRestore(
      resource,
      name,
      hooks.kind,
      {
        connection: a.connection,
        become,
        planOf: hooks.planOf,
        validated: early !== undefined,
        secret: hooks.secret?.(known),
        confirm: confirmMayRun(hooks.kind, a),
        rollout,
      },
      p.stdin,
      (r, stdinOf) =>
        early && typeof restoreOnDelete === "boolean"
          ? hooks.restore.text(r, hooks.restore.target(early), restoreOnDelete, stdinOf)
          : pulumi.all([p.apply((x) => hooks.restore.target(x)), restoreOnDelete]).apply(([target, restore]) => hooks.restore.text(r, target, restore, stdinOf)),
      owner,
      live,
    );
    return { report, live };
  }, NOT_WIRED);
  const { report, liveValue, driftValue, hostKeyValue } = wiredOutputs(wired);
  // registered: from the validation's outcome (never rejecting), not from the plan (see checkArgs)
  const d = checked.deferred;
  const warnings = early
    ? report.apply((r) => [...early.warnings, ...r.warnings])
    : pulumi.all([d!.outcome, report]).apply(([o, r]) => [...(o.plan?.warnings ?? []), ...r.warnings]);
  // Registered (stored in the component's state): only what no child stores, as plain values where the arguments
  // were plain (they serialize as the Outputs would: known, not secret, no dependencies). applied and previous repeat
  // the -apply child's report (previous also the -restore stdin): they stay properties of the program (and outputs
  // for other languages), not copies in Pulumi state. Each is an Output made on its first read (lazyOutput).
  lazyOutput(resource, "applied", refusalGate(resource, () => report.applied));
  lazyOutput(resource, "previous", () => report.previous);
  lazyOutput(resource, "verification", () => report.apply((r): Verification | undefined => verificationOf(r, hooks.nicVerification === true)));
  lazyOutput(resource, "status", () => statusOf(rollout, report));
  const endpoint = outputsOfEveryResource(resource, a.connection, liveValue, driftValue, hostKeyValue);
  return { report, checked, warnings, registered: { endpoint, live: liveValue, drift: driftValue, hostKeyFingerprint: hostKeyValue } };
}
