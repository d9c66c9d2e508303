import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { gunzipSync } from "zlib";
import { shQuote } from "../shell";
import { gzipFixed } from "../gzip";
import { Engine, engine, engineLine, ENGINE_INSTALL_DIR, ENGINE_STAGE_HOME, ENGINE_STAGE_ROOT, kindLoader } from "./engine";
import { HOST_KINDS, type HostKind, KINDS } from "../kinds";

/**
 * The host programs: POSIX sh text assembled from the files in `sh/` (readable, shellchecked), never from user values.
 * User values travel on stdin as a plan and are validated again on the host before use.
 */
const SH_DIR = path.join(__dirname, "sh");
const cache = new Map<string, string>();
/** The text under `key`, built once per process (a 1,000-host program needs each program 2,000 times). */
function once(key: string, build: () => string): string {
  let text = cache.get(key);
  if (text === undefined) {
    text = build();
    cache.set(key, text);
  }
  return text;
}
function sh(name: string): string {
  return once(`sh:${name}`, () => fs.readFileSync(path.join(SH_DIR, name), "utf8"));
}

/**
 * A one-line program from its template `provider/host/sh/<name>.sh.in` (the bootstraps: one line, because a command
 * reads each with one `read`, and short, because state stores them): comment and blank lines are dropped, each
 * line's leading blanks too, the lines are joined with ";", and each `@NAME@` is replaced by `vars[NAME]` (every
 * variable must be used, and no placeholder may be left). So a template line never ends with ";" (its `;;` stay
 * inside one line), and the result is exactly the text the host runs.
 */
export function bootLine(name: string, vars: Record<string, string> = {}): string {
  return joinTemplate(sh(`${name}.sh.in`), vars, `${name}.sh.in`);
}

/** {@link bootLine}'s rule on a template's text (`what` names it in errors). */
export function joinTemplate(template: string, vars: Record<string, string> = {}, name = "template"): string {
  const lines = template
    .split("\n")
    .map((l) => l.replace(/^\s+/, ""))
    .filter((l) => l !== "" && !l.startsWith("#"));
  const bad = lines.find((l) => l.endsWith(";"));
  if (bad !== undefined) throw new Error(`${name}: a line ends with ";": ${bad}`);
  let text = lines.join(";");
  for (const [k, v] of Object.entries(vars)) {
    const placeholder = `@${k}@`;
    if (!text.includes(placeholder)) throw new Error(`${name}: no ${placeholder}`);
    text = text.split(placeholder).join(v);
  }
  const left = /@[A-Z_]+@/.exec(text);
  if (left) throw new Error(`${name}: ${left[0]} not given`);
  return text;
}

export type { HostKind };
export type HostOp = "apply" | "restore";

/**
 * The full program text for one kind and operation. "apply": the engine's runtime and kind part, then
 * `nt_apply_main` (not the verify gate's reader, counters.sh: a plan with `@verify-*` lines needs the engine file). "restore": the engine's restore tree-shaken ({@link compactProgram}: only the functions
 * `nt_restore_main` reaches, without comments and indentation); no -restore child carries it (the installed engine
 * restores, else the fallback of {@link fallbackProgram}, which gives adopted files back itself): the size reference
 * the fallback is measured against (tests, ARCHITECTURE.md "Restore without the host").
 */
export function hostProgram(kind: HostKind, op: HostOp): string {
  return once(`program:${kind}:${op}`, () => {
    const kindText = KINDS[kind].engineFiles.map(sh).join("\n");
    return op === "restore"
      ? compactProgram(`${sh("runtime.sh")}\n${kindText}\n`, "nt_restore_main", RESTORE_NEVER)
      : `${sh("runtime.sh")}\n${kindText}\nnt_apply_main\n`;
  });
}

/**
 * Functions a restore never calls although their names appear in code it runs (apply-only branches; kind_same only
 * answers for keys with a @readback form, which only apply plans carry, and nt_same asks `command -v` first;
 * nt_ix_get and nt_want_ix serve the in-memory index, which only the apply fills: nt_lookup and nt_want call them
 * only when a file is indexed).
 */
const RESTORE_NEVER = ["nt_rollback", "nt_outcome", "kind_rollback", "nn_apply_directive", "kind_same", "nt_ix_get", "nt_want_ix", "nt_gate_directive", "nt_gate_cleanup"];
/**
 * A restore plan that gives adopted files or rc.local lines back (NetTuning `adopt`, NicQueues `adoptRcLocalLines`):
 * its fallback carries the kind's adoption part ({@link fallbackProgram}).
 */
export const ADOPTED_PLAN = /^(@adopted |# adopted: )/m;

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

// ---------------------------------------------------------------------------------------------------------------
// One engine per host (ARCHITECTURE.md, "One engine per host"): the apply runs the installed engine file; the plan
// on stdin starts with `@engine <version> <sha256>`. Restores keep the self-contained program above.

/** How an apply Command runs: its `create` starts a new generation on the machine, its `update` keeps it. */
export type ApplyMode = "create" | "update";

/**
 * A delivery token: names the stack-level CopyToRemote `net-tuning-engine-<token>` and the file it stages,
 * `engine.<token>.sh`. One per stack and machine address when the address is known at registration (shared by every
 * resource of the stack on that address), else the resource's owner id (components/delivery.ts).
 */
export const DELIVERY_TOKEN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** The name of the delivery with `token` (a stack-level resource: no parent). */
export function deliveryName(token: string): string {
  return `net-tuning-engine-${token}`;
}

/**
 * Where the engine delivery stages the engine file (SFTP as the SSH user, no sudo). As root: under
 * /var/lib/pulumi-net-tuning/incoming; with become "sudo": relative to the user's home. One staged file per delivery
 * token (stack and address): two stacks on one host never copy over each other's file in place, and the resources of
 * one stack on one address share it. `home`: stage in the SSH user's home (become "sudo", or a connection user other
 * than root, whose apply then fails with "must run as root" instead of the copy failing with "Permission denied").
 */
export function engineRemotePath(token: string, home: boolean): string {
  if (!DELIVERY_TOKEN.test(token)) throw new Error(`pulumi-net-tuning: invalid delivery token ${JSON.stringify(token)}`);
  return `${home ? ENGINE_STAGE_HOME : ENGINE_STAGE_ROOT}/engine.${token}.sh`;
}

/**
 * The shell command that prints the URN of the resource named `name` (a suffix of the URN: `<type>::<name>`, or just
 * the name when it is unique in a stack, as a delivery's) in the current stack: recovery messages name the exact command
 * without storing the URN. `name` must be plain: letters, digits, `.`, `_`, `-`, `:`.
 */
export function urnLookup(name: string): string {
  return `pulumi stack --show-urns|grep -o 'urn:pulumi:[^ ]*::${name.replace(/\./g, "\\.")}$'`;
}

/**
 * The apply bootstrap (run as root by /bin/sh whatever the login shell), the second line of the apply's stdin
 * ({@link engineStdin}; the command, {@link APPLY_RUN}, has read the first, `@engine <version> <sha256>`, into t v s,
 * and evaluates this line): checks that line (exit 5 without it), refuses to go on unless root (exit 3; the builtin
 * test `-O /`: the effective user owns `/`), runs the installed engine `/usr/local/lib/pulumi-net-tuning/engine-<sha256>.sh`;
 * when absent or empty, copies the staged file into a root-owned temporary file in that root-owned directory (created
 * 0755 by `umask 022`), flushes it, checks the sha256 of THAT copy and renames it into place (atomic), so nothing ever
 * runs from a path another user can write (exit 6 naming the recovery command, `pulumi up --replace <URN of the
 * delivery>` with the URN looked up by {@link urnLookup}, when the copy is missing or differs; exit 6 when the
 * directory or file is not root's). Arguments: $1 kind, $2 operation, $3 the delivery token, $4 the staging directory
 * when it is the SSH user's home. The engine gets kind and operation, and the plan after this line on stdin. Process
 * cost when the engine is installed: none (the `sh -c` execs the engine). In the stdin, not the command: a command is
 * stored four times per resource (create and update, inputs and outputs), the stdin twice, and pulumi-command repeats
 * the command in every error it reports (issue #34's state budget, issue #31's readable errors).
 */
// (its template, with a comment per step: provider/host/sh/engine-boot.sh.in)
export const ENGINE_BOOT = bootLine("engine-boot", {
  ENGINE_INSTALL_DIR,
  ENGINE_STAGE_ROOT,
  URN_LOOKUP: urnLookup(deliveryName("$3")),
});

/**
 * The program of an apply command (`sh -c`): reads the stdin's first line (`@engine <version> <sha256>`) into t v s and
 * its second, {@link ENGINE_BOOT}, and evaluates that. `read` takes one line and no more (POSIX; dash and busybox sh,
 * which buffer a script read from stdin, would not leave the rest of it to the engine: hence `sh -c`, not `sh -s`), so
 * the engine execed by the bootstrap reads the plan from the third line on. A stdin without the `@engine` line, or cut
 * before the end of its second line, runs nothing (exit 5); one cut later, the engine refuses (the plan's end line).
 */
export const APPLY_RUN = bootLine("apply-run"); // provider/host/sh/apply-run.sh.in

/**
 * With become "sudo": a line of stdin (never of the command: a command is stored four times per resource, its stdin
 * twice, and pulumi-command repeats the command in every error it reports) that the command's /bin/sh, running as the
 * SSH user, reads and evaluates: it runs `program` (APPLY_RUN, RESTORE_BOOT: no single quote in it) with the command's
 * arguments under `sudo -n` unless already root; a password prompt or a denial is reported with exit 3 before
 * anything runs. Cheap on the way that works (processes: sudo's own, nothing else): "already root" is the builtin test
 * `-O /` (the effective user owns `/`; root then `exec`s the program, as without become), and sudo's failure is
 * recognised after the fact: sudo exits 1 when it refuses, so only an exit 1 asks `sudo -n /bin/sh -c :` whether sudo
 * itself refused (then exit 3 with sudo's message, the user and the fix) or the program failed (its status is kept);
 * an exit 127 (no sudo on the host) asks the same. The probe runs the same command as the program (/bin/sh), so a
 * sudoers rule that allows only /bin/sh does not turn the program's own exit 1 into a refusal. Ends with `exit`: the
 * command that evaluated it must not go on to its own "stdin cut" message after the program succeeded. Run by /bin/sh
 * whatever the login shell (which only starts the command's `/bin/sh -c`), so `$p` splits into its two words.
 */
export function sudoLine(program: string): string {
  if (program.includes("'") || program.includes("\n")) throw new Error("sudoLine: the program must be one line without a single quote");
  // once per program (APPLY_RUN, RESTORE_BOOT): every sudo resource's stdin carries one
  return once(`sudo:${program}`, () => bootLine("sudo", { PROGRAM: program })); // provider/host/sh/sudo.sh.in
}

/**
 * The `create` (mode "create") or `update` (mode "update") of an apply Command. The two differ only in the engine
 * operation (`apply-create` / `apply-update`, seen by the engine as NT_APPLY_MODE). `token`: the delivery's
 * ({@link deliveryName}). With `home` (default: become "sudo") the staging directory is the SSH user's home, expanded
 * before sudo. The same command with and without become "sudo": the way to root is in the stdin ({@link engineStdin}).
 * A plain string: nothing in it depends on another resource.
 */
export function engineCommand(kind: HostKind, mode: ApplyMode, token: string, become?: Become, home = become === "sudo", repair?: string): string {
  if (!DELIVERY_TOKEN.test(token)) throw new Error(`pulumi-net-tuning: invalid delivery token ${JSON.stringify(token)}`);
  if (repair !== undefined && !/^[0-9a-f]{1,64}$/.test(repair)) throw new Error(`pulumi-net-tuning: invalid repair token ${JSON.stringify(repair)}`);
  // a live preview's repair token rides on the operation (`apply-update@<token>`, recorded on the host); "0" = none
  const op = `apply-${mode}${repair !== undefined && repair !== "0" ? `@${repair}` : ""}`;
  return `/bin/sh -c ${shQuote(APPLY_RUN)} net-tuning ${kind} ${op} ${token}${home ? ` "$HOME"/${ENGINE_STAGE_HOME}` : ""}`;
}

/**
 * The apply's stdin: `@engine <version> <sha256>`, the bootstrap ({@link ENGINE_BOOT}, one line), then the plan
 * (directives and the exact file), then the end line `@end <sha256 of the plan>` ({@link endLine}). The engine refuses
 * a plan without it, with another sum, or with anything after it, before it changes anything: a session cut while the
 * plan streams (even at a line boundary) is never applied as a shorter plan. The `@engine` line first: the bootstrap of
 * an earlier version (in its command, kept when a live read fails during an upgrade: ARCHITECTURE.md, "Migration")
 * reads it, installs this engine and runs it, which then skips the bootstrap line (runtime.sh nt_read_stdin).
 * With become "sudo" two lines come first: the `@engine` line, which the command reads, and {@link sudoLine} of
 * {@link APPLY_RUN}, which it evaluates: the same command then reads the rest under sudo (an earlier version's command
 * kept by an upgrade, which runs its program under sudo, evaluates the sudo line as root: it execs APPLY_RUN, which
 * reads the rest; a bootstrap of 0.3.0, which reads the `@engine` line itself, leaves the sudo line, the second
 * `@engine` line and the bootstrap line on stdin, which the engine skips).
 */
export function engineStdin(plan: string, e: Engine = engine(), become?: Become): string {
  const body = planBody(plan);
  const head = `${engineLine(e)}\n${ENGINE_BOOT}\n`;
  return `${become === "sudo" ? `${engineLine(e)}\n${sudoLine(APPLY_RUN)}\n` : ""}${head}${body}${endLine(body)}`;
}

const planBody = (plan: string) => (plan.endsWith("\n") ? plan : `${plan}\n`);

/**
 * The sha256 of a plan as its end line gives it: what the host records as the plan it last converged to (the
 * converged record's `plan` line), compared by the live read.
 */
export function planSum(plan: string): string {
  return createHash("sha256").update(planBody(plan), "utf8").digest("hex");
}

/** The plan inside an apply's stdin (the inverse of {@link engineStdin}): for tests and readers of `pulumi stack export`. */
export function planOfStdin(stdin: string): string {
  // (the lines before the plan's: `@engine` lines and the bootstrap and sudo lines, as the engine takes them: nt_read_stdin)
  return stdin.replace(/^(?:(?:@engine |[^@\n])[^\n]*\n)+/, "").replace(END_LINE, "");
}

/** The end line {@link endLine} writes, at the end of a text. */
const END_LINE = /@end [0-9a-f]{64}\n$/;

/** `@end <sha256 of text>` and a newline: the last line of a framed plan (apply) or restore stdin (plain form). */
export function endLine(text: string): string {
  return `@end ${createHash("sha256").update(text, "utf8").digest("hex")}\n`;
}

// ---------------------------------------------------------------------------------------------------------------
// The -restore child (two tiers, ARCHITECTURE.md "Restore without the host"). Its stdin in plain form: `@restore 0|1`,
// `@engine <version> <sha256>`, the rest of the restore plan (identifying lines, originals, `@generation`),
// `@program`, then a FALLBACK restore program. When the apply reported gzip and base64 on the host, everything after
// the first line is stored as ONE base64 line of it gzip'd, so a review still reads `@restore` plainly. The bootstrap
// puts the plain form back together and runs the fallback, whose first step runs the installed engine named by the
// @engine line instead when that exact file is installed and root-owned.

/**
 * Seconds a destroy's restore may run before `timeout` ends it and every command it started (TERM, then CONT, to its
 * process group; exit 124), issue #32's deadline for the fallback restore, which has no watchdog of its own (one
 * would cost about 2.3 KB of state per host). It stays above the longest run the installed engine allows itself, so
 * that the engine's own deadline (with its message and rollback) always comes first: its lock wait (60 s, plus twice
 * the soak of a holder that soaks, at most 900 s) + its deadline (300 s) + its grace (60 s) = 2,220 s
 * (tests/unit/programs.test.ts checks the sum against runtime.sh). A fallback whose command never returns is thus
 * ended after 40 minutes, not never. Costs 164 B of state per host (the command, stored four times, is 39 characters longer; 41 bytes as JSON).
 */
export const RESTORE_BOUND = 2400;

/**
 * The restore bootstrap (`delete` of the -restore child; $1 the delivery token, $2 the SSH user's staging directory or
 * nothing): saves stdin in a private temp dir (mktemp -d: mode 0700, so no umask is needed for the files in it) and
 * rebuilds the plain form. A stdin with a `@program` line is the plain form: its last line `@end <sha256>` is checked
 * against the sum of everything before it and removed (issue #32: a stdin cut at a line boundary, or altered, runs
 * nothing). Any other stdin is compressed: its first line, then the second base64-decoded and gunzip'd; gzip's trailer
 * (CRC-32 and length) fails a cut or damaged blob, and gzip refuses an empty one (a stdin cut after its first line), so
 * it carries no end line (base64's or gzip's own message comes first);
 * cuts the fallback restore program off after `@program` and runs it with /bin/sh (DIR STAGE TOKEN), the plain form on
 * its stdin. The fallback's first step runs the installed engine instead (`engine-<sha256>.sh KIND restore DIR STAGE
 * TOKEN`) when the plan's `@engine <version> <sha256>` line names one owned by root in a root-owned directory whose
 * sha256 matches (provider/host/sh/restore.sh). Any failure before the program runs (a full /tmp, unpacking, the end
 * line, the cut): "restore stdin cut or damaged, or /tmp full; nothing restored", exit 1. As another user than root
 * nothing is owned, so the fallback runs and says it must run as root (exit 3). The program runs under `timeout`
 * {@link RESTORE_BOUND} where the host has one (coreutils; busybox 1.30 and later): see there; the bootstrap exits
 * with its status. The directory goes when the bootstrap exits (its EXIT trap), also after the program was ended (the
 * program removes it itself on its own exits). Written for size (it is stored four times per host): one error path,
 * sed scripts unquoted (no single quote, which the command line's quoting makes 4 characters longer each), the
 * bound and the trap's command with a backslash before each blank instead of quotes.
 */
// (its template: provider/host/sh/restore-boot.sh.in)
export const RESTORE_BOOT = bootLine("restore-boot", { RESTORE_BOUND: String(RESTORE_BOUND), PROGRAM_MARKER });

/**
 * The command of a restore with become "sudo" (`sh -c`): reads the stdin's first line, {@link sudoLine} of
 * {@link RESTORE_BOOT}, and evaluates it; a stdin cut before the end of that line runs nothing (exit 1).
 */
export const RESTORE_SUDO_RUN = bootLine("restore-sudo-run"); // provider/host/sh/restore-sudo-run.sh.in

/**
 * The `delete` of the -restore child. `token`: the delivery's (its staged copy goes with the host's last journal).
 * `home` (default: become "sudo"): the SSH user's staging directory is passed (expanded before sudo) so that the
 * restore removes staged engine copies there too. The kind is the plan's (`@kind`). As root the command runs
 * {@link RESTORE_BOOT}; with become "sudo" it runs {@link RESTORE_SUDO_RUN}, and the way to root and RESTORE_BOOT are
 * the stdin's first line ({@link restoreStdin}), so that an error names no sudo wrapper.
 */
export function restoreCommand(token: string, become?: Become, home = become === "sudo"): string {
  if (!DELIVERY_TOKEN.test(token)) throw new Error(`pulumi-net-tuning: invalid delivery token ${JSON.stringify(token)}`);
  return `/bin/sh -c ${shQuote(become === "sudo" ? RESTORE_SUDO_RUN : RESTORE_BOOT)} net-tuning ${token}${home ? ` "$HOME"/${ENGINE_STAGE_HOME}` : ""}`;
}

/**
 * The -restore child's stdin (see above): the restore plan's `@restore` line first, then `@engine <version> <sha256>`
 * (the engine that restores when installed), the rest of the plan, `@program` and the fallback restore program; with
 * `gzip`, all after the first line as one base64 line of it gzip'd ({@link readRestoreStdin} is the inverse). Both
 * restore tiers read the plan's lines in any order. With become "sudo", {@link sudoLine} of {@link RESTORE_BOOT} comes
 * first (read by {@link RESTORE_SUDO_RUN}: the rest is the bootstrap's stdin).
 */
export function restoreStdin(kind: HostKind, plan: string, gzip: boolean, e: Engine = engine(), become?: Become): string {
  const sudo = become === "sudo" ? `${sudoLine(RESTORE_BOOT)}\n` : "";
  const body = plan.endsWith("\n") ? plan : `${plan}\n`;
  const m = /^@restore [^\n]*\n/m.exec(body);
  const head = m ? m[0] : "@restore 1\n";
  const program = `${engineLine(e)}\n${m ? body.slice(0, m.index) + body.slice(m.index + m[0].length) : body}${PROGRAM_MARKER}\n${fallbackProgram(kind, ADOPTED_PLAN.test(body))}`;
  // the plain form ends with the sha256 of everything before it (RESTORE_BOOT checks and removes it); the compressed
  // form needs none: gzip's own trailer (CRC-32 and length) fails a cut or damaged stream, and an empty one
  return sudo + (gzip ? `${head}${gzipBase64(program)}\n` : `${head}${program}${endLine(`${head}${program}`)}`);
}

/** gzip (level 9, header mtime 0 and OS "Unix": the same bytes on every machine with the same zlib), then base64. */
function gzipBase64(text: string): string {
  return gzipFixed(Buffer.from(text, "utf8")).toString("base64");
}

/**
 * The plain form of a restore stdin as the bootstrap rebuilds it (a compressed one: its first line, then its second
 * decoded and gunzip'd; a plain one, which has a `@program` line, unchanged), without its `@end` line. For tests and
 * readers of `pulumi stack export`.
 */
export function readRestoreStdin(stdin: string): string {
  // (without the sudo line: RESTORE_SUDO_RUN reads it, the bootstrap never sees it)
  stdin = stdin.replace(/^[^@\n][^\n]*\n/, "");
  const m = /^([^\n]*\n)([A-Za-z0-9+/=]+)\n?$/.exec(stdin);
  const plain = new RegExp(`^${PROGRAM_MARKER}$`, "m").test(stdin) || !m ? stdin : `${m[1]}${gunzipSync(Buffer.from(m[2], "base64")).toString("utf8")}`;
  // without its end line, as the bootstrap hands it to the program once checked
  return plain.replace(END_LINE, "");
}

/** A plain restore stdin as {@link restoreStdin} frames it: the text, then its end line (for tests that write one by hand). */
export function frameRestore(plain: string): string {
  return `${plain}${endLine(plain)}`;
}

/** The shellcheck directive the fallback programs are checked with (restore.sh's, which they leave out). */
export const FALLBACK_LINT = "# shellcheck disable=SC2317,SC2034,SC2154,SC2231,SC2086";


/**
 * The fallback restore program of a kind (provider/host/sh/restore*.sh: a second, minimal implementation of the
 * engine's restore, written for size), compacted like the tree-shaken programs. `adopted`: for a plan that gives
 * adopted files or rc.local lines back ({@link ADOPTED_PLAN}), with the kind's adoption part
 * (restore-adopt-<kind>.sh); the program of a plan that adopts nothing leaves it out (it is smaller, and refuses an
 * `@adopted` line).
 */
export function fallbackProgram(kind: HostKind, adopted = false): string {
  return once(`fallback:${kind}:${adopted}`, () => {
    // the kind's sources (provider/kinds.ts); its adoption part after the kind part, whose a_dir / a_put it redefines
    const src = [...KINDS[kind].fallbackFiles, ...(adopted ? [KINDS[kind].fallbackAdopt] : [])].map(sh).join("\n");
    // without its leading comment lines (title, shellcheck directives: FALLBACK_LINT): every byte of it is stored four
    // times per host; the `@program` line before it says what it is
    return compactProgram(src, "r_main").replace(/^(#[^\n]*\n)+/, "");
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The live read of previews (issue #13; provider/live/read.ts sends it on stdin to `/bin/sh -s live live`).

/** Functions the live read never calls although their names appear in code it runs (the verify gate's clean-up: a live read never soaks). */
const LIVE_NEVER: string[] = ["nt_gate_cleanup"];
/**
 * NicQueues' bootOverride scan (nic.sh nn_boot_scan, about 9 KB with the awk programs it runs) and its adoptRcLocalLines
 * check (nn_rc_adopt_check): in the read only when a request asks for them ({@link liveProgram}'s `nicBoot`);
 * nn_live_iface reaches them only then.
 */
const LIVE_NIC_BOOT = ["nn_boot_scan", "nn_boot_findings", "nn_rc_adopt_check"];
/** NetTuning's adoption checks (sysctl.sh nts_adopt_check, about 4 KB): only when a request adopts files (`adopt`). */
const LIVE_ADOPT = ["nts_adopt_check"];
/**
 * Another owner's journal holding a declared key (runtime.sh nt_owner_conflicts) or the NicQueues' interface or
 * rps_sock_flow_entries (nic.sh nn_other_owners): a read as root only (`NT_LIVE_ROOT`).
 */
const LIVE_OWNERS = ["nt_owner_conflicts", "nn_other_owners", "nn_txq_writable", "nn_irq_writable"];
/**
 * The dry run of the kernel modules a NetTuning's settings need (sysctl.sh nts_live_modules, 1,054 bytes with
 * nts_module_present, nts_modprobe and the message): only when a request names modules (provider/live/read.ts requestModules).
 */
const LIVE_MODULES = ["nts_live_modules"];
/** A top-level line that marks where a kind's text starts in the text tree-shaken by {@link liveProgram}. */
const LIVE_KIND_MARK = ": nt-live-kind";
/** The number of comment lines {@link liveProgram} starts with. */
export const LIVE_PROGRAM_HEAD = 2;

/**
 * The read-only program of a live read: the engine's runtime and both kinds tree-shaken to what `nt_live_main`
 * reaches (the same getters, normaliser and digest as the installed engine, so values and file digests compare with
 * the apply's record), each kind in its loader function (`nt_kind_sysctl`, `nt_kind_nic`) as in the engine file, then
 * the call of `nt_live_main`. The reachable set is computed over runtime + both kinds at once (a name reaches every
 * definition of it, in either kind). Deterministic (the same sources give the same bytes) and assembled once per
 * process. Starts with comment lines only (a title and the file-wide shellcheck directives): a caller puts its variable
 * assignments after them ({@link LIVE_PROGRAM_HEAD} lines). `nicBoot`: with NicQueues' bootOverride scan (a read whose
 * requests include a NicQueues that persists with bootOverride "error" or "warn"); `adopt`: with NetTuning's adoption
 * checks (a NetTuning request that adopts files); `owners`: with the check of other owners' journals (a read as root);
 * `modules`: with the dry run of the kernel modules the settings need (a NetTuning request that names modules).
 */
export function liveProgram(nicBoot = true, adopt = true, owners = true, modules = true): string {
  return once(`program:live:${nicBoot}:${adopt}:${owners}:${modules}`, () => {
    const kinds = HOST_KINDS.map((k) => KINDS[k].engineFiles.map(sh).join("\n"));
    const source = [sh("runtime.sh"), ...kinds].join(`\n${LIVE_KIND_MARK}\n`);
    const never = [...LIVE_NEVER, ...(nicBoot ? [] : LIVE_NIC_BOOT), ...(adopt ? [] : LIVE_ADOPT), ...(owners ? [] : LIVE_OWNERS), ...(modules ? [] : LIVE_MODULES)];
    const shaken = compactProgram(`${source}\n`, "nt_live_main", never).split("\n");
    // compactProgram's output: title, its shellcheck header, the kept lines, "nt_live_main", ""
    if (shaken.pop() !== "" || shaken.pop() !== "nt_live_main") throw new Error("liveProgram: unexpected compactProgram output");
    const marks = shaken.flatMap((l, i) => (l === LIVE_KIND_MARK ? [i] : []));
    if (marks.length !== 2) throw new Error(`liveProgram: expected 2 kind marks, found ${marks.length}`);
    const [head, sysctlPart, nicPart] = [shaken.slice(0, marks[0]), shaken.slice(marks[0] + 1, marks[1]), shaken.slice(marks[1] + 1)];
    // compactProgram's leading comments (runtime.sh's title, its own and runtime.sh's shellcheck directives) give way
    // to this program's title and one file-wide directive covering them: LIVE_PROGRAM_HEAD lines, always
    const first = head.findIndex((l) => !l.startsWith("#"));
    if (first < 0) throw new Error("liveProgram: the runtime has no top-level command");
    const body = head.slice(first);
    return [
      "# pulumi-net-tuning live read (read-only), tree-shaken from the host engine by provider/host/programs.ts (liveProgram)",
      "# shellcheck disable=SC2317,SC2034 # functions are called indirectly (hooks, kind loaders); some variables only serve dropped functions",
      // $1 $2 of `/bin/sh -s live live` are not the runtime's input dir and staging dir (the engine's prelude does the same)
      "set --", ...body,
      kindLoader("sysctl", `${sysctlPart.join("\n")}\n`) + kindLoader("nic", `${nicPart.join("\n")}\n`) + "nt_live_main", "",
    ].join("\n");
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The confirm of a confirmed apply (issue #34; provider/confirm.ts): its command (the -restore child's create).

/**
 * The confirm's command (the -restore child's `create`, set only after an apply that armed a revert: pulumi-command
 * runs `create` for an update without `update`): runs the engine the apply just ran (installed, root's: its directory
 * and file owned by root, as the apply bootstrap checks) with operation `confirm:<owner id>:<token>`; as root,
 * with become "sudo" under `sudo -n` unless already root (`[ -O / ]`; the words in "$@", which zsh as the login shell
 * does not split otherwise). Its stdin (the restore stdin) is not read. Short (stored twice in state): with sudo
 * without {@link sudoLine}'s diagnosis, as the confirm runs right after an apply that sudo let through (a refusal
 * now shows sudo's own message and exit 1).
 */
export function confirmCommand(kind: HostKind, ownerId: string, token: string, e: Engine = engine(), become?: Become, inRollout = false): string {
  if (!/^[A-Za-z0-9._-]+$/.test(ownerId) || !/^[0-9a-f-]{1,64}$/.test(token)) throw new Error(`pulumi-net-tuning: invalid confirm ${ownerId} ${token}`);
  const program = bootLine("confirm", { ENGINE: `${ENGINE_INSTALL_DIR}/${e.fileName}`, KIND: kind, OWNER_ID: ownerId, TOKEN: token });
  const run = `/bin/sh -c ${shQuote(program)}`;
  const cmd = become === "sudo" ? `[ -O / ]||set -- sudo -n;"$@" ${run}` : run;
  // in a rollout (components/rollout.ts), a host that already reverted (exit 7) is a status, not a failure
  return inRollout ? `(${cmd});c=$?;[ $c != 7 ]||{ printf 'status\\tunconfirmed\\n';exit 0;};exit $c` : cmd;
}
