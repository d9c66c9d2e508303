/**
 * The `verify` argument and `verification` output of NetTuning and NicQueues (issue #34): named interfaces the schema
 * analyzer takes (no unions, no inline object types). The checks, plan lines and the output's types (Verification,
 * VerificationReading, parsed from the report there) are provider/counters/gate.ts.
 */
import type * as pulumi from "@pulumi/pulumi";
import { checkVerify, gateDirectives, gateResult, type GateTarget, type Verification } from "../provider/counters/gate";
import type { HostReport } from "../provider/report";

/**
 * A verify gate: the host reads the named counters before the change, waits `soakSeconds` after it (inside the
 * apply's SSH session) and reads them again; a limit exceeded rolls the change back on the host (nothing persisted)
 * and fails the resource with a table of name, before, after, limit. See docs/safe-rollout.md for every name.
 */
export interface VerifyArgs {
  /** Seconds the host waits after the change before the second reading, 1 to 900. The host's lock is held meanwhile. Required. */
  soakSeconds: pulumi.Input<number>;
  /**
   * Counters and the most each may rise during the soak (a whole number ≥ 0): the kernel's names from /proc/net/netstat
   * and /proc/net/snmp (`"TcpExt.ListenOverflows"`, `"Tcp.RetransSegs"`, `"Udp.RcvbufErrors"`), `"softnet.dropped"`,
   * `"softnet.time_squeeze"` (summed over CPUs), and the NIC's `ethtool -S` statistics: `"ethtool.<stat>"` on a
   * NicQueues (its interface), `"ethtool.<interface>.<stat>"` on a NetTuning. Defaults to none.
   */
  maxIncrease?: pulumi.Input<Record<string, pulumi.Input<number>>>;
  /**
   * Gauges and the highest level each may show after the soak: `"sockets.timeWait"` (sockets in TIME_WAIT),
   * `"conntrack.fill"` (nf_conntrack_count / nf_conntrack_max, 0 to 1), `"conntrack.count"`, `"Tcp.CurrEstab"`.
   * Defaults to none.
   */
  maxLevel?: pulumi.Input<Record<string, pulumi.Input<number>>>;
}

/** The gate's problems and plan lines for a resolved `verify` (none for undefined: the plan stays as it was). */
export function verifyPlan(v: unknown, t: GateTarget): { problems: string[]; lines: string[] } {
  const c = checkVerify(v, t);
  return { problems: c.problems, lines: gateDirectives(c.gate) };
}

/** The `verification` output from an apply's report (undefined without a gate); `nic`: a NicQueues' (its own interface's ethtool names). */
export function verificationOf(r: HostReport, nic = false): Verification | undefined {
  return gateResult(r.verify, nic);
}
