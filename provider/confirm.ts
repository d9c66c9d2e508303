/**
 * The confirmed apply (issue #34, "Confirmed apply"; docs/safe-rollout.md "Confirm"): the `confirm` argument's check
 * at preview, its plan line, the default of NicQueues, and the report's `confirm` line. Pure: no I/O, no Pulumi.
 *
 * On the host (provider/host/sh/runtime.sh `nt_confirm_*`, `nt_revert_main`): an apply that changes a value arms a
 * revert before the first change (a transient systemd timer, else a detached process), changes the values, and writes
 * no file; the confirm, a second SSH session (the -restore child's create), runs the engine with operation `confirm:…`, which commits the files
 * and disarms the revert. Without the confirm the host puts the values back at the deadline.
 */
import { z } from "zod";
import type { HostKind } from "./kinds";

/** pulumi-command's dial defaults (provider/pkg/provider/remote/connection.go v1.2.1): dialErrorLimit, perDialTimeout (s). */
export const DIAL_DEFAULTS = { dialErrorLimit: 10, perDialTimeout: 15 } as const;
/** The dial budget of a connection with pulumi-command's defaults (s). */
const DEFAULT_DIAL_BUDGET = DIAL_DEFAULTS.dialErrorLimit * DIAL_DEFAULTS.perDialTimeout;
/** NicQueues' default when it changes channels, rings or features: 120 s, raised to soak + the default dial budget. */
export const NIC_CONFIRM_SECONDS = 120;
/** The longest timeout: a day. */
export const CONFIRM_MAX = 86_400;
/** The settings whose change makes NicQueues confirm by default (they can reset the link). */
export const NIC_CONFIRM_GROUPS = ["channels", "rings", "features"] as const;

const ConfirmSchema = z.union([
  z.literal(false),
  z.strictObject({
    timeoutSeconds: z.number().int().min(0).max(CONFIRM_MAX),
  }),
]);

/**
 * The seconds pulumi-command may spend dialing before its confirm fails: dialErrorLimit × perDialTimeout (its retries'
 * pauses are not counted, as in the issue). Undefined when the connection dials forever (dialErrorLimit -1) or is not
 * a plain value (the defaults are assumed then). A proxy's own budget adds to it.
 */
export function dialBudget(connection: unknown, proxy = true): number | undefined {
  // not a plain object (a Pulumi Output, whose every property is another Output): the defaults
  const plain = typeof connection === "object" && connection !== null && Object.getPrototypeOf(connection) === Object.prototype;
  if (!plain) return DEFAULT_DIAL_BUDGET;
  const c = connection as { dialErrorLimit?: unknown; perDialTimeout?: unknown; proxy?: unknown };
  const num = (v: unknown, d: number) => (typeof v === "number" && Number.isFinite(v) ? v : d);
  const limit = num(c.dialErrorLimit, DIAL_DEFAULTS.dialErrorLimit);
  const per = num(c.perDialTimeout, DIAL_DEFAULTS.perDialTimeout);
  if (limit < 0) return undefined;
  const own = limit * per;
  if (proxy && typeof c.proxy === "object" && c.proxy !== null) {
    const p = dialBudget(c.proxy, false);
    return p === undefined ? undefined : own + p;
  }
  return own;
}

/** What the confirm of a resource is, after its check. */
export interface ConfirmPlan {
  problems: string[];
  /** The plan lines: `@confirm N`, `@confirm off`, or none (off for NetTuning; NicQueues' default on the host). */
  lines: string[];
  /** Whether an apply of this plan may wait for a confirm. */
  on: boolean;
}

/**
 * Checks `confirm` for a resource. `soak`: the verify gate's soakSeconds (0 without a gate); `nicDefault`: a NicQueues
 * that declares channels, rings or features (confirm on by default). The minimum timeout is soak + the connection's
 * dial budget: the confirm must be able to use its whole budget before the host reverts. `{ timeoutSeconds: 0 }` and
 * `false` turn it off.
 */
export function checkConfirm(v: unknown, t: { kind: HostKind; soak: number; connection: unknown; nicDefault: boolean }): ConfirmPlan {
  const budget = dialBudget(t.connection);
  const min = budget === undefined ? undefined : t.soak + budget;
  const what = t.soak > 0 ? `the verify gate's soak (${t.soak} s) plus the connection's dial budget (${budget} s: dialErrorLimit × perDialTimeout)` : `the connection's dial budget (${budget} s: dialErrorLimit × perDialTimeout)`;
  if (v === undefined || v === null) {
    if (t.kind !== "nic" || !t.nicDefault) return { problems: [], lines: [], on: false };
    // the host's default is max(120, soak + 150): a line only when this connection needs more (plans stay as they were)
    const hostDefault = Math.max(NIC_CONFIRM_SECONDS, t.soak + DEFAULT_DIAL_BUDGET);
    if (min === undefined) {
      return { problems: [`confirm: this connection dials forever (dialErrorLimit -1), so no confirm timeout can cover it; NicQueues confirms a change of channels, rings or features by default: set dialErrorLimit, or confirm: { timeoutSeconds: 0 } to apply without a confirm`], lines: [], on: false };
    }
    return { problems: [], lines: min > hostDefault ? [`@confirm ${min}`] : [], on: true };
  }
  const parsed = ConfirmSchema.safeParse(v);
  if (!parsed.success) {
    return { problems: [`confirm ${JSON.stringify(v)} is not valid: write { timeoutSeconds: N } (whole seconds, 0 to ${CONFIRM_MAX}; 0 turns the confirm off), e.g. { timeoutSeconds: 300 }`], lines: [], on: false };
  }
  const c = parsed.data;
  if (c === false || c.timeoutSeconds === 0) return { problems: [], lines: t.kind === "nic" ? ["@confirm off"] : [], on: false };
  if (min === undefined) return { problems: [`confirm.timeoutSeconds ${c.timeoutSeconds}: this connection dials forever (dialErrorLimit -1), so no timeout covers its confirm: set connection.dialErrorLimit`], lines: [], on: false };
  if (c.timeoutSeconds < min) {
    return {
      problems: [`confirm.timeoutSeconds ${c.timeoutSeconds} is shorter than ${what}: the host could revert while the confirm is still dialing. Fix: confirm.timeoutSeconds ≥ ${min}, or lower connection.dialErrorLimit / perDialTimeout`],
      lines: [],
      on: false,
    };
  }
  return { problems: [], lines: [`@confirm ${c.timeoutSeconds}`], on: true };
}

/** The report's `confirm` line: the token the confirm names and the deadline (seconds since 1970, UTC) the host reverts at. */
export function confirmOf(extra: Record<string, string>): { token: string; deadline: number } | undefined {
  const m = /^([0-9a-f-]{1,64})\t(\d{1,12})$/.exec(extra.confirm ?? "");
  return m ? { token: m[1], deadline: Number(m[2]) } : undefined;
}

/** `2026-12-06T21:40:12Z` for a deadline in seconds. */
export function utc(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}
