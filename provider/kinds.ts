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

/** The descriptors, by kind. */
export const KINDS: { readonly [K in HostKind]: KindDescriptor & { kind: K } } = {
  sysctl: {
    kind: "sysctl",
    resource: "NetTuning",
    type: "net-tuning:index:NetTuning",
    engineFiles: ["sysctlspec.sh", "sysctl.sh"],
    fallbackFiles: ["restore.sh", "restore-sysctl.sh"],
    fallbackAdopt: "restore-adopt-sysctl.sh",
    journalDir: `${STATE_ROOT}/sysctl`,
  },
  nic: {
    kind: "nic",
    resource: "NicQueues",
    type: "net-tuning:index:NicQueues",
    engineFiles: ["nicspec.sh", "nic.sh"],
    fallbackFiles: ["restore.sh", "restore-nic.sh"],
    fallbackAdopt: "restore-adopt-nic.sh",
    journalDir: `${STATE_ROOT}/nic`,
  },
};

/** Both kinds, in the order the engine file and the live read load them. */
export const HOST_KINDS: readonly HostKind[] = ["sysctl", "nic"];
