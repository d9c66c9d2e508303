/**
 * Live previews (issue #13): during `pulumi preview` and `pulumi up`, each resource whose connection is known reads
 * its host read-only (one SSH session per host and program run, shared by the resources on that host, bounded by
 * LIVE_READ_TIMEOUT_MS), logs live → declared on the resource and drift as a warning, and hands the `-apply` child
 * its repair token (see ARCHITECTURE.md, "Live previews and drift").
 */
import { Problem, problemAt, problemsAt } from "../provider/errors";
import { sysctlPath } from "../provider/sysctl/validate";
import { utc } from "../provider/confirm";
import * as pulumi from "@pulumi/pulumi";
import { endpoint, HostKeySeen, LIVE_READ_TIMEOUT_MS, readOverSshLimited, ReadConnection } from "../provider/live/ssh";
import { algorithmsFor, hostKeyProblem, parseHostKey } from "../provider/live/hostKey";
import {
  compareLive, DriftItem, driftOf, LIVE_READ_COMMAND, NO_TOKEN, LiveKind, LiveRequest, LiveSection, parseLiveRead, renderLive, renderLiveRead, repairToken, secretWant, LiveNicChecks,
} from "../provider/live/read";
import type { ConnectionInput } from "./common";
import { deploymentKey } from "./deployment";
import { absenceHint, isHostWide, moduleOf } from "../provider/sysctl/catalogue";
import { bootRefusal, congestionRefusal, keysAbsentRefusal, nicRefusals } from "../provider/host/messages";
import { inputError } from "./validation";
import { planSum } from "../provider/host/programs";

/** The environment variable that turns live previews off (`0`, `false`, `off`, `no`) or on (`1`) for a whole run. */
export const LIVE_PREVIEW_ENV = "NET_TUNING_LIVE_PREVIEW";

/** What the live read found for one resource. */
export interface LiveOutcome {
  /** read: the host answered; off: opted out; unknown: connection or plan not known yet; failed: host not readable. */
  status: "read" | "off" | "unknown" | "failed";
  /** The repair token for the `-apply` update: the read's, or "0" (none) when not read. */
  token: string;
  /**
   * The host could not be read (failed), or its record of the last apply is not readable by this user: the `-apply`
   * child ignores changes of `update`, so the token stored in state stays and no change is shown. Not when live previews are off or the connection is unknown: the token is then "0".
   */
  keepStoredToken: boolean;
  /** setting → value on the host now (declared settings; every queue/IRQ for wildcards). */
  live: Record<string, string>;
  /** setting or file → last applied and live value, for what changed on the host since this resource's last apply. */
  drift: Record<string, { applied: string; live: string }>;
  /** Why the read was skipped or failed. */
  reason?: string;
  /**
   * What the host's preflight would refuse, as its message says it, found by the read (a declared key this kernel
   * does not have; a ring or channel above the driver's maximum or not reported): the resource then fails at preview
   * as at `up`, and nothing is registered.
   */
  refused?: Problem[];
  /**
   * The declared settings are secret (a secret or unknown-secret `sysctls`/`settings`, or a secret value inside): the
   * messages show "(secret)" instead of values, and the `live` and `drift` outputs are secrets.
   */
  secret: boolean;
  /**
   * The OpenSSH fingerprint (`SHA256:…`) of the key the host presented to the read (the host itself, not a proxy),
   * whether verified or not; undefined when no read reached its key exchange.
   */
  hostKeyFingerprint?: string;
}

/** What the live read knows of the plan besides its values. */
export interface LivePlan {
  /** The plan's secret keys, when it is known (NetTuning): only their values are redacted. */
  secretKeys?: readonly string[];
  /** The plan's text (the -apply stdin without its frame): its sha256 is compared with the host's record of the last apply. */
  plan?: pulumi.Input<string>;
  /**
   * Inside a rollout, during an update: resolves once the previous wave's budget check passed (components/rollout.ts);
   * the read waits for it, so a host of a wave after a halt is not read either.
   */
  after?: Promise<unknown>;
  /**
   * NetTuning: the planned file, the owner's label (its marker line) and the adopted files, for the checks the read
   * runs as the preflight does (sysctl.sh nts_live_boot): the planned file's owner always, the boot-order check when
   * the plan has one (`check`: persist, bootOverride "error" or "warn").
   */
  boot?: pulumi.Input<LiveBootPlan>;
  /** NicQueues: the declared interface (the read says whether it exists and whether the host has ethtool). */
  iface?: pulumi.Input<string>;
  /** NicQueues: its RPS, IRQ and persistence declarations, checked by the read as by the preflight (provider/nic/plan.ts readChecks). */
  nicChecks?: pulumi.Input<LiveNicChecks>;
}

/** What {@link LivePlan.boot} holds. */
export interface LiveBootPlan {
  check?: "error" | "warn";
  file: string;
  label: string;
  adopt: string[];
  /** The kernel modules the apply loads first (SysctlPlan.modules): the read checks that they can be loaded. */
  modules?: string[];
}

// eslint-disable-next-line @typescript-eslint/no-var-requires
const settingsMod = require("@pulumi/pulumi/runtime/settings") as { getMonitor(): unknown };
// eslint-disable-next-line @typescript-eslint/no-var-requires
const mocksMod = require("@pulumi/pulumi/runtime/mocks") as { MockMonitor: new (...a: never[]) => unknown };

/**
 * Whether live previews run for a resource: `livePreview: false` turns them off for it; NET_TUNING_LIVE_PREVIEW=0
 * for the run. Under `pulumi.runtime.setMocks` (unit tests of a program: no real engine) they are off unless
 * NET_TUNING_LIVE_PREVIEW=1.
 */
export function liveEnabled(arg: unknown): boolean {
  if (arg === false) return false;
  const env = (process.env[LIVE_PREVIEW_ENV] ?? "").trim().toLowerCase();
  if (["0", "false", "off", "no"].includes(env)) return false;
  if (["1", "true", "on", "yes"].includes(env)) return true;
  try {
    return !(settingsMod.getMonitor() instanceof mocksMod.MockMonitor);
  } catch {
    return true;
  }
}

/**
 * Whether live previews are off by the user's choice (`livePreview: false`, NET_TUNING_LIVE_PREVIEW=0), not because
 * the program runs under mocks.
 */
function offByChoice(arg: unknown): boolean {
  return arg === false || ["0", "false", "off", "no"].includes((process.env[LIVE_PREVIEW_ENV] ?? "").trim().toLowerCase());
}

/** What a preview without a host read still leaves to `up` (issue #32 item 11c), said where the read is skipped. */
export const HOST_CHECKS_LATER = "the host's own checks (keys this kernel has, driver limits, boot-time overrides) run at `pulumi up`, before anything changes";
/**
 * What a read as another user than root (`become: "sudo"`: the read runs without sudo) cannot check, and `up`, as
 * root, does before anything changes (the live read's root-only part: provider/host/programs.ts LIVE_OWNERS).
 */
function rootChecksLater(kind: LiveKind, user: string): string {
  const what = kind === "nic" ? "another resource's journal holding this interface or rps_sock_flow_entries, and whether root can write its txqueuelen and IRQ affinity files" : "another resource's journal holding a declared key";
  return `read as ${user} (no sudo at preview), so the checks only root can make (${what}) run at \`pulumi up\`, before anything changes`;
}

/** The user a read logs in as (the connection's; root when it names none): a read as root also makes root's checks. */
const loginUser = (c: { user?: string }): string => c.user ?? "root";

/** Logs, during a preview whose read was skipped, what that leaves to `up`. */
function logChecksLater(parent: pulumi.Resource, resource: string): void {
  if (pulumi.runtime.isDryRun()) void pulumi.log.info(`${resource}: not read at preview: ${HOST_CHECKS_LATER}`, parent);
}

/** Logs, during a preview, that the read was skipped by choice and what that leaves to `up`. */
function logOffByChoice(parent: pulumi.Resource, resource: string, arg: unknown): void {
  if (!pulumi.runtime.isDryRun() || !offByChoice(arg)) return;
  void pulumi.log.info(`${resource}: live preview off (${arg === false ? "livePreview: false" : `${LIVE_PREVIEW_ENV}=${process.env[LIVE_PREVIEW_ENV]}`}): the preview shows the plan only; ${HOST_CHECKS_LATER}`, parent);
}

/** `hostKeys`: the keys the hops presented; `refused`: the read refused a host key (the resource fails, as `up` would). */
type Answer =
  | { ok: true; sections: Record<string, LiveSection>; ms: number; hostKeys: HostKeySeen[] }
  | { ok: false; reason: string; ms: number; hostKeys: HostKeySeen[]; refused?: boolean };
interface Batch {
  conn: ReadConnection;
  requests: LiveRequest[];
  started: boolean;
  result: Promise<Answer>;
}

/**
 * Reads per program run, keyed by the deployment (deployment.ts: monitor address, project, stack, dry-run flag; a `pulumi
 * up` runs the program twice, preview then update, each its own read). Not the SDK's runtime store: under the
 * multi-language component provider each construct call gets a store of its own, so resources of one host in
 * different constructs would not share the host's read. A batch leaves its list when its read starts (it is never
 * joined after that), so nothing accumulates over runs in one process (the test harness).
 */
const runs = new Map<string, Map<string, Batch[]>>();
/** How long the first resource of a host waits for the others of the same host to join its read. */
const GATHER_MS = 50;
/** Counters for tests and the bench, per process: reads started, and each finished read (endpoint, ms, ok, stdin bytes, TCP bytes sent). */
export const liveStats = { reads: 0, samples: [] as { endpoint: string; ms: number; ok: boolean; stdinBytes: number; sentBytes: number; resources: number }[] };

/** The read a resource may share: same address (host, port, user, proxy) and same expected host keys. */
function endpointKey(c: ReadConnection): string {
  const p = c.proxy;
  return JSON.stringify([c.host, c.port ?? 22, c.user ?? "root", c.hostKey ?? null, p ? [p.host, p.port ?? 22, p.user ?? "root", p.hostKey ?? null] : null]);
}
export function endpointLabel(c: ReadConnection): string {
  return c.proxy ? `${endpoint(c)} (via ${c.proxy.host})` : endpoint(c);
}

/** Joins the host's pending read of this program run (one session per host), or starts one. */
function requestRead(conn: ReadConnection, req: LiveRequest): Promise<Answer> {
  const run = deploymentKey();
  let hosts = runs.get(run);
  if (!hosts) runs.set(run, (hosts = new Map()));
  const key = endpointKey(conn);
  const list = hosts.get(key) ?? [];
  hosts.set(key, list);
  // A resource whose connection resolved after the host's read started gets a read of its own (documented).
  let batch = list.find((b) => !b.started);
  if (!batch) {
    const b: Batch = { conn, requests: [], started: false, result: Promise.resolve({ ok: false, reason: "", ms: 0, hostKeys: [] }) };
    b.result = new Promise<Answer>((resolve) => {
      setTimeout(() => {
        b.started = true;
        list.splice(list.indexOf(b), 1);
        if (list.length === 0 && hosts!.get(key) === list) hosts!.delete(key);
        liveStats.reads++;
        void runRead(b).then(resolve);
      }, GATHER_MS);
    });
    list.push(b);
    batch = b;
  }
  batch.requests.push(req);
  return batch.result;
}

async function runRead(b: Batch): Promise<Answer> {
  let stdin: string;
  try {
    stdin = renderLiveRead(b.requests, { root: loginUser(b.conn) === "root" });
  } catch (e) {
    return { ok: false, reason: `${endpointLabel(b.conn)}: ${(e as Error).message}`, ms: 0, hostKeys: [] };
  }
  const before = hostKeyBeforeRead(b.conn);
  if (before) return { ...before, ms: 0, hostKeys: [] };
  const r = await readOverSshLimited(b.conn, LIVE_READ_COMMAND, stdin, LIVE_READ_TIMEOUT_MS);
  if (liveStats.samples.length < 10_000) liveStats.samples.push({ endpoint: endpointLabel(b.conn), ms: r.ms, ok: r.ok && r.code === 0, stdinBytes: Buffer.byteLength(stdin), sentBytes: r.sentBytes ?? 0, resources: b.requests.length });
  const hostKeys = r.hostKeys ?? [];
  if (!r.ok) return { ok: false, reason: r.reason, ms: r.ms, hostKeys, ...(r.hostKeyRefused ? { refused: true } : {}) };
  if (r.code !== 0) return { ok: false, reason: `${endpointLabel(b.conn)}: the read program exited ${r.code}: ${r.stderr.trim().split("\n").slice(-1)[0] ?? ""}`.trim(), ms: r.ms, hostKeys };
  try {
    return { ok: true, sections: parseLiveRead(r.stdout), ms: r.ms, hostKeys };
  } catch (e) {
    return { ok: false, reason: `${endpointLabel(b.conn)}: ${(e as Error).message}`, ms: r.ms, hostKeys };
  }
}

/**
 * What stops a read before it dials, from the hops' `hostKey`: one not known until now (an Output) that is not a key
 * refuses the resource (the Commands fail with "failed to parse host key" at `up`); a key of a type the read's client
 * cannot verify (DSA, security-key, certificate; the Commands accept them) skips the read, said so.
 */
function hostKeyBeforeRead(c: ReadConnection): { ok: false; reason: string; refused?: boolean } | undefined {
  for (const [hop, path] of [[c, "connection"], [c.proxy, "connection.proxy"]] as const) {
    if (hop?.hostKey === undefined) continue;
    const k = parseHostKey(hop.hostKey);
    if (!k.ok) return { ok: false, refused: true, reason: hostKeyProblem(`${path}.hostKey`, hop.hostKey)[0] };
    if (!algorithmsFor(k.key.type)) return { ok: false, reason: `${endpoint(hop)}: ${path}.hostKey is a ${k.key.type} key, which the live read cannot verify (its SSH client has no such host-key algorithm): not read` };
  }
  return undefined;
}

function toReadConnection(c: Record<string, unknown>): ReadConnection | undefined {
  if (typeof c.host !== "string" || !c.host) return undefined;
  const s = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  const port = typeof c.port === "number" ? c.port : typeof c.port === "string" && /^\d+$/.test(c.port) ? Number(c.port) : undefined;
  const proxy = c.proxy && typeof c.proxy === "object" ? toReadConnection(c.proxy as Record<string, unknown>) : undefined;
  return {
    host: c.host, port, user: s(c.user), password: s(c.password), privateKey: s(c.privateKey),
    privateKeyPassword: s(c.privateKeyPassword), agentSocketPath: s(c.agentSocketPath), proxy,
    // (an empty or non-string hostKey is kept: it is refused, as the Commands fail on it)
    ...(c.hostKey !== undefined && c.hostKey !== null ? { hostKey: typeof c.hostKey === "string" ? c.hostKey : JSON.stringify(c.hostKey) } : {}),
  };
}

/** Whether an Output is (or, unknown, will be) a secret; a failure to tell counts as secret. */
async function secretOf(o: pulumi.Output<unknown>): Promise<boolean> {
  try {
    return (await pulumi.isSecret(o)) === true;
  } catch {
    return true;
  }
}

/** Resolves an Output without ever hanging on an unknown (preview) or rejecting: undefined when not known. */
async function known<T>(o: pulumi.Output<T>): Promise<{ value: T } | undefined> {
  const impl = o as unknown as { isKnown: Promise<boolean>; promise(withUnknowns?: boolean): Promise<T> };
  try {
    if (!(await impl.isKnown)) return undefined;
    return { value: await impl.promise() };
  } catch {
    return undefined;
  }
}

/** An optional input's value once known (undefined when absent, unknown or failed); a plain value is not wrapped. */
async function knownInput<T>(x: pulumi.Input<T> | undefined): Promise<T | undefined> {
  if (x === undefined) return undefined;
  if (pulumi.Output.isInstance(x)) return (await known(x as pulumi.Output<T>))?.value;
  try {
    return await x;
  } catch {
    return undefined; // (a rejected promise: as known's failed Output)
  }
}

/**
 * The live read of one resource: logs on `parent` and resolves (never rejects) to its outcome. `declared`: key →
 * declared value (the plan; nic wildcards `IF/rps.rx-*`, `IF/irq.*` allowed).
 */
export async function liveRead(...a: Parameters<typeof liveReadUnsafe>): Promise<LiveOutcome> {
  try {
    return await liveReadUnsafe(...a);
  } catch (e) {
    // a bug here must not keep the -apply child from being registered: plan-only, said once
    void pulumi.log.warn(`${a[1]}: live preview skipped: ${(e as Error).message}; the preview shows the plan only`, a[0]);
    return { status: "failed", token: NO_TOKEN, keepStoredToken: true, live: {}, drift: {}, reason: (e as Error).message, secret: true };
  }
}

async function liveReadUnsafe(
  parent: pulumi.Resource,
  resource: string,
  kind: LiveKind,
  ownerId: string,
  connection: ConnectionInput,
  declared: pulumi.Output<Record<string, string>>,
  livePreview: pulumi.Input<boolean | undefined>,
  { secretKeys, plan: planInput, after, boot: bootInput, iface: ifaceInput, nicChecks: nicChecksInput }: LivePlan = {},
): Promise<LiveOutcome> {
  if (after) await after;
  // secretness of the declaration, known even when its value is not (unknown-secret); where the plan names its
  // secret keys (the catalogue's, values given as Pulumi secrets: a declaration is secret because of them), only
  // their values are redacted
  const whole = await secretOf(declared);
  const secret = whole || (secretKeys?.length ?? 0) > 0;
  const redact: boolean | readonly string[] = secretKeys ?? whole;
  const none = (status: LiveOutcome["status"], reason?: string): LiveOutcome => ({ status, token: NO_TOKEN, keepStoredToken: status === "failed", live: {}, drift: {}, reason, secret });
  const enabled = await known(pulumi.output(livePreview));
  if (!liveEnabled(enabled?.value)) {
    logOffByChoice(parent, resource, enabled?.value);
    return none("off");
  }
  const conn = await known(pulumi.output(connection) as pulumi.Output<unknown>);
  const c = conn && typeof conn.value === "object" && conn.value !== null ? toReadConnection(conn.value as Record<string, unknown>) : undefined;
  if (!c) {
    void pulumi.log.info(`${resource}: live preview skipped: the connection is not known yet (a server created in this run?); the preview shows the plan only`, parent);
    logChecksLater(parent, resource);
    return none("unknown", "connection not known");
  }
  const plan = await known(declared);
  if (!plan) return none("unknown", "plan not known"); // a bad value: the plan's own error stops the resource
  const planText = await knownInput(planInput);
  const host = endpointLabel(c);
  const req: LiveRequest = { kind, ownerId, keys: Object.keys(plan.value) };
  // the boot-order check (a secret value by its sha256: the host compares another file's value by its sha256)
  const boot = await knownInput(bootInput);
  // (asked whatever bootOverride says: the read also checks the planned file's owner, as the preflight always does)
  if (kind === "sysctl" && boot) {
    const isSecret = (k: string) => redact === true || (Array.isArray(redact) && redact.includes(k));
    // (no boot-order check: no wanted values, and the host runs only the owner check)
    const want = boot.check ? Object.fromEntries(Object.entries(plan.value).map(([k, v]) => [k, isSecret(k) ? secretWant(v) : v])) : {};
    req.boot = { file: boot.file, label: boot.label, adopt: boot.adopt, want };
    if (boot.modules) req.modules = boot.modules;
  }
  const iface = await knownInput(ifaceInput);
  const nicChecks = kind === "nic" && iface !== undefined ? await knownInput(nicChecksInput) : undefined;
  if (kind === "nic" && iface !== undefined) {
    req.iface = iface;
    if (nicChecks !== undefined) req.nicChecks = nicChecks;
  }
  const answer = await requestRead(c, req);
  const hostKey = answer.hostKeys.find((k) => k.hop === "host");
  const fp = hostKey ? { hostKeyFingerprint: hostKey.fingerprint } : {};
  logUnverifiedKeys(parent, resource, answer.hostKeys);
  // a refused host key fails the resource (the Commands would log in to whoever answers, or fail, at `up`)
  if (!answer.ok && answer.refused) return { ...none("failed", answer.reason), ...fp, refused: [problemAt("connection.hostKey", answer.reason)] };
  const section = answer.ok ? answer.sections[ownerId] : undefined;
  if (!answer.ok || !section) {
    const reason = answer.ok ? `${host}: the read returned nothing for this resource` : answer.reason;
    void pulumi.log.warn(`${resource}: live preview skipped: ${reason}; the preview shows the plan only (drift is not checked)`, parent);
    logChecksLater(parent, resource);
    return { ...none("failed", reason), ...fp };
  }
  // the host's own refusals (its words, `refuse<TAB>text`) are about the resource as a whole
  const hostRefusals = problemsAt("", section.refusals);
  const user = loginUser(c);
  const refused = kind === "sysctl" ? [...missingKeys(plan.value, section, redact), ...bootFindings(parent, resource, section, boot?.check, user), ...hostRefusals] : [...nicRefusals(plan.value, section), ...hostRefusals];
  if (kind === "nic") nicBootNotes(parent, resource, section, nicChecks);
  if (user !== "root") void pulumi.log.info(`${resource}: ${rootChecksLater(kind, user)}`, parent);
  const drift: DriftItem[] = driftOf(section);
  const shown = renderLive(resource, host, compareLive(plan.value, section), drift, section.recordState, { redact });
  void pulumi.log.info(shown.info, parent);
  if (shown.warn) void pulumi.log.warn(shown.warn, parent);
  const held = section.reverted !== undefined && planText !== undefined && planSum(planText) === section.reverted.plan;
  if (section.reverted) {
    void pulumi.log.warn(
      `${resource}: ${host} reverted an unconfirmed apply at ${utc(section.reverted.at)} (UTC): its confirm did not arrive in time. ` +
        (held ? `This plan is that plan: it is held (up refuses it) until it changes` : `This plan differs from it: up applies it`),
      parent,
    );
  }
  const live: Record<string, string> = {};
  for (const k of Object.keys(section.values).sort()) live[k] = section.values[k];
  return {
    status: "read",
    token: repairToken(section, drift, planText === undefined ? undefined : planSum(planText)),
    // a record this user cannot read: drift is not checked, so the stored token stays (no change by itself)
    // a plan the host reverted is held: no repair proposed either (its apply would be refused, exit 7)
    keepStoredToken: section.recordState === "unreadable" || held,
    live,
    drift: Object.fromEntries(drift.map((d) => [d.key, { applied: d.applied, live: d.live }])),
    secret,
    ...fp,
    ...(refused.length ? { refused } : {}),
  };
}

/**
 * Logs, during a preview, each key the read trusted on first use (no `hostKey`, not in known_hosts): its fingerprint,
 * to check against the host's, and where it is recorded. Verified keys are not logged.
 */
function logUnverifiedKeys(parent: pulumi.Resource, resource: string, keys: HostKeySeen[]): void {
  if (!pulumi.runtime.isDryRun()) return;
  for (const k of keys.filter((x) => x.how === "unverified")) {
    const path = k.hop === "proxy" ? "connection.proxy" : "connection";
    const recorded = k.hop === "host" ? "recorded as the output hostKeyFingerprint" : "not recorded";
    void pulumi.log.info(
      `${resource}: host key of ${k.endpoint}${k.hop === "proxy" ? " (proxy)" : ""} not verified (no ${path}.hostKey, not in known_hosts), trusted on first use: ${k.type} ${k.fingerprint}, ${recorded}; ` +
        `check it against the host's (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub on its console) and set ${path}.hostKey to verify it`,
      parent,
    );
  }
}

/**
 * The host preflight's refusals the read can tell, in its words: declared sysctl keys the read found absent (no /proc/sys file)
 * (provider/host/messages.ts KEYS_ABSENT, the message sysctl.sh gives: the kernel version, whether the host is a network
 * namespace other than the initial one, each key's hint and, for a host-wide key, where to set it), or none. A key
 * whose kernel module the apply loads first (the plan's @module: net.netfilter.* with nf_conntrack) is left to the
 * host: it appears then. And a net.ipv4.tcp_congestion_control that is neither available nor among the host's modules
 * (or, in a network namespace, not allowed): `congestionRefusal`, the preflight's message; not for a value given as a
 * secret (the message names the value: the host's check at `up` refuses it).
 */
function missingKeys(declared: Record<string, string>, section: LiveSection, redact: boolean | readonly string[] = false): Problem[] {
  const absent = Object.keys(declared).filter((k) => section.missing.includes(k) && moduleOf(k, declared[k]) === undefined);
  const absentPath = absent.length === 1 ? sysctlPath(absent[0]) : "sysctls";
  const out = absent.length === 0 ? [] : [problemAt(absentPath, keysAbsentRefusal(absent, absenceHint, isHostWide, section.host.kernel ?? "?", section.host.netns === "1"))];
  // a declared congestion control the kernel neither offers nor can load (the read's cc-… facts, sysctl.sh nts_live_cc)
  // (not for a value given as a secret: the message names it; the host's own check still runs at `up`)
  const ccKey = "net.ipv4.tcp_congestion_control";
  const cc = declared[ccKey];
  const h = section.host;
  const secret = redact === true || (Array.isArray(redact) && redact.includes(ccKey));
  if (cc !== undefined && !secret && h["cc-available"] !== undefined) {
    const r = congestionRefusal(cc, { available: h["cc-available"], allowed: h["cc-allowed"] ?? "", modules: h["cc-modules"] ?? "", netns: h.netns ?? "0" });
    if (r) out.push(problemAt(sysctlPath(ccKey), r));
  }
  return out;
}

/**
 * The boot-order check's findings (sysctl.sh nts_live_boot: the preflight's own rule and text) as the preflight takes
 * them: with bootOverride "error" its refusals (the host's text and fix, provider/host/messages.ts bootRefusal), in its
 * order (the masked file, then each override); with "warn" a warning each at preview, as `up` warns.
 */
function bootFindings(parent: pulumi.Resource, resource: string, section: LiveSection, check: "error" | "warn" | undefined, user: string): Problem[] {
  if (!check) return [];
  // files the read (as the login user, no sudo) could not open: their part of the check is still to come, as root
  if (section.bootUnreadable.length) {
    void pulumi.log.info(
      `${resource}: the boot-order check could not read ${section.bootUnreadable.join(", ")} as ${user} at preview: \`pulumi up\` reads ${section.bootUnreadable.length === 1 ? "it" : "them"} as root, before anything changes, and ${check === "error" ? "refuses" : "warns"} there if a declared key is set to another value`,
      parent,
    );
  }
  const found = [...section.boot.filter((b) => b.kind === "mask"), ...section.boot.filter((b) => b.kind === "override")];
  // (the finding names a file and the keys it sets; bootOverride is the argument that decides what it does)
  if (check === "error") return found.map((b) => problemAt("bootOverride", bootRefusal(b.kind, b.text)));
  for (const b of found) void pulumi.log.warn(`${resource}: ${b.text} (bootOverride "warn": pulumi up applies the change and warns the same)`, parent);
  return [];
}

/**
 * NicQueues' bootOverride at preview (nic.sh nn_live_iface: the preflight's scan, rule and words): a finding `up`
 * refuses is among the section's refusals; one it only warns about (bootOverride "warn", the heuristic scan) is a
 * warning here too; and what the read leaves to `up` is said.
 */
function nicBootNotes(parent: pulumi.Resource, resource: string, section: LiveSection, checks: LiveNicChecks | undefined): void {
  for (const w of section.warnings) void pulumi.log.warn(`${resource}: ${w} (pulumi up applies the change and warns the same)`, parent);
  if (!checks?.boot || section.noInterface) return;
  if (checks.rpsOnlyBelow) {
    void pulumi.log.info(
      `${resource}: the bootOverride check of RPS and RFS lines (rps.onlyWhenQueuesBelowCpus: whether RPS is set depends on the queues after the change) runs at \`pulumi up\`, before anything changes; the preview checked the rest`,
      parent,
    );
  }
}

/**
 * The live read of one resource (liveRead), or none when there is nothing to read: live previews off (`livePreview:
 * false`, the environment variable, a program under mocks) and a plain declaration (so not a secret). No read, no
 * Output chain: the -apply child is registered at once without a repair token (what the "off" outcome gives it), and
 * `live` and `drift` are empty (liveOutputs). Each Output costs some 20 to 60 promises; 1,000 hosts show them.
 */
export function liveReadIfOn(
  parent: pulumi.Resource,
  resource: string,
  kind: LiveKind,
  ownerId: string,
  connection: ConnectionInput,
  declared: Record<string, string> | pulumi.Output<Record<string, string>>,
  livePreview: pulumi.Input<boolean | undefined>,
  more: LivePlan = {},
): Promise<LiveOutcome> | undefined {
  const plainOff = !pulumi.Output.isInstance(declared) && (livePreview === undefined || typeof livePreview === "boolean") && !liveEnabled(livePreview);
  if (plainOff) logOffByChoice(parent, resource, livePreview);
  return plainOff ? undefined : liveRead(parent, resource, kind, ownerId, connection, pulumi.output(declared), livePreview, more);
}

/**
 * The `live`, `drift` and `hostKeyFingerprint` outputs of a resource: `live` and `drift` secrets when the declared
 * settings are; without a read, plain empty values (no fingerprint) (registered as they are; the component's properties are Outputs of them, made when read).
 */
export function liveOutputs(live: Promise<LiveOutcome> | undefined): [pulumi.Input<Record<string, string>>, pulumi.Input<Record<string, string>>, pulumi.Input<string | undefined>] {
  if (!live) return [{}, {}, undefined];
  const outcome = pulumi.output(live); // one Output of the outcome for both (fewer Output chains per resource)
  const out = <T>(f: (l: LiveOutcome) => T): pulumi.Output<T> =>
    outcome.apply((l) => (l.secret ? pulumi.secret(f(l as LiveOutcome)) : f(l as LiveOutcome))) as pulumi.Output<T>;
  return [
    out((l) => l.live),
    out((l) => Object.fromEntries(Object.entries(l.drift).map(([k, d]) => [k, `${d.applied} → ${d.live}`]))),
    // a host's public key is no secret, whatever the declared settings are
    outcome.apply((l) => l.hostKeyFingerprint),
  ];
}

/**
 * The problem of a plain `livePreview` that is not a boolean (untyped JavaScript, other languages), for the resource's
 * one list of problems; none for a boolean, an absent value or one not known yet.
 */
export function livePreviewProblem(v: unknown): Problem[] {
  if (v === undefined || v === null || typeof v === "boolean" || pulumi.Output.isInstance(v) || v instanceof Promise) return [];
  return [problemAt("livePreview", `livePreview must be true or false (got ${JSON.stringify(v)})`)];
}
