import * as pulumi from "@pulumi/pulumi";
import type { Problem } from "../provider/errors";
import { engine } from "../provider/host/engine";
import { Become, confirmCommand, engineCommand, engineStdin, HostKind, restoreCommand, restoreStdin } from "../provider/host/programs";
import { confirmOf, utc } from "../provider/confirm";
import { engineDelivery, MOVE_KEYS } from "./delivery";
import { ConnectionInput, registeredConnection, RemoteCommand } from "./remote";
import { adviceLabel, adviseAll, resourceClass } from "./advice";
import { isPlain } from "./plain";
import { Owner, ownerOf } from "../provider/owner";
import { completeReport, hostCompresses, HostReport, parseReport } from "../provider/report";
import { InputError } from "../provider/errors";
import { becomeOf, connectionProblems, inputError, unknownArgProblems } from "./validation";
import { liveOutputs, livePreviewProblem, type LiveOutcome } from "./live";
import { NO_TOKEN } from "../provider/live/read";
import type { HostStatus, RolloutMember, RolloutResult } from "./rollout";
import { createHash } from "crypto";

/** `connection` exactly as @pulumi/command takes it (bastion/proxy included). */
export type { ConnectionInput } from "./remote";
export { isPlain };

export function ownerFor(name: string): Owner {
  return ownerOf(pulumi.getProject(), pulumi.getStack(), name);
}

/**
 * A change of the address (host, port, user, proxy) replaces both children (a change of `connection`: MOVE_KEYS in
 * delivery.ts, where a new key's replacement is explained too), create-before-delete: the new `-apply`
 * runs first (after the engine delivery of the new address; its create starts a new generation on the machine it
 * reaches), then the old `-restore` runs its stored delete, which does nothing on a machine a newer generation took
 * over and restores a machine that is really another one. No deleteBeforeReplace (see ARCHITECTURE.md, "Moves").
 */
export { MOVE_KEYS };
function childOptions(parent: pulumi.Resource, extra?: pulumi.CustomResourceOptions): pulumi.CustomResourceOptions {
  return { parent, replaceOnChanges: MOVE_KEYS, ...extra };
}

/**
 * The report of the apply child, or an empty one during preview (stdout unknown or empty). `child`: the -apply
 * child's name, for the error. An apply that ran (not a preview) and printed nothing exited 0 without its report: an
 * engine damaged on the host (truncated), never a success. It fails here, so the -restore child keeps the originals
 * it stored (its stdin is never computed from an empty report).
 */
export function reportOf(stdout: string | undefined, child = "-apply", dryRun = pulumi.runtime.isDryRun()): HostReport {
  if (stdout === undefined || (stdout === "" && dryRun)) return { applied: {}, previous: {}, warnings: [], extra: {} };
  if (stdout === "") {
    throw new Error(
      `pulumi-net-tuning: ${child} exited 0 but printed no report, so nothing was recorded: the engine installed on the host ` +
        `(/usr/local/lib/pulumi-net-tuning/engine-<sha256>.sh, named by the @engine line of its stdin) is probably damaged. ` +
        `Remove that file on the host, then run \`pulumi up --replace <URN of ${child}>\` (\`pulumi stack --show-urns\` lists it): ` +
        `its create installs the engine again and records the report`,
    );
  }
  return parseReport(stdout);
}

/**
 * The restore plan with the generation of the apply it belongs to (`@generation G` from the report's `generation`
 * line): a restore on a machine that a newer apply of this resource took over (a move to another address of the
 * same machine) then changes nothing. Without a generation (a 0.1.0 report, a preview) the plan is unchanged.
 */
export function withGeneration(plan: string, r: HostReport): string {
  const g = r.extra.generation;
  if (!g || !/^[A-Za-z0-9-]+$/.test(g)) return plan;
  return `${plan.endsWith("\n") ? plan : `${plan}\n`}@generation ${g}\n`;
}

/**
 * Logs each warning during preview and update, once per program run however many resources give it
 * (components/advice.ts: one line naming the resources; on the resource itself when it is the only one).
 */
export function warnAll(resource: pulumi.Resource, label: string, warnings: string[]): void {
  adviseAll(resource, label, warnings);
}

/**
 * `o.apply(f)` for an `f` that returns a value or an Output of one: the SDK flattens either at run time, its types
 * take only one or the other.
 */
function applyInput<T, U>(o: pulumi.Output<T>, f: (t: T) => U | pulumi.Output<U>): pulumi.Output<U> {
  return o.apply(f as (t: T) => U);
}

/**
 * Defines `resource[key]` as an Output made on its first read, then kept: for the outputs a component does not register
 * (read by the program, and by other languages through the component provider, which reads each output by name). A
 * program that never reads one builds no Output chain for it (each costs some 20 to 60 promises; 1,000 hosts show them).
 */
export function lazyOutput<T>(resource: object, key: string, make: () => pulumi.Output<T>): void {
  let made: pulumi.Output<T> | undefined;
  Object.defineProperty(resource, key, { enumerable: true, configurable: true, get: () => (made ??= make()) });
}


/**
 * The `endpoint` output of both components (issue #33): `user@host:port` of the connection (defaults `root`, `22`), not
 * secret, so `pulumi stack export` without `--show-secrets` names the host a resource tunes (the children's
 * `connection` is a secret as a whole). Undefined when the host was given as a secret (or the whole connection is a
 * secret Output: its host cannot be told apart then). A plain string for a plain connection (no Output to register).
 */
export function endpointOf(connection: ConnectionInput): pulumi.Input<string | undefined> {
  const text = (h: unknown, p: unknown, u: unknown) => (typeof h === "string" && h !== "" ? `${typeof u === "string" && u !== "" ? u : "root"}@${h}:${p ?? 22}` : undefined);
  const c = connection as { host?: unknown; port?: unknown; user?: unknown } | undefined;
  if (typeof c !== "object" || c === null) return undefined;
  if (!pulumi.Output.isInstance(c) && isPlain([c.host, c.port, c.user])) return text(c.host, c.port, c.user);
  // the host's own secretness decides (a secret key elsewhere in the connection does not hide the address)
  type Parts = { host?: unknown; port?: unknown; user?: unknown };
  const whole = pulumi.Output.isInstance(c) ? (c as pulumi.Output<Parts | undefined>) : undefined;
  const hostOrAll: pulumi.Output<unknown> = whole ?? pulumi.output(c.host as pulumi.Input<unknown>);
  const value: pulumi.Output<string | undefined> = whole
    ? whole.apply((x) => text(x?.host, x?.port, x?.user))
    : pulumi.all([c.host, c.port, c.user] as pulumi.Input<unknown>[]).apply(([h, p, u]) => text(h, p, u));
  return applyInput(pulumi.output(pulumi.isSecret(hostOrAll)), (secret) => (secret ? undefined : pulumi.unsecret(value)));
}

/**
 * `value` mapped by `plain` when it holds no Output or Promise at any depth (it is then known, not secret and depends on
 * no resource, so a plain input of a child registers exactly what an Output of it would), else `generic()`. Keeps the
 * Output chains per resource few when the arguments are plain values (the common program; 1,000 hosts show them).
 */
function plainOr<T, G, P = T>(value: T, generic: () => G, plain?: (v: pulumi.Unwrap<T>) => P): G | P {
  if (!isPlain(value)) return generic();
  return plain ? plain(value as pulumi.Unwrap<T>) : (value as unknown as P);
}

/** How a resource's children are wired: see {@link applyAndRestore}. */
interface ChildArgs {
  connection: ConnectionInput;
  become?: pulumi.Input<"sudo">;
  planOf?: (plan: string) => { keys: string[]; values: Record<string, string> };
  validated?: boolean;
  /**
   * The plan carries secret values (`@secret` lines: a key the catalogue marks secret, a value given as a Pulumi
   * secret), or is not known yet: the -apply stdin is registered as a secret and its stdout and stderr (the report
   * prints the values read back and the originals) as additional secret outputs, so the -restore stdin made from the
   * report is one too.
   */
  secret?: boolean;
  /**
   * An apply may wait for a confirm (`confirm`, or NicQueues' default: provider/confirm.ts): the `-restore` child's
   * create is wired to the report's `confirm` line (confirmOf$). It runs only after an apply whose report says a revert is armed.
   */
  confirm?: boolean;
  /**
   * The resource is part of a rollout (components/rollout.ts): its engine delivery waits for the previous wave's budget
   * check, a confirm the host answers "reverted" reports the status `unconfirmed` instead of failing, and the
   * resource's result (status, stamp, reason) is handed to the rollout.
   */
  rollout?: RolloutMember;
}
/** `value` as a secret when `secret` is true (a plain value stays plain otherwise: no Output). */
function secretIf(secret: boolean | undefined, value: string | pulumi.Output<string>): string | pulumi.Output<string> {
  return secret ? pulumi.secret(value) : value;
}

/**
 * The restore plan from the apply's report; `stdinOf` gives the -restore stdin a plan becomes (to measure it: exact as
 * root; with become "sudo" without the sudo line before it).
 */
type RestorePlan = (report: HostReport, stdinOf: (plan: string) => string) => pulumi.Input<string>;

/**
 * The two children of every resource, and the engine delivery they use (see ARCHITECTURE.md):
 * - the delivery (components/delivery.ts): a stack-level CopyToRemote of the engine file (a FileAsset: state keeps
 *   only its path and hash) to a staging path, shared by the resources of the stack on one address; copied again only
 *   when the engine's hash changes (a package upgrade) or the address changes.
 * - `<name>-apply`: runs the installed engine (installing the staged copy first when needed) with the plan on stdin;
 *   `create` and `update` differ only in apply-create / apply-update.
 * - `<name>-restore`: only a `delete`, whose stdin (stored in state) carries the `@engine` line of the apply, the
 *   originals from the apply report and a fallback restore program: the installed engine restores when it is there,
 *   else the fallback, so rollback needs neither the host's journal nor the installed engine.
 * `planOf` (a kind whose plan the component reads: its keys in order and values) completes the report: the host
 * leaves out applied values equal to the plan's and may list the originals of the plan's keys as values only. `validated`: whether the
 * plan was validated at construction (else the delivery waits for it); `applyPlan` is then the plan's text. Returns
 * the parsed apply report (empty during preview).
 */
export function applyAndRestore(
  parent: pulumi.ComponentResource,
  name: string,
  kind: HostKind,
  args: ChildArgs,
  applyPlan: pulumi.Input<string>,
  /** The restore plan from the apply's report; `stdinOf` gives the exact -restore stdin a plan becomes (to measure it). */
  restorePlan: RestorePlan,
  owner: Owner = ownerFor(name),
  live?: Promise<{ token: string; keepStoredToken: boolean; refused?: Problem[] }>,
): pulumi.Output<HostReport> {
  if (!live) return registerChildren(parent, name, kind, args, applyPlan, restorePlan, owner);
  // Live previews (components/live.ts): the children are registered once the host read settled (bounded), the -apply
  // child with the repair token in its update; when the host could not be read, changes of `update` are ignored (the
  // stored token stays), so an unreadable host never shows a change by itself. When the read found what the host's
  // preflight refuses (a key this kernel does not have), nothing is registered and the resource fails with that
  // message, once (issue #32 item 11c): the preview fails as `up` would. So does a refused host key (issue #32: a key
  // other than `connection.hostKey`, or than known_hosts lists): nothing is sent to that host.
  return pulumi.output(
    live.then((l) => {
      if (!l.refused?.length) return registerChildren(parent, name, kind, args, applyPlan, restorePlan, owner, l);
      const error = inputError(`${resourceClass(kind)} "${name}"`, l.refused);
      // Inside a rollout the host's refusal is a status, not a failure of the whole program: the preview warns, and
      // `up` runs the apply, whose preflight refuses it (nothing changed) and reports "refused" to the budget check.
      if (args.rollout) {
        void pulumi.log.warn(`${error.message}\n(inside a rollout: the host will refuse this change and count as "refused")`, parent);
        return registerChildren(parent, name, kind, args, applyPlan, restorePlan, owner, l);
      }
      reportOnce(parent, name, error);
      return EMPTY_REPORT;
    }),
  );
}

/** The children of {@link applyAndRestore}, registered now; `live`: the settled live read (its repair token). */
function registerChildren(
  parent: pulumi.ComponentResource,
  name: string,
  kind: HostKind,
  args: ChildArgs,
  applyPlan: pulumi.Input<string>,
  restorePlan: RestorePlan,
  owner: Owner,
  live?: { token: string; keepStoredToken: boolean },
): pulumi.Output<HostReport> {
  // Plain values stay plain (see plainOr): each Output in the pulumi.all below costs two more, at 1,000 hosts.
  const become = plainOr(args.become, () => pulumi.output(args.become));
  // staged in the SSH user's home unless that is root (the user name is no secret: unsecret it, or the staging path
  // would be stored encrypted); plain when the user is, whatever the other fields (a privateKey from secret config is
  // an Output)
  const c = args.connection as { user?: unknown } | undefined;
  const user =
    typeof c === "object" && c !== null && !pulumi.Output.isInstance(c) && (c.user === undefined || typeof c.user === "string")
      ? ((c.user as string | undefined) ?? "root")
      : pulumi.unsecret(pulumi.output(args.connection).apply((x) => x.user ?? "root"));
  // (root stages under /var/lib/pulumi-net-tuning whatever `become` says: it may write there, and the resources of one
  // address then share one staged copy whatever their `become`)
  const home = plainOr(user, () => pulumi.output(user).apply((u) => u !== "root"), (u) => u !== "root");
  const e = engine();
  // the connection as the children register it, made once for the resource's children (and its delivery)
  const connection = registeredConnection(args.connection);
  const delivery = engineDelivery(parent, owner, args.connection, connection, home, args.validated ? undefined : pulumi.output(applyPlan), args.rollout?.after);
  const becomeAndHome: ["sudo" | undefined, boolean] | pulumi.Output<["sudo" | undefined, boolean]> = plainOr([become, home] as const, () => pulumi.all([become, home]), ([b, h]) => [b, h]);
  const commandOf = <T>(f: (b: "sudo" | undefined, h: boolean) => T): T | pulumi.Output<T> =>
    pulumi.Output.isInstance(becomeAndHome) ? becomeAndHome.apply(([b, h]) => f(b, h)) : f(becomeAndHome[0], becomeAndHome[1]);
  // (with become "sudo" the stdin carries the way to root: engineStdin)
  const applyStdin: string | pulumi.Output<string> =
    typeof applyPlan === "string" ? commandOf((b) => engineStdin(applyPlan, e, b)) : pulumi.all([applyPlan, becomeAndHome]).apply(([p, [b]]) => engineStdin(p, e, b));
  const makeApply = (token?: string, ignoreUpdate = false) =>
    new RemoteCommand(
      `${name}-apply`,
      {
        connection,
        // the token in both: a create records it, and the next preview proposes it again (no change)
        create: commandOf((b, h) => engineCommand(kind, "create", delivery.token, b, h, token)),
        update: commandOf((b, h) => engineCommand(kind, "update", delivery.token, b, h, token)),
        // a plain string when the plan was rendered at construction (plain arguments) and `become` is plain: one
        // Output less per resource
        stdin: secretIf(args.secret, applyStdin),
        addPreviousOutputInEnv: false,
        logging: "stderr",
      },
      childOptions(parent, {
        dependsOn: [delivery.resource],
        ...(ignoreUpdate ? { ignoreChanges: ["create", "update"] } : {}),
        ...(args.secret ? { additionalSecretOutputs: ["stdout", "stderr"] } : {}),
      }),
    );
  // One Output for the report (parsed, completed from the plan, its warnings logged): fewer Output chains per
  // resource show at 1,000 hosts. Completed from the plan of the run that printed it (the child's stdin output, which
  // belongs to its stdout even when a `pulumi up --target` leaves the child as it was), never from this run's plan.
  // Nested applies, not pulumi.all (a third of its promises); the stdin only for a kind whose plan completes it.
  const complete = (out: string, planText: string | undefined) => {
    const parsed = reportOf(out, `${name}-apply`);
    // a kept report (a failed run inside a rollout prints the last commit's report): completed from its own plan
    const r = completeReport(parsed, parsed.reportPlan ?? (args.planOf && out ? args.planOf(planText ?? "") : undefined));
    warnAll(parent, adviceLabel(kind, name, args.connection), r.warnings);
    return r;
  };
  const reportOfApply = (a: RemoteCommand): pulumi.Output<HostReport> =>
    applyInput(a.stdout, (out) => (args.planOf && out ? a.stdin.apply((planText) => complete(out, planText)) : complete(out, undefined)));
  const apply = live ? makeApply(live.token, live.keepStoredToken) : makeApply();
  const report = reportOfApply(apply);
  const confirm = args.confirm ? confirmOf$(parent, name, kind, owner, report, commandOf, e, args.rollout !== undefined) : undefined;
  const restore = new RemoteCommand(
    `${name}-restore`,
    {
      connection,
      // the confirm of an apply that armed a revert (issue #34): see confirmOf$
      ...(confirm ? { create: confirm.create, addPreviousOutputInEnv: confirm.noEnv } : {}),
      delete: commandOf((b, h) => restoreCommand(delivery.token, b, h)),
      stdin: applyInput(report, (r) => {
        // (with become "sudo" its first line is the way to root: restoreStdin; the plan is measured without it, a
        // fixed part that moved there from the command, so that as much of the adopted files stays in state as before)
        const stdinOf = (p: string, b?: Become) => restoreStdin(kind, withGeneration(p, r), hostCompresses(r), e, b);
        const plan = restorePlan(r, stdinOf);
        const of = (b: Become): string | pulumi.Output<string> => (typeof plan === "string" ? stdinOf(plan, b) : pulumi.output(plan).apply((p) => stdinOf(p, b)));
        // (an Output that an apply returns is flattened: Output<Output<string>> is an Output<string>)
        return commandOf(of) as string | pulumi.Output<string>;
      }),
      // (no addPreviousOutputInEnv: a command with only a delete has no previous output to add)
      logging: "stderr",
    },
    childOptions(parent, { dependsOn: [apply] }),
  );
  args.rollout?.settle(rolloutResult(report, apply, restore));
  return report;
}

/**
 * A rollout resource's result for its budget check: the status the host reported (runtime.sh nt_tolerate: `status`
 * after the report; a confirm that found the host reverted: `status unconfirmed` from the -restore child), the first
 * line of the host's message, and a stamp of this run (a digest of both children's output: a host run again changes it).
 */
function rolloutResult(report: pulumi.Output<HostReport>, apply: RemoteCommand, restore: RemoteCommand): pulumi.Output<RolloutResult> {
  return pulumi.all([report, apply.stdout, apply.stderr, restore.stdout, restore.stderr]).apply(([r, out, err, confirmed, confirmErr]) => {
    const unconfirmed = /(^|\n)status\tunconfirmed(\n|$)/.test(confirmed ?? "");
    const status: HostStatus = unconfirmed ? "unconfirmed" : (r.status ?? "applied");
    // the host's message (the confirm's when it found the host reverted): its first problem when it lists some (a
    // preflight refusal), else its first line
    const lines = ((unconfirmed ? confirmErr : err) ?? "").split("\n");
    const problem = lines.find((l) => l.startsWith("  - "));
    const reason = status === "applied" ? "" : (problem ? problem.slice(4) : (lines.find((l) => l.startsWith("net-tuning: ")) ?? lines[0] ?? "").replace(/^net-tuning: /, ""));
    const stamp = createHash("sha256").update(`${out ?? ""}\u0000${confirmed ?? ""}`).digest("hex").slice(0, 12);
    return { status, stamp, reason };
  });
}


/**
 * The confirm (issue #34, "Confirmed apply"): a second SSH session after an apply whose report says a revert is armed
 * (its `confirm` line). It is the `-restore` child's `create`, set only then: the child is created right after
 * `-apply` (it depends on it), and an armed update changes its inputs, so pulumi-command runs `create` (an update
 * without `update`); without a confirm line it has no command and nothing runs, as before. So a confirm costs no child of
 * its own (a Command's connection alone is 1 KB in state, twice): the command (some 300 characters, twice) and its
 * short stdout. The engine's operation `confirm:<owner id>:<token>` commits the files and disarms the revert; an earlier
 * apply's token (a later one took over) confirms nothing and exits 0. When it fails (host unreachable, or reverted), the
 * update fails; the time the host reverts at is logged when the apply's report arrives, before the confirm dials.
 */
function confirmOf$(
  parent: pulumi.ComponentResource,
  name: string,
  kind: HostKind,
  owner: Owner,
  report: pulumi.Output<HostReport>,
  commandOf: <T>(f: (b: "sudo" | undefined, h: boolean) => T) => T | pulumi.Output<T>,
  e: ReturnType<typeof engine>,
  inRollout = false,
): { create: pulumi.Output<string>; noEnv: pulumi.Output<boolean> } {
  const pending = report.apply((r) => confirmOf(r.extra));
  // Said when the apply's report arrives, before the confirm dials: an engine that aborts the update when the confirm
  // fails no longer shows a message logged after that failure (measured under pulumi v3.248.0).
  const resource = resourceClass(kind);
  pending.apply((c) => {
    // (not for a report of an earlier run whose deadline passed: the apply did not run in this update)
    if (c && !pulumi.runtime.isDryRun() && c.deadline * 1000 > Date.now()) {
      void pulumi.log.info(
        `${resource} "${name}": applied, not confirmed yet: its files are written by the confirm (${name}-restore's create, the next step). ` +
          `If it fails: not confirmed: the host reverts at ${utc(c.deadline)} (UTC); a reboot before then boots into the old values, ` +
          `and once the host is back the next preview and up report whether it reverted (a reverted plan is held until it changes)`,
        parent,
      );
    }
  });
  return {
    create: applyInput(pending, (c) => (c ? commandOf((b) => confirmCommand(kind, owner.id, c.token, e, b, inRollout)) : undefined) as string),
    // (the previous stdout in the environment: refused by a default sshd, with a warning)
    noEnv: pending.apply((c) => (c ? false : undefined) as boolean),
  };
}

/**
 * The validation of a resource's arguments, shared by NetTuning and NicQueues (issue #32 item 14: one error per
 * resource). Either `early`, the plan of arguments that are all plain values (validated now: a problem throws here, in
 * the program, before anything is registered), or `deferred`, for arguments known only later (Outputs).
 */
export type CheckedArgs<P> = { early: P; deferred?: undefined } | { early?: undefined; deferred: DeferredPlan<P> };

/**
 * The plan of arguments known only later, validated once. A bad value used to reject the plan's Output, and with it
 * every Output derived from it (the children's inputs, the engine delivery, the registered outputs): each rejected on
 * its own, so one bad value was reported 16 times for a NetTuning (9 for a NicQueues) by jest under the SDK's mocks, and
 * the SDK prefixed the message with each property it was serializing. Now nothing registered depends on a rejecting
 * Output: the children are registered once `go` says the plan is valid (or not known yet, during a preview), and an
 * invalid plan is reported once, by `reportOnce`.
 */
export interface DeferredPlan<P> {
  /**
   * The validation's outcome: the plan, or none when the arguments are invalid; it never rejects for bad input. (The
   * error itself is not part of its value: Outputs derived from it unwrap the value at any depth, and the SDK adds to
   * an error that failed a registration.)
   */
  outcome: pulumi.Output<{ plan?: P }>;
  /**
   * The plan as an Output that rejects when it is invalid, made on the first call: only for what is read on demand
   * (a property the program reads) and for the children, which are registered only when `go` is true.
   */
  plan: () => pulumi.Output<P>;
  /** true once the plan is valid or not known yet (a preview); false when it is invalid (already reported). */
  go: Promise<boolean>;
  /** The plan's value once `go` is true and it is known (undefined in a preview with values not known yet). */
  known: Promise<P | undefined>;
}

/**
 * Validates a resource's arguments: the connection, unknown argument names and livePreview join the plan's problems
 * (one list); `validate(values, extra)` throws an InputError listing every problem or returns the plan, which
 * `logPlan` logs once. See {@link CheckedArgs}.
 */
export function checkArgs<P>(
  parent: pulumi.Resource,
  name: string,
  resource: string,
  a: { connection?: unknown; livePreview?: unknown },
  allArgs: readonly string[],
  values: unknown[],
  validate: (v: unknown[], extra: Problem[]) => P,
  logPlan: (p: P, v: unknown[]) => void,
): CheckedArgs<P> {
  const connProblems = connectionProblems(a.connection);
  // unknown argument names and livePreview's problem join the others: one list (livePreview is not part of the plan)
  const extra = [...connProblems, ...unknownArgProblems(a, allArgs), ...livePreviewProblem(a.livePreview)];
  if (isPlain(values)) {
    const early = validate(values, extra);
    logPlan(early, values);
    return { early };
  }
  // the connection is wired whatever the other values: a bad one is refused here when they are Outputs
  if (connProblems.length > 0) throw inputError(resource, connProblems);
  let error: InputError | undefined;
  const outcome = pulumi.all(values).apply((v): { plan?: P } => {
    try {
      const plan = validate(v, extra);
      logPlan(plan, v);
      return { plan };
    } catch (e) {
      if (!(e instanceof InputError)) throw e; // a bug must not read as bad input
      error = e;
      return {};
    }
  });
  let made: pulumi.Output<P> | undefined;
  const plan = () =>
    (made ??= outcome.apply((o) => {
      if (error) throw error;
      return o.plan as P;
    }));
  const o = outcome as unknown as { isKnown: Promise<boolean>; promise(): Promise<{ plan?: P }> };
  const known = (async () => ((await o.isKnown) ? (await o.promise()).plan : undefined))();
  const go = (async () => {
    if (!(await o.isKnown)) return true; // a preview with values not known yet: the children show what is known
    await known;
    if (!error) return true;
    reportOnce(parent, name, error);
    return false;
  })();
  return { deferred: { outcome, plan, go, known } };
}

/**
 * Whether this process serves the package as a component provider (`node @pulumi/pulumi/cmd/run-plugin <dir>`, as
 * pulumi-language-nodejs starts it for `pulumi package add` and other languages). There an unhandled rejection is
 * answered to every construct call still in flight (the SDK's provider/server.js), so a refusal must fail only its
 * own construct: {@link refusalGate}.
 */
const COMPONENT_PROVIDER = /[\\/]@pulumi[\\/]pulumi[\\/]cmd[\\/]run-plugin(?:[\\/]index\.js)?$/.test(require.main?.filename ?? process.argv[1] ?? "");
/** The refusal of each component refused so far in a component provider (see {@link reportOnce}). */
const refusals = new WeakMap<pulumi.Resource, InputError>();

/**
 * The registration that carries a refusal to the language host: a component whose one input is the rejected error.
 * It never reaches the engine (the SDK fails it while serializing that input), so it registers no outputs either: the
 * ComponentResource's own `registerOutputs` would wait for a URN that never comes, an RPC that never ends (the test
 * harness then waited for it forever; issue #30).
 */
class InvalidArguments extends pulumi.ComponentResource {
  constructor(name: string, failed: Promise<never>, parent: pulumi.Resource) {
    super("net-tuning:index:InvalidArguments", name, { arguments: failed }, { parent });
  }
  protected registerOutputs(): void {
    // (nothing: see the class's comment)
  }
}

/**
 * Fails the program once with `error`, which names the resource and lists its problems:
 * - under a language host (a Node.js program, the test harness): a registration whose one input is the rejected error
 *   (a Promise, not an Output: an Output has promises of its own that each reject). The SDK rejects the registration
 *   before it reaches the engine, so nothing is created; the language host reports the error once (by identity), jest
 *   under the mocks once, and the test harness fails the update with it. The error's `stack` is its message: a refusal
 *   found after the program's main module returned (the live reads settle later) is printed by the Node.js runner's
 *   first handler, which prints `stack` ("error: InputError: …" and the frames) instead of the message (issue #30);
 * - in a component provider: no registration and no rejection left unhandled (the SDK's provider server would answer
 *   it to every construct in flight, so another resource of the program would be reported with this error); the
 *   resource's `applied` output rejects with it ({@link refusalGate}), which fails this resource's construct only,
 *   as an InputPropertiesError (the CLI names the resource and each property).
 */
function reportOnce(parent: pulumi.Resource, name: string, error: InputError): void {
  Object.defineProperty(error, "stack", { value: error.message, writable: true, configurable: true, enumerable: false });
  if (COMPONENT_PROVIDER) {
    refusals.set(parent, error);
    return;
  }
  const failed = Promise.reject(error);
  new InvalidArguments(`${name}-invalid`, failed, parent);
}

/**
 * `make` for an output the component provider returns to the engine (the SDK's construct reads every output of the
 * schema and serializes them one by one): there, a Promise of the Output that rejects with the resource's refusal once
 * its value settled (the report of a refused resource settles after {@link reportOnce}), and is never an unhandled
 * rejection (a handler is attached; the construct awaits it). Under a language host, `make` itself.
 */
export function refusalGate<T>(resource: pulumi.Resource, make: () => pulumi.Output<T>): () => pulumi.Output<T> {
  if (!COMPONENT_PROVIDER) return make;
  return () => {
    const o = make() as pulumi.Output<T> & { promise(withUnknowns?: boolean): Promise<T> };
    const gated = o.promise(true).then(() => {
      const e = refusals.get(resource);
      if (e) throw e;
      return o;
    });
    gated.catch(() => undefined);
    // (a Promise where the type says Output: only the SDK's construct reads it, and it awaits a Promise as its value)
    return gated as unknown as pulumi.Output<T>;
  };
}

/**
 * `f` of a deferred plan, for an output a program reads on demand: under a language host, an Output that rejects with
 * the resource's error when the plan is invalid (a program that reads it fails with that error, as it does anyway); in
 * a component provider, one that never rejects (undefined for an invalid plan): the construct reads every output, and
 * a rejected Output leaves promises of its own unhandled, which the provider server answers to every construct in
 * flight (another resource of the program was reported with this one's error). The refusal fails this resource's own
 * construct through `applied` ({@link refusalGate}).
 */
export function fromPlan<P, T>(d: DeferredPlan<P>, f: (p: P) => T | pulumi.Output<T>): pulumi.Output<T | undefined> {
  if (!COMPONENT_PROVIDER) return applyInput(d.plan(), f);
  return applyInput(d.outcome, (o): T | undefined | pulumi.Output<T | undefined> => (o.plan === undefined ? undefined : f(o.plan)));
}

/**
 * `f` of the validated plan for a registered output, one path for plain and Output arguments: `f(plan)` now for a
 * plain plan (no Output: see checkArgs), else an Output of it once the deferred plan is known; `none` for an invalid
 * deferred plan (never rejecting: the resource fails elsewhere, once).
 */
export function registeredOfPlan<P, T>(checked: CheckedArgs<P>, f: (p: P) => T, none: T): T | pulumi.Output<T> {
  return checked.deferred === undefined ? f(checked.early) : checked.deferred.outcome.apply((o) => (o.plan === undefined ? none : f(o.plan)));
}

/**
 * `f` of the validated plan for a property a program reads: an Output of `f(plan)`, for a deferred plan as
 * {@link fromPlan} gives it (rejecting with the resource's error under a language host).
 */
export function outputOfPlan<P, T>(checked: CheckedArgs<P>, f: (p: P) => pulumi.Output<T>): pulumi.Output<T> {
  return checked.deferred === undefined ? f(checked.early) : (fromPlan(checked.deferred, f) as pulumi.Output<T>);
}

/**
 * What a resource wires once its plan is valid: `wire(plan)` registers the children with the plan (a plain value for
 * `early`, else the deferred Output) and returns them; for a deferred plan only after `go`, and not at all when it
 * is invalid (`fallback` then). Returns the wired result or a Promise of it.
 */
export function whenValid<P, T>(checked: CheckedArgs<P>, wire: (plan: P | pulumi.Output<P>, known: P | undefined) => T, fallback: T): T | Promise<T> {
  if (checked.early !== undefined) return wire(checked.early, checked.early);
  const d = checked.deferred as DeferredPlan<P>;
  return d.go.then(async (ok) => (ok ? wire(d.plan(), await d.known) : fallback));
}

/** What a resource's wiring gives: the apply's report and the live read (none when live previews are off). */
export interface Wired {
  report: pulumi.Output<HostReport>;
  live?: Promise<LiveOutcome>;
}
/** The fallback of {@link whenValid} for a resource whose deferred plan is invalid: nothing registered. */
export const NOT_WIRED = undefined;
const EMPTY_REPORT: HostReport = { applied: {}, previous: {}, warnings: [], extra: {} };
const NOT_READ: LiveOutcome = { status: "off", token: NO_TOKEN, keepStoredToken: false, live: {}, drift: {}, secret: false };

/**
 * The report and the `live` and `drift` outputs of {@link whenValid}'s result (liveOutputs): empty ones for an invalid
 * deferred plan.
 */
export function wiredOutputs(w: Wired | Promise<Wired | undefined> | undefined): {
  report: pulumi.Output<HostReport>;
  liveValue: pulumi.Input<Record<string, string>>;
  driftValue: pulumi.Input<Record<string, string>>;
  hostKeyValue: pulumi.Input<string | undefined>;
} {
  const { report, live } = !(w instanceof Promise)
    ? (w ?? { report: pulumi.output(EMPTY_REPORT) })
    : { report: pulumi.output(w.then((x) => x?.report ?? EMPTY_REPORT)), live: w.then((x) => x?.live ?? NOT_READ) };
  const [liveValue, driftValue, hostKeyValue] = liveOutputs(live);
  return { report, liveValue, driftValue, hostKeyValue };
}

/** `become` and `restoreOnDelete` as the wiring takes them: plain where the arguments are. */
export function becomeAndRestore(a: { become?: unknown; restoreOnDelete?: unknown }): {
  become: pulumi.Input<"sudo"> | undefined;
  restoreOnDelete: boolean | pulumi.Output<boolean>;
} {
  const b: unknown = a.become;
  const r: unknown = a.restoreOnDelete;
  // undefined = no sudo
  const become = isPlain(b) ? becomeOf(b) : (pulumi.output(a.become as pulumi.Input<string | undefined>).apply(becomeOf) as pulumi.Output<"sudo">);
  const restoreOnDelete = isPlain(r) ? r !== false : pulumi.output(a.restoreOnDelete as pulumi.Input<boolean | undefined>).apply((x) => x !== false);
  return { become, restoreOnDelete };
}

/**
 * The properties every resource has besides its own: `live`, `drift` and `hostKeyFingerprint` (Outputs made when
 * read) and `endpoint`. Returns `endpoint` as registered (a plain string for a plain connection).
 */
export function outputsOfEveryResource(
  resource: object,
  connection: ConnectionInput,
  liveValue: pulumi.Input<Record<string, string>>,
  driftValue: pulumi.Input<Record<string, string>>,
  hostKeyValue: pulumi.Input<string | undefined>,
): pulumi.Input<string | undefined> {
  lazyOutput(resource, "live", () => pulumi.output(liveValue));
  lazyOutput(resource, "drift", () => pulumi.output(driftValue));
  lazyOutput(resource, "hostKeyFingerprint", () => pulumi.output(hostKeyValue));
  const endpoint = endpointOf(connection);
  lazyOutput(resource, "endpoint", () => pulumi.output(endpoint));
  return endpoint;
}
