/**
 * The live read of previews (issue #13), for both kinds at once: the program, its answer, drift against the host's
 * converged record, the repair token and the lines a reviewer reads.
 *
 * The program is the engine (`provider/host/engine.ts`) tree-shaken to its `live` operation (`liveProgram` in
 * `provider/host/programs.ts`: `nt_live_main` of `provider/host/sh/runtime.sh` and what it reaches, about 10 KB of the
 * engine's 140 KB): it reads every value with the same getters (`kind_get`: /proc/sys, the ethtool text parsers of
 * nic.sh, /sys queues, /proc/irq) and the same file digests (`nt_digest`) as the apply that wrote the record, so "what
 * converged" and "what is there now" are compared in one format. It travels on stdin (`/bin/sh -s live live`):
 * nothing is installed, locked or written on the host.
 *
 * Pure: no I/O here (`provider/live/ssh.ts` runs it).
 */
import { createHash, randomBytes } from "crypto";
import { LIVE_PROGRAM_HEAD, liveProgram } from "../host/programs";
import { shQuote } from "../shell";
import { sameValue } from "../sysctl/readback";
import { moduleOf } from "../sysctl/catalogue";
import { CONVERGED_DIR } from "../host/engine";
import type { HostKind } from "../kinds";

/** The command of a live read: /bin/sh reads the program from stdin; $1 $2 = engine kind and operation `live`. */
export const LIVE_READ_COMMAND = "/bin/sh -s live live";
export const LIVE_READ_HEADER = "net-tuning-live v2";
export { CONVERGED_DIR };
/** The token of a resource without a record (never applied by an engine that records): no suffix on the command. */
export const NO_TOKEN = "0";

export type LiveKind = HostKind;

/**
 * What a NetTuning's read checks as the preflight does (sysctl.sh nts_live_boot): the planned file's owner (always)
 * and the boot-order check (used when the resource persists with bootOverride other than "ignore").
 */
export interface LiveBootCheck {
  /** The planned sysctl.d file (`/etc/sysctl.d/NAME.conf`). */
  file: string;
  /** The owner's label, as the marker line of its files names it (`# pulumi-net-tuning owner: LABEL`): its own files are not conflicts. */
  label: string;
  /** The files it adopts (NetTuning `adopt`): not conflicts, nor links to them. */
  adopt: string[];
  /**
   * key → declared value; a secret value as {@link secretWant} (its sha256: the host compares another file's value by
   * its sha256, and prints neither). Empty: no boot-order check (the host checks only the planned file's owner).
   */
  want: Record<string, string>;
}

/** One resource's part of a host's read: its kind, owner id and the keys it declares (wildcards allowed for nic). */
export interface LiveRequest {
  kind: LiveKind;
  ownerId: string;
  keys: string[];
  /** sysctl: the boot-order check's facts (request fields after the keys). */
  boot?: LiveBootCheck;
  /**
   * sysctl: the kernel modules the apply loads first (the plan's modules, SysctlPlan.modules), which the read
   * checks can be loaded (sysctl.sh nts_live_modules). Absent: those {@link requestModules} can tell from the keys.
   */
  modules?: string[];
  /** nic: the declared interface (a field after the keys): the read says whether it exists, and whether ethtool does. */
  iface?: string;
  /** nic, with `iface`: its RPS, IRQ and persistence declarations, which the read checks as the preflight does (nic.sh nn_live_iface). */
  nicChecks?: LiveNicChecks;
}

/** What a NicQueues read checks of its RPS, IRQ and persistence declarations (fields after the interface; nic.sh nn_live_iface). */
export interface LiveNicChecks {
  /** rps.cpus as the plan's `@rps-cpus` line gives it: "all" or a CPU list ("0,2-3"). */
  rpsCpus?: string;
  /** irqAffinity.cpus as the plan's `@irq-cpus` line gives it: "spread" or a CPU list. */
  irqCpus?: string;
  /** rps.sockFlowEntries is declared. */
  sockFlow?: boolean;
  /** The plan's `@persistence` word (systemd, rc.local, none, auto) and the owner's label (its marker lines). */
  persistence?: string;
  label?: string;
  /** rps.onlyWhenQueuesBelowCpus: whether RPS is set depends on the queues after the channels change, which the read does not know. */
  rpsOnlyBelow?: boolean;
  /** bootOverride's check ("error" or "warn"; absent: "ignore"): the read scans the host's other boot mechanisms as the preflight does. */
  boot?: "error" | "warn";
  /** adoptRcLocalLines, as the plan's `@adopt-rc` lines give them ("K line"): the read checks them as the preflight does. */
  adoptRc?: string[];
}

const KEY = /^[A-Za-z0-9._:/@+*-]+$/;
const OWNER_ID = /^[A-Za-z0-9._-]+$/;
const BOOT_FILE = /^\/etc\/sysctl\.d\/[A-Za-z0-9][A-Za-z0-9._-]*\.conf$/;
const LABEL = /^[A-Za-z0-9._:/@ -]+$/;
const ADOPT_PATH = /^\/[A-Za-z0-9._/-]+$/;
const VALUE = /^[A-Za-z0-9 ._:,+-]*$|^#sha256:[0-9a-f]{64}$/;
const IFACE = /^[A-Za-z0-9._@+-]{1,15}$/;

/**
 * What a boot-order request carries for a secret value: `#sha256:` and the sha256 of the value as the check normalizes
 * it (sysctl.sh nts_boot_conflicts: blanks and CRs as one space, none at either end).
 */
export function secretWant(value: string): string {
  return `#sha256:${createHash("sha256").update(value.replace(/[ \t\r]+/g, " ").replace(/^ | $/g, ""), "utf8").digest("hex")}`;
}

const MODULE = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The kernel modules a sysctl request's read checks (sysctl.sh nts_live_modules): its `modules`; without them, those
 * the catalogue gives for its keys (provider/sysctl/catalogue.ts moduleOf) with the values the boot-order check
 * carries (a congestion control's tcp_<name>; not a secret value, which goes as its sha256): the plan's `@module`
 * lines for a resource with the check, the modules its keys need whatever their values for one without.
 */
export function requestModules(r: LiveRequest): string[] {
  if (r.kind !== "sysctl") return [];
  const want = r.boot?.want ?? {};
  const value = (k: string) => (Object.prototype.hasOwnProperty.call(want, k) && !want[k].startsWith("#sha256:") ? want[k] : undefined);
  const mods = r.modules ?? r.keys.map((k) => moduleOf(k, value(k))).filter((m): m is string => m !== undefined);
  const bad = mods.find((m) => !MODULE.test(m));
  if (bad !== undefined) throw new Error(`pulumi-net-tuning: invalid kernel module ${JSON.stringify(bad)} for a live read`);
  return [...new Set(mods)].sort();
}

/** The request fields after the keys (runtime.sh nt_live_main; sysctl.sh nts_live_boot, nic.sh nn_live_iface), or "". */
function moreFields(r: LiveRequest): string {
  const bad = (what: string, v: unknown) => new Error(`pulumi-net-tuning: invalid ${what} ${JSON.stringify(v)} for a live read`);
  if (r.kind === "nic" && r.iface !== undefined) {
    if (!IFACE.test(r.iface)) throw bad("interface", r.iface);
    const n = r.nicChecks;
    if (!n) return `\t${r.iface}`;
    if (n.rpsCpus !== undefined && !/^(all|[0-9][0-9,-]*)$/.test(n.rpsCpus)) throw bad("rps CPU list", n.rpsCpus);
    if (n.irqCpus !== undefined && !/^(spread|[0-9][0-9,-]*)$/.test(n.irqCpus)) throw bad("IRQ CPU list", n.irqCpus);
    if (n.persistence !== undefined && !["systemd", "rc.local", "none", "auto"].includes(n.persistence)) throw bad("persistence", n.persistence);
    if (n.label !== undefined && !LABEL.test(n.label)) throw bad("owner label", n.label);
    if (n.boot !== undefined && n.boot !== "error" && n.boot !== "warn") throw bad("bootOverride", n.boot);
    // eslint-disable-next-line no-control-regex
    const rc = (n.adoptRc ?? []).map((e) => (/^[0-9]+ [^\x00-\x1f\x7f]*$/.test(e) ? e : ((): never => { throw bad("adoptRcLocalLines entry", e); })()));
    const fields = `\t${r.iface}\t${n.rpsCpus ?? ""}\t${n.irqCpus ?? ""}\t${n.sockFlow ? 1 : ""}\t${n.persistence ?? ""}\t${n.label ?? ""}`;
    // then, only when asked (nn_live_iface reads them when present): bootOverride's check, whether RPS waits for the
    // queue count, and the adoptRcLocalLines entries (one a field, the last ones: an entry has no tab)
    if (!n.boot && !n.rpsOnlyBelow && !rc.length) return fields;
    return `${fields}\t${n.boot ?? ""}\t${n.rpsOnlyBelow ? 1 : ""}${rc.map((e) => `\t${e}`).join("")}`;
  }
  const b = r.boot;
  // (a last field when the settings need kernel modules; without the boot-order check's fields, empty ones before it)
  const mods = requestModules(r).join(" ");
  if (r.kind !== "sysctl" || (!b && !mods)) return "";
  if (!b) return `\t\t\t\t\t${mods}`;
  if (!BOOT_FILE.test(b.file)) throw bad("sysctl.d file", b.file);
  if (!LABEL.test(b.label)) throw bad("owner label", b.label);
  const a = b.adopt.find((p) => !ADOPT_PATH.test(p));
  if (a !== undefined) throw bad("adopted file", a);
  const want = Object.keys(b.want).sort().map((k) => {
    if (!KEY.test(k) || k.includes("*")) throw bad("key", k);
    if (!VALUE.test(b.want[k])) throw bad("value", k);
    return `${k}=${b.want[k]}`;
  });
  return `\t${b.file}\t${b.label}\t${b.adopt.join(";")}\t${want.join(";")}${mods ? `\t${mods}` : ""}`;
}

/**
 * A NicQueues request whose read runs the bootOverride scan (nic.sh nn_live_iface: it persists, and the check is on) or
 * the adoptRcLocalLines checks.
 */
function nicBootChecked(r: LiveRequest): boolean {
  const n = r.nicChecks;
  return r.kind === "nic" && r.iface !== undefined && n !== undefined && ((n.boot !== undefined && n.persistence !== "none") || (n.adoptRc?.length ?? 0) > 0);
}

/**
 * stdin of {@link LIVE_READ_COMMAND}: the read program ({@link liveProgram}) with the requests as one quoted variable.
 * `root`: the read logs in as root, so it also checks what only root can see (another owner's journal holding a
 * declared key: `NT_LIVE_ROOT=1` and the program's `owners` part).
 */
export function renderLiveRead(requests: LiveRequest[], opts: { root?: boolean } = {}): string {
  const lines = requests.map((r) => {
    if (!OWNER_ID.test(r.ownerId)) throw new Error(`pulumi-net-tuning: invalid owner id ${JSON.stringify(r.ownerId)}`);
    const bad = r.keys.find((k) => !KEY.test(k));
    if (bad !== undefined) throw new Error(`pulumi-net-tuning: invalid key ${JSON.stringify(bad)} for a live read`);
    return `${r.kind}\t${r.ownerId}\t${[...new Set(r.keys)].sort().join(" ")}${moreFields(r)}`;
  });
  // after the program's title and file-wide shellcheck directives, before its first command
  const program = liveProgram(
    requests.some(nicBootChecked), requests.some((r) => r.kind === "sysctl" && (r.boot?.adopt.length ?? 0) > 0), opts.root === true, requests.some((r) => requestModules(r).length > 0),
  ).split("\n");
  const vars = [`NT_LIVE_REQ=${shQuote(lines.join("\n"))}`, ...(opts.root ? ["NT_LIVE_ROOT=1"] : [])];
  return [...program.slice(0, LIVE_PROGRAM_HEAD), ...vars, ...program.slice(LIVE_PROGRAM_HEAD)].join("\n");
}

/** The host's record of what an owner's last successful apply left there. */
export interface ConvergedRecord {
  token: string;
  owner: string;
  /** key → value read back at the end of that apply. */
  values: Record<string, string>;
  /** path → digest (cksum "CRC SIZE", "-" when the file was absent) of each file the apply persisted. */
  files: Record<string, string>;
  /** The sha256 of the plan that apply converged to (records of 0.3.0 and older have none). */
  plan?: string;
}

/** One resource's part of the answer. */
export interface LiveSection {
  record?: ConvergedRecord;
  /**
   * none: no record; gone: no record, but the owner's journal exists (applied here before: the record was removed);
   * failed: no record, but a first apply inside a rollout failed here (runtime.sh nt_tolerate's marker): run it again.
   */
  recordState: "ok" | "none" | "gone" | "unreadable" | "failed";
  /** key → value on the host now (whitespace collapsed). */
  values: Record<string, string>;
  /** Keys the host lacks (sysctl: no /proc/sys file). */
  missing: string[];
  /** Keys this user cannot read (0600 sysctls as non-root, a ring the driver does not report…). */
  unreadable: string[];
  /** path → digest now, for every file of the record ("-" absent, "?" not readable by this user). */
  digests: Record<string, string>;
  /**
   * Ring or channel key → the driver's pre-set maximum as `ethtool -g` / `-l` shows it ("n/a", or "" when it shows
   * none): what the host preflight compares a declared value with (`max<TAB>key<TAB>value` lines, nic.sh nn_live_ethtool).
   */
  maxima: Record<string, string>;
  /**
   * Interface → its driver as `ethtool -i` names it (`driver<TAB>IF<TAB>name`): for an interface with rings, channels
   * or coalescing read, or whose answer the preflight would refuse (a group ethtool cannot read, a feature absent or
   * `[fixed]`).
   */
  drivers: Record<string, string>;
  /**
   * `IF/group` (ring, channel, feature, coalesce) → what ethtool said on stderr when `ethtool -g|-l|-k|-c IF` failed on
   * an existing interface (`unsupported<TAB>IF<TAB>group<TAB>said`; a veth has no ring parameters): the preflight
   * refuses the whole group. The group's keys are also unreadable.
   */
  unsupported: Record<string, string>;
  /**
   * Feature or coalescing key → what `ethtool -k` / `-c` shows for it (`shown<TAB>key<TAB>text`): a feature's "on",
   * "off", "on [fixed]" or "off [fixed]", a coalescing parameter's value or "n/a".
   */
  shown: Record<string, string>;
  /** Feature or coalescing keys that `ethtool -k` / `-c` answered without (`absent<TAB>key`; also unreadable). */
  absent: string[];
  /**
   * A revert of an unconfirmed apply of this resource (`reverted<TAB>seconds since 1970<TAB>plan sum`, issue #34): read
   * from the engine's state directory, so only by a read as root.
   */
  reverted?: { at: number; plan: string };
  /**
   * Facts of the host (`host<TAB>name<TAB>value`): after keys this kernel lacks `kernel` (uname -r), `netns` ("1": not
   * the initial network namespace); for a nic request with its interface `hostname` (as the engine names the host).
   */
  host: Record<string, string>;
  /**
   * The boot-order check's findings (a sysctl request with its fields, sysctl.sh nts_live_boot): `mask` (the planned
   * file would mask a same-named one in a later directory), `override` (a file read later at boot sets a declared key
   * to another value); `text` is the host's finding without its fix (provider/host/messages.ts bootRefusal).
   */
  boot: { kind: "mask" | "override"; text: string }[];
  /** Files read after the planned one at boot that the login user could not read (`boot<TAB>unreadable<TAB>path`). */
  bootUnreadable: string[];
  /** The declared interface does not exist (`no-interface<TAB>IF<TAB>interfaces`). */
  noInterface?: { iface: string; list: string };
  /** The interface exists and the host has no ethtool (`no-ethtool`). */
  noEthtool?: boolean;
  /**
   * The preflight's refusals the read found with the preflight's own rule, in the host's words (`refuse<TAB>text`):
   * NicQueues' RPS, IRQ and persistence (nic.sh nn_live_iface), NetTuning's planned file (sysctl.sh nts_live_boot).
   */
  refusals: string[];
  /** The preflight's warnings the read found with its own rule (`warn<TAB>text`): NicQueues' bootOverride findings that only warn. */
  warnings: string[];
}

/** Parses the read's answer into sections by owner id; throws when it is not one (shell error, truncated). */
export function parseLiveRead(stdout: string): Record<string, LiveSection> {
  const lines = stdout.split("\n");
  if (lines[0] !== LIVE_READ_HEADER) throw new Error(`not a live-read answer (first line ${JSON.stringify((lines[0] ?? "").slice(0, 80))})`);
  if (!lines.includes("!end")) throw new Error("the live-read answer is truncated");
  const out: Record<string, LiveSection> = {};
  let s: LiveSection | undefined;
  for (const line of lines.slice(1)) {
    if (line === "!end") break;
    if (line.startsWith("!owner ")) {
      s = { recordState: "none", values: {}, missing: [], unreadable: [], digests: {}, maxima: {}, drivers: {}, host: {}, unsupported: {}, shown: {}, absent: [], boot: [], bootUnreadable: [], refusals: [], warnings: [] };
      out[line.slice(7)] = s;
      continue;
    }
    if (!s) continue;
    if (line === "!record") {
      s.recordState = "ok";
      s.record = { token: NO_TOKEN, owner: "", values: {}, files: {} };
    } else if (line === "!record-unreadable") s.recordState = "unreadable";
    else if (line === "!no-record") s.recordState = "none";
    else if (line === "!no-record journal") s.recordState = "gone";
    else if (line === "!no-record failed") s.recordState = "failed";
    else if (line.startsWith("|") && s.record) {
      const f = line.slice(1).split("\t");
      if (f[0] === "plan" && /^[0-9a-f]{64}$/.test(f[1] ?? "")) s.record.plan = f[1];
      else if (f[0] === "net-tuning-converged v1") {
        s.record.token = /^[0-9a-f]{1,64}$/.test(f[2] ?? "") ? f[2] : NO_TOKEN;
        s.record.owner = f.slice(3).join("\t");
      } else if (f[0] === "value" && f.length >= 3) s.record.values[f[1]] = f.slice(2).join("\t");
      else if (f[0] === "file" && f.length >= 3) s.record.files[f[1]] = f.slice(2).join("\t");
    } else {
      const f = line.split("\t");
      if (f[0] === "value" && f.length >= 3) s.values[f[1]] = f.slice(2).join("\t");
      else if (f[0] === "missing" && f[1]) s.missing.push(f[1]);
      else if (f[0] === "unreadable" && f[1]) s.unreadable.push(f[1]);
      else if (f[0] === "digest" && f.length >= 3) s.digests[f[1]] = f.slice(2).join("\t");
      else if (f[0] === "max" && f.length >= 3 && f[1]) s.maxima[f[1]] = f.slice(2).join("\t");
      else if (f[0] === "driver" && f.length >= 3 && f[1]) s.drivers[f[1]] = f.slice(2).join("\t");
      else if (f[0] === "host" && f.length >= 3 && f[1]) s.host[f[1]] = f.slice(2).join("\t");
      else if (f[0] === "unsupported" && f.length >= 4 && f[1] && f[2]) s.unsupported[`${f[1]}/${f[2]}`] = f.slice(3).join("\t");
      else if (f[0] === "shown" && f.length >= 3 && f[1]) s.shown[f[1]] = f.slice(2).join("\t");
      else if (f[0] === "absent" && f[1]) s.absent.push(f[1]);
      else if (f[0] === "boot" && (f[1] === "mask" || f[1] === "override") && f.length >= 3) s.boot.push({ kind: f[1], text: f.slice(2).join("\t") });
      else if (f[0] === "boot" && f[1] === "unreadable" && f[2]) s.bootUnreadable.push(f.slice(2).join("\t"));
      else if (f[0] === "no-interface" && f[1]) s.noInterface = { iface: f[1], list: f.slice(2).join("\t") };
      else if (f[0] === "no-ethtool") s.noEthtool = true;
      else if (f[0] === "refuse" && f[1]) s.refusals.push(f.slice(1).join("\t"));
      else if (f[0] === "warn" && f[1]) s.warnings.push(f.slice(1).join("\t"));
      else if (f[0] === "reverted" && /^\d{1,12}$/.test(f[1] ?? "") && /^[0-9a-f]{64}$/.test(f[2] ?? "")) s.reverted = { at: Number(f[1]), plan: f[2] };
    }
  }
  return out;
}

/** A setting or managed file that differs on the host from what this resource last applied there. */
export interface DriftItem {
  key: string;
  /** What the last apply left (a value; for a file "content of the last apply"). */
  applied: string;
  /** What the host has now (a value; for a file "edited by hand" or "removed"). */
  live: string;
}

/** The record's form of a secret value: `#sha256:` and the sha256 of its words joined by single spaces (runtime.sh nt_converged_write). */
const RECORDED_HASH = /^#sha256:([0-9a-f]{64})$/;

/** A live value against the record's: a secret one is compared by its sha256, as the host recorded it. */
function recordedSame(key: string, live: string, recorded: string): boolean {
  const h = RECORDED_HASH.exec(recorded);
  if (!h) return sameValue(key, live, recorded);
  return createHash("sha256").update(live.trim().split(/[ \t]+/).join(" "), "utf8").digest("hex") === h[1];
}

/** Drift: live differs from the record (the apply's comparator); keys that cannot be read now are not drift. */
export function driftOf(s: LiveSection): DriftItem[] {
  const r = s.record;
  if (!r) return [];
  const out: DriftItem[] = [];
  for (const key of Object.keys(r.values).sort()) {
    const now = s.values[key];
    if (now !== undefined && !recordedSame(key, now, r.values[key])) out.push({ key, applied: r.values[key], live: now });
  }
  for (const path of Object.keys(r.files).sort()) {
    const now = s.digests[path];
    // "?": this user cannot read the file (or a directory above it): not drift, like an unreadable key
    if (now === undefined || now === "?" || r.files[path] === "?" || now === r.files[path]) continue;
    out.push({ key: path, applied: "content of the last apply", live: now === "-" ? "removed" : "edited on the host" });
  }
  return out;
}

/**
 * The repair token for the `-apply` Command's create and update (issue #13; #32 item 3):
 * - the recorded one when nothing drifted and the host last converged to the declared plan (`plan`: its sha256; a
 *   record without one, from 0.3.0 or older, is taken as converged to it): no change;
 * - drift: a digest of the recorded token and the drift, a change. `pulumi up` repairs and records it, so the next
 *   preview proposes it again; a later drift, even the same hand change, digests another token;
 * - the host converged to another plan, or its record was removed (its journal of originals is still there: "gone"):
 *   a fresh random token, a change. The declared plan differs from the recorded one after a change of the declaration
 *   (an update anyway) and whenever the state holds a plan the host did not converge to: a host put back from an
 *   older image or backup, a state edited or imported. (A failed run is not one: pulumi-command 1.2.1 keeps the old
 *   inputs on a failed update, checked against the real provider, testkit/cli/README.md.) A token derived from the
 *   record would be the one the state already holds: random, so the apply runs; it records the token, and the next
 *   preview proposes it again;
 * - a first apply that failed inside a rollout (recordState "failed": it exited 0 with a status, so the state holds its
 *   plan): a fresh random token, so the next `up` runs it again (a failed update needs nothing: its record names the
 *   old plan);
 * - no record and no journal (never applied here: a create), or a record this user cannot read: "0".
 */
export function repairToken(s: LiveSection, drift: DriftItem[] = driftOf(s), plan?: string): string {
  if (!s.record) return s.recordState === "gone" || s.recordState === "failed" ? randomBytes(8).toString("hex") : NO_TOKEN;
  if (plan !== undefined && s.record.plan !== undefined && s.record.plan !== plan) return randomBytes(8).toString("hex");
  if (drift.length === 0) return s.record.token;
  const text = [s.record.token, ...drift.map((d) => `${d.key}\t${d.live}`).sort()].join("\n");
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/** Live → declared, per declared setting. */
export interface LiveComparison {
  changes: { key: string; live: string; declared: string }[];
  unchanged: string[];
  /** Declared values resolved on the host ("max" rings, CPU masks, every queue or IRQ): shown with the live value. */
  onHost: { key: string; live: string; declared: string }[];
  unknown: { key: string; why: string }[];
}

const HOST_RESOLVED = /^max$/;

/** Compares the host now with the declaration (`declared`: key → value as the plan states it, wildcards allowed). */
export function compareLive(declared: Record<string, string>, s: LiveSection): LiveComparison {
  const c: LiveComparison = { changes: [], unchanged: [], onHost: [], unknown: [] };
  for (const key of Object.keys(declared).sort()) {
    const want = declared[key];
    if (key.includes("*")) {
      const prefix = key.slice(0, key.indexOf("*"));
      const found = Object.keys(s.values).filter((k) => k.startsWith(prefix)).sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
      if (found.length === 0) c.unknown.push({ key, why: "none on this host now" });
      for (const k of found) c.onHost.push({ key: k, live: s.values[k], declared: want });
      continue;
    }
    const now = s.values[key];
    if (now === undefined) {
      c.unknown.push({ key, why: s.missing.includes(key) ? "absent on this kernel" : "not readable by this user" });
    } else if (HOST_RESOLVED.test(want)) c.onHost.push({ key, live: now, declared: want });
    else if (sameValue(key, now, want)) c.unchanged.push(key);
    else c.changes.push({ key, live: now, declared: want });
  }
  return c;
}

/** Shown instead of a value when the declared settings are secret. */
export const REDACTED = "(secret)";

/**
 * What the preview logs for one resource: `info` (live → declared) and `warn` (drift), each one message.
 * `redact`: the declared settings are secret: no value (declared, live or last applied) appears, only keys and "(secret)".
 */
/**
 * An RPS or IRQ setting declared as CPU numbers is read back as a hex CPU mask: say which is which ("mask 1 → CPUs
 * 0"), so the line does not read as a change of the number. Keywords ("all", "spread", "max") are shown as they are.
 */
function onHostText(h: { key: string; live: string; declared: string }): string {
  if (/\/(irq|rps)\.[^/]*$/.test(h.key) && /^[0-9][0-9, -]*$/.test(h.declared)) return `mask ${h.live} → CPUs ${h.declared}`;
  return `${h.live} → ${h.declared}`;
}

export function renderLive(
  resource: string, host: string, c: LiveComparison, drift: DriftItem[], recordState: LiveSection["recordState"], opts: { redact?: boolean | readonly string[] } = {},
): { info: string; warn?: string } {
  // true: every value; a list: those keys' values (secret values: the catalogue's secret keys, Pulumi secrets)
  const hidden = (key: string) => opts.redact === true || (Array.isArray(opts.redact) && opts.redact.includes(key));
  if (opts.redact) {
    const r = <T extends { key: string; live: string; declared: string }>(x: T): T => (hidden(x.key) ? { ...x, live: REDACTED, declared: REDACTED } : x);
    c = { ...c, changes: c.changes.map(r), onHost: c.onHost.map(r) };
    drift = drift.map((d) => (d.applied === "content of the last apply" || !hidden(d.key) ? d : { ...d, applied: REDACTED, live: REDACTED }));
  }
  const n = c.changes.length + c.unchanged.length + c.onHost.length + c.unknown.length;
  const lines = [`${resource} on ${host}: ${c.changes.length} of ${n} setting${n === 1 ? "" : "s"} will change (live → declared)`];
  for (const ch of c.changes) lines.push(`  ${ch.key}: ${ch.live} → ${ch.declared}`);
  for (const h of c.onHost) lines.push(`  ${h.key}: ${onHostText(h)} (resolved on the host)`);
  if (c.unchanged.length) lines.push(`  ${c.unchanged.length} already as declared: ${c.unchanged.join(", ")}`);
  for (const u of c.unknown) lines.push(`  ${u.key}: ${u.why}`);
  if (recordState === "unreadable") lines.push(`  the record of the last apply (${CONVERGED_DIR}) is not readable by this user: drift is not checked`);
  // a record removed (by hand, a host restored from an image) while the journal of originals stayed
  if (recordState === "failed") lines.push(`  its first apply failed on this host inside a rollout (nothing was changed): pulumi up runs it again`);
  if (recordState === "gone") lines.push(`  the record of this resource's last apply is gone from the host (${CONVERGED_DIR}), its journal of originals is there: pulumi up applies it in full`);
  if (drift.length === 0) return { info: lines.join("\n") };
  const w = [`${resource} on ${host}: drift since its last apply: ${drift.length} setting${drift.length === 1 ? "" : "s"} or file${drift.length === 1 ? "" : "s"} changed on the host; pulumi up puts the declared state back`];
  for (const d of drift) {
    w.push(d.applied === "content of the last apply" ? `  ${d.key}: ${d.live} since the last apply` : `  ${d.key}: ${d.applied} (last applied) → ${d.live} (on the host now)`);
  }
  return { info: lines.join("\n"), warn: w.join("\n") };
}
