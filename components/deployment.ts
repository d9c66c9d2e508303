/**
 * The identity of the current deployment (one program run: the preview or the update of a `pulumi up`), for the
 * per-run maps of components/live.ts (one read per host) and components/delivery.ts (one engine delivery per address)
 * when they cannot key by the stack resource: under the multi-language component provider each construct call gets a
 * runtime store of its own, and one plugin process may serve several deployments (the preview and the update of one
 * `pulumi up`, or every command when the engine attaches to a running provider). Each deployment has its own resource
 * monitor, whose address the SDK sets for every construct (runtime/state getStore().settings.options.monitorAddr; it
 * has no public getter, so "" when it cannot be read), and the dry-run flag tells a preview from an update.
 */
import * as pulumi from "@pulumi/pulumi";

function monitorAddress(): string {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const state = require("@pulumi/pulumi/runtime/state") as { getStore(): { settings?: { options?: { monitorAddr?: unknown } } } };
    const a = state.getStore().settings?.options?.monitorAddr;
    return typeof a === "string" ? a : "";
  } catch {
    return "";
  }
}

/** `[monitor address, project, stack, dry run]` as one string, or "" when the SDK's settings cannot be read. */
export function deploymentKey(): string {
  try {
    return JSON.stringify([monitorAddress(), pulumi.getProject(), pulumi.getStack(), pulumi.runtime.isDryRun()]);
  } catch {
    return "";
  }
}
