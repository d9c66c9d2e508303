/**
 * Which hosts the audit reads (issue #33): `user@addr[:port]` specs, inventory files (one host per line, or a static
 * Ansible INI or YAML inventory: groups, ansible_host, ansible_port, ansible_user; no dynamic inventories), and the
 * NetTuning / NicQueues resources of a `pulumi stack export` (hosts from their non-secret `endpoint` output, or from
 * the children's connection in an export made with --show-secrets; declared sysctls from the -apply child's plan).
 * Pure: the callers read the files.
 */
import { planValues } from "../sysctl/plan";
import { AuditTarget } from "./run";
import { KINDS } from "../kinds";

/** `user@addr[:port]`, `addr`, `[v6addr]:port`; `defaultUser` when no user is given. Throws Error on a malformed spec. */
export function parseHostSpec(spec: string, defaultUser: string): { user: string; host: string; port: number } {
  const m = /^(?:([^@\s]+)@)?(\[[0-9A-Fa-f:.]+\]|[^:@\s[\]]+)(?::(\d{1,5}))?$/.exec(spec.trim());
  if (!m) throw new Error(`host ${JSON.stringify(spec)}: use user@address[:port]`);
  const port = m[3] === undefined ? 22 : Number(m[3]);
  if (port < 1 || port > 65535) throw new Error(`host ${JSON.stringify(spec)}: port ${port} is out of range`);
  return { user: m[1] ?? defaultUser, host: m[2].replace(/^\[(.*)\]$/, "$1"), port };
}

function target(name: string, vars: Record<string, string>, defaultUser: string): AuditTarget {
  const base = parseHostSpec(vars.ansible_host ?? name, vars.ansible_user ?? defaultUser);
  const port = vars.ansible_port !== undefined ? Number(vars.ansible_port) : base.port;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`inventory host ${name}: ansible_port ${JSON.stringify(vars.ansible_port)} is not a port`);
  return { name, host: base.host, port, user: vars.ansible_user ?? base.user };
}

/** Static Ansible INI inventory: `[group]`, `[group:vars]`, `[group:children]`, `name key=value …` lines. */
export function parseIniInventory(text: string, defaultUser: string): AuditTarget[] {
  const hosts = new Map<string, { vars: Record<string, string>; groups: Set<string> }>();
  const groupVars = new Map<string, Record<string, string>>();
  const children = new Map<string, string[]>();
  let section = "ungrouped";
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\s+[#;].*$/, "").trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const h = /^\[([^\]]+)\]$/.exec(line);
    if (h) { section = h[1]; continue; }
    const [group, kind] = section.split(":");
    const words = line.split(/\s+/);
    if (kind === "vars") {
      const eq = line.indexOf("=");
      if (eq > 0) (groupVars.get(group) ?? groupVars.set(group, {}).get(group)!)[line.slice(0, eq).trim()] = line.slice(eq + 1).trim().replace(/^["'](.*)["']$/, "$1");
      continue;
    }
    if (kind === "children") { (children.get(group) ?? children.set(group, []).get(group)!).push(words[0]); continue; }
    const vars: Record<string, string> = {};
    for (const w of words.slice(1)) {
      const eq = w.indexOf("=");
      if (eq > 0) vars[w.slice(0, eq)] = w.slice(eq + 1).replace(/^["'](.*)["']$/, "$1");
    }
    const e = hosts.get(words[0]) ?? { vars: {}, groups: new Set<string>() };
    Object.assign(e.vars, vars);
    e.groups.add(group);
    hosts.set(words[0], e);
  }
  // a group's vars apply to its hosts and its children's hosts; host vars win; "all" applies to every host
  const groupsOf = (g: string, seen = new Set<string>()): string[] => {
    const parents = [...children.entries()].filter(([, c]) => c.includes(g)).map(([p]) => p).filter((p) => !seen.has(p));
    parents.forEach((p) => seen.add(p));
    return [g, ...parents.flatMap((p) => groupsOf(p, seen))];
  };
  return [...hosts.entries()].map(([name, e]) => {
    const vars: Record<string, string> = { ...(groupVars.get("all") ?? {}) };
    for (const g of [...e.groups].flatMap((x) => groupsOf(x)).reverse()) Object.assign(vars, groupVars.get(g) ?? {});
    Object.assign(vars, e.vars);
    return target(name, vars, defaultUser);
  });
}

/** A small YAML reader for static Ansible inventories: nested mappings of scalars (no lists, anchors or flow style beyond `{}`). */
function parseYamlMapping(text: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  const stack: { indent: number; obj: Record<string, unknown> }[] = [{ indent: -1, obj: root }];
  for (const raw of text.split("\n")) {
    if (/^\s*(#|$)/.test(raw) || raw.trim() === "---") continue;
    const indent = raw.length - raw.trimStart().length;
    const m = /^\s*("[^"]*"|'[^']*'|[^:#]+?)\s*:(?:\s+(.*?))?\s*$/.exec(raw.replace(/\s+#.*$/, ""));
    if (!m) throw new Error(`inventory: cannot read the YAML line ${JSON.stringify(raw.trim())} (static mappings only)`);
    while (stack.length > 1 && stack[stack.length - 1].indent >= indent) stack.pop();
    const key = m[1].replace(/^["'](.*)["']$/, "$1");
    const parent = stack[stack.length - 1].obj;
    const value = m[2];
    if (value === undefined || value === "" || value === "{}" || value === "null" || value === "~") {
      const obj: Record<string, unknown> = {};
      parent[key] = obj;
      stack.push({ indent, obj });
    } else parent[key] = value.replace(/^["'](.*)["']$/, "$1");
  }
  return root;
}

/** Static Ansible YAML inventory: `all:` (or any group) with `hosts:`, `vars:` and `children:`. */
export function parseYamlInventory(text: string, defaultUser: string): AuditTarget[] {
  const doc = parseYamlMapping(text);
  const found = new Map<string, Record<string, string>>();
  const walk = (group: Record<string, unknown>, inherited: Record<string, string>) => {
    const vars = { ...inherited, ...((group.vars as Record<string, string>) ?? {}) };
    for (const [name, hv] of Object.entries((group.hosts as Record<string, unknown>) ?? {})) {
      found.set(name, { ...vars, ...(found.get(name) ?? {}), ...((hv as Record<string, string>) ?? {}) });
    }
    for (const child of Object.values((group.children as Record<string, unknown>) ?? {})) walk((child as Record<string, unknown>) ?? {}, vars);
  };
  for (const g of Object.values(doc)) walk((g as Record<string, unknown>) ?? {}, {});
  return [...found.entries()].map(([name, vars]) => target(name, vars, defaultUser));
}

/** Any inventory file: YAML (`.yml`/`.yaml`, or a first line ending in ":"), INI (has a `[group]` or `key=value`), else one host per line. */
export function parseInventory(text: string, fileName: string, defaultUser: string): AuditTarget[] {
  const first = text.split("\n").find((l) => l.trim() !== "" && !l.trim().startsWith("#"))?.trim() ?? "";
  if (/\.ya?ml$/i.test(fileName) || first === "---" || /^[\w.-]+:\s*$/.test(first)) return parseYamlInventory(text, defaultUser);
  if (/^\s*\[[^\]]+\]\s*$/m.test(text) || /\sansible_\w+=/.test(text)) return parseIniInventory(text, defaultUser);
  return text.split("\n").map((l) => l.replace(/#.*$/, "").trim()).filter((l) => l !== "").map((l) => {
    const t = parseHostSpec(l, defaultUser);
    return { name: l, ...t };
  });
}

interface StackResource { urn: string; type: string; parent?: string; inputs?: Record<string, unknown>; outputs?: Record<string, unknown> }

const SECRET_SIG = "4dabf18193072939515e22adb298388d";

/** A value of a stack export: plain, or a secret's plaintext (an export with --show-secrets); undefined when encrypted. */
function reveal(v: unknown): unknown {
  if (typeof v === "object" && v !== null && (v as Record<string, unknown>)[SECRET_SIG] !== undefined) {
    const p = (v as Record<string, unknown>).plaintext;
    if (typeof p !== "string") return undefined;
    try { return JSON.parse(p); } catch { return undefined; }
  }
  return v;
}

/**
 * The hosts and declared sysctls of a `pulumi stack export`: one target per endpoint, with the values every NetTuning
 * on it declares. `problems`: resources whose host cannot be told (a secret connection in an export without
 * --show-secrets, and no `endpoint` output).
 */
export function parseStackExport(json: string): { targets: AuditTarget[]; problems: string[] } {
  let doc: { deployment?: { resources?: StackResource[] } };
  try { doc = JSON.parse(json); } catch (e) { throw new Error(`--stack: not JSON (${(e as Error).message})`); }
  const resources = doc.deployment?.resources;
  if (!Array.isArray(resources)) throw new Error("--stack: not a `pulumi stack export` document (no deployment.resources)");
  const problems: string[] = [];
  const byEndpoint = new Map<string, AuditTarget>();
  for (const r of resources.filter((x) => x.type === KINDS.sysctl.type || x.type === KINDS.nic.type)) {
    const children = resources.filter((c) => c.parent === r.urn && c.type === "command:remote:Command");
    const apply = children.find((c) => c.urn.endsWith("-apply"));
    let endpoint = reveal(r.outputs?.endpoint);
    if (typeof endpoint !== "string") {
      const conn = reveal(apply?.inputs?.connection ?? apply?.outputs?.connection) as { host?: unknown; port?: unknown; user?: unknown } | undefined;
      if (conn && typeof conn.host === "string") endpoint = `${typeof conn.user === "string" ? conn.user : "root"}@${conn.host}:${conn.port ?? 22}`;
    }
    const name = r.urn.slice(r.urn.lastIndexOf("::") + 2);
    if (typeof endpoint !== "string") {
      problems.push(`${r.type.split(":").pop()} ${JSON.stringify(name)}: the export names no host (no endpoint output, connection is secret): export with \`pulumi stack export --show-secrets\`, or update the program to a net-tuning version with the endpoint output`);
      continue;
    }
    const t = byEndpoint.get(endpoint) ?? { name: endpoint, ...parseHostSpec(endpoint, "root"), declared: {}, resources: [] };
    t.resources!.push(name);
    if (r.type === KINDS.sysctl.type) {
      const stdin = reveal(apply?.inputs?.stdin ?? apply?.outputs?.stdin);
      if (typeof stdin === "string") Object.assign(t.declared!, planValues(stdin).values);
      else if (apply) problems.push(`NetTuning ${JSON.stringify(name)}: its declared values are secret in this export (use --show-secrets)`);
    }
    byEndpoint.set(endpoint, t);
  }
  return { targets: [...byEndpoint.values()], problems };
}
