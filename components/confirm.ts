/**
 * The `confirm` argument of NetTuning and NicQueues (issue #34, "Confirmed apply"): a named interface the schema
 * analyzer takes (no unions: `{ timeoutSeconds: 0 }` turns the confirm off, and `false` is accepted too). The check,
 * plan line and defaults are provider/confirm.ts; the confirm (the -restore child's create) is components/common.ts `confirmOf$`.
 */
import type * as pulumi from "@pulumi/pulumi";
import { checkConfirm, NIC_CONFIRM_GROUPS, type ConfirmPlan } from "../provider/confirm";
import type { HostKind } from "../provider/kinds";

/**
 * A confirmed apply: the host arms a revert before the change and puts the values back after `timeoutSeconds` unless
 * a second SSH session confirms; the persistence (sysctl.d file, unit, rc.local) is written only at the confirm.
 * See docs/safe-rollout.md "Confirm".
 */
export interface ConfirmArgs {
  /**
   * Seconds from the change to the revert, unless confirmed: at least the verify gate's `soakSeconds` plus the
   * connection's dial budget (dialErrorLimit × perDialTimeout, 150 s by default), at most 86,400. `0` turns the
   * confirm off (for NicQueues, whose default is on). Required.
   */
  timeoutSeconds: pulumi.Input<number>;
}

/** The soakSeconds of a resolved `verify`, 0 without one (a bad one is the gate's own problem). */
function soakOf(verify: unknown): number {
  const s = (verify as { soakSeconds?: unknown } | undefined)?.soakSeconds;
  return typeof s === "number" && Number.isFinite(s) && s > 0 ? s : 0;
}

/** The confirm's problems, plan lines and whether a confirm can happen, for resolved arguments. */
export function confirmPlan(v: unknown, t: { kind: HostKind; verify: unknown; connection: unknown; nicDefault?: boolean }): ConfirmPlan {
  return checkConfirm(v, { kind: t.kind, soak: soakOf(t.verify), connection: t.connection, nicDefault: t.nicDefault === true });
}

/** Whether a resource may need a confirm (the -restore child's create is wired), from its arguments as given (Outputs count as set). */
export function confirmMayRun(kind: HostKind, a: { confirm?: unknown; channels?: unknown; rings?: unknown; features?: unknown; preset?: unknown }): boolean {
  const c = a.confirm as { timeoutSeconds?: unknown } | false | undefined | null;
  if (c === false) return false;
  if (typeof c === "object" && c !== null && !("then" in c) && c.timeoutSeconds === 0) return false;
  if (c !== undefined && c !== null) return true;
  // a preset may bring any of the groups
  return kind === "nic" && [...NIC_CONFIRM_GROUPS.map((g) => a[g]), a.preset].some((x) => x !== undefined && x !== null);
}
