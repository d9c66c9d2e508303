/**
 * The child wiring the lead decided for moves (issue #18), applied to the REAL components through a Pulumi
 * transformation until components/common.ts carries it itself (then every step below is a no-op):
 * - both children: replaceOnChanges connection.host/port/user/proxy, NO deleteBeforeReplace (create-before-delete:
 *   the new apply runs first, the old restore after it);
 * - `-apply`: create runs with NT_APPLY_MODE=create (a new generation takes the machine over), update with
 *   NT_APPLY_MODE=update;
 * - `-restore`: its plan carries `@generation G` from the apply report's `generation<TAB>G` line.
 * Root connections only (an env prefix; with become "sudo" the engine helper's bootstrap passes the mode).
 */
import * as pulumi from "@pulumi/pulumi";
import * as command from "@pulumi/command";
import { NetTuning, NetTuningArgs } from "../../components/netTuning";
import { NicQueues, NicQueuesArgs } from "../../components/nicQueues";

export const MOVE_PATHS = ["connection.host", "connection.port", "connection.user", "connection.proxy"];

function withMode(cmd: pulumi.Input<string> | undefined, mode: "create" | "update"): pulumi.Output<string> | undefined {
  if (cmd === undefined) return undefined;
  return pulumi.output(cmd).apply((c) => (/NT_APPLY_MODE|apply-(create|update)/.test(c) ? c : `NT_APPLY_MODE=${mode} ${c}`));
}

/** Inserts `@generation G` before the `@program` line of a restore stdin (once). */
export function withGeneration(stdin: string, stdout: string | undefined): string {
  const g = /^generation\t([A-Za-z0-9-]+)$/m.exec(stdout ?? "");
  if (!g || /^@generation /m.test(stdin)) return stdin;
  const at = stdin.indexOf("\n@program\n");
  return at < 0 ? `${stdin}@generation ${g[1]}\n` : `${stdin.slice(0, at + 1)}@generation ${g[1]}\n${stdin.slice(at + 1)}`;
}

/** moveWiring without the `@generation` line: what a move did before the generation token (negative control). */
export const moveWiringNoGeneration: pulumi.ResourceTransformation = (a) => {
  const r = moveWiring(a);
  if (r && a.name.endsWith("-restore")) return { props: { ...r.props, stdin: a.props.stdin }, opts: r.opts };
  return r;
};

export const moveWiring: pulumi.ResourceTransformation = (a) => {
  if (a.type !== "command:remote:Command") return undefined;
  const props = { ...a.props };
  const opts: pulumi.CustomResourceOptions = { ...(a.opts as pulumi.CustomResourceOptions), replaceOnChanges: MOVE_PATHS, deleteBeforeReplace: false };
  if (a.name.endsWith("-apply")) {
    props.create = withMode(props.create, "create");
    props.update = withMode(props.update, "update");
  } else if (a.name.endsWith("-restore")) {
    const deps = ([] as pulumi.Input<pulumi.Resource>[]).concat((opts.dependsOn as pulumi.Input<pulumi.Resource>[]) ?? []);
    const apply = deps[0] as unknown as command.remote.Command;
    props.stdin = pulumi.all([props.stdin, apply.stdout]).apply(([s, out]) => withGeneration(String(s), out));
  }
  return { props, opts };
};

export type Conn = NetTuningArgs["connection"];

export function sysMoveProgram(name: string, connection: Conn, args: Omit<NetTuningArgs, "connection">, wiring = moveWiring) {
  return () => {
    const t = new NetTuning(name, { connection, ...args }, { transformations: [wiring] });
    return { applied: t.applied, previous: t.previous, filePath: t.filePath, warnings: t.warnings };
  };
}

export function nicMoveProgram(name: string, connection: Conn, args: Omit<NicQueuesArgs, "connection">) {
  return () => {
    const n = new NicQueues(name, { connection, ...args }, { transformations: [moveWiring] });
    return { applied: n.applied, previous: n.previous, persistedAs: n.persistedAs, warnings: n.warnings };
  };
}
