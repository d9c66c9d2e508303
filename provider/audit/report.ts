/**
 * The audit's outputs (issue #33): the versioned JSON document (schema in docs/audit.md), the terminal summary table
 * and details, Markdown, and one self-contained HTML page (chart.js inlined). Pure apart from reading chart.js's
 * bundle for the HTML.
 */
import * as fs from "fs";
import * as path from "path";
import { PACKAGE_VERSION } from "../version";
import { ESNET, ESNET_SOURCE, GroupedFinding, groupFindings } from "./findings";
import { HostReport, reportCounters } from "./run";

/** The JSON schema's name and version; bump the version on any incompatible change. */
export const AUDIT_SCHEMA = "net-tuning-audit/v1";

export interface AuditDocument {
  schema: typeof AUDIT_SCHEMA;
  tool: string;
  generatedAt: string;
  options: Record<string, unknown>;
  summary: { hosts: number; reachable: number; unreachable: number; errors: number; warnings: number; infos: number };
  esnet: { source: string; values: typeof ESNET };
  advice: GroupedFinding[];
  hosts: ReturnType<typeof hostJson>[];
}

function hostJson(h: HostReport) {
  const f = h.facts;
  return {
    name: h.name,
    target: h.target,
    reachable: h.reachable,
    ...(h.error !== undefined ? { error: h.error } : {}),
    ms: h.ms,
    ...(h.hostKey ? { hostKey: h.hostKey } : {}),
    ...(h.declaredBy ? { declaredBy: h.declaredBy } : {}),
    ...(f
      ? {
          kernel: f.kernel,
          arch: f.arch,
          hostname: f.hostname,
          distribution: f.distribution,
          cpus: f.cpus,
          memTotalBytes: f.memTotalBytes ?? null,
          tools: f.tools,
          nics: f.nics,
          sysctls: h.settings,
          counters: reportCounters(h),
          allCounters: f.counters,
          bootFiles: f.bootFiles,
          rcLocal: f.rcLocal,
          irqbalance: f.irqbalance,
          records: f.records.map((r) => ({ ownerId: r.ownerId, kind: r.kind, state: r.state, owner: r.owner ?? null, drift: r.drift })),
        }
      : {}),
    findings: h.findings,
  };
}

/** The JSON document of an audit. */
export function auditDocument(hosts: HostReport[], options: Record<string, unknown>, now = new Date()): AuditDocument {
  const all = hosts.flatMap((h) => h.findings);
  return {
    schema: AUDIT_SCHEMA,
    tool: `net-tuning ${PACKAGE_VERSION}`,
    generatedAt: now.toISOString(),
    options,
    summary: {
      hosts: hosts.length,
      reachable: hosts.filter((h) => h.reachable).length,
      unreachable: hosts.filter((h) => !h.reachable).length,
      errors: all.filter((f) => f.level === "error").length,
      warnings: all.filter((f) => f.level === "warning").length,
      infos: all.filter((f) => f.level === "info").length,
    },
    esnet: { source: ESNET_SOURCE, values: ESNET },
    advice: groupFindings(hosts.map((h) => ({ host: h.name, findings: h.findings }))),
    hosts: hosts.map(hostJson),
  };
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join("  ").trimEnd()).join("\n");
}

function gib(b: number | undefined): string {
  return b === undefined ? "?" : `${(b / 2 ** 30).toFixed(1)} GiB`;
}

function count(h: HostReport, level: string): number {
  return h.findings.filter((f) => f.level === level).length;
}

function summaryRows(hosts: HostReport[]): string[][] {
  const rows = [["HOST", "KERNEL", "DISTRIBUTION", "CPUS", "MEMORY", "NICS", "DRIFT", "ERR", "WARN", "LISTENOVF", "SOFTNET DROP", "TIME_WAIT"]];
  for (const h of hosts) {
    const f = h.facts;
    if (!f) {
      rows.push([h.name, "-", "unreachable (see the findings)"]);
      continue;
    }
    const c = f.counters;
    const drift = f.records.reduce((a, r) => a + r.drift.length, 0);
    rows.push([h.name, f.kernel, f.distribution.pretty || "?", String(f.cpus), gib(f.memTotalBytes), f.nics.map((n) => n.name).join(",") || "-", String(drift), String(count(h, "error")), String(count(h, "warning")),
      String(c["TcpExt.ListenOverflows"] ?? "-"), String(c["softnet.dropped"] ?? "-"), String(c["sockets.timeWait"] ?? "-")]);
  }
  return rows;
}

function adviceLines(advice: GroupedFinding[], total: number): string[] {
  return advice.map((a) => `${a.level.toUpperCase().padEnd(7)} ${a.message}  [${a.hosts.length === total && total > 1 ? `all ${total} hosts` : a.hosts.join(", ")}]`);
}

/** The terminal report: one summary line per host, then the advice (one line per advice, naming its hosts). */
export function renderSummary(doc: AuditDocument, hosts: HostReport[]): string {
  const s = doc.summary;
  const out = [table(summaryRows(hosts)), "", `${s.hosts} host${s.hosts === 1 ? "" : "s"}: ${s.reachable} audited, ${s.unreachable} unreachable; ${s.errors} errors, ${s.warnings} warnings, ${s.infos} notes`];
  if (doc.advice.length) out.push("", "Findings:", ...adviceLines(doc.advice, hosts.length));
  out.push("", "Details of one host: net-tuning show --host USER@HOST[:PORT] (or audit --json).");
  return out.join("\n") + "\n";
}

/** Everything about one host (`net-tuning show`, `audit --host X --details`). */
export function renderDetails(h: HostReport): string {
  const out = [`# ${h.name} (${h.target})`];
  const f = h.facts;
  if (!f) return [...out, `unreachable: ${h.error}`, ""].join("\n");
  out.push(`kernel ${f.kernel} ${f.arch}; ${f.distribution.pretty}; ${f.cpus} CPUs; memory ${gib(f.memTotalBytes)}; host key ${h.hostKey ?? "not-checked"}`);
  out.push(`tools: ${f.tools.ethtool || "no ethtool"}; ${f.tools.sysctl || "no sysctl"}; /bin/sh → ${f.tools.sh || "?"}; init ${f.tools.init}`);
  out.push("", "## NICs");
  for (const n of f.nics) {
    out.push(`${n.name}: driver ${n.driver ?? "?"}${n.driverVersion ? ` ${n.driverVersion}` : ""}, speed ${n.speedMbps !== undefined ? `${n.speedMbps} Mb/s` : "unknown"}, mtu ${n.mtu}, txqueuelen ${n.txqueuelen}, queues rx ${n.queues.rx} tx ${n.queues.tx}`);
    const mc = (x: { max: Record<string, number>; current: Record<string, number> } | undefined) =>
      x ? Object.keys(x.max).map((k) => `${k} ${x.current[k] ?? "?"}/${x.max[k]}`).join(", ") || "none reported" : "not supported";
    out.push(`  channels (current/max): ${mc(n.channels)}`);
    out.push(`  rings (current/max): ${mc(n.rings)}`);
    const offl = Object.entries(n.offloads).filter(([k]) => ["tcp-segmentation-offload", "generic-segmentation-offload", "generic-receive-offload", "large-receive-offload", "rx-checksumming", "tx-checksumming", "scatter-gather", "rx-gro-hw"].includes(k));
    out.push(`  offloads: ${offl.map(([k, v]) => `${k} ${v}`).join(", ")}`);
  }
  out.push("", `## sysctls (ESnet column: ${ESNET_SOURCE})`);
  const rows = [["KEY", "VALUE", "DECLARED / DEFAULT", "STATUS", "ESNET 10G", "ESNET 100G"]];
  for (const r of h.settings) {
    if (r.status === "missing") continue;
    rows.push([r.key, r.value ?? `(${r.state})`, r.declared ?? r.kernelDefault ?? "default unknown", r.status, r.esnet10g ?? "", r.esnet100g ?? ""]);
  }
  out.push(table(rows));
  const missing = h.settings.filter((r) => r.status === "missing").map((r) => r.key);
  if (missing.length) out.push(`absent here (kernel, module or namespace): ${missing.join(", ")}`);
  out.push("", "## Counters");
  for (const [k, v] of Object.entries(reportCounters(h))) out.push(`${k} = ${Number.isInteger(v) ? v : v.toFixed(4)}`);
  out.push("", "## Boot files (in the boot's order)");
  for (const b of f.bootFiles) out.push(`${b.path}${b.state === "read" ? "" : ` (${b.state})`}${Object.keys(b.sets).length ? `: ${Object.entries(b.sets).map(([k, v]) => `${k} = ${v}`).join("; ")}` : ""}`);
  if (f.rcLocal) out.push(`/etc/rc.local: ${f.rcLocal.length ? f.rcLocal.join(" | ") : "present, nothing about sysctl/ethtool"}`);
  out.push("", "## Engine records (drift since the last apply)");
  if (f.records.length === 0) out.push("(none: never applied by net-tuning, or destroyed)");
  for (const r of f.records) out.push(`${r.ownerId} (${r.kind}${r.owner ? `, ${r.owner}` : ""}): ${r.state === "unreadable" ? "not readable" : r.drift.length === 0 ? "no drift" : r.drift.map((d) => `${d.key} ${d.applied} → ${d.live}`).join("; ")}`);
  out.push("", "## Findings");
  if (h.findings.length === 0) out.push("(none)");
  for (const x of h.findings) out.push(`${x.level.toUpperCase()} [${x.rule}] ${x.message}`);
  return out.join("\n") + "\n";
}

function md(s: string): string {
  return s.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

/** Markdown for a pull request or a ticket: the summary table, the advice (one row per advice), per-host details folded. */
export function renderMarkdown(doc: AuditDocument, hosts: HostReport[]): string {
  const rows = summaryRows(hosts);
  const out = [`## net-tuning audit (${doc.generatedAt})`, "", `${doc.summary.hosts} hosts: ${doc.summary.reachable} audited, ${doc.summary.unreachable} unreachable; ${doc.summary.errors} errors, ${doc.summary.warnings} warnings, ${doc.summary.infos} notes`, ""];
  out.push(`| ${rows[0].join(" | ")} |`, `|${rows[0].map(() => "---").join("|")}|`);
  for (const r of rows.slice(1)) out.push(`| ${[...r, ...Array(rows[0].length - r.length).fill("")].map(md).join(" | ")} |`);
  out.push("", "### Findings", "");
  if (doc.advice.length === 0) out.push("None.");
  else {
    out.push("| level | finding | hosts |", "|---|---|---|");
    for (const a of doc.advice) out.push(`| ${a.level} | ${md(a.message)} | ${md(a.hosts.length === hosts.length && hosts.length > 1 ? `all ${hosts.length}` : a.hosts.join(", "))} |`);
  }
  for (const h of hosts) out.push("", `<details><summary>${md(h.name)}</summary>`, "", "```", renderDetails(h).trimEnd(), "```", "", "</details>");
  out.push("", `ESnet reference: ${ESNET_SOURCE}.`);
  return out.join("\n") + "\n";
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** The counters charted per host, in this order. */
export const CHART_COUNTERS = ["TcpExt.ListenOverflows", "TcpExt.ListenDrops", "Tcp.RetransSegs", "Udp.RcvbufErrors", "Udp.SndbufErrors", "softnet.dropped", "softnet.time_squeeze", "sockets.timeWait"];

/** The path of chart.js's UMD bundle (inlined into the page): next to its CommonJS entry (its exports map hides dist/). */
export function chartJsPath(): string {
  return path.join(path.dirname(require.resolve("chart.js")), "chart.umd.min.js");
}

/**
 * One self-contained HTML page: fleet table, advice, and a bar chart of each host's counters (chart.js inlined; the
 * data is the JSON document's). After drawing, the page writes each chart's data into `#chart-data` (a JSON text),
 * which a headless browser's --dump-dom shows: the test compares it with the JSON.
 */
export function renderHtml(doc: AuditDocument, hosts: HostReport[]): string {
  const chartJs = fs.readFileSync(chartJsPath(), "utf8");
  const rows = summaryRows(hosts);
  const data = hosts.filter((h) => h.reachable).map((h) => ({ name: h.name, values: CHART_COUNTERS.map((c) => reportCounters(h)[c] ?? 0) }));
  const json = JSON.stringify({ counters: CHART_COUNTERS, hosts: data }).replace(/</g, "\\u003c");
  const tableHtml = `<table id="fleet"><thead><tr>${rows[0].map((c) => `<th>${escapeHtml(c)}</th>`).join("")}</tr></thead><tbody>${rows.slice(1).map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join("")}</tr>`).join("")}</tbody></table>`;
  const adviceHtml = doc.advice.map((a) => `<li class="${a.level}"><b>${a.level}</b> ${escapeHtml(a.message)} <i>[${escapeHtml(a.hosts.join(", "))}]</i></li>`).join("");
  const canvases = data.map((d, i) => `<div class="chart"><h3>${escapeHtml(d.name)}</h3><canvas id="c${i}" width="600" height="260"></canvas></div>`).join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>net-tuning audit ${escapeHtml(doc.generatedAt)}</title>
<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}li.error b{color:#b00}li.warning b{color:#a60}.chart{display:inline-block;width:620px;vertical-align:top}</style>
</head><body>
<h1>net-tuning audit</h1>
<p>${escapeHtml(doc.tool)}, ${escapeHtml(doc.generatedAt)}: ${doc.summary.hosts} hosts, ${doc.summary.reachable} audited, ${doc.summary.unreachable} unreachable; ${doc.summary.errors} errors, ${doc.summary.warnings} warnings.</p>
${tableHtml}
<h2>Findings</h2><ul id="advice">${adviceHtml}</ul>
<h2>Counters per host (since boot)</h2>${canvases}
<pre id="chart-data"></pre>
<script>${chartJs.replace(/<\/script/gi, "<\\/script")}</script>
<script>
const DATA = ${json};
const drawn = [];
DATA.hosts.forEach((h, i) => {
  const chart = new Chart(document.getElementById("c" + i), { type: "bar", data: { labels: DATA.counters, datasets: [{ label: h.name, data: h.values }] }, options: { animation: false, responsive: false, indexAxis: "y" } });
  drawn.push({ name: h.name, labels: chart.data.labels, values: chart.data.datasets[0].data, rendered: chart.getDatasetMeta(0).data.length });
});
document.getElementById("chart-data").textContent = JSON.stringify(drawn);
</script>
<p>ESnet reference: ${escapeHtml(ESNET_SOURCE)}.</p>
</body></html>
`;
}
