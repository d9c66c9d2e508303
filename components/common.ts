import * as pulumi from "@pulumi/pulumi";
import * as command from "@pulumi/command";
import { hostCommand, HostKind, hostStdin } from "../provider/host/programs";
import { Owner, ownerOf } from "../provider/owner";
import { HostReport, parseReport } from "../provider/report";

/** `connection` exactly as @pulumi/command takes it (bastion/proxy included). */
export type ConnectionInput = pulumi.Input<command.types.input.remote.ConnectionArgs>;

export function ownerFor(name: string): Owner {
  return ownerOf(pulumi.getProject(), pulumi.getStack(), name);
}

/** Children move to a new host by delete-then-create, so the old host gets its originals back first. */
function childOptions(parent: pulumi.Resource, extra?: pulumi.CustomResourceOptions): pulumi.CustomResourceOptions {
  return {
    parent,
    replaceOnChanges: ["connection.host", "connection.port"],
    deleteBeforeReplace: true,
    ...extra,
  };
}

/** The report of the apply child, or an empty one during preview (stdout unknown or empty). */
function reportOf(stdout: string | undefined): HostReport {
  if (!stdout) return { applied: {}, previous: {}, warnings: [], extra: {} };
  return parseReport(stdout);
}

/** Logs each warning once per resource during preview and update. */
export function warnAll(resource: pulumi.Resource, warnings: string[]): void {
  for (const w of warnings) void pulumi.log.warn(w, resource);
}

/** True when a value contains no Output or Promise at any depth (so it can be validated synchronously). */
export function isPlain(value: unknown): boolean {
  if (pulumi.Output.isInstance(value) || value instanceof Promise) return false;
  if (Array.isArray(value)) return value.every(isPlain);
  if (value !== null && typeof value === "object") return Object.values(value).every(isPlain);
  return true;
}

/**
 * The two Commands every resource is made of (see ARCHITECTURE.md): `<name>-apply` runs the apply program on create
 * and update with the plan on stdin; `<name>-restore` has only a `delete`, whose stdin (stored in state) carries the
 * originals from the apply report, so rollback needs neither the host's journal nor PULUMI_COMMAND_* variables.
 * Returns the parsed apply report (empty during preview).
 */
export function applyAndRestore(
  parent: pulumi.ComponentResource,
  name: string,
  kind: HostKind,
  args: { connection: ConnectionInput; become?: pulumi.Input<"sudo"> },
  applyPlan: pulumi.Output<string>,
  restorePlan: (report: HostReport) => pulumi.Input<string>,
): pulumi.Output<HostReport> {
  const become = pulumi.output(args.become);
  const apply = new command.remote.Command(
    `${name}-apply`,
    {
      connection: args.connection,
      create: become.apply((b) => hostCommand(kind, "apply", b)),
      update: become.apply((b) => hostCommand(kind, "apply", b)),
      stdin: applyPlan.apply((p) => hostStdin(kind, "apply", p)),
      addPreviousOutputInEnv: false,
      logging: "stderr",
    },
    childOptions(parent),
  );
  const report = apply.stdout.apply(reportOf);
  new command.remote.Command(
    `${name}-restore`,
    {
      connection: args.connection,
      delete: become.apply((b) => hostCommand(kind, "restore", b)),
      stdin: report.apply((r) => pulumi.output(restorePlan(r))).apply((p) => hostStdin(kind, "restore", p)),
      addPreviousOutputInEnv: false,
      logging: "stderr",
    },
    childOptions(parent, { dependsOn: [apply] }),
  );
  report.warnings.apply((ws) => warnAll(parent, ws));
  return report;
}
