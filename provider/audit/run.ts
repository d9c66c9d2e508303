/**
 * Runs the audit on many hosts (issue #33): per host, the host key against known_hosts, then ONE SSH session with
 * the audit program on stdin (provider/live/ssh.ts readOverSsh, bounded by its limiter), then the parse and the
 * findings. A host that does not answer is a report of its own; the others are still audited. No Pulumi imports.
 */
import * as fs from "fs";
import { limiter, readOverSsh, ReadConnection } from "../live/ssh";
import { auditCommand, auditProgram, HostFacts, parseAudit } from "./program";
import { AdviceOptions, Finding, SettingRow, hostFindings, settingRows } from "./findings";
import { fetchHostKey, knownHostsLine, parseKnownHosts, verifyHostKey } from "./knownHosts";
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

async function checkKey(host: string, port: number, policy: HostKeyPolicy, timeoutMs: number): Promise<{ ok: true; how: "known" | "accepted-new" } | { ok: false; reason: string }> {
  const k = await fetchHostKey(host, port, timeoutMs);
  if (!k.ok) return k;
  const lines = policy.files.flatMap((f) => { try { return parseKnownHosts(fs.readFileSync(f, "utf8")); } catch { return []; } });
  const v = verifyHostKey(lines, host, port, k.key, policy.acceptNew);
  if (v.ok && v.how === "accepted-new" && policy.appendTo) fs.appendFileSync(policy.appendTo, knownHostsLine(host, port, k.key), { mode: 0o600 });
  return v;
}

/** Audits one host (never throws). */
export async function auditHost(t: AuditTarget, o: AuditOptions): Promise<HostReport> {
  const t0 = Date.now();
  const base: HostReport = { name: t.name, target: targetText(t), reachable: false, ms: 0, settings: [], findings: [] };
  if (t.resources) base.declaredBy = t.resources;
  const fail = (error: string): HostReport => ({ ...base, error, ms: Date.now() - t0, findings: [{ level: "error", rule: "reachability", message: error }] });
  let hostKey: HostReport["hostKey"] = "not-checked";
  if (o.hostKeys) {
    if (o.proxy) {
      const p = await checkKey(o.proxy.host, o.proxy.port, o.hostKeys, o.timeoutMs);
      if (!p.ok) return fail(`bastion: ${p.reason}`);
    } else {
      const k = await checkKey(t.host, t.port, o.hostKeys, o.timeoutMs);
      if (!k.ok) return fail(k.reason);
      hostKey = k.how;
    }
  }
  const conn: ReadConnection = { host: t.host, port: t.port, user: t.user };
  if (o.privateKey !== undefined) conn.privateKey = o.privateKey;
  if (o.privateKeyPassword !== undefined) conn.privateKeyPassword = o.privateKeyPassword;
  if (o.password !== undefined) conn.password = o.password;
  if (o.proxy) {
    conn.proxy = { host: o.proxy.host, port: o.proxy.port, user: o.proxy.user };
    if (o.privateKey !== undefined) conn.proxy.privateKey = o.privateKey;
  }
  const r = await readOverSsh(conn, auditCommand(o.sudo), auditProgram(), o.timeoutMs);
  if (!r.ok) return fail(r.reason);
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
