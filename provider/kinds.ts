/**
 * The two kinds of host settings this package manages, one descriptor each: the one place of the facts that differ
 * by kind and that the wiring, the host programs and the messages share (issue #31). The settings themselves are
 * declared where their rules live, and everything about them derives from there: the sysctl catalogue
 * (provider/sysctl/catalogue.ts: keys, ranges, units, rules, docs; sysctlspec.sh is generated from it) and the NIC spec
 * (provider/nic/spec.ts: the args, their types, ranges and docs; the generated args interfaces, schema, reference and
 * nicspec.sh). The Pulumi side of a kind (its arguments, validation, live read and restore plan) is its
 * components/tuning.ts hooks.
 */

/** A kind: `sysctl` (NetTuning) or `nic` (NicQueues). The host engine's KIND argument and the plans' `@kind` line. */
export type HostKind = "sysctl" | "nic";

/** What differs by kind. */
export interface KindDescriptor {
  kind: HostKind;
  /** The resource class that manages the kind, as users and messages name it. */
  resource: "NetTuning" | "NicQueues";
  /** Its Pulumi type token. */
  type: `net-tuning:index:${"NetTuning" | "NicQueues"}`;
  /**
   * The host engine's sources of the kind (provider/host/sh), in load order: its generated tables first (sysctlspec.sh
   * from the catalogue, nicspec.sh from the NIC spec).
   */
  engineFiles: readonly string[];
  /** The fallback restore's sources (the shared part, then the kind's: programs.ts fallbackProgram). */
  fallbackFiles: readonly string[];
  /** The fallback restore's adoption part (for a plan that gives adopted files or rc.local lines back). */
  fallbackAdopt: string;
  /** The directory of the kind's journals on the host (runtime.sh: `$NT_ROOT/<kind>`, NT_ROOT = {@link STATE_ROOT}). */
  journalDir: string;
}

/** The directory of the host engine's state: a directory per kind for its journals, and the staging directory. */
export const STATE_ROOT = "/var/lib/pulumi-net-tuning";

/**
 * A kind's descriptor from its name and resource class: its sources follow one naming rule in provider/host/sh (the
 * generated tables `<kind>spec.sh`, then `<kind>.sh`; the fallback's `restore-<kind>.sh` after the shared
 * `restore.sh`, its adoption part `restore-adopt-<kind>.sh`), its journals are `$NT_ROOT/<kind>`.
 */
function describe<K extends HostKind>(kind: K, resource: KindDescriptor["resource"]): KindDescriptor & { kind: K } {
  return {
    kind,
    resource,
    type: `net-tuning:index:${resource}`,
    engineFiles: [`${kind}spec.sh`, `${kind}.sh`],
    fallbackFiles: ["restore.sh", `restore-${kind}.sh`],
    fallbackAdopt: `restore-adopt-${kind}.sh`,
    journalDir: `${STATE_ROOT}/${kind}`,
  };
}

/** The descriptors, by kind. */
export const KINDS: { readonly [K in HostKind]: KindDescriptor & { kind: K } } = {
  sysctl: describe("sysctl", "NetTuning"),
  nic: describe("nic", "NicQueues"),
};

/** Both kinds, in the order the engine file and the live read load them. */
export const HOST_KINDS: readonly HostKind[] = ["sysctl", "nic"];
