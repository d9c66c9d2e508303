/**
 * `net-tuning audit`, `show` and `diff` (issue #33): argument parsing, host selection, the run and the outputs.
 * bin/net-tuning.ts dispatches here. Exit codes: 0 fine, 1 findings at or above --fail-on (diff: a difference),
 * 2 usage error, 3 a host could not be audited (unreachable, host key refused, login refused).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { tryBdp, tryParseBandwidth, tryParseRtt } from "../sizing";
import { AuditOptions, AuditTarget, HostReport, auditHosts } from "./run";
import { parseHostSpec, parseInventory, parseStackExport } from "./targets";
import { defaultKnownHostsFiles } from "../live/knownHosts";
import { auditDocument, renderDetails, renderHtml, renderMarkdown, renderSummary } from "./report";

export interface AuditIo {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  /** stdin text for `--stack -`. */
  readStdin?: () => string;
}

export class AuditUsageError extends Error {}

export const AUDIT_USAGE = `Usage: net-tuning audit [hosts] [ssh options] [report options]
       net-tuning show --host USER@HOST[:PORT] [ssh options] [--json]
       net-tuning diff --stack FILE|- [ssh options] [--json]

Reads, over one SSH session per host and without changing anything: kernel, distribution, CPUs, memory, every NIC
(driver, speed, channels and rings current/max, offloads), every sysctl the catalogue knows (against the stack's
declaration or the kernel's default), drift since the last apply, the counters (softnet drops and time_squeeze,
ListenOverflows/ListenDrops, retransmits, UDP buffer errors, NIC rx_no_buffer/missed, TIME_WAIT, conntrack fill),
the boot files that override each other, and findings with reasons.

Hosts (any mix; at least one):
  --host USER@ADDR[:PORT]   a host (repeatable)
  --inventory FILE          one host per line, or a static Ansible INI/YAML inventory
                            (groups, ansible_host, ansible_port, ansible_user)
  --stack FILE|-            \`pulumi stack export\` JSON: the hosts of its NetTuning/NicQueues and their declared
                            values (needs the components' endpoint output, or an export with --show-secrets)
  --user NAME               user for hosts given without one (default: $USER)

SSH (as OpenSSH users expect):
  -i FILE                   private key (default: the agent, then ~/.ssh/id_ed25519, id_ecdsa, id_rsa)
  -J USER@BASTION[:PORT]    jump host
  --sudo                    run the read as root through \`sudo -n\` (0600 keys and records)
  --known-hosts FILE        known_hosts file (default ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts); checking is on
  --accept-new              trust an unknown host key on first use and add it to the known_hosts file
  --parallel N              hosts read at once (default 16)
  --timeout SECONDS         per host, connect and read (default 20)

Report:
  --json | --markdown       print the JSON document (schema net-tuning-audit/v1, docs/audit.md) or Markdown
  --html FILE               also write one self-contained HTML page (fleet table, counter charts)
  --details                 print every host in full (as show does)
  --fail-on LEVEL           exit 1 on findings at or above warning|error (default error)
  --bandwidth RATE --rtt T  check tcp_rmem/tcp_wmem max against 2 × BDP
  --concurrency N           memory warning: default buffers × N against memory and tcp_mem
  --before FILE             an earlier --json report: counters that rose since then are findings

Exit codes: 0 fine, 1 findings at or above --fail-on (diff: a difference), 2 usage error, 3 hosts unreachable.
`;

interface Args {
  hosts: string[];
  inventory?: string;
  stack?: string;
  user: string;
  identity?: string;
  jump?: string;
  sudo: boolean;
  knownHosts?: string;
  acceptNew: boolean;
  parallel: number;
  timeoutMs: number;
  format: "text" | "json" | "markdown";
  html?: string;
  details: boolean;
  failOn: "warning" | "error";
  bandwidth?: string;
  rtt?: string;
  concurrency?: number;
  before?: string;
}

const FLAGS = new Set(["--sudo", "--accept-new", "--json", "--markdown", "--details"]);
const VALUES = new Set(["--host", "--inventory", "--stack", "--user", "-i", "-J", "--known-hosts", "--parallel", "--timeout", "--html", "--fail-on", "--bandwidth", "--rtt", "--concurrency", "--before"]);

export function parseAuditArgs(argv: string[]): Args {
  const a: Args = { hosts: [], user: process.env.USER || os.userInfo().username || "root", sudo: false, acceptNew: false, parallel: 16, timeoutMs: 20_000, format: "text", details: false, failOn: "error" };
  const seen = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value: string | undefined;
    const eq = /^(--[a-z-]+)=(.*)$/s.exec(arg);
    if (eq) { arg = eq[1]; value = eq[2]; }
    if (FLAGS.has(arg)) {
      if (value !== undefined) throw new AuditUsageError(`${arg} takes no value`);
      if (arg === "--sudo") a.sudo = true;
      else if (arg === "--accept-new") a.acceptNew = true;
      else if (arg === "--details") a.details = true;
      else {
        const f = arg === "--json" ? "json" : "markdown";
        if (a.format !== "text" && a.format !== f) throw new AuditUsageError("--json and --markdown exclude each other");
        a.format = f;
      }
      continue;
    }
    if (!VALUES.has(arg)) throw new AuditUsageError(arg.startsWith("-") ? `unknown option ${arg}` : `unexpected argument ${JSON.stringify(arg)}`);
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined || (value.startsWith("-") && value !== "-")) throw new AuditUsageError(`${arg} needs a value`);
    }
    if (arg !== "--host" && seen.has(arg)) throw new AuditUsageError(`${arg} given twice`);
    seen.add(arg);
    switch (arg) {
      case "--host": a.hosts.push(value); break;
      case "--inventory": a.inventory = value; break;
      case "--stack": a.stack = value; break;
      case "--user": a.user = value; break;
      case "-i": a.identity = value; break;
      case "-J": a.jump = value; break;
      case "--known-hosts": a.knownHosts = value; break;
      case "--html": a.html = value; break;
      case "--before": a.before = value; break;
      case "--bandwidth": { const r = tryParseBandwidth(value); if (!r.ok) throw new AuditUsageError(r.problem); a.bandwidth = value; break; }
      case "--rtt": { const r = tryParseRtt(value); if (!r.ok) throw new AuditUsageError(r.problem); a.rtt = value; break; }
      case "--parallel": case "--concurrency": case "--timeout": {
        if (!/^\d+$/.test(value) || Number(value) < 1) throw new AuditUsageError(`${arg} ${JSON.stringify(value)}: use a positive integer`);
        if (arg === "--parallel") a.parallel = Math.min(Number(value), 256);
        else if (arg === "--concurrency") a.concurrency = Number(value);
        else a.timeoutMs = Number(value) * 1000;
        break;
      }
      case "--fail-on":
        if (value !== "warning" && value !== "error") throw new AuditUsageError(`--fail-on ${JSON.stringify(value)}: use warning or error`);
        a.failOn = value;
        break;
    }
  }
  if ((a.bandwidth === undefined) !== (a.rtt === undefined)) throw new AuditUsageError("--bandwidth and --rtt go together");
  if (a.bandwidth !== undefined && a.rtt !== undefined && !tryBdp({ bandwidth: a.bandwidth, rtt: a.rtt }).ok) throw new AuditUsageError("--bandwidth/--rtt: invalid");
  return a;
}

function readFile(file: string, io: AuditIo, what: string): string {
  if (file === "-") {
    if (!io.readStdin) throw new AuditUsageError(`${what} -: no stdin`);
    return io.readStdin();
  }
  try { return fs.readFileSync(file, "utf8"); } catch (e) { throw new AuditUsageError(`${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`); }
}

function targetsOf(a: Args, io: AuditIo): { targets: AuditTarget[]; problems: string[] } {
  const targets: AuditTarget[] = [];
  const problems: string[] = [];
  try {
    for (const h of a.hosts) { const t = parseHostSpec(h, a.user); targets.push({ name: h, ...t }); }
    if (a.inventory !== undefined) targets.push(...parseInventory(readFile(a.inventory, io, "--inventory"), a.inventory, a.user));
    if (a.stack !== undefined) {
      const s = parseStackExport(readFile(a.stack, io, "--stack"));
      // a host also given by --host/--inventory gets the stack's declaration
      for (const t of s.targets) {
        const same = targets.find((x) => x.host === t.host && x.port === t.port && x.user === t.user);
        if (same) { same.declared = t.declared; same.resources = t.resources; } else targets.push(t);
      }
      problems.push(...s.problems);
    }
  } catch (e) {
    if (e instanceof AuditUsageError) throw e;
    throw new AuditUsageError((e as Error).message);
  }
  const seen = new Set<string>();
  return { targets: targets.filter((t) => { const k = `${t.user}@${t.host}:${t.port}`; if (seen.has(k)) return false; seen.add(k); return true; }), problems };
}

function sshOptions(a: Args): AuditOptions {
  const o: AuditOptions = { sudo: a.sudo, parallel: a.parallel, timeoutMs: a.timeoutMs, advice: {} };
  if (a.bandwidth !== undefined && a.rtt !== undefined) { o.advice.bandwidth = a.bandwidth; o.advice.rtt = a.rtt; }
  if (a.concurrency !== undefined) o.advice.concurrency = a.concurrency;
  const keyFile = a.identity ?? (process.env.SSH_AUTH_SOCK ? undefined : ["id_ed25519", "id_ecdsa", "id_rsa"].map((f) => path.join(os.homedir(), ".ssh", f)).find((f) => fs.existsSync(f)));
  if (keyFile !== undefined) {
    try { o.privateKey = fs.readFileSync(keyFile, "utf8"); } catch (e) { throw new AuditUsageError(`-i ${keyFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`); }
  }
  if (a.jump !== undefined) {
    try { o.proxy = parseHostSpec(a.jump, a.user); } catch (e) { throw new AuditUsageError(`-J: ${(e as Error).message}`); }
  }
  const files = a.knownHosts !== undefined ? [a.knownHosts] : defaultKnownHostsFiles();
  const appendTo = a.knownHosts ?? path.join(os.homedir(), ".ssh", "known_hosts");
  o.hostKeys = { files, acceptNew: a.acceptNew, appendTo };
  if (a.before !== undefined) {
    try {
      const prev = JSON.parse(fs.readFileSync(a.before, "utf8")) as { schema?: string; hosts?: { name: string; allCounters?: Record<string, number> }[] };
      if (prev.schema !== "net-tuning-audit/v1" || !Array.isArray(prev.hosts)) throw new Error("not a net-tuning-audit/v1 document");
      o.before = Object.fromEntries(prev.hosts.filter((h) => h.allCounters).map((h) => [h.name, h.allCounters!]));
    } catch (e) { throw new AuditUsageError(`--before ${a.before}: ${(e as Error).message}`); }
  }
  return o;
}

function progress(io: AuditIo): AuditOptions["onProgress"] {
  if (!io.stderr.isTTY) return undefined;
  return (done, total, name) => {
    io.stderr.write(`\r\x1b[Kaudit: ${done}/${total} hosts (${name})`);
    if (done === total) io.stderr.write("\r\x1b[K");
  };
}

function exitCode(hosts: HostReport[], failOn: "warning" | "error"): number {
  if (hosts.some((h) => !h.reachable)) return 3;
  const levels = failOn === "warning" ? ["warning", "error"] : ["error"];
  return hosts.some((h) => h.findings.some((f) => levels.includes(f.level))) ? 1 : 0;
}

function optionsRecord(a: Args): Record<string, unknown> {
  return { sudo: a.sudo, parallel: a.parallel, failOn: a.failOn, bandwidth: a.bandwidth ?? null, rtt: a.rtt ?? null, concurrency: a.concurrency ?? null, stack: a.stack ?? null };
}

/** `net-tuning audit|show|diff …` */
export async function runAuditCommand(command: "audit" | "show" | "diff", argv: string[], io: AuditIo): Promise<number> {
  try {
    const a = parseAuditArgs(argv);
    if (command === "show" && (a.hosts.length !== 1 || a.inventory !== undefined || a.stack !== undefined)) throw new AuditUsageError("show takes exactly one --host");
    if (command === "diff" && a.stack === undefined) throw new AuditUsageError("diff needs --stack FILE|-");
    const { targets, problems } = targetsOf(a, io);
    for (const p of problems) io.stderr.write(`net-tuning: ${p}\n`);
    if (targets.length === 0) throw new AuditUsageError(problems.length ? "no host to audit" : "no host given: use --host, --inventory or --stack");
    const o = sshOptions(a);
    const onProgress = progress(io);
    if (onProgress) o.onProgress = onProgress;
    const hosts = await auditHosts(targets, o);
    const doc = auditDocument(hosts, optionsRecord(a));
    if (a.html !== undefined) fs.writeFileSync(a.html, renderHtml(doc, hosts));
    if (command === "diff") {
      const rows = hosts.map((h) => ({
        host: h.name, reachable: h.reachable, error: h.error,
        changed: h.settings.filter((s) => s.status === "declared-differs").map((s) => ({ key: s.key, declared: s.declared, host: s.value })),
        absent: h.settings.filter((s) => s.declared !== undefined && s.value === undefined).map((s) => ({ key: s.key, state: s.state })),
        unchanged: h.settings.filter((s) => s.status === "declared-match").length,
        drift: (h.facts?.records ?? []).flatMap((r) => r.drift.map((d) => ({ owner: r.owner ?? r.ownerId, ...d }))),
      }));
      if (a.format === "json") io.stdout.write(JSON.stringify({ schema: "net-tuning-diff/v1", hosts: rows }, null, 2) + "\n");
      else {
        for (const r of rows) {
          if (!r.reachable) { io.stdout.write(`${r.host}: unreachable: ${r.error}\n`); continue; }
          io.stdout.write(`${r.host}: ${r.changed.length} differ from the stack, ${r.unchanged} as declared, ${r.drift.length} drifted since the last apply\n`);
          for (const c of r.changed) io.stdout.write(`  ${c.key}: declared ${c.declared}, host ${c.host}\n`);
          for (const x of r.absent) io.stdout.write(`  ${x.key}: declared, ${x.state} on the host\n`);
          for (const d of r.drift) io.stdout.write(`  drift (${d.owner}): ${d.key} ${d.applied} → ${d.live}\n`);
        }
      }
      if (hosts.some((h) => !h.reachable)) return 3;
      return rows.some((r) => r.changed.length || r.absent.length || r.drift.length) ? 1 : 0;
    }
    if (a.format === "json") io.stdout.write(JSON.stringify(command === "show" ? { ...doc, hosts: doc.hosts } : doc, null, 2) + "\n");
    else if (a.format === "markdown") io.stdout.write(renderMarkdown(doc, hosts));
    else if (command === "show" || a.details) io.stdout.write(hosts.map(renderDetails).join("\n"));
    else io.stdout.write(renderSummary(doc, hosts));
    return exitCode(hosts, a.failOn);
  } catch (e) {
    if (e instanceof AuditUsageError) {
      io.stderr.write(`net-tuning: ${e.message}\nRun 'net-tuning ${command} --help' for usage.\n`);
      return 2;
    }
    throw e;
  }
}
