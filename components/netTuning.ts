import * as pulumi from "@pulumi/pulumi";
import { BootOverride, planSysctls, renderSysctlRestoreStdin } from "../provider/sysctl/plan";
import type { SysctlProfile } from "../provider/sizing/profile";
import { applyAndRestore, ConnectionInput, isPlain, ownerFor, warnAll } from "./common";

export interface NetTuningArgs {
  /** How to reach the host: @pulumi/command's `remote.ConnectionArgs` (host, port, user, privateKey, proxy…). Required. */
  connection: ConnectionInput;
  /**
   * Sysctls to set, by dotted key (`"net.core.somaxconn"`; the slash form `net/core/somaxconn` is accepted and normalised).
   * Values: a number, a string, or an array of numbers for multi-value keys
   * (`"net.ipv4.tcp_rmem": [4096, 16777216, 134217728]`, bytes). Units are the kernel's (see the catalogue in README).
   * Entries here override `profile`. Defaults to none.
   */
  sysctls?: pulumi.Input<Record<string, pulumi.Input<number | string | number[]>>>;
  /** A sizing profile from this package (`longFatFlows(...)`, `webServer()`, …); `sysctls` entries override it. Defaults to none. */
  profile?: SysctlProfile;
  /** File name in /etc/sysctl.d (`[A-Za-z0-9._-]+.conf`). Defaults to `90-net-tuning-<name>.conf`. */
  fileName?: pulumi.Input<string>;
  /** Write the sysctl.d file so values survive a reboot; false = runtime only. Defaults to true. */
  persist?: pulumi.Input<boolean>;
  /** On delete, put every key back to the value it had before this resource first changed it. Defaults to true. */
  restoreOnDelete?: pulumi.Input<boolean>;
  /** `"sudo"` when the SSH user is not root: runs `sudo -n` (never prompts). Defaults to none (the user must be root). */
  become?: pulumi.Input<"sudo">;
  /**
   * When a file applied later at boot (a later /etc/sysctl.d file, /etc/sysctl.conf) sets one of these keys to another
   * value: `"error"` refuses the change, `"warn"` applies it and warns, `"ignore"` skips the check. Defaults to `"error"`.
   */
  bootOverride?: pulumi.Input<BootOverride>;
}

/**
 * Sysctls on one host, validated at preview, applied all-or-nothing over SSH, persisted in /etc/sysctl.d and
 * rolled back to their original values (kept in Pulumi state) when the resource is deleted.
 */
export class NetTuning extends pulumi.ComponentResource {
  /** key → value read back from the host after the change. */
  public readonly applied: pulumi.Output<Record<string, string>>;
  /** key → value before this resource first changed it (the rollback data). */
  public readonly previous: pulumi.Output<Record<string, string>>;
  /** The sysctl.d file written, or undefined when `persist` is false. */
  public readonly filePath: pulumi.Output<string | undefined>;
  /** Advice from validation and from the host's preflight. */
  public readonly warnings: pulumi.Output<string[]>;
  /** The exact sysctl.d content rendered for review (also when `persist` is false). */
  public readonly fileContent: pulumi.Output<string>;

  constructor(name: string, args: NetTuningArgs, opts?: pulumi.ComponentResourceOptions) {
    // Args are deliberately not passed to super(): connection may hold secrets and component args are stored in state.
    super("net-tuning:index:NetTuning", name, {}, opts);
    const owner = ownerFor(name);
    const planInput = (sysctls: unknown, fileName?: string, persist?: boolean, bootOverride?: BootOverride) => ({
      owner,
      name,
      sysctls: sysctls as Record<string, unknown>,
      profile: args.profile,
      fileName,
      persist,
      bootOverride,
    });
    if (isPlain([args.sysctls, args.fileName, args.persist, args.bootOverride])) {
      // Known at preview: fail now, in the program, with every problem listed (nothing reaches a host).
      planSysctls(planInput(args.sysctls ?? {}, args.fileName as string, args.persist as boolean, args.bootOverride as BootOverride));
    }
    const plan = pulumi
      .all([args.sysctls ?? {}, args.fileName, args.persist, args.bootOverride])
      .apply(([sysctls, fileName, persist, bootOverride]) => {
        const p = planSysctls(planInput(sysctls, fileName, persist, bootOverride));
        warnAll(this, p.warnings);
        return p;
      });
    const restoreOnDelete = pulumi.output(args.restoreOnDelete ?? true);
    const report = applyAndRestore(this, name, "sysctl", args, plan.stdin, (r) =>
      pulumi.all([plan.filePath, restoreOnDelete]).apply(([filePath, restore]) => renderSysctlRestoreStdin(owner, filePath, r.previous, restore)),
    );
    this.applied = report.applied;
    this.previous = report.previous;
    this.filePath = pulumi.all([plan, args.persist]).apply(([p, persist]) => (persist === false ? undefined : p.filePath));
    this.fileContent = plan.fileContent;
    this.warnings = pulumi.all([plan.warnings, report.warnings]).apply(([a, b]) => [...a, ...b]);
    this.registerOutputs({
      applied: this.applied,
      previous: this.previous,
      filePath: this.filePath,
      warnings: this.warnings,
      fileContent: this.fileContent,
    });
  }
}
