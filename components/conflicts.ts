/**
 * Conflicts across the resources of one program, caught at preview when their hosts are known (the connection's host
 * and port are plain values): two NetTunings setting one key (or two names of one kernel variable, such as
 * net.ipv4.ip_forward and net.ipv4.conf.all.forwarding) on one host, two NicQueues on one interface of one
 * host, or `rps.sockFlowEntries` (the host-wide net.core.rps_sock_flow_entries) set by two NicQueues, or by a
 * NicQueues and a NetTuning, on one host. Without this the second fails only on the host, after the first was applied. Hosts that come from another
 * resource's outputs are still protected by the host's owner check (at apply, before anything changes).
 */
import * as pulumi from "@pulumi/pulumi";
import { settingByArg } from "../provider/nic/spec";
import type { Problem } from "../provider/errors";

/** The host-wide sysctl NicQueues' `rps.sockFlowEntries` writes (from the NIC spec): claimed like a NetTuning key. */
export const SOCK_FLOW_KEY = settingByArg("rps", "sockFlowEntries")!.ethtool;

/** host:port → the item's identity (a sysctl's kernel variable, an interface) → the resource and the item it gave. */
type Claims = Map<string, Map<string, { resource: string; item: string }>>;
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
 * Claims `items` on `host` for `resource` (a resource may claim again: it replaces its own claim). `identity` maps an
 * item to what it sets (default: itself): two items of one identity are one claim (sysctl keys: `variableOf` of the catalogue,
 * so net.ipv4.ip_forward and net.ipv4.conf.all.forwarding conflict). Returns a problem per item another resource of
 * this program already claimed (`otherItem`: the name that resource gave); claims nothing then.
 */
export function claim(
  host: string,
  items: string[],
  resource: string,
  describe: (item: string, other: string, otherItem: string) => Problem,
  identity: (item: string) => string = (i) => i,
): Problem[] {
  const all = claims();
  let onHost = all.get(host);
  if (!onHost) all.set(host, (onHost = new Map()));
  const problems: Problem[] = [];
  for (const i of items) {
    const c = onHost.get(identity(i));
    if (c && c.resource !== resource) problems.push(describe(i, c.resource, c.item));
  }
  if (problems.length > 0) return problems;
  const ids = new Set(items.map(identity));
  for (const [id, c] of [...onHost]) if (c.resource === resource && !ids.has(id)) onHost.delete(id);
  for (const i of items) onHost.set(identity(i), { resource, item: i });
  return [];
}

/**
 * {@link claim} on the host of `connection` when it is known (a plain host and port), once the resource's plan is
 * valid (`ready`); no problem otherwise. `describe` also gets the host, for the message.
 */
export function claimOnHost(
  ready: boolean,
  connection: unknown,
  items: () => string[],
  resource: string,
  describe: (item: string, other: string, otherItem: string, host: string) => Problem,
  identity?: (item: string) => string,
): Problem[] {
  const host = knownHost(connection);
  if (!ready || !host) return [];
  return claim(host, items(), resource, (i, o, oi) => describe(i, o, oi, host), identity);
}
