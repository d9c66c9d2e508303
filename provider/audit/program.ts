/**
 * The audit's host program and the parser of its answer (issue #33). ONE POSIX sh program per host, sent on stdin
 * over one SSH session: `audit.sh` (host facts, every catalogue sysctl, NICs, boot files, irqbalance, records), the
 * counter reader ({@link renderCounterSh}) and the live read of the engine's records (the same program and parser a
 * preview uses: provider/live/read.ts), whose drift the audit reports. Read-only: the program writes nothing anywhere.
 *
 * Pure apart from reading `audit.sh` next to this module (once per process); no Pulumi imports.
 */
import * as fs from "fs";
import * as path from "path";
import { CATALOGUE, REJECTED_KEYS } from "../sysctl/catalogue";
import { keyToPath } from "../sysctl/validate";
import { liveProgram } from "../host/programs";
import { COUNTER_MARK, parseCounters, renderCounterSh } from "./counters";
import { DriftItem, LiveSection, LIVE_READ_HEADER, driftOf, parseLiveRead } from "../live/read";

/** The header of the audit's answer; a change of its format changes the version. */
export const AUDIT_HEADER = "net-tuning-audit v1";
/** The command: the program on stdin. With `--sudo`: `sudo -n /bin/sh -s` (no password prompt, never hangs). */
export function auditCommand(sudo: boolean): string {
  return sudo ? "sudo -n /bin/sh -s" : "/bin/sh -s";
}

/** The sysctl keys the audit reads: every catalogue key with its own /proc/sys file, and the rejected keys (tcp_tw_recycle). */
export function auditKeys(): string[] {
  const keys = new Set<string>();
  for (const [k, e] of Object.entries(CATALOGUE)) if (!e.aliasOf && k.startsWith("net.")) keys.add(k);
  // removed keys a host may still have (kernels before 4.12): reported as a finding when present
  for (const k of ["net.ipv4.tcp_tw_recycle"]) if (REJECTED_KEYS[k]) keys.add(k);
  return [...keys].sort();
}

let programText: string | undefined;
/** The program (stdin of {@link auditCommand}); deterministic, built once per process. */
export function auditProgram(): string {
  if (programText !== undefined) return programText;
  const keyLines = auditKeys().map((k) => `${k}\t/proc/sys/${keyToPath(k)}`).join("\n");
  if (/'/.test(keyLines)) throw new Error("auditProgram: a key contains a quote");
  const script = fs.readFileSync(path.join(__dirname, "audit.sh"), "utf8");
  programText = [
    "#!/bin/sh",
    `NA_KEYS='${keyLines}'`,
    script,
    renderCounterSh("all"),
    // the live read: its own header line and "!end"; NT_LIVE_REQ was set by audit.sh from the records found (no
    // bootOverride check asked: the read without NicQueues' boot scan)
    liveProgram(false, false, false),
  ].join("\n");
  return programText;
}

/** One NIC as read. */
export interface AuditNic {
  name: string;
  driver?: string;
  driverVersion?: string;
  firmware?: string;
  busInfo?: string;
  /** Mb/s; absent when the link is down or the driver does not say. */
  speedMbps?: number;
  mtu?: number;
  txqueuelen?: number;
  operstate?: string;
  physical: boolean;
  /** rx and tx queues in sysfs. */
  queues: { rx: number; tx: number };
  /** `ethtool -l`: { max: {RX, TX, Other, Combined}, current: {…} } (n/a omitted); undefined when unsupported. */
  channels?: { max: Record<string, number>; current: Record<string, number> };
  /** `ethtool -g` likewise. */
  rings?: { max: Record<string, number>; current: Record<string, number> };
  /** `ethtool -k`: feature → "on" | "off" (with " [fixed]" when it cannot change). */
  offloads: Record<string, string>;
}

/** A file the boot's sysctl loading reads, in its order, with the keys it sets (first to last). */
export interface BootFile {
  path: string;
  state: "read" | "shadowed" | "masked" | "unreadable";
  /** key → value, in file order (the last line of a key wins within the file). */
  sets: Record<string, string>;
}

/** What the audit of one host read. */
export interface HostFacts {
  kernel: string;
  arch: string;
  hostname: string;
  uid: number | undefined;
  cpus: number;
  memTotalBytes?: number;
  memAvailableBytes?: number;
  /** /etc/os-release PRETTY_NAME (else NAME VERSION_ID), ID and VERSION_ID. */
  distribution: { pretty: string; id: string; versionId: string };
  tools: { ethtool: string; sysctl: string; sh: string; init: string };
  /** Catalogue key → value now (whitespace collapsed). */
  sysctls: Record<string, string>;
  /** Catalogue keys without a /proc/sys file here (older kernel, host-only key inside a namespace, module not loaded). */
  missing: string[];
  /** Keys this user cannot read. */
  unreadable: string[];
  nics: AuditNic[];
  bootFiles: BootFile[];
  /** /etc/rc.local lines that mention net-tuning, ethtool or sysctl (`null`: no rc.local). */
  rcLocal: string[] | null;
  irqbalance: { running: boolean; config: string[] };
  /** The engine's records: owner id → kind, state, drift. */
  records: { ownerId: string; kind: string; state: "ok" | "unreadable"; owner?: string; drift: DriftItem[]; section?: LiveSection }[];
  /** Every counter read (counters.ts names). */
  counters: Record<string, number>;
}

function ws(v: string): string {
  return v.trim().replace(/\s+/g, " ");
}

/** `ethtool -l` / `-g` text: its "Pre-set maximums" and "Current hardware settings" blocks, numeric fields only. */
export function parseEthtoolMaxCurrent(text: string): { max: Record<string, number>; current: Record<string, number> } | undefined {
  if (!/Pre-set maximums/.test(text)) return undefined;
  const out = { max: {} as Record<string, number>, current: {} as Record<string, number> };
  let block: Record<string, number> | undefined;
  for (const line of text.split("\n")) {
    if (/^Pre-set maximums/.test(line)) { block = out.max; continue; }
    if (/^Current hardware settings/.test(line)) { block = out.current; continue; }
    const m = /^([A-Za-z][A-Za-z ]*):\s*(\S+)/.exec(line);
    if (m && block && /^\d+$/.test(m[2])) block[m[1].trim()] = Number(m[2]);
  }
  return out;
}

/** `ethtool -k` text: feature → "on"/"off" (+ " [fixed]"). */
export function parseEthtoolFeatures(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^\s*([a-z0-9-]+):\s+(on|off)(\s+\[(fixed|requested on|requested off)\])?\s*$/.exec(line);
    if (m) out[m[1]] = m[3] ? `${m[2]} [${m[4]}]` : m[2];
  }
  return out;
}

/** Lines of a sysctl.d file: key → value (comments, blanks and "-key" prefixes as systemd-sysctl reads them). */
export function parseSysctlFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const eq = line.indexOf("=");
    if (eq < 0) continue;
    const key = line.slice(0, eq).trim().replace(/^-/, "").replace(/\//g, ".");
    out[key] = ws(line.slice(eq + 1));
  }
  return out;
}

let pathKeys: Map<string, string> | undefined;
/** /proc/sys path → catalogue key, for the keys the program reads. */
function keysByPath(): Map<string, string> {
  pathKeys ??= new Map(auditKeys().map((k) => [`/proc/sys/${keyToPath(k)}`, k]));
  return pathKeys;
}

/** Parses the answer of {@link auditProgram}; throws when it is not one (no header, truncated). */
export function parseAudit(stdout: string): HostFacts {
  const lines = stdout.split("\n");
  const start = lines.indexOf(AUDIT_HEADER);
  if (start < 0) throw new Error(`not an audit answer (first line ${JSON.stringify((lines[0] ?? "").slice(0, 80))})`);
  const counterStart = lines.findIndex((l) => l.startsWith(`${COUNTER_MARK} `));
  const liveStart = lines.indexOf(LIVE_READ_HEADER);
  if (counterStart < 0 || liveStart < 0 || !lines.slice(liveStart).includes("!end")) throw new Error("the audit answer is truncated");
  const facts: HostFacts = {
    kernel: "", arch: "", hostname: "", uid: undefined, cpus: 0,
    distribution: { pretty: "", id: "", versionId: "" }, tools: { ethtool: "", sysctl: "", sh: "", init: "" },
    sysctls: {}, missing: [], unreadable: [], nics: [], bootFiles: [], rcLocal: null,
    irqbalance: { running: false, config: [] }, records: [], counters: {},
  };
  const os: Record<string, string> = {};
  const keyOfPath = keysByPath();
  let section = "";
  let arg = "";
  let nic: AuditNic | undefined;
  let boot: BootFile | undefined;
  let bootText: string[] = [];
  const ethtoolText: string[] = [];
  const flush = () => {
    if (boot) { boot.sets = parseSysctlFile(bootText.join("\n")); bootText = []; boot = undefined; }
    if (nic && section.startsWith("ethtool-")) {
      const text = ethtoolText.join("\n");
      if (section === "ethtool-i") {
        const f = Object.fromEntries(text.split("\n").map((l) => /^([a-z-]+):\s*(.*)$/.exec(l)).filter((m): m is RegExpExecArray => !!m).map((m) => [m[1], m[2].trim()]));
        if (f.driver) nic.driver = f.driver;
        if (f.version) nic.driverVersion = f.version;
        if (f["firmware-version"]) nic.firmware = f["firmware-version"];
        if (f["bus-info"]) nic.busInfo = f["bus-info"];
      } else if (section === "ethtool-l") nic.channels = parseEthtoolMaxCurrent(text);
      else if (section === "ethtool-g") nic.rings = parseEthtoolMaxCurrent(text);
      else if (section === "ethtool-k") nic.offloads = parseEthtoolFeatures(text);
    }
    ethtoolText.length = 0;
  };
  for (const line of lines.slice(start + 1, counterStart)) {
    if (line.startsWith("@@")) {
      flush();
      const sp = line.indexOf(" ");
      section = sp < 0 ? line.slice(2) : line.slice(2, sp);
      arg = sp < 0 ? "" : line.slice(sp + 1);
      if (section === "nic") {
        nic = { name: arg, physical: false, queues: { rx: 0, tx: 0 }, offloads: {} };
        facts.nics.push(nic);
      } else if (section.startsWith("bootfile")) {
        const state = section === "bootfile" ? "read" : (section.slice("bootfile-".length) as BootFile["state"]);
        const b: BootFile = { path: arg, state, sets: {} };
        facts.bootFiles.push(b);
        if (state === "read") boot = b;
      } else if (section === "rclocal") facts.rcLocal = [];
      continue;
    }
    const f = line.split("\t");
    switch (section) {
      case "host":
        if (f[0] === "kernel") facts.kernel = f[1] ?? "";
        else if (f[0] === "arch") facts.arch = f[1] ?? "";
        else if (f[0] === "hostname") facts.hostname = f[1] ?? "";
        else if (f[0] === "uid" && /^\d+$/.test(f[1] ?? "")) facts.uid = Number(f[1]);
        else if (f[0] === "cpus") facts.cpus = Number(f[1]) || 0;
        else if (f[0] === "MemTotal") facts.memTotalBytes = Number(f[1]) * 1024;
        else if (f[0] === "MemAvailable") facts.memAvailableBytes = Number(f[1]) * 1024;
        else if (f[0] === "ethtool" || f[0] === "sysctl" || f[0] === "sh" || f[0] === "init") facts.tools[f[0]] = f.slice(1).join("\t");
        break;
      case "os-release": {
        const m = /^([A-Z_]+)=(.*)$/.exec(line);
        if (m) os[m[1]] = m[2].replace(/^"(.*)"$/, "$1").replace(/^'(.*)'$/, "$1");
        break;
      }
      case "sysctl": {
        if (f[0] === "missing" && f[1]) { facts.missing.push(f[1]); break; }
        const colon = line.indexOf(":");
        const key = colon > 0 ? keyOfPath.get(line.slice(0, colon)) : undefined;
        if (key !== undefined) facts.sysctls[key] = ws(line.slice(colon + 1));
        break;
      }
      case "nic":
        if (!nic) break;
        if (f[0] === "speed" && /^\d+$/.test(f[1] ?? "")) nic.speedMbps = Number(f[1]);
        else if (f[0] === "mtu") nic.mtu = Number(f[1]);
        else if (f[0] === "tx_queue_len") nic.txqueuelen = Number(f[1]);
        else if (f[0] === "operstate") nic.operstate = f[1];
        else if (f[0] === "physical") nic.physical = true;
        else if (f[0] === "queues") { const [rx, tx] = (f[1] ?? "").split(" ").map(Number); nic.queues = { rx: rx || 0, tx: tx || 0 }; }
        break;
      case "bootfile":
        bootText.push(line);
        break;
      case "rclocal":
        if (line !== "") facts.rcLocal?.push(line);
        break;
      case "irqbalance":
        if (f[0] === "running") facts.irqbalance.running = true;
        else if (line.trim() !== "") facts.irqbalance.config.push(line.replace("\t", ": "));
        break;
      case "records":
        if (f[0] === "record" && f[1]) facts.records.push({ ownerId: f[1], kind: f[2] ?? "sysctl", state: "ok", drift: [] });
        else if (f[0] === "unreadable" && f[1]) facts.records.push({ ownerId: f[1], kind: "?", state: "unreadable", drift: [] });
        break;
      default:
        if (section.startsWith("ethtool-")) ethtoolText.push(line);
    }
  }
  flush();
  // a key that exists but printed no value: this user cannot read it (0600, or a write-only file)
  for (const key of auditKeys()) if (facts.sysctls[key] === undefined && !facts.missing.includes(key)) facts.unreadable.push(key);
  facts.distribution = { pretty: os.PRETTY_NAME ?? [os.NAME, os.VERSION_ID].filter(Boolean).join(" "), id: os.ID ?? "", versionId: os.VERSION_ID ?? "" };
  facts.counters = parseCounters(lines.slice(counterStart, liveStart).join("\n"));
  const live = parseLiveRead(lines.slice(liveStart).join("\n"));
  for (const r of facts.records) {
    const s = live[r.ownerId];
    if (!s) continue;
    r.section = s;
    if (s.recordState === "unreadable") r.state = "unreadable";
    r.owner = s.record?.owner;
    r.drift = driftOf(s);
  }
  return facts;
}
