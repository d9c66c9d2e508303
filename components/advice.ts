/**
 * One line per advice for a program run (issue #33, "one advice per finding"): the same advice text logged by N
 * resources is ONE warning naming the N resources (and their hosts where the connection is a plain value), not N
 * warnings. 20 hosts with NetTuning + NicQueues and the same profile used to log 40 identical lines.
 *
 * Pulumi attaches a log to one resource's URN or to none, and a program's resources are constructed, and their
 * Output-path validations resolve, asynchronously. So advice is collected per deployment (components/deployment.ts:
 * a preview and the update of one `pulumi up` are two) and flushed once, {@link ADVICE_WINDOW_MS} after the first
 * advice of the batch: a program that builds its resources in one loop (plain arguments are validated in the
 * constructor) gets every resource's advice in that one batch; advice that arrives later (an Output known only after
 * a server is created) starts a new batch, bounded the same way. The batch holds the SDK's `rpcKeepAlive` from its
 * first advice until its lines are logged, so the program cannot finish (nor the engine exit) before the flush.
 * Advice of one resource is logged on that resource, as before; advice of several on no resource (the line names
 * them).
 */
import * as pulumi from "@pulumi/pulumi";
import { deploymentKey } from "./deployment";
import { type HostKind, KINDS } from "../provider/kinds";

/** How long after its first advice a batch is logged. Bounded: a batch never waits for more than this. */
export const ADVICE_WINDOW_MS = 50;

interface Batch {
  /** advice text → the resources that gave it, in the order they did */
  byText: Map<string, { resource: pulumi.Resource; label: string }[]>;
  release: () => void;
}
const batches = new Map<string, Batch>();

// eslint-disable-next-line @typescript-eslint/no-require-imports
const settings = require("@pulumi/pulumi/runtime/settings") as { rpcKeepAlive(): () => void };

/** Counters for tests: batches flushed and lines logged in this process. */
export const adviceStats = { batches: 0, lines: 0 };

/**
 * Queues `warnings` of `resource` (`label`: how a line names it, e.g. `NetTuning "web-1" (10.0.0.1)`) for the
 * deployment's next flush. A text given twice by one resource counts once.
 */
export function adviseAll(resource: pulumi.Resource, label: string, warnings: readonly string[]): void {
  if (warnings.length === 0) return;
  const key = deploymentKey();
  let batch = batches.get(key);
  if (!batch) {
    let release: () => void = () => undefined;
    try {
      release = settings.rpcKeepAlive();
    } catch {
      // no runtime settings (a bare unit test): nothing to keep alive
    }
    const b: Batch = { byText: new Map(), release };
    batches.set(key, b);
    batch = b;
    // (the timer runs in this advice's async context: the deployment's store, monitor and keep-alive)
    setTimeout(() => flush(key, b), ADVICE_WINDOW_MS);
  }
  for (const text of warnings) {
    const list = batch.byText.get(text) ?? [];
    if (!list.some((r) => r.resource === resource)) list.push({ resource, label });
    batch.byText.set(text, list);
  }
}

/** The class a resource kind is declared with, as messages name it. */
export function resourceClass(kind: HostKind): "NetTuning" | "NicQueues" {
  return KINDS[kind].resource;
}

/**
 * How a grouped line names a resource: `NetTuning "web-1"`, with ` (HOST)` when the connection's host is a plain value
 * (an Output's host would need an Output of its own: the line names the resource only).
 */
export function adviceLabel(kind: HostKind, name: string, connection: unknown): string {
  const host = typeof connection === "object" && connection !== null ? (connection as { host?: unknown }).host : undefined;
  return `${resourceClass(kind)} "${name}"${typeof host === "string" && host !== "" ? ` (${host})` : ""}`;
}

/** The line of an advice several resources gave: the count, each resource, then the advice. */
export function groupedAdvice(text: string, labels: readonly string[]): string {
  return `${labels.length} resources (${labels.join(", ")}): ${text}`;
}

function flush(key: string, b: Batch): void {
  if (batches.get(key) === b) batches.delete(key);
  adviceStats.batches++;
  try {
    for (const [text, list] of b.byText) {
      adviceStats.lines++;
      if (list.length === 1) void pulumi.log.warn(text, list[0].resource);
      else void pulumi.log.warn(groupedAdvice(text, list.map((r) => r.label)));
    }
  } finally {
    b.release(); // after the logs: each holds its own keep-alive until the engine has it
  }
}
