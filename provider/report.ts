/** The machine-readable report printed by every host program on success (see ARCHITECTURE.md). */
export interface HostReport {
  /** key → value read back from the host after the change. */
  applied: Record<string, string>;
  /** key → value before this resource first changed it: the rollback data. */
  previous: Record<string, string>;
  /** Advice and non-fatal findings from the host's preflight. */
  warnings: string[];
  /** Other `name<TAB>value` lines (e.g. `file`, `persisted`). */
  extra: Record<string, string>;
  /**
   * Keys the host could not read back for the report (`unread` lines; a warning says so too). Only with
   * `same-as-plan`: the engine then leaves out applied values equal to the plan's (see {@link completeApplied}).
   */
  unread?: string[];
  /** Tools the engine found on the host (the `host` line after `end`): "gzip", "base64". */
  hostTools?: string[];
  /** The keys of the `applied` lines, in report order (the key list of `previous-values` without `same-as-plan`). */
  appliedKeys?: string[];
  /** The verify gate's lines (`verify<TAB>…`, the rest of each line; provider/counters/gate.ts gateResult), when gated. */
  verify?: string[];
  /**
   * Inside a rollout (plan line `@on-failure report`), a run that failed but left the host as it was: what happened
   * (the `status` line after `end`). The report is then the one of the resource's last commit (runtime.sh nt_tolerate).
   */
  status?: "refused" | "failed" | "rolledBack" | "unconfirmed";
  /**
   * The plan of the run that printed a kept report (its `plan-value` lines, in plan order): a report printed again by
   * a later run (`status`) is completed from them, not from that later run's plan.
   */
  reportPlan?: { keys: string[]; values: Record<string, string> };
}

const STATUSES = new Set(["refused", "failed", "rolledBack", "unconfirmed"]);

/** Whether the host reported gzip and base64: its -restore stdin (and adopted bytes in it) are stored compressed. */
export function hostCompresses(r: HostReport): boolean {
  return !!r.hostTools?.includes("gzip") && r.hostTools.includes("base64");
}

/** Parses a report. Throws when stdout is not a complete v1 report (a truncated run must not become state). */
export function parseReport(stdout: string): HostReport {
  const lines = stdout.split("\n");
  const start = lines.indexOf("net-tuning-report v1");
  if (start < 0 || lines.lastIndexOf("end") < start) {
    throw new Error(`pulumi-net-tuning: the host program's output is not a complete report:\n${stdout.slice(0, 2000)}`);
  }
  const report: HostReport = { applied: {}, previous: {}, warnings: [], extra: {} };
  const end = lines.indexOf("end", start + 1);
  for (const line of lines.slice(end + 1)) {
    const [tag, ...rest] = line.split("\t");
    if (tag === "host") report.hostTools = rest.join("\t").split(" ").filter(Boolean);
    else if (tag === "status") {
      if (!STATUSES.has(rest[0] ?? "")) throw new Error(`pulumi-net-tuning: the host program reported an unknown status ${JSON.stringify(rest[0])}`);
      report.status = rest[0] as HostReport["status"];
    }
  }
  for (const line of lines.slice(start + 1)) {
    if (line === "end") break;
    const [tag, ...rest] = line.split("\t");
    if (tag === "applied") (report.appliedKeys ??= []).push(rest[0]);
    if (tag === "applied" || tag === "previous") report[tag][rest[0]] = rest.slice(1).join("\t");
    else if (tag === "unread") (report.unread ??= []).push(rest.join("\t"));
    else if (tag === "warning") report.warnings.push(rest.join("\t"));
    else if (tag === "verify") (report.verify ??= []).push(rest.join("\t"));
    else if (tag === "plan-value") {
      const p = (report.reportPlan ??= { keys: [], values: {} });
      p.keys.push(rest[0]);
      p.values[rest[0]] = rest.slice(1).join("\t");
    }
    else if (tag) report.extra[tag] = rest.join("\t");
  }
  return report;
}

/**
 * A report with a `same-as-plan` line lists only the applied values that read back different from the plan: every
 * other declared key (not `unread`) read back as declared. Returns the report with `applied` completed from
 * `declared` (key → value as in the plan), in key order; a report without that line is returned as it is.
 */
export function completeApplied(r: HostReport, declared: Record<string, string>): HostReport {
  if (r.extra["same-as-plan"] !== "1") return r;
  const unread = new Set(r.unread ?? []);
  const applied: Record<string, string> = {};
  for (const k of Object.keys(declared).sort()) {
    if (k in r.applied) applied[k] = r.applied[k];
    else if (!unread.has(k)) applied[k] = declared[k].split(/[ \t]+/).filter(Boolean).join(" ");
  }
  for (const k of Object.keys(r.applied)) if (!(k in applied)) applied[k] = r.applied[k];
  const extra = { ...r.extra };
  delete extra["same-as-plan"];
  return { ...r, applied, extra };
}

/**
 * A report with a `previous-values` line gives originals as values only, tab-separated, in the order of its key list:
 * `planKeys` (the keys of the plan of the run that printed the report, in the plan's order) when it has `same-as-plan`,
 * else its own `applied` lines. Returns the report with `previous` completed from them (its own `previous` lines are
 * the journal's other keys). A count that differs from the key list means the report does not belong to that plan:
 * refused (originals paired with the wrong keys would be restored to them).
 */
export function completePrevious(r: HostReport, planKeys?: string[]): HostReport {
  const line = r.extra["previous-values"];
  if (line === undefined) return r;
  const byPlan = r.extra["same-as-plan"] === "1";
  if (byPlan && !planKeys) throw new Error("pulumi-net-tuning: completePrevious needs the plan's keys for a same-as-plan report");
  const keys = byPlan ? planKeys! : (r.appliedKeys ?? []);
  const values = line.split("\t");
  if (values.length !== keys.length) {
    throw new Error(`pulumi-net-tuning: the report lists ${values.length} original values for ${keys.length} keys: it does not belong to its plan`);
  }
  const previous: Record<string, string> = { ...r.previous };
  keys.forEach((k, i) => (previous[k] = values[i]));
  const sorted: Record<string, string> = {};
  for (const k of Object.keys(previous).sort()) sorted[k] = previous[k];
  const extra = { ...r.extra };
  delete extra["previous-values"];
  return { ...r, previous: sorted, extra };
}

/**
 * {@link completePrevious} and {@link completeApplied}: the report as if every value were listed. `plan`: the keys (in
 * the plan's order) and values of the plan of the run that printed it (a kind whose plan the component can read).
 */
export function completeReport(r: HostReport, plan?: { keys: string[]; values: Record<string, string> }): HostReport {
  const p = completePrevious(r, plan?.keys);
  return plan ? completeApplied(p, plan.values) : p;
}
