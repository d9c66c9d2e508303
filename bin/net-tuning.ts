#!/usr/bin/env node
/**
 * `net-tuning audit` / `show` / `diff` (issue #33, provider/audit/cli.ts): a read-only fleet report; exit codes 0
 * fine, 1 findings at or above --fail-on, 2 usage error, 3 hosts unreachable.
 *
 * `net-tuning plan`: prints the sysctl.d file, NicQueues settings, rationale and warnings of a sizing
 * profile, without touching any host. Exit codes: 0 plan printed, 1 plan refused (memory guard error,
 * conflicting profiles), 2 usage error (unknown option, missing or invalid value).
 */
import { InputError } from "../provider/errors";
import { AUDIT_USAGE, runAuditCommand } from "../provider/audit/cli";
import { PACKAGE_NAME, PACKAGE_VERSION } from "../provider/version";
import { validateSysctls } from "../provider/sysctl/validate";
import { planWarnings } from "../provider/sysctl/plan";
import { validateNic } from "../provider/nic/validate";
import {
  GuardOptions,
  MemoryGuardResult,
  NicPreset,
  NvmeThroughputOptions,
  SysctlProfile,
  combine,
  database,
  longFatFlows,
  lowLatency,
  manySmallFlows,
  memoryGuard,
  nicLines,
  nvmeTcpLatency,
  nvmeTcpThroughput,
  proxyGateway,
  renderSysctlFile,
  throughput,
  tryParseBytes,
  webServer,
} from "../provider/sizing";

/** Where {@link main} writes: `process` itself, or buffers in tests. */
export interface CliIo {
  /** Receives the plan, `--help` and `--version` output. */
  stdout: { write(text: string): unknown; isTTY?: boolean };
  /** Receives usage errors and refusals (and the audit's progress on a TTY). */
  stderr: { write(text: string): unknown; isTTY?: boolean };
  /** stdin text, for `--stack -`. */
  readStdin?: () => string;
}

/** Inputs a profile builder receives from the command line. */
interface BuildInput extends GuardOptions {
  bandwidth?: string;
  rtt?: string;
}

/** How each profile uses --bandwidth/--rtt: required, optional or not at all. */
const PROFILES: Record<string, { link: "required" | "optional" | "none"; build: (o: BuildInput) => SysctlProfile }> = {
  longFatFlows: { link: "required", build: (o) => longFatFlows({ ...o, bandwidth: o.bandwidth ?? "", rtt: o.rtt ?? "" }) },
  manySmallFlows: { link: "required", build: (o) => manySmallFlows({ ...o, bandwidth: o.bandwidth ?? "", rtt: o.rtt ?? "" }) },
  webServer: { link: "none", build: (o) => webServer(o) },
  database: { link: "none", build: (o) => database(o) },
  proxyGateway: { link: "none", build: (o) => proxyGateway(o) },
  nvmeTcpLatency: { link: "none", build: (o) => nvmeTcpLatency(o) },
  nvmeTcpThroughput: { link: "optional", build: (o) => nvmeTcpThroughput(o as NvmeThroughputOptions) },
};

const NICS: Record<string, () => NicPreset> = { throughput, lowLatency };

/** The text printed by `--help`. */
export const USAGE = `Usage: net-tuning plan --profile NAME [options]
       net-tuning audit|show|diff ...   (read-only host report: net-tuning audit --help)
       net-tuning --help | --version

Prints the sysctl.d file, NicQueues settings, rationale and warnings of a tuning profile
sized from the source tuning guides. Changes nothing on any host.

Profiles (camelCase or kebab-case; repeat --profile or separate with commas to combine):
  longFatFlows       few long, fat flows (template A)        needs --bandwidth and --rtt
  manySmallFlows     many short flows (template B)           needs --bandwidth and --rtt
  webServer          high-concurrency web server
  database           database server
  proxyGateway       reverse proxy / API gateway
  nvmeTcpLatency     NVMe/TCP, latency first (autocorking off, BBR)
  nvmeTcpThroughput  NVMe/TCP, throughput first               optional --bandwidth and --rtt

Options:
  --profile NAME        profile to plan (required)
  --bandwidth RATE      link rate: 10Gbit, 500Mbit, 1.5Gbit/s, 1Gbps, 100Mbit/s (decimal)
  --rtt TIME            round-trip time: 40ms, 800us, 0.04s
  --concurrency N       concurrent TCP connections expected (memory guard; with --memory
                        it also sizes longFatFlows' default buffer)
  --memory SIZE         host memory: 64GiB, 512MiB, 128GB or bytes
  --guard error|warn    memory guard at level error: refuse the plan (error, default) or only warn
  --pacing fq           also set net.core.default_qdisc = fq (flow pacing; host-wide)
  --congestion-control NAME
                        also set net.ipv4.tcp_congestion_control (bbr, htcp, cubic, ...)
  --nic NAME            NicQueues preset: throughput | lowLatency (default: the profile's suggestion)
  --json                print JSON: { profile, sysctlFile, warnings, guard? }
  -h, --help            print this help
  --version             print the version

Exit codes: 0 plan printed, 1 plan refused (memory guard error, conflicting profiles),
2 usage error (unknown option, missing or invalid value).

Example: net-tuning plan --profile longFatFlows --bandwidth 10Gbit --rtt 40ms --concurrency 2000 --memory 128GiB
`;

class UsageError extends Error {}

/** `long-fat-flows`, `LongFatFlows`, `long_fat_flows` → the canonical name in `names`, if any. */
function canonicalName(input: string, names: string[]): string | undefined {
  const key = input.replace(/[-_]/g, "").toLowerCase();
  return names.find((n) => n.toLowerCase() === key);
}

interface Parsed {
  profiles: string[];
  bandwidth?: string;
  rtt?: string;
  concurrency?: number;
  memory?: string | number;
  guard: "warn" | "error";
  nic?: string;
  pacing?: string;
  congestionControl?: string;
  json: boolean;
}

const VALUE_OPTIONS = ["profile", "bandwidth", "rtt", "concurrency", "memory", "guard", "nic", "pacing", "congestion-control"] as const;
type ValueOption = (typeof VALUE_OPTIONS)[number];

function parsePlanArgs(args: string[]): Parsed {
  const values: Partial<Record<ValueOption, string[]>> = {};
  let json = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--json") {
      json = true;
      continue;
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    const name = m?.[1] as ValueOption | undefined;
    if (!m || name === undefined || !VALUE_OPTIONS.includes(name)) {
      throw new UsageError(arg.startsWith("-") ? `unknown option ${arg}` : `unexpected argument ${JSON.stringify(arg)}`);
    }
    let value = m[2];
    if (value === undefined) {
      const next = args[i + 1];
      if (next === undefined || next.startsWith("--")) throw new UsageError(`--${name} needs a value`);
      value = next;
      i++;
    }
    if (value.trim() === "") throw new UsageError(`--${name} needs a value`);
    if (name !== "profile" && values[name] !== undefined) throw new UsageError(`--${name} given twice`);
    (values[name] ??= []).push(value);
  }

  const profileNames = Object.keys(PROFILES);
  const profiles = (values.profile ?? []).flatMap((v) => v.split(",")).map((v) => v.trim()).filter((v) => v !== "");
  if (profiles.length === 0) throw new UsageError("--profile is required");
  const canonical = profiles.map((p) => {
    const c = canonicalName(p, profileNames);
    if (c === undefined) throw new UsageError(`unknown profile ${JSON.stringify(p)}; use one of ${profileNames.join(", ")}`);
    return c;
  });
  if (new Set(canonical).size !== canonical.length) throw new UsageError("--profile lists a profile twice");

  const out: Parsed = { profiles: canonical, guard: "error", json };
  const one = (name: ValueOption): string | undefined => values[name]?.[0];
  out.bandwidth = one("bandwidth");
  out.rtt = one("rtt");
  const concurrency = one("concurrency");
  if (concurrency !== undefined) {
    if (!/^\d+$/.test(concurrency) || Number(concurrency) <= 0 || !Number.isSafeInteger(Number(concurrency))) {
      throw new UsageError(`--concurrency ${JSON.stringify(concurrency)}: use a positive integer (concurrent connections)`);
    }
    out.concurrency = Number(concurrency);
  }
  const memory = one("memory");
  if (memory !== undefined) {
    const value = /^\d+$/.test(memory) ? Number(memory) : memory;
    const m = tryParseBytes("--memory", value);
    if (!m.ok) throw new UsageError(m.problem);
    out.memory = value;
  }
  const guard = one("guard");
  if (guard !== undefined) {
    if (guard !== "warn" && guard !== "error") throw new UsageError(`--guard ${JSON.stringify(guard)}: use error or warn`);
    out.guard = guard;
  }
  // checked by the profiles themselves (a bad value is a usage error naming it)
  out.pacing = one("pacing");
  out.congestionControl = one("congestion-control");
  const nic = one("nic");
  if (nic !== undefined) {
    out.nic = canonicalName(nic, Object.keys(NICS));
    if (out.nic === undefined) throw new UsageError(`unknown NIC preset ${JSON.stringify(nic)}; use one of ${Object.keys(NICS).join(", ")}`);
  }

  const links = out.profiles.map((p) => PROFILES[p].link);
  if ((out.bandwidth !== undefined || out.rtt !== undefined) && links.every((l) => l === "none")) {
    throw new UsageError(`--bandwidth and --rtt are used only by longFatFlows, manySmallFlows and nvmeTcpThroughput`);
  }
  if (links.includes("required") && (out.bandwidth === undefined || out.rtt === undefined)) {
    throw new UsageError(`--profile ${out.profiles.filter((p) => PROFILES[p].link === "required").join(",")} needs --bandwidth and --rtt`);
  }
  return out;
}

function plan(p: Parsed): { profile: SysctlProfile; guard?: MemoryGuardResult } {
  const input: BuildInput = { guard: "warn" };
  if (p.concurrency !== undefined) input.concurrency = p.concurrency;
  if (p.memory !== undefined) input.memory = p.memory;
  if (p.pacing !== undefined) input.pacing = p.pacing as "fq";
  if (p.congestionControl !== undefined) input.congestionControl = p.congestionControl;
  const built = p.profiles.map((name) => {
    const o = { ...input };
    if (PROFILES[name].link !== "none") {
      if (p.bandwidth !== undefined) o.bandwidth = p.bandwidth;
      if (p.rtt !== undefined) o.rtt = p.rtt;
    }
    try {
      return PROFILES[name].build(o);
    } catch (e) {
      // Invalid values (the builders run the guard in "warn" mode, so this is never the guard).
      if (e instanceof InputError) throw new UsageError(e.message);
      throw e;
    }
  });
  const profile = built.length === 1 ? built[0] : combine(...built);
  if (p.nic !== undefined) profile.nic = NICS[p.nic]();
  if (p.concurrency === undefined || p.memory === undefined) return { profile };
  const guard = memoryGuard({ profile, connections: p.concurrency, memoryBytes: p.memory });
  // A single profile already carries its own guard message; a combination is checked as a whole.
  if (built.length > 1 && guard.level !== "ok") profile.warnings.push(`memory guard (${guard.level}): ${guard.message}`);
  return { profile, guard };
}

/**
 * The warnings of the plan: exactly the list a NetTuning logs for this profile (provider/sysctl/plan.ts planWarnings),
 * then those a NicQueues logs for the profile's `nic` preset.
 */
function warningsOf(profile: SysctlProfile): string[] {
  const advice = planWarnings(validateSysctls(profile.sysctls, "plan").advice, profile);
  const sysctl = [...advice.misspelt.map((a) => a.text), ...advice.warnings];
  const nic = profile.nic ? validateNic({ interface: "lo", preset: profile.nic }, `NicQueues (preset ${profile.nic.name})`).warnings : [];
  return [...sysctl, ...nic];
}

function renderText(profile: SysctlProfile): string {
  const out: string[] = ["# sysctl.d file", renderSysctlFile(profile)];
  if (profile.nic) out.push(`# NicQueues: ${profile.nic.name}`, ...nicLines(profile.nic), "");
  out.push("# Rationale");
  for (const key of Object.keys(profile.sysctls).sort()) out.push(`${key}: ${profile.rationale[key] ?? "(none given)"}`);
  if (profile.nic) for (const [key, why] of Object.entries(profile.nic.rationale)) out.push(`nic.${key}: ${why}`);
  const warnings = warningsOf(profile);
  out.push("", "# Warnings");
  out.push(...(warnings.length > 0 ? warnings.map((w) => `- ${w}`) : ["(none)"]));
  return out.join("\n") + "\n";
}

/**
 * Runs the CLI in-process.
 * @param argv the arguments after the program name, e.g. `["plan", "--profile", "webServer"]`.
 * @returns the exit code: 0 plan printed (or help/version), 1 plan refused, 2 usage error.
 */
export function main(argv: string[], io: CliIo): number | Promise<number> {
  const [first, ...after] = argv;
  if (first === "audit" || first === "show" || first === "diff") {
    if (after.includes("--help") || after.includes("-h")) {
      io.stdout.write(AUDIT_USAGE);
      return 0;
    }
    return runAuditCommand(first, after, io);
  }
  if (argv.includes("--help") || argv.includes("-h")) {
    io.stdout.write(USAGE);
    return 0;
  }
  if (argv.includes("--version")) {
    io.stdout.write(`net-tuning ${PACKAGE_VERSION} (${PACKAGE_NAME})\n`);
    return 0;
  }
  try {
    const [command, ...rest] = argv;
    if (command === undefined) throw new UsageError("missing command: plan, audit, show or diff");
    if (command !== "plan") throw new UsageError(`unknown command ${JSON.stringify(command)}: use plan, audit, show or diff`);
    const parsed = parsePlanArgs(rest);
    const { profile, guard } = plan(parsed);
    if (guard?.level === "error" && parsed.guard === "error") {
      io.stderr.write(`net-tuning: plan refused by the memory guard: ${guard.message}\n(--guard warn prints the plan anyway)\n`);
      return 1;
    }
    if (parsed.json) {
      const doc: Record<string, unknown> = { profile, sysctlFile: renderSysctlFile(profile), warnings: warningsOf(profile) };
      if (guard !== undefined) doc.guard = guard;
      io.stdout.write(JSON.stringify(doc, null, 2) + "\n");
    } else {
      io.stdout.write(renderText(profile));
    }
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr.write(`net-tuning: ${e.message}\nRun 'net-tuning --help' for usage.\n`);
      return 2;
    }
    if (e instanceof InputError) {
      io.stderr.write(`net-tuning: plan refused: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}

if (require.main === module) {
  const io: CliIo = { stdout: process.stdout, stderr: process.stderr, readStdin: () => require("fs").readFileSync(0, "utf8") };
  Promise.resolve(main(process.argv.slice(2), io)).then(
    (code) => { process.exitCode = code; },
    (e: unknown) => { process.stderr.write(`net-tuning: ${(e as Error).stack ?? String(e)}\n`); process.exitCode = 70; },
  );
}
