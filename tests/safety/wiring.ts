/**
 * Programs for the move tests (issue #18) on the real components (components/common.ts carries the wiring:
 * replaceOnChanges connection.host/port/user/proxy without deleteBeforeReplace, apply-create vs apply-update, and
 * `@generation G` in the restore plan), plus the negative control: the restore plan without its generation line,
 * which is what a move did before the generation token and must revert a same-machine move.
 */
import * as pulumi from "@pulumi/pulumi";
import { NetTuning, NetTuningArgs } from "../../components/netTuning";
import { NicQueues, NicQueuesArgs } from "../../components/nicQueues";
import { frameRestore, readRestoreStdin } from "../../provider/host/programs";

/** Negative control: drops the `@generation` line from the `-restore` child's stdin (stored in its plain form, framed again with its end line). */
export const withoutGeneration: pulumi.ResourceTransformation = (a) => {
  if (a.type !== "command:remote:Command" || !a.name.endsWith("-restore")) return undefined;
  const stdin = pulumi.output(a.props.stdin as pulumi.Input<string>).apply((s) => frameRestore(readRestoreStdin(s).replace(/^@generation .*\n/m, "")));
  return { props: { ...a.props, stdin }, opts: a.opts };
};

export type Conn = NetTuningArgs["connection"];

export function sysMoveProgram(name: string, connection: Conn, args: Omit<NetTuningArgs, "connection">, transformations: pulumi.ResourceTransformation[] = []) {
  return () => {
    const t = new NetTuning(name, { connection, ...args }, { transformations });
    return { applied: t.applied, previous: t.previous, filePath: t.filePath, warnings: t.warnings };
  };
}

export function nicMoveProgram(name: string, connection: Conn, args: Omit<NicQueuesArgs, "connection">) {
  return () => {
    const n = new NicQueues(name, { connection, ...args });
    return { applied: n.applied, previous: n.previous, persistedAs: n.persistedAs, warnings: n.warnings };
  };
}
