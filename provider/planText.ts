/**
 * The parts every plan shares (the host engine's runtime.sh parses them): the header and the `@orig` lines of a
 * restore plan. One renderer for the sysctl and nic kinds. Pure.
 */
import { Owner } from "./owner";
import type { HostKind } from "./kinds";

/** `@net-tuning v1`, `@kind`, `@owner`, `@owner-id`: the first lines of every apply and restore plan. */
export function planHeader(kind: HostKind, owner: Owner): string[] {
  return ["@net-tuning v1", `@kind ${kind}`, `@owner ${owner.label}`, `@owner-id ${owner.id}`];
}

/** `@orig KEY<TAB>VALUE` lines from Pulumi state, in `keys` order; an unsafe key or value is refused (never sent). */
export function origLines(previous: Record<string, string>, keys: string[], safeKey: RegExp, safeValue: RegExp): string[] {
  return keys.map((k) => {
    if (!safeKey.test(k) || !safeValue.test(previous[k])) {
      throw new Error(`pulumi-net-tuning: refusing to store an unsafe original value for ${JSON.stringify(k)}`);
    }
    return `@orig ${k}\t${previous[k]}`;
  });
}
