/**
 * Safe rollout for fleets (issue #34, "Rollout helper"): `rollout(hosts, options, make)` applies the resources `make`
 * returns for each host in waves, a canary first, with one budget check after each wave that counts the failures of the
 * whole fleet so far and halts the rollout (fails `up`) when they exceed `maxFailures`. See docs/safe-rollout.md.
 *
 * Inside a rollout a NetTuning or NicQueues whose host refuses, fails, rolls back (verify gate) or reverts (confirm)
 * does not fail: its plan carries `@on-failure report` (runtime.sh nt_tolerate), its host exits 0 with the report of
 * the last commit and a status, and the resource's `status` output says what happened. So Pulumi goes on to the
 * budget check instead of stopping at the first failure, and nothing is lost (the originals in state are computed
 * from the same report). What Pulumi itself fails (a host SSH cannot reach, a rollback that could not undo everything,
 * bad arguments) still fails `up`: the rollout stops there, with every later wave untouched.
 */
import * as pulumi from "@pulumi/pulumi";
import { createHash } from "crypto";
import { z } from "zod";
import { packageOptions } from "./remote";

/** What happened on a host in its last run: see {@link rollout}. */
export type HostStatus = "applied" | "refused" | "failed" | "rolledBack" | "unconfirmed";
/** Every status but "applied", in the order a summary lists them. */
const NOT_APPLIED: readonly HostStatus[] = ["refused", "failed", "rolledBack", "unconfirmed"];

/** What a resource created for a rollout carries in its options (the component reads it: {@link joinRollout}). */
interface RolloutMark {
  /** The budget check of the previous wave (none for the first wave): the host's engine delivery depends on it. */
  after?: pulumi.Resource;
  /** Resolves once that check passed, during an update (never when it fails): the host's live read waits for it. */
  passed?: Promise<unknown>;
}
const MARK = Symbol.for("pulumi-net-tuning.rollout");

/**
 * What a resource of a rollout tells its budget check, per resource (set by the components, read here): its status and
 * a stamp of its last run (a digest of its outputs: a host run again changes it, so the next wave bakes again).
 */
export interface RolloutResult {
  status: HostStatus;
  stamp: string;
  reason: string;
}
const results = new WeakMap<pulumi.Resource, pulumi.Output<RolloutResult>>();

/** A NetTuning or NicQueues created for a rollout (with `ctx.opts`): what its wiring needs. */
export interface RolloutMember extends RolloutMark {
  /** The plan lines it adds: `@on-failure report` (runtime.sh nt_tolerate). */
  lines: string[];
  /** Its result, registered now: the rollout reads it right after `make` returns. */
  result: pulumi.Output<RolloutResult>;
  /** Settles the result once the children are wired (after the live read). */
  settle: (o: pulumi.Output<RolloutResult>) => void;
}

/** The rollout `r` joins when its options are a rollout's `ctx.opts`, else undefined (a resource on its own). */
export function joinRollout(r: pulumi.Resource, opts: pulumi.ResourceOptions | undefined): RolloutMember | undefined {
  const m = (opts as { [MARK]?: unknown } | undefined)?.[MARK];
  if (typeof m !== "object" || m === null) return undefined;
  let settle!: (o: pulumi.Output<RolloutResult>) => void;
  const result = pulumi.output(new Promise<pulumi.Output<RolloutResult>>((resolve) => (settle = resolve))) as unknown as pulumi.Output<RolloutResult>;
  results.set(r, result);
  return { ...(m as RolloutMark), lines: ["@on-failure report"], result, settle };
}

/** The `status` output of a resource: its rollout result's, or the report's (always "applied" outside a rollout). */
export function statusOf(member: RolloutMember | undefined, report: pulumi.Output<{ status?: HostStatus }>): pulumi.Output<HostStatus> {
  return member ? member.result.apply((r) => r.status) : report.apply((r) => r.status ?? "applied");
}

/** Options of {@link rollout}. */
export interface RolloutOptions {
  /** Hosts of the first wave, applied alone before any other (0 = no canary). Defaults to 1. */
  canary?: number;
  /** Hosts per wave after the canary: a number, or a share of all hosts such as `"25%"` (rounded up). Required. */
  waveSize: number | string;
  /**
   * Hosts of the whole fleet that may end in another status than `applied` before the rollout halts: a number, or a
   * share of all hosts such as `"10%"` (rounded down). Counted over every wave so far, not per wave. Defaults to 0.
   */
  maxFailures?: number | string;
  /** Seconds each budget check waits, after a wave that changed a host, before the next wave starts. Defaults to 0. */
  bakeSeconds?: number;
  /**
   * Goes on after a halt: the id the halt printed (`wave-2-1a2b3c4d`). It excuses exactly the failed hosts that halt
   * counted, as long as they are the ones failing. Defaults to none.
   */
  resume?: string;
  /** Names the budget checks (`<name>-check-<wave>`): distinct per rollout of a program. Defaults to `"rollout"`. */
  name?: string;
  /** A host's label in the summary and the halt message. Defaults to the host itself (a string), or its `name` or `host` field. */
  label?: (host: unknown, index: number) => string;
}

/** What `make` gets besides the host. */
export interface RolloutContext {
  /** Options to create the host's resources with (they carry the wave's dependency). Spread them into your own. */
  opts: pulumi.ComponentResourceOptions;
  /** The host's wave: 0 for the canary (when there is one). */
  wave: number;
}

/**
 * The outcome of a rollout that ran every wave, host by host. A halted `up` stores no outputs: its budget check's
 * message lists every host instead, the ones of later waves as "not started".
 */
export interface RolloutSummary {
  applied: string[];
  /** label → status and the host's message, for every host not applied. */
  notApplied: Record<string, { status: HostStatus; reason: string }>;
}

/** What {@link rollout} returns. */
export interface Rollout {
  /** The hosts' labels, wave by wave (the canary first). */
  waves: string[][];
  /** label → status of the host (the worst of its resources' statuses). */
  statuses: Record<string, pulumi.Output<HostStatus>>;
  /** The summary, once every wave ran (a halted `up` logs it instead). */
  summary: pulumi.Output<RolloutSummary>;
}

const share = (what: string, min: number) =>
  z.union([
    z.number().int(`${what} must be a whole number or a share such as "25%"`).min(min, `${what} must be at least ${min}`),
    z.string().regex(/^(100|[1-9]?[0-9](\.[0-9]+)?)%$/, `${what} must be a number or a share such as "25%" (0% to 100%)`),
  ]);
const OptionsSchema = z
  .object({
    canary: z.number().int("canary must be a whole number of hosts").min(0, "canary must be 0 or more").optional(),
    waveSize: share("waveSize", 1),
    maxFailures: share("maxFailures", 0).optional(),
    bakeSeconds: z.number().int("bakeSeconds must be whole seconds").min(0).max(86_400, "bakeSeconds must be at most 86400 (a day)").optional(),
    resume: z.string().regex(/^wave-[0-9]+-[0-9a-f]{8}$/, 'resume must be the id a halt printed, such as "wave-2-1a2b3c4d"').optional(),
    name: z.string().regex(/^[A-Za-z][A-Za-z0-9-]{0,40}$/, "name must be letters, digits and dashes, starting with a letter").optional(),
    label: z.function().optional(),
  })
  .strict();

/** Hosts as a share of `n` ("25%" → rounded up for waves, down for the budget), or the number itself. */
function count(v: number | string, n: number, up: boolean): number {
  if (typeof v === "number") return v;
  const x = (parseFloat(v) / 100) * n;
  return up ? Math.max(1, Math.ceil(x - 1e-9)) : Math.floor(x + 1e-9);
}

/** The waves: the canary, then groups of `size` (pure; exported for the unit tests). */
export function planWaves<T>(hosts: readonly T[], canary: number, size: number): T[][] {
  const waves: T[][] = [];
  if (canary > 0) waves.push(hosts.slice(0, canary));
  for (let i = Math.min(canary, hosts.length); i < hosts.length; i += size) waves.push(hosts.slice(i, i + size));
  return waves;
}

/** A halt's id: the wave's index and a digest of the failed hosts it counted (the `resume` that excuses exactly them). */
export function haltId(wave: number, failed: readonly string[]): string {
  return `wave-${wave}-${createHash("sha256").update([...failed].sort().join("\n")).digest("hex").slice(0, 8)}`;
}

/** One host's result as the budget check sees it. */
export interface HostResult {
  label: string;
  wave: number;
  status: HostStatus;
  reason: string;
}

/**
 * The budget check's verdict after wave `wave` (pure; exported for the unit tests): the failures of waves 0..wave not
 * excused by `resume` (the id of a halt at wave i excuses the failures of waves 0..i when they are exactly the ones it
 * counted), against the budget.
 */
export function verdict(results: readonly HostResult[], wave: number, budget: number, resume?: string, hasCanary = true): { halt: boolean; id: string; counted: HostResult[]; excused: HostResult[] } {
  // ids number the waves as messages do (waveName): from 0 with a canary, from 1 without
  const first = hasCanary ? 0 : 1;
  const failed = results.filter((r) => r.wave <= wave && r.status !== "applied");
  let excused: HostResult[] = [];
  for (let i = 0; i <= wave && resume; i++) {
    const upTo = failed.filter((r) => r.wave <= i);
    if (upTo.length > 0 && haltId(i + first, upTo.map((r) => r.label)) === resume) excused = upTo;
  }
  const counted = failed.filter((r) => !excused.includes(r));
  return { halt: counted.length > budget, id: haltId(wave + first, failed.map((r) => r.label)), counted, excused };
}

/** A wave's name in messages: "canary" for the first when there is one, else "wave N" counted from 1 after it. */
export function waveName(w: number, hasCanary: boolean): string {
  return hasCanary ? (w === 0 ? "canary" : `wave ${w}`) : `wave ${w + 1}`;
}

/** The summary table: one line per host, wave by wave (`not started` for the waves after `wave`). */
export function summaryTable(waves: readonly string[][], results: readonly HostResult[], wave: number, hasCanary = true, excused: readonly HostResult[] = []): string {
  const by = new Map(results.map((r) => [r.label, r]));
  const lines: string[] = [];
  waves.forEach((hosts, w) => {
    for (const h of hosts) {
      const r = by.get(h);
      const status = w > wave ? "not started" : `${r?.status ?? "unknown"}${r && excused.includes(r) ? " (excused by resume)" : ""}`;
      const why = r && r.status !== "applied" && r.reason ? `  ${r.reason.split("\n")[0].slice(0, 240)}` : "";
      lines.push(`  ${waveName(w, hasCanary)}  ${h}  ${status}${why}`);
    }
  });
  return lines.join("\n");
}

/** A `command:local:Command` (the budget check): runs its `create` with node on the machine that runs `pulumi`. */
class BudgetCheck extends pulumi.CustomResource {
  declare readonly stdout: pulumi.Output<string>;
  constructor(name: string, args: { create: pulumi.Input<string>; environment: pulumi.Input<Record<string, string> | undefined> }, opts: pulumi.CustomResourceOptions) {
    super("command:local:Command", name, { ...args, interpreter: ["node", "-e"], logging: "stderr", stdout: undefined }, packageOptions(opts));
  }
}
/** The check's program when it halts: the message (in its environment, so the CLI prints it once, not quoted). */
const HALT = `process.stderr.write(process.env.NET_TUNING_ROLLOUT_HALT+"\\n");process.exit(1)`;

/**
 * `o` without its resource dependencies, during an update: the check's inputs derive from every host's result so far,
 * and Pulumi would store each of those hosts' resources as a dependency of each check (measured: 1.1 KB more per host
 * and check). Its order comes from `dependsOn` (the wave's resources). A preview keeps the Output (it may be unknown).
 */
function detached<T>(o: pulumi.Output<T>): pulumi.Input<T> {
  if (pulumi.runtime.isDryRun()) return o;
  return new Promise<T>((resolve) => o.apply((v) => resolve(v)));
}

/** The host's label: `label(host)`, or the host (a string), its `name` or `host` field, or its position. */
function labelOf(host: unknown, i: number, label?: (h: unknown, i: number) => string): string {
  if (label) return String(label(host, i));
  if (typeof host === "string") return host;
  const o = host as { name?: unknown; host?: unknown } | null;
  if (o && typeof o.name === "string") return o.name;
  if (o && typeof o.host === "string") return o.host;
  return `host ${i + 1}`;
}

/** The worst of a host's resources' statuses (applied only when all are). */
function worst(rs: { status: HostStatus; reason: string }[]): { status: HostStatus; reason: string } {
  for (const s of NOT_APPLIED) {
    const r = rs.find((x) => x.status === s);
    if (r) return r;
  }
  return { status: "applied", reason: "" };
}

/**
 * Applies `make(host, ctx)`'s resources host by host in waves: the first `canary` hosts, then `waveSize` hosts at a
 * time, each wave only after the budget check of the previous one passed. Create the host's NetTuning and NicQueues
 * with `ctx.opts` (spread into your options). A host whose change is refused, fails, is rolled back by its verify gate
 * or is not confirmed does not fail `up`: its resources' `status` says so, and the next budget check counts it. When the
 * fleet's failures exceed `maxFailures`, the check fails `up` and logs every host's status; the later waves stay
 * untouched (no SSH session) on this and every later `up` until the failed hosts apply (each `up` runs them again) or
 * `resume` names the halt. TypeScript only: other languages create their resources with `dependsOn` by hand.
 */
export function rollout<H>(hosts: readonly H[], options: RolloutOptions, make: (host: H, ctx: RolloutContext) => pulumi.Resource | pulumi.Resource[]): Rollout {
  const parsed = OptionsSchema.safeParse(options ?? {});
  if (!parsed.success) {
    throw new Error(`rollout: invalid options:\n${parsed.error.issues.map((i) => `  ${i.path.join(".") || "options"}: ${i.message}`).join("\n")}`);
  }
  if (!Array.isArray(hosts) || hosts.length === 0) throw new Error("rollout: hosts must be a non-empty list");
  const o = options;
  const n = hosts.length;
  const name = o.name ?? "rollout";
  const canary = Math.min(o.canary ?? 1, n);
  const size = count(o.waveSize, n, true);
  const budget = count(o.maxFailures ?? 0, n, false);
  const bake = o.bakeSeconds ?? 0;
  const labels = hosts.map((h, i) => labelOf(h, i, o.label as RolloutOptions["label"]));
  const dup = labels.find((l, i) => labels.indexOf(l) !== i);
  if (dup !== undefined) throw new Error(`rollout: two hosts have the label "${dup}": give each host its own (options.label)`);
  const indexed = hosts.map((h, i) => ({ host: h, label: labels[i] }));
  const waves = planWaves(indexed, canary, size);
  const waveLabels = waves.map((w) => w.map((x) => x.label));

  const statuses: Record<string, pulumi.Output<HostStatus>> = {};
  const soFar: pulumi.Output<HostResult & { stamp: string }>[] = [];
  let after: pulumi.Resource | undefined;
  let passed: Promise<unknown> | undefined;
  let last: pulumi.Output<HostResult[]> | undefined;
  waves.forEach((wave, w) => {
    const waveResources: pulumi.Resource[] = [];
    for (const { host, label } of wave) {
      const opts: pulumi.ComponentResourceOptions & { [MARK]: RolloutMark } = { ...(after ? { dependsOn: [after] } : {}), [MARK]: { after, passed } };
      const made = make(host, { opts, wave: w });
      const rs = (Array.isArray(made) ? made : [made]).filter((r) => r !== undefined && r !== null);
      if (rs.length === 0) throw new Error(`rollout: make returned no resource for host "${label}"`);
      waveResources.push(...rs);
      const own = rs.map((r) => results.get(r)).filter((x): x is NonNullable<typeof x> => x !== undefined);
      if (own.length === 0) throw new Error(`rollout: make returned no NetTuning or NicQueues for host "${label}" (or created them without ctx.opts)`);
      const result = pulumi.all(own).apply((xs) => ({ label, wave: w, ...worst(xs), stamp: xs.map((x) => x.stamp).join(",") }));
      statuses[label] = result.apply((r) => r.status);
      soFar.push(result);
    }
    const now = pulumi.all([...soFar]);
    const checkName = `${name}-check-${waveName(w, canary > 0).replace(" ", "-")}`;
    const decided = now.apply((rs): { create: string; environment?: Record<string, string>; table: string } => {
      const v = verdict(rs, w, budget, o.resume, canary > 0);
      const stamp = createHash("sha256").update(rs.map((r) => `${r.label}\t${r.status}\t${r.stamp}`).join("\n")).digest("hex").slice(0, 16);
      const table = summaryTable(waveLabels, rs, v.halt ? w : waves.length, canary > 0, v.excused);
      if (v.halt) {
        const msg =
          `rollout "${name}" halted after ${w === 0 && canary > 0 ? "the canary" : waveName(w, canary > 0)}: ${v.counted.length} host(s) not applied, the budget is ${budget} (maxFailures)` +
          `${v.excused.length ? ` (${v.excused.length} excused by resume)` : ""}. Later waves were not started.\n${table}\n` +
          `Each \`pulumi up\` runs the failed hosts again (a plan a host reverted is held until it changes) and halts here while they fail. To go on anyway, set resume: "${v.id}".`;
        // (a failed create stores nothing: the next `up` runs this check again)
        return { create: HALT, environment: { NET_TUNING_ROLLOUT_HALT: msg }, table };
      }
      return { create: `/*${stamp}*/${bake > 0 ? `setTimeout(()=>{},${bake * 1000})` : ""}`, table };
    });
    const check = new BudgetCheck(checkName, { create: detached(decided.apply((d) => d.create)), environment: detached(decided.apply((d) => d.environment)) }, { dependsOn: waveResources });
    // the summary, once the last check passed (a halt's check prints its own)
    if (w === waves.length - 1 && !pulumi.runtime.isDryRun()) {
      pulumi.all([decided.table, check.stdout]).apply(([table]) => void pulumi.log.info(`rollout "${name}": every wave ran\n${table}`));
    }
    after = check;
    // an update's live reads of the next wave wait for this check (a preview reads every host)
    passed = pulumi.runtime.isDryRun() ? undefined : new Promise((resolve) => check.stdout.apply((s) => resolve(s)));
    last = now.apply((rs) => rs.map(({ label, wave, status, reason }) => ({ label, wave, status, reason })));
  });
  const summary = last!.apply((rs) => ({
    applied: rs.filter((r) => r.status === "applied").map((r) => r.label),
    notApplied: Object.fromEntries(rs.filter((r) => r.status !== "applied").map((r) => [r.label, { status: r.status, reason: r.reason }])),
  }));
  return { waves: waveLabels, statuses, summary };
}
