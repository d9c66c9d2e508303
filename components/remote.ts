/**
 * The children's registrations of pulumi-command's `command:remote:Command` and `command:remote:CopyToRemote`, made
 * with fewer Outputs than the package's classes make (ARCHITECTURE.md, "Program cost at 1,000 hosts"):
 * - the SDK gives a resource one Output per property key it registers, each with four promises that capture a stack
 *   trace (`debuggablePromise`; under ts-node every frame is mapped through source maps): the package's `Command`
 *   registers all eleven of its keys, the children need the keys they set plus `stdout` (the -apply child's report);
 * - the package's classes wrap the connection of every resource in three Outputs (its defaults applied in an `apply`,
 *   then `secret`); a plain connection here is defaulted once per resource and made secret once, shared by its children.
 * What the engine receives is the same: the type token, the inputs (unset keys are not sent either way), the
 * connection with the package's own defaults (`connectionArgsProvideDefaults` of the installed @pulumi/command) as a
 * secret, the provider version the package's classes ask for, `additionalSecretOutputs: ["connection"]` and
 * `replaceOnChanges: ["triggers[*]"]` merged in the same order. `tests/unit/remote.test.ts` registers both ways side by
 * side and compares every field of the requests.
 */
import * as pulumi from "@pulumi/pulumi";
import * as command from "@pulumi/command";
import { isPlain } from "./plain";

/** `connection` exactly as @pulumi/command takes it (bastion/proxy included). */
export type ConnectionInput = pulumi.Input<command.types.input.remote.ConnectionArgs>;

/** The installed @pulumi/command's version as its classes pass it (`resourceOptsDefaults`): the plugin the engine uses. */
// eslint-disable-next-line @typescript-eslint/no-var-requires
const COMMAND_VERSION = String((require("@pulumi/command/package.json") as { version: string }).version).replace(/^v/, "");

/** A connection as the package's classes register it: its defaults applied, a secret. Made once per resource. */
export type RegisteredConnection = pulumi.Output<command.types.input.remote.ConnectionArgs>;

export function registeredConnection(c: ConnectionInput): RegisteredConnection {
  const defaults = command.types.input.remote.connectionArgsProvideDefaults;
  // (a plain value is known, not secret and depends on no resource: secret(value) registers what
  // secret(output(value).apply(defaults)) registers)
  return isPlain(c) ? pulumi.secret(defaults(c as command.types.input.remote.ConnectionArgs)) : pulumi.secret(pulumi.output(c).apply(defaults));
}

/** The package's options for its remote resources, merged as its classes merge them. */
export function packageOptions(opts: pulumi.CustomResourceOptions | undefined): pulumi.CustomResourceOptions {
  let o = pulumi.mergeOptions({ version: COMMAND_VERSION }, opts ?? {});
  o = pulumi.mergeOptions(o, { additionalSecretOutputs: ["connection"] });
  return pulumi.mergeOptions(o, { replaceOnChanges: ["triggers[*]"] });
}

/** Drops the keys whose value is undefined (the SDK would register them as Outputs of nothing). */
function defined<T extends object>(o: T): Partial<T> {
  const r: Partial<T> = {};
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] !== undefined) r[k] = o[k];
  return r;
}

export interface RemoteCommandArgs {
  connection: RegisteredConnection;
  create?: pulumi.Input<string>;
  update?: pulumi.Input<string>;
  delete?: pulumi.Input<string>;
  stdin?: pulumi.Input<string>;
  addPreviousOutputInEnv?: pulumi.Input<boolean>;
  logging?: "stdout" | "stderr" | "stdoutAndStderr" | "none";
}

/** A `command:remote:Command` with an Output for each key set in its arguments, plus `stdout`. */
export class RemoteCommand extends pulumi.CustomResource {
  declare readonly stdout: pulumi.Output<string>;
  declare readonly stderr: pulumi.Output<string>;
  declare readonly stdin: pulumi.Output<string | undefined>;

  constructor(name: string, args: RemoteCommandArgs, opts?: pulumi.CustomResourceOptions) {
    super("command:remote:Command", name, { ...defined(args), stdout: undefined, stderr: undefined }, packageOptions(opts));
  }
}

/** A `command:remote:CopyToRemote` of one file. */
export class RemoteCopy extends pulumi.CustomResource {
  constructor(name: string, args: { connection: RegisteredConnection; source: pulumi.asset.Asset; remotePath: pulumi.Input<string> }, opts?: pulumi.CustomResourceOptions) {
    super("command:remote:CopyToRemote", name, defined(args), packageOptions(opts));
  }
}
