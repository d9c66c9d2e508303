/**
 * Runs the audit on many hosts (issue #33): per host ONE SSH connection (provider/live/ssh.ts readOverSsh, bounded by
 * its limiter) whose handshake checks the host key against known_hosts (the bastion's, through -J) and whose one
 * session runs the audit program on stdin, then the parse and the findings. A host that does not answer is a report
 * of its own; the others are still audited. No Pulumi imports.
 */
import * as fs from "fs";
import { HostKeyPolicy as ReadKeyPolicy, limiter, readOverSsh, ReadConnection } from "../live/ssh";
import { auditCommand, auditProgram, HostFacts, parseAudit } from "./program";
import { AdviceOptions, Finding, SettingRow, hostFindings, settingRows } from "./findings";
import { KnownHostLine, knownHostsLine, readKnownHosts, verifyHostKey } from "../live/knownHosts";
import { headlineCounters } from "./counters";

/** One host to audit. */
export interface AuditTarget {
  /** What the report calls it: the inventory name, the stack resource's host, or user@host:port. */
  name: string;
  host: string;
  port: number;
  user: string;
  /** Declared sysctl values (from a stack), key → value. */
  declared?: Record<string, string>;
  /** Stack resources that declared them (URNs or names). */
  resources?: string[];
}

export interface HostKeyPolicy {
  /** known_hosts files read (in order). */
  files: string[];
  /** Trust an unknown host on first use, and append its key to `appendTo`. */
  acceptNew: boolean;
  appendTo?: string;
}

export interface AuditOptions {
  privateKey?: string;
  privateKeyPassword?: string;
  password?: string;
  /** -J user@bastion[:port] */
  proxy?: { host: string; port: number; user: string };
  sudo: boolean;
  /** undefined: no host key check (tests of the lab only; the CLI always checks). */
  hostKeys?: HostKeyPolicy;
  parallel: number;
  timeoutMs: number;
  advice: AdviceOptions;
  /** Previous counters per host name (an earlier JSON report): rises become findings. */
  before?: Record<string, Record<string, number>>;
  onProgress?: (done: number, total: number, name: string) => void;
}

/** What the audit found on one host. */
export interface HostReport {
  name: string;
  target: string;
  reachable: boolean;
  /** Why the host could not be audited (unreachable, host key refused, login refused, not an audit answer). */
  error?: string;
  ms: number;
  hostKey?: "known" | "accepted-new" | "not-checked";
  facts?: HostFacts;
  settings: SettingRow[];
  findings: Finding[];
  declaredBy?: string[];
}

export function targetText(t: { user: string; host: string; port: number }): string {
  const h = t.host.includes(":") ? `[${t.host}]` : t.host;
  return `${t.user}@${h}:${t.port}`;
}

/**
 * The audit's host-key checks as a read policy, applied inside the read's one handshake: with a bastion only its key
 * is checked (the target is "not-checked", docs/audit.md), else the host's; known_hosts is read once per host; an
 * accepted new key is appended to `appendTo`. Without `policy` (lab tests only) nothing is checked.
 */
function auditKeyPolicy(policy: HostKeyPolicy | undefined, viaProxy: boolean): ReadKeyPolicy {
  let lines: KnownHostLine[] | undefined;
  return {
    offer: () => undefined,
    check(c, hop, key) {
      if (!policy || (viaProxy && hop === "host")) return { ok: true, how: "not-checked", verified: true };
      const v = verifyHostKey((lines ??= readKnownHosts(policy.files)), c.host, c.port ?? 22, key, policy.acceptNew);
      if (!v.ok) return { ok: false, reason: hop === "proxy" ? `bastion: ${v.reason}` : v.reason };
      if (v.how === "accepted-new" && policy.appendTo) fs.appendFileSync(policy.appendTo, knownHostsLine(c.host, c.port ?? 22, key), { mode: 0o600 });
      return { ok: true, how: v.how, verified: true };
    },
  };
}

/** Audits one host (never throws). */
export async function auditHost(t: AuditTarget, o: AuditOptions): Promise<HostReport> {
  const t0 = Date.now();
  const base: HostReport = { name: t.name, target: targetText(t), reachable: false, ms: 0, settings: [], findings: [] };
  if (t.resources) base.declaredBy = t.resources;
  const fail = (error: string): HostReport => ({ ...base, error, ms: Date.now() - t0, findings: [{ level: "error", rule: "reachability", message: error }] });
  const conn: ReadConnection = { host: t.host, port: t.port, user: t.user };
  if (o.privateKey !== undefined) conn.privateKey = o.privateKey;
  if (o.privateKeyPassword !== undefined) conn.privateKeyPassword = o.privateKeyPassword;
  if (o.password !== undefined) conn.password = o.password;
  if (o.proxy) {
    conn.proxy = { host: o.proxy.host, port: o.proxy.port, user: o.proxy.user };
    if (o.privateKey !== undefined) conn.proxy.privateKey = o.privateKey;
  }
  const r = await readOverSsh(conn, auditCommand(o.sudo), auditProgram(), o.timeoutMs, auditKeyPolicy(o.hostKeys, o.proxy !== undefined));
  if (!r.ok) return fail(r.reason);
  const how = r.hostKeys?.find((k) => k.hop === "host")?.how;
  const hostKey: HostReport["hostKey"] = how === "known" || how === "accepted-new" ? how : "not-checked";
  let facts: HostFacts;
  try {
    facts = parseAudit(r.stdout);
  } catch (e) {
    const why = o.sudo && /sudo/.test(r.stderr) ? `sudo refused: ${r.stderr.trim().split("\n")[0]}` : `${(e as Error).message}${r.stderr ? `; stderr: ${r.stderr.trim().slice(0, 200)}` : ""}`;
    return fail(why);
  }
  const settings = settingRows(facts, t.declared ?? {});
  const advice: AdviceOptions = { ...o.advice };
  const before = o.before?.[t.name];
  if (before) advice.before = before;
  const findings = hostFindings(facts, settings, advice);
  return { ...base, reachable: true, ms: Date.now() - t0, hostKey, facts, settings, findings };
}

/** Audits every target, at most `parallel` at once; reports in the targets' order. */
export async function auditHosts(targets: AuditTarget[], o: AuditOptions): Promise<HostReport[]> {
  const lim = limiter(Math.max(1, o.parallel));
  let done = 0;
  return Promise.all(targets.map((t) => lim.run(async () => {
    const r = await auditHost(t, o);
    done++;
    o.onProgress?.(done, targets.length, t.name);
    return r;
  })));
}

/** The counters a report shows for a host. */
export function reportCounters(h: HostReport): Record<string, number> {
  return h.facts ? headlineCounters(h.facts.counters) : {};
}
