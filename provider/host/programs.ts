import * as fs from "fs";
import * as path from "path";
import { shQuote } from "../shell";

/**
 * The host programs: POSIX sh text assembled from the files in `sh/` (readable, shellchecked), never from user values.
 * User values travel on stdin as a plan and are validated again on the host before use.
 */
const SH_DIR = path.join(__dirname, "sh");
const cache = new Map<string, string>();
function sh(name: string): string {
  let text = cache.get(name);
  if (text === undefined) {
    text = fs.readFileSync(path.join(SH_DIR, name), "utf8");
    cache.set(name, text);
  }
  return text;
}

export type HostKind = "sysctl" | "nic";
export type HostOp = "apply" | "restore";

/**
 * The full program text for one kind and operation. The restore program travels in the `-restore` child's stdin
 * (Pulumi state), so it is compact: only the functions the restore reaches, without comments and indentation
 * ({@link compactProgram}); it shares every setter with the apply engine and needs nothing installed on the host.
 */
export function hostProgram(kind: HostKind, op: HostOp): string {
  if (op === "restore") return compactProgram(`${sh("runtime.sh")}\n${sh(`${kind}.sh`)}\n`, "nt_restore_main", RESTORE_NEVER);
  return `${sh("runtime.sh")}\n${sh(`${kind}.sh`)}\nnt_apply_main\n`;
}

/** Functions a restore never calls although their names appear in code it runs (apply-only branches). */
const RESTORE_NEVER = ["nt_rollback", "nt_outcome", "kind_rollback", "nn_apply_directive"];

/**
 * Tree-shakes POSIX sh text: keeps the top-level statements and the top-level functions (`name() {` … a `}` line)
 * reachable by name from them and from `entry`, drops comment lines (shellcheck directives kept) and leading
 * indentation outside here-documents, and ends with a call of `entry`. `never`: names not to follow (functions only
 * reached on paths this entry never takes; calling one would fail loudly with "not found").
 */
export function compactProgram(text: string, entry: string, never: string[] = []): string {
  const lines = text.split("\n");
  // Items in source order: a top-level line, or a whole function.
  const items: { name?: string; lines: string[] }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)\(\) \{(.*)$/.exec(lines[i]);
    if (!m) { items.push({ lines: [lines[i]] }); continue; }
    const body = [lines[i]];
    const oneLine = /\}\s*$/.test(m[2]) && (m[2].match(/\{/g) ?? []).length + 1 === (m[2].match(/\}/g) ?? []).length;
    if (!oneLine) {
      for (i++; i < lines.length && lines[i] !== "}"; i++) body.push(lines[i]);
      body.push("}");
    }
    items.push({ name: m[1], lines: body });
  }
  let heredoc: string | undefined;
  const strip = (block: string[]): string[] => {
    const out: string[] = [];
    for (const l of block) {
      if (heredoc !== undefined) { out.push(l); if (l === heredoc) heredoc = undefined; continue; }
      const t = l.replace(/^\s+/, "");
      if (t === "" || (t.startsWith("#") && !t.startsWith("# shellcheck"))) continue;
      out.push(t);
      const h = /<<-?\s*'?([A-Za-z_]+)'?\s*$/.exec(t);
      if (h) heredoc = h[1];
    }
    return out;
  };
  for (const it of items) it.lines = strip(it.lines);
  // A later definition replaces an earlier one (as in sh): a name refers to all its definitions.
  const defs = new Map<string, string>();
  for (const it of items) if (it.name) defs.set(it.name, `${defs.get(it.name) ?? ""}\n${it.lines.join("\n")}`);
  const wanted = new Set<string>();
  const visit = (src: string) => {
    for (const w of src.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []) {
      if (defs.has(w) && !wanted.has(w) && !never.includes(w)) { wanted.add(w); visit(defs.get(w)!); }
    }
  };
  visit(items.filter((it) => !it.name).map((it) => it.lines.join("\n")).join("\n"));
  visit(entry);
  const out = items.filter((it) => !it.name || wanted.has(it.name)).flatMap((it) => it.lines);
  // The first line names the program (kept: a reader of the state sees what it is).
  const title = lines[0].startsWith("# ") ? `${lines[0]}\n` : "";
  const header = "# shellcheck disable=SC2034 # tree-shaken: some variables only serve the dropped functions";
  return `${title}${header}\n${out.join("\n")}\n${entry}\n`;
}

/** How the program gains root: already root, or `sudo -n` (never prompts; a clear error when sudo refuses). */
export type Become = "sudo" | undefined;

/** The line that separates the plan from the program on stdin. */
export const PROGRAM_MARKER = "@program";

/**
 * The command line given to @pulumi/command: a short, fixed bootstrap (the provider repeats the command text in
 * every error message, so it must stay short). stdin carries the plan followed by the program (see {@link hostStdin});
 * the bootstrap saves stdin to a private temporary directory, cuts the program off after the `@program` line and runs it
 * with /bin/sh whatever the login shell is, feeding it the plan. With become "sudo" it checks `sudo -n` first so a
 * password prompt or a denial is reported clearly.
 */
export function hostCommand(kind: HostKind, op: HostOp, become?: Become): string {
  const boot =
    `umask 077; d=$(mktemp -d /tmp/net-tuning-in.XXXXXX) || exit 1; cat > "$d/in" && ` +
    `sed '1,/^${PROGRAM_MARKER}$/d' "$d/in" > "$d/program" && exec /bin/sh "$d/program" "$d" < "$d/in"; rm -rf "$d"; exit 1`;
  const run = `/bin/sh -c ${shQuote(boot)} net-tuning-${kind}-${op}`;
  if (become !== "sudo") return run;
  return (
    `if [ "$(id -u)" != 0 ] && ! NT_E=$(sudo -n true 2>&1); then ` +
    `printf 'net-tuning: become "sudo" failed for user %s: %s. Give this user passwordless sudo (NOPASSWD) or connect as root.\\n' "$(id -un)" "$NT_E" >&2; exit 3; fi; ` +
    `if [ "$(id -u)" = 0 ]; then ${run}; else sudo -n ${run}; fi`
  );
}

/** The stdin of a host command: the plan (shown as a line diff in `pulumi preview --diff`), then the program. */
export function hostStdin(kind: HostKind, op: HostOp, plan: string): string {
  const body = plan.endsWith("\n") ? plan : `${plan}\n`;
  return `${body}${PROGRAM_MARKER}\n${hostProgram(kind, op)}`;
}
