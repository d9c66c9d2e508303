/**
 * The engine delivery (ARCHITECTURE.md, "One engine per host"): one stack-level `command:remote:CopyToRemote` named
 * `net-tuning-engine-<token>` per stack and machine address, shared by every NetTuning and NicQueues of the stack on
 * that address, which stages the engine file (a FileAsset: state keeps only its path and hash) as
 * `engine.<token>.sh`. The apply bootstrap installs it from there (provider/host/programs.ts, ENGINE_BOOT).
 *
 * Shared only when the address (host, port, user, proxy) is a plain value at registration: a connection built from
 * another resource's Output (a server created in the same program) is unknown during the first preview, and a
 * resource registered later would be missing from that preview. Such a resource gets a delivery of its own, named
 * after its owner id, whose `replaceOnChanges` (MOVE_KEYS) makes a move copy again.
 *
 * The delivery has no parent (it belongs to no single resource): its URN depends only on the stack and the address,
 * so which resource registers it first, or removing one of them, never replaces it. Its token also names the staged
 * file: two stacks on one host never write each other's file in place.
 */
import { createHash } from "crypto";
import * as pulumi from "@pulumi/pulumi";
import { deploymentKey } from "./deployment";
import { isPlain } from "./plain";
import { RegisteredConnection, RemoteCopy } from "./remote";
import { engine, enginePath } from "../provider/host/engine";
import { deliveryName, engineRemotePath } from "../provider/host/programs";
import type { Owner } from "../provider/owner";

export interface Delivery {
  resource: RemoteCopy;
  /** Names the delivery (`net-tuning-engine-<token>`) and its staged file (`engine.<token>.sh`). */
  token: string;
  /** Shared by every resource of the stack on the same address (else the resource's own). */
  shared: boolean;
}

/**
 * What makes a move replace a resource (a new address is a new machine, as far as Pulumi knows): a change of its
 * `connection`. pulumi-command's schema declares `connection` secret, and the engine diffs a secret as one value: a
 * replaceOnChanges path inside it (`connection.host`, what 0.3.0 set) matches nothing, so under the real engine a move
 * was an in-place update and the old machine's restore never ran (tests/cli/harness.test.ts, pulumi v3.248.0 with
 * pulumi-resource-command v1.2.1). The whole key does match. A new key or password replaces too: the old -restore then
 * runs its stored delete with the old credentials (on the same machine it changes nothing, a newer generation took
 * the machine over), so the old credentials must still log in during that `up` (docs: rotate keys by adding the new
 * one first). An upgrade from 0.2.0 or 0.3.0 changes no connection: it replaces nothing.
 */
export const MOVE_KEYS = ["connection"];

/**
 * The stack's deliveries by address key: one map per program run (its stack resource). Constructed by the component
 * provider host for another language, there is no stack resource: the map is then the deployment's (deployment.ts).
 * A map kept for the whole plugin process instead left the update of a `pulumi up` without the delivery its preview
 * had registered: the apply then found no engine on the host (found under the real CLI, tests/cli/yaml.test.ts).
 */
const perStack = new WeakMap<object, Map<string, Delivery>>();
const perDeployment = new Map<string, Map<string, Delivery>>();
function deliveries(): Map<string, Delivery> {
  const stack = pulumi.runtime.getStackResource();
  if (!stack) {
    const id = deploymentKey();
    let d = perDeployment.get(id);
    if (!d) perDeployment.set(id, (d = new Map()));
    return d;
  }
  let d = perStack.get(stack);
  if (!d) perStack.set(stack, (d = new Map()));
  return d;
}

/**
 * The address of a connection as a key (host, port, user, proxy), when every part of it is a plain value; else
 * undefined. Two connections with the same key reach the same account on the same machine.
 */
export function addressKey(connection: unknown): string | undefined {
  if (typeof connection !== "object" || connection === null || pulumi.Output.isInstance(connection)) return undefined;
  const c = connection as { host?: unknown; port?: unknown; user?: unknown; proxy?: unknown };
  if (typeof c.host !== "string" || c.host === "") return undefined;
  if (c.port !== undefined && typeof c.port !== "number") return undefined;
  if (c.user !== undefined && typeof c.user !== "string") return undefined;
  if (c.proxy !== undefined && !isPlain(c.proxy)) return undefined;
  return JSON.stringify([c.host.toLowerCase(), c.port ?? 22, c.user ?? "root", c.proxy ?? null]);
}

/** `<host, file-name safe>-<8 hex of project, stack and address>`: unique per stack and address, readable. */
export function sharedToken(project: string, stack: string, key: string, home: boolean): string {
  const host = (JSON.parse(key) as [string])[0].replace(/[^A-Za-z0-9.-]/g, "_").replace(/^[.-]+/, "").slice(0, 60) || "host";
  const hash = createHash("sha256").update(JSON.stringify([project, stack, key, home])).digest("hex").slice(0, 8);
  return `${host}-${hash}`;
}

/**
 * The delivery the resource `owner` (the component `parent`) uses: the stack's shared one for its address (registered
 * by the first resource of the stack on that address), or one of its own. `connection`: the resource's argument (its
 * address decides the sharing); `registered`: the same as its children register it (components/remote.ts). `home`: stage in the SSH user's home
 * (become "sudo", or a user other than root); when it is not known yet (an Output), the delivery is the resource's
 * own. `waitFor`: the resource's validated plan when its arguments were not all known at construction (the delivery
 * then waits for it: a bad value that arrives as an Output registers nothing, so not even the engine reaches the
 * host). The delivery uses the command provider the component would give a child.
 */
export function engineDelivery(
  parent: pulumi.ComponentResource,
  owner: Owner,
  connection: unknown,
  registered: RegisteredConnection,
  home: boolean | pulumi.Output<boolean>,
  waitFor?: pulumi.Output<unknown>,
  /** A rollout's previous budget check (components/rollout.ts): the host is touched only after it passed. */
  after?: pulumi.Resource,
): Delivery {
  const key = typeof home === "boolean" ? addressKey(connection) : undefined;
  const id = key === undefined ? undefined : `${key}\u0000${home}`;
  const map = deliveries();
  const known = id === undefined ? undefined : map.get(id);
  if (known) return known;
  const shared = key !== undefined;
  const token = shared ? sharedToken(pulumi.getProject(), pulumi.getStack(), key, home as boolean) : owner.id;
  let remotePath: pulumi.Input<string> = typeof home === "boolean" ? engineRemotePath(token, home) : home.apply((h) => engineRemotePath(token, h));
  if (waitFor) remotePath = pulumi.all([remotePath, waitFor]).apply(([p]) => p);
  const provider = parent.getProvider("command:remote:CopyToRemote");
  const resource = new RemoteCopy(
    deliveryName(token),
    { connection: registered, source: new pulumi.asset.FileAsset(enginePath(engine())), remotePath },
    // the name of a shared delivery changes with the address; a resource's own keeps its name, so a move replaces it
    { ...(shared ? {} : { replaceOnChanges: MOVE_KEYS }), ...(provider ? { provider } : {}), ...(after ? { dependsOn: [after] } : {}) },
  );
  const d: Delivery = { resource, token, shared };
  if (id !== undefined) map.set(id, d);
  return d;
}
