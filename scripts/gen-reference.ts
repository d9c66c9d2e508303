/**
 * Writes docs/reference.md from the code's own declarations: `npm run gen:reference`; `-- --check` exits 1 when the
 * committed file differs (tests/unit/reference.test.ts runs the same check).
 *  - NetTuning and NicQueues arguments and outputs: the JSDoc of NetTuningArgs / NicQueuesArgs and of the classes'
 *    public outputs, read with the TypeScript compiler API (components/netTuning.ts, components/nicQueues.ts). The
 *    NicQueues argument table is the one scripts/gen-spec.ts derives from the NIC spec (between the `nic-args` markers);
 *  - ProfileSpec, PresetSpec and the profiles' option interfaces (provider/sizing), each profile against ESnet's values
 *    (provider/sizing/esnet.ts), and every sizing profile with the
 *    sysctls it sets, computed by calling it; the NIC presets;
 *  - every key of the sysctl catalogue (provider/sysctl/catalogue.ts): value, unit, scope, rules, advice; the keys
 *    refused at preview;
 *  - the CLI's `--help` text (bin/net-tuning.ts).
 */
import * as fs from "fs";
import * as path from "path";
import * as ts from "typescript";
import { main } from "../bin/net-tuning";
import { CATALOGUE, CatalogueEntry, KeyRef, REJECTED_KEYS, RuleCondition, SysctlRule, valueForm } from "../provider/sysctl/catalogue";
import { database, longFatFlows, manySmallFlows, nvmeTcpLatency, nvmeTcpThroughput, proxyGateway, webServer } from "../provider/sizing/profiles";
import { formatSysctlValue, SysctlProfile } from "../provider/sizing/profile";
import { nicPresets } from "../provider/sizing/nic";
import { ESNET_CROSS_CHECK, ESNET_SOURCE, esnetComparison } from "../provider/sizing/esnet";
import { nicLines } from "../provider/sizing/render";
import { NIC_ARGS_BEGIN, NIC_ARGS_END, renderNicArgsTable } from "./gen-spec";

const REPO = path.resolve(__dirname, "..");
export const REFERENCE = "docs/reference.md";

/** Declarations read from a source file: interface members and class properties with their JSDoc. */
interface Member {
  name: string;
  optional: boolean;
  type: string;
  doc: string;
}

function sourceOf(file: string): ts.SourceFile {
  return ts.createSourceFile(file, fs.readFileSync(path.join(REPO, file), "utf8"), ts.ScriptTarget.ES2022, true);
}

/** The JSDoc text of a node (comment only, tags dropped), on one line. */
function docOf(node: ts.Node): string {
  const docs = (node as unknown as { jsDoc?: ts.JSDoc[] }).jsDoc ?? [];
  const text = docs
    .map((d) => (typeof d.comment === "string" ? d.comment : ts.getTextOfJSDocComment(d.comment) ?? ""))
    .join(" ");
  return text.replace(/\s+/g, " ").trim();
}

/** `@throws` and other tags of a node's JSDoc, as "tag: text". */
function tagsOf(node: ts.Node): string[] {
  const docs = (node as unknown as { jsDoc?: ts.JSDoc[] }).jsDoc ?? [];
  return docs.flatMap((d) =>
    (d.tags ?? []).map((t) => `${t.tagName.text}: ${(typeof t.comment === "string" ? t.comment : ts.getTextOfJSDocComment(t.comment) ?? "").replace(/\s+/g, " ").trim()}`),
  );
}

/** A type as a reader writes it: `pulumi.Input<…>` unwrapped (every argument may be an Output), whitespace collapsed. */
function plainType(t: string): string {
  let s = t.replace(/\s+/g, " ").trim();
  // an unwrapped union followed by [] keeps its parentheses: `(ProfileSpec | SysctlProfile)[]`
  const unwrap = (_: string, _io: string, inner: string, ..._rest: unknown[]): string => inner;
  for (let i = 0; i < 5; i++) {
    s = s.replace(/pulumi\.(Input|Output)<([^<>]*(<[^<>]*(<[^<>]*>)?[^<>]*>)?[^<>]*)>(?=\[\])/g, (m, io, inner) => (inner.includes(" | ") ? `(${inner})` : inner));
    s = s.replace(/pulumi\.(Input|Output)<([^<>]*(<[^<>]*(<[^<>]*>)?[^<>]*>)?[^<>]*)>/g, unwrap);
  }
  return s.replace(/command\.types\.input\.remote\.ConnectionArgs/, "remote.ConnectionArgs");
}

function find<T extends ts.Node>(sf: ts.SourceFile, pred: (n: ts.Node) => n is T, name: string): T {
  let out: T | undefined;
  const visit = (n: ts.Node) => {
    if (!out && pred(n) && (n as unknown as { name?: ts.Identifier }).name?.text === name) out = n;
    ts.forEachChild(n, visit);
  };
  visit(sf);
  if (!out) throw new Error(`${name} not found in ${sf.fileName}`);
  return out;
}

/** The members of an interface (own members only, in source order). */
export function interfaceMembers(file: string, name: string): Member[] {
  const i = find(sourceOf(file), ts.isInterfaceDeclaration, name);
  return i.members.filter(ts.isPropertySignature).map((m) => ({
    name: m.name.getText(),
    optional: !!m.questionToken,
    type: plainType(m.type?.getText() ?? "unknown"),
    doc: docOf(m),
  }));
}

/** The public readonly properties (outputs) of a class. */
export function classOutputs(file: string, name: string): Member[] {
  const c = find(sourceOf(file), ts.isClassDeclaration, name);
  return c.members
    .filter(ts.isPropertyDeclaration)
    .filter((m) => (ts.getCombinedModifierFlags(m) & ts.ModifierFlags.Public) !== 0)
    .map((m) => ({ name: m.name.getText(), optional: false, type: plainType(m.type?.getText() ?? "unknown"), doc: docOf(m) }));
}

/** The JSDoc of an exported function, with its tags. */
function functionDoc(file: string, name: string): { doc: string; tags: string[] } {
  const f = find(sourceOf(file), ts.isFunctionDeclaration, name);
  return { doc: docOf(f), tags: tagsOf(f) };
}

/**
 * Wording for users: the profiles' rationale cites "the article" (those lines are comments of the sysctl.d files the
 * profiles write, so rewording them would rewrite every host's file on upgrade); the reference names the guides as the
 * "Sizing profiles" section introduces them. The code's JSDoc points at the README and the NIC spec, the reference at
 * its own sections.
 */
export function forUsers(s: string): string {
  return s
    .replace(/\bthe (source )?article's\b/g, "the source guide's")
    .replace(/\bthe (source )?articles\b/g, "the source guides")
    .replace(/\bthe (source )?article\b/g, "the source guide")
    .replace(/\(article\)/g, "(source guide)")
    .replace(/\bsource articles\b/g, "source guides")
    .replace(/\(see the catalogue in README\)/g, "(see the sysctl catalogue below)")
    .replace(/the rule: `INTERFACE_NAME_CHARS` and `INTERFACE_NAME_MAX` of the NIC spec, stated in the README table and in the message for a bad name/g, "the rule is stated in the table above and in the message for a bad name");
}

const cell = (s: string) => forUsers(s).replace(/\|/g, "\\|");

function memberTable(members: Member[], required: (m: Member) => string): string[] {
  const rows = ["| argument | type | meaning | |", "|---|---|---|---|"];
  for (const m of members) rows.push(`| \`${m.name}\` | \`${cell(m.type)}\` | ${cell(m.doc)} | ${required(m)} |`);
  return rows;
}

function outputTable(members: Member[]): string[] {
  const rows = ["| output | type | meaning |", "|---|---|---|"];
  for (const m of members) rows.push(`| \`${m.name}\` | \`${cell(m.type)}\` | ${cell(m.doc)} |`);
  return rows;
}

/** Facts about NetTuning's arguments that the checks enforce but the JSDoc does not spell out. */
const NET_TUNING_NOTES = [
  "`sysctls`: multi-value keys take arrays (`tcp_rmem`/`tcp_wmem` in bytes; `tcp_mem` in pages of 4 KiB); the slash form `net/core/somaxconn` is normalised to the dotted one.",
  "`profile`: what `longFatFlows(…)`, `manySmallFlows(…)`, `webServer()`, `database()`, `proxyGateway()`, `nvmeTcpLatency()`, `nvmeTcpThroughput()` or `combine(…)` return, or the declarative spec (below); both render the same plan.",
  "`fileName`: at most 100 characters.",
  '`become`: anything other than `"sudo"` or `"none"` (`"doas"`, `true`) is refused.',
  "`connection`: changing it replaces the resource's children (a move restores the old host with its stored connection); see [operations: moves](operations.md#moves-and-key-rotation).",
  "`adopt`: see [getting started: adopting a hand-tuned host](getting-started.md#adopting-a-hand-tuned-host).",
];

function ruleCondition(w: RuleCondition): string {
  const operand = (v: number | string | KeyRef) => (typeof v === "object" ? `${v.key}${v.index !== undefined ? `[${v.index}]` : ""}` : String(v));
  switch (w.op) {
    case "eq":
    case "lt":
    case "gt":
    case "gte": {
      const sym = { eq: "=", lt: "<", gt: ">", gte: "≥" }[w.op];
      return `value${w.index !== undefined ? `[${w.index}]` : ""} ${sym} ${operand(w.than)}${w.nonZeroRef ? " (when that is not 0)" : ""}`;
    }
    case "always":
      return "any value";
    case "notPow2":
      return "not a power of 2";
    case "notMultipleOf":
      return `not a multiple of ${w.of}`;
    case "bitsOutside":
      return `bits outside 0x${w.mask.toString(16)}`;
    case "unknownName":
      return "a name not in the usual list";
    case "sameParity":
      return "both ends of the same parity";
  }
}

function ruleLine(r: SysctlRule): string {
  const when = [ruleCondition(r.when)];
  if (r.unlessSet) when.push(`unless ${r.unlessSet} is set`);
  if (r.with) when.push(`with ${r.with.key} = ${r.with.eq}`);
  const fact = r.fact ? `${r.fact}` : "";
  return `${r.level === "error" ? "**error**" : "warning"} when ${when.join(", ")}: ${fact}${fact ? ". " : ""}Fix: ${r.fix}`;
}

function catalogue(): string[] {
  const out: string[] = [];
  for (const key of Object.keys(CATALOGUE).sort()) {
    const e = CATALOGUE[key];
    out.push(`### \`${key}\``, "");
    const facts = [valueForm(e), e.scope === "host" ? "host-wide (read-only inside a network namespace or container)" : "per network namespace"];
    if (e.since) facts.push(`since Linux ${e.since}`);
    if (e.module) facts.push(typeof e.module === "string" ? `module \`${e.module}\`` : `module \`${e.module.perValue}\` per value (built in: ${e.module.builtin.join(", ")})`);
    if (e.readback) facts.push(e.readback === "pow2" ? "reads back rounded up to a power of 2" : "milliseconds kept in jiffies: reads back rounded up to the next jiffy");
    if (e.aliasOf) facts.push(`same kernel variable as \`${e.aliasOf}\``);
    if (e.aliases?.length) facts.push(`also named ${e.aliases.map((a) => `\`${a}\``).join(", ")}`);
    out.push(`${facts.join(" · ")}. ${forUsers(e.description)}`, "");
    if (e.rangeWhy) out.push(`- Range: ${forUsers(e.rangeWhy)}`);
    if (e.readOnly) out.push(`- **Read-only**, refused at preview: ${forUsers(e.readOnly.why)}. Fix: ${forUsers(e.readOnly.fix)}`);
    if (e.advice) out.push(`- Advice: ${forUsers(e.advice)}`);
    for (const r of e.rules ?? []) out.push(`- ${forUsers(ruleLine(r))}`);
    if (e.example) out.push(`- Example: \`${e.example}\``);
    if (out[out.length - 1] !== "") out.push("");
  }
  return out;
}

const PROFILES: { name: string; call: string; build: () => SysctlProfile; options: string }[] = [
  { name: "longFatFlows", call: 'longFatFlows({ bandwidth: "10Gbit", rtt: "40ms" })', build: () => longFatFlows({ bandwidth: "10Gbit", rtt: "40ms" }), options: "FlowOptions" },
  { name: "manySmallFlows", call: 'manySmallFlows({ bandwidth: "10Gbit", rtt: "40ms" })', build: () => manySmallFlows({ bandwidth: "10Gbit", rtt: "40ms" }), options: "FlowOptions" },
  { name: "webServer", call: "webServer()", build: () => webServer(), options: "GuardOptions" },
  { name: "database", call: "database()", build: () => database(), options: "GuardOptions" },
  { name: "proxyGateway", call: "proxyGateway()", build: () => proxyGateway(), options: "GuardOptions" },
  { name: "nvmeTcpLatency", call: "nvmeTcpLatency()", build: () => nvmeTcpLatency(), options: "GuardOptions" },
  { name: "nvmeTcpThroughput", call: "nvmeTcpThroughput()", build: () => nvmeTcpThroughput(), options: "NvmeThroughputOptions" },
];

function optionsTable(name: string): string[] {
  const own = interfaceMembers("provider/sizing/profiles.ts", name);
  const inherited = name === "GuardOptions" ? [] : interfaceMembers("provider/sizing/profiles.ts", "GuardOptions");
  return memberTable([...own, ...inherited], (m) => (m.optional ? "optional" : "required"));
}

function profiles(): string[] {
  const out: string[] = [];
  for (const p of PROFILES) {
    const { doc, tags } = functionDoc("provider/sizing/profiles.ts", p.name);
    const prof = p.build();
    out.push(`### \`${p.name}\``, "", forUsers(doc), "");
    for (const t of tags) out.push(`- ${forUsers(t)}`);
    out.push(`- Options: \`${p.options}\` (below). Suggested NIC preset: ${prof.nic ? `\`${prof.nic.name}\`` : "none"}.`, "");
    out.push(`\`${p.call}\` sets:`, "", "```ini", ...Object.entries(prof.sysctls).map(([k, v]) => `${k} = ${formatSysctlValue(v)}`), "```", "");
    if (prof.warnings.length) out.push("Warnings it gives:", "", ...prof.warnings.map((w) => `- ${forUsers(w)}`), "");
  }
  for (const o of ["FlowOptions", "NvmeThroughputOptions", "GuardOptions"]) out.push(`### \`${o}\``, "", ...optionsTable(o), "");
  return out;
}

/** Each profile against ESnet's host-tuning values (provider/sizing/esnet.ts, the audit's ESnet column), with the reason for every difference. */
function esnetTable(): string[] {
  const rows = esnetComparison();
  const val = (v: string | undefined) => (v === undefined ? "—" : `\`${v}\``);
  const out = [
    `ESnet's published values for a 10G host (paths up to 100 ms) and a 100G host, against what each profile sets. Source: ${ESNET_SOURCE}.`,
    "The values come from the issue text: the site cannot be reached from the development machines and no stored copy of",
    `the page was found. They were checked against ${ESNET_CROSS_CHECK.source}:`,
    "",
    "| key | that script |",
    "|---|---|",
    ...Object.entries(ESNET_CROSS_CHECK.verdicts).map(([k, v]) => `| \`${k}\` | ${v} |`),
    "",
    "The audit's ESnet column (`net-tuning audit`, [audit](audit.md#esnet-reference-column)) reads the same table. \"same\" =",
    "ESnet's 10G or 100G value; a key a profile does not set keeps the kernel's value.",
    "",
  ];
  for (const call of [...new Set(rows.map((r) => r.call))]) {
    const mine = rows.filter((r) => r.call === call);
    out.push(`#### \`${call}\``, "");
    if (mine.every((r) => r.verdict === "unset")) {
      out.push(`Sets none of ESnet's keys: ${forUsers(mine[0].why)}.`, "");
      continue;
    }
    out.push("| key | profile | ESnet 10G | ESnet 100G | | why it differs |", "|---|---|---|---|---|---|");
    for (const r of mine) {
      out.push(`| \`${r.key}\` | ${r.value === undefined ? "not set" : val(r.value)} | ${val(r.g10)} | ${val(r.g100)} | ${r.verdict} | ${r.why ? forUsers(r.why).replace(/\|/g, "\\|") : ""} |`);
    }
    out.push("");
  }
  return out;
}

function presets(): string[] {
  const out: string[] = [];
  for (const [name, make] of Object.entries(nicPresets)) {
    const { doc } = functionDoc("provider/sizing/nic.ts", name);
    out.push(`### \`nicPresets.${name}()\``, "", forUsers(doc), "", "```text", ...nicLines(make()).map(forUsers), "```", "");
  }
  return out;
}

/** What `net-tuning <argv>` prints on stdout (help texts: written before main returns). */
function cliOutput(argv: string[]): string {
  let out = "";
  void main(argv, { stdout: { write: (t: string) => (out += t) }, stderr: { write: () => undefined } });
  return out;
}

/** `net-tuning --help`, then the help of every command it refers to (`net-tuning <command> --help`). */
export function cliHelps(): { argv: string[]; text: string }[] {
  const top = cliOutput(["--help"]);
  const commands = [...new Set([...top.matchAll(/net-tuning (\w+) --help/g)].map((m) => m[1]))];
  return [{ argv: ["--help"], text: top }, ...commands.map((c) => ({ argv: [c, "--help"], text: cliOutput([c, "--help"]) }))];
}

function cli(): string[] {
  const out: string[] = [];
  for (const { argv, text } of cliHelps()) {
    out.push(`\`net-tuning ${argv.join(" ")}\` prints:`, "", "```text", ...text.trimEnd().split("\n"), "```", "");
  }
  return out;
}

/** docs/reference.md as the code declares it today. */
export function renderReference(): string {
  const ntArgs = interfaceMembers("components/netTuning.ts", "NetTuningArgs");
  const req = (m: Member) => (m.optional ? "optional" : "**required**");
  const rejected = Object.values(REJECTED_KEYS).map((r) => `| \`${r.key}\` | ${cell(r.reason)} | ${cell(r.fix)} |`);
  const lines = [
    "# Reference",
    "",
    "<!-- Generated by scripts/gen-reference.ts (npm run gen:reference) from the code's declarations; do not edit. -->",
    "",
    "Generated from the code: the argument interfaces' and outputs' JSDoc (`components/`), the NIC spec",
    "(`provider/nic/spec.ts`), the sizing profiles (`provider/sizing/`), the sysctl catalogue",
    "(`provider/sysctl/catalogue.ts`) and the CLI's `--help`. A test fails when this page is older than the code.",
    "The TypeDoc API reference (`npm run docs`, landing page [api-landing.md](api-landing.md)) has the same JSDoc per type.",
    "",
    "Units are the kernel's and the tools' own. Public sources for what the keys and settings do: the kernel's",
    "[Documentation/networking/ip-sysctl.rst](https://docs.kernel.org/networking/ip-sysctl.html) and",
    "[scaling.rst](https://docs.kernel.org/networking/scaling.html) (RPS/RFS), the man pages `sysctl.d(5)`, `sysctl(8)`,",
    "`ethtool(8)` and `ip-link(8)`, and ESnet's [Linux host tuning](https://fasterdata.es.net/host-tuning/linux/) for",
    "buffer sizing from the bandwidth-delay product.",
    "",
    "Contents: [NetTuning](#nettuning) · [NicQueues](#nicqueues) · [Profile and preset specs](#profile-and-preset-specs) ·",
    "[Sizing profiles](#sizing-profiles) · [NIC presets](#nic-presets) · [Sysctl catalogue](#sysctl-catalogue) ·",
    "[Keys refused at preview](#keys-refused-at-preview) · [CLI](#cli-net-tuning)",
    "",
    "## NetTuning",
    "",
    "`new NetTuning(name, args, opts?)`: sysctls, validated at preview, applied all-or-nothing over SSH, persisted in",
    "`/etc/sysctl.d`, restored to their originals on delete. Every argument may be an `Input` (an Output of another resource).",
    "",
    "### Arguments (`NetTuningArgs`)",
    "",
    ...memberTable(ntArgs, req),
    "",
    ...NET_TUNING_NOTES.map((n) => `- ${n}`),
    "",
    "### Outputs",
    "",
    ...outputTable(classOutputs("components/netTuning.ts", "NetTuning")),
    "",
    "## NicQueues",
    "",
    "`new NicQueues(name, args, opts?)`: one interface's ethtool rings, channels, offloads and coalescing, txqueuelen,",
    "RPS/RFS and IRQ affinity, persisted by a systemd unit or rc.local. One resource per interface and host.",
    "",
    "### Arguments (`NicQueuesArgs`)",
    "",
    "The table is generated from the NIC spec (`provider/nic/spec.ts`, `npm run gen`); the args interfaces, the",
    "validation of arguments and presets alike, the plan lines and the host's name lists come from the same table.",
    "",
    NIC_ARGS_BEGIN,
    renderNicArgsTable(),
    NIC_ARGS_END,
    "",
    "The same arguments with their JSDoc (`NicQueuesArgs`; the settings fields come from `NicSettingsArgs`):",
    "",
    ...memberTable([...interfaceMembers("components/nicQueues.ts", "NicQueuesArgs"), ...interfaceMembers("components/nicArgs.generated.ts", "NicSettingsArgs")], req),
    "",
    "### Outputs",
    "",
    ...outputTable(classOutputs("components/nicQueues.ts", "NicQueues")),
    "",
    "## Profile and preset specs",
    "",
    "The declarative form of a profile or preset, for every language (the TypeScript helpers' results are accepted too).",
    "",
    "### `ProfileSpec`",
    "",
    ...memberTable(interfaceMembers("provider/sizing/spec.ts", "ProfileSpec"), (m) => (m.optional ? "optional" : "required")),
    "",
    "### `PresetSpec`",
    "",
    ...memberTable(interfaceMembers("provider/sizing/spec.ts", "PresetSpec"), (m) => (m.optional ? "optional" : "required")),
    "",
    "## Sizing profiles",
    "",
    "Each helper returns a `SysctlProfile` (`{ kind, name, sysctls, rationale, warnings, nic? }`); `net-tuning plan`",
    "prints its rationale line by line. `combine(…)` merges profiles and refuses a key two of them set differently.",
    "",
    "The profiles and NIC presets come from three published tuning guides, each a production case told with its",
    "measurements: a 10 Gbit/s cross-border gateway on CentOS 7 (Hong Kong, 20-60 ms paths; templates A and B, the",
    "`throughput` NIC preset), a high-concurrency web service (Nginx/Tomcat on 32 cores and 64 GB) and an NVMe/TCP storage",
    "cluster (`tcp_autocorking` for latency or throughput). The rationale and warnings cite each profile's own guide as",
    "its source guide (the comment lines of the sysctl.d file a profile writes, its article). Where a guide was wrong (keys",
    "that do not exist, values the kernel refuses or that lower a default), the profile corrects it and its warnings say so.",
    "",
    ...profiles(),
    "### Profiles against ESnet",
    "",
    ...esnetTable(),
    "## NIC presets",
    "",
    ...presets(),
    "## Sysctl catalogue",
    "",
    `The ${Object.keys(CATALOGUE).length} keys NetTuning knows (a key not listed is accepted when well-formed, and the host`,
    "checks that it exists). Errors are refused at preview; warnings are printed and kept in the `warnings` output",
    "(`acknowledge` moves them to `acknowledged`).",
    "",
    ...catalogue(),
    "## Keys refused at preview",
    "",
    "Keys that popular tuning advice names but that do not exist (or were removed):",
    "",
    "| key | why | instead |",
    "|---|---|---|",
    ...rejected,
    "",
    "## CLI: `net-tuning`",
    "",
    "`npx net-tuning …` runs it from a project that installed the package (its `bin`).",
    "",
    ...cli(),
  ];
  return lines.join("\n");
}

/** Whether the committed docs/reference.md is what the code gives. */
export function stale(): boolean {
  try {
    return fs.readFileSync(path.join(REPO, REFERENCE), "utf8") !== renderReference();
  } catch {
    return true;
  }
}

if (require.main === module) {
  if (process.argv.includes("--check")) {
    if (stale()) {
      console.error(`out of date (run npm run gen:reference): ${REFERENCE}`);
      process.exit(1);
    }
  } else {
    fs.writeFileSync(path.join(REPO, REFERENCE), renderReference());
    console.log(`written: ${REFERENCE}`);
  }
}
