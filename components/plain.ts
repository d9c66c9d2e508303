import * as pulumi from "@pulumi/pulumi";

/** True when a value contains no Output or Promise at any depth (so it can be validated synchronously). */
export function isPlain(value: unknown): boolean {
  if (pulumi.Output.isInstance(value) || value instanceof Promise) return false;
  if (Array.isArray(value)) return value.every(isPlain);
  if (value !== null && typeof value === "object") return Object.values(value).every(isPlain);
  return true;
}
