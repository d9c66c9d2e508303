/**
 * Conflicts across the resources of one program, caught at preview when their hosts are known (the connection's host
 * and port are plain values): two NetTunings setting one key on one host, two NicQueues on one interface of one
 * host, or `rps.sockFlowEntries` (the host-wide net.core.rps_sock_flow_entries) set by two NicQueues, or by a
 * NicQueues and a NetTuning, on one host. Without this the second fails only on the host, after the first was applied. Hosts that come from another
 * resource's outputs are still protected by the host's owner check (at apply, before anything changes).
 */
import * as pulumi from "@pulumi/pulumi";
import { settingByArg } from "../provider/nic/spec";

/** The host-wide sysctl NicQueues' `rps.sockFlowEntries` writes (from the NIC spec): claimed like a NetTuning key. */
export const SOCK_FLOW_KEY = settingByArg("rps", "sockFlowEntries")!.ethtool;

/** host:port → item (sysctl key or interface) → the resource that claimed it. */
type Claims = Map<string, Map<string, string>>;
const perStack = new WeakMap<object, Claims>();
const withoutStack: Claims = new Map();

/** The claims of the program being run (one per stack run; one per process when there is no stack resource). */
function claims(): Claims {
  const stack = pulumi.runtime.getStackResource();
  if (!stack) return withoutStack;
  let c = perStack.get(stack);
  if (!c) perStack.set(stack, (c = new Map()));
  return c;
}

/** `host:port` when the connection's host and port are plain values, else undefined. */
export function knownHost(connection: unknown): string | undefined {
  if (typeof connection !== "object" || connection === null || pulumi.Output.isInstance(connection)) return undefined;
  const { host, port } = connection as { host?: unknown; port?: unknown };
  if (typeof host !== "string" || host === "") return undefined;
  if (port !== undefined && typeof port !== "number") return undefined;
  return `${host.toLowerCase()}:${port ?? 22}`;
}

/**
 * Claims `items` on `host` for `resource` (a resource may claim again: it replaces its own claim).
 * Returns a problem per item another resource of this program already claimed; claims nothing then.
 */
export function claim(host: string, items: string[], resource: string, describe: (item: string, other: string) => string): string[] {
  const all = claims();
  let onHost = all.get(host);
  if (!onHost) all.set(host, (onHost = new Map()));
  const problems = items.filter((i) => onHost!.has(i) && onHost!.get(i) !== resource).map((i) => describe(i, onHost!.get(i)!));
  if (problems.length > 0) return problems;
  for (const [i, r] of [...onHost]) if (r === resource && !items.includes(i)) onHost.delete(i);
  for (const i of items) onHost.set(i, resource);
  return [];
}
