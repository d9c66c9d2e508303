import * as fs from "fs";
import * as path from "path";
import { shQuote } from "../shell";
import { Engine, engine, engineLine, ENGINE_INSTALL_DIR, ENGINE_STAGE_HOME, ENGINE_STAGE_ROOT } from "./engine";

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

/** The full program text for one kind and operation. */
export function hostProgram(kind: HostKind, op: HostOp): string {
  const main = op === "apply" ? "nt_apply_main" : "nt_restore_main";
  return `${sh("runtime.sh")}\n${sh(`${kind}.sh`)}\n${main}\n`;
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

// ---------------------------------------------------------------------------------------------------------------
// One engine per host (ARCHITECTURE.md, "One engine per host"): the apply runs the installed engine file; the plan
// on stdin starts with `@engine <version> <sha256>`. Restores keep the self-contained program above.

/** How an apply Command runs: its `create` starts a new generation on the machine, its `update` keeps it. */
export type ApplyMode = "create" | "update";

/**
 * Where the `-engine` CopyToRemote stages the engine file (SFTP as the SSH user, no sudo). As root: under
 * /var/lib/pulumi-net-tuning/incoming; with become "sudo": relative to the user's home. One staged file per
 * resource (owner id in the name): two resources on one host copy concurrently, and SFTP writes in place.
 */
export function engineRemotePath(sha256: string, ownerId: string, become?: Become): string {
  const dir = become === "sudo" ? ENGINE_STAGE_HOME : ENGINE_STAGE_ROOT;
  return `${dir}/engine-${sha256}.${ownerId}.sh`;
}

/**
 * The apply bootstrap (run as root by /bin/sh whatever the login shell): reads the `@engine` line, runs the installed
 * engine `/usr/local/lib/pulumi-net-tuning/engine-<sha256>.sh`; when absent, copies the staged file into a root-owned
 * temporary file in that root-owned directory, checks the sha256 of THAT copy and renames it into place (atomic), so
 * nothing ever runs from a path another user can write. Arguments: $1 kind, $2 op, $3 staging dir, $4 owner id,
 * $5 the URN of the `-engine` child (named in the recovery command when the host lost both copies).
 */
const ENGINE_BOOT =
  `umask 022;IFS=' ' read -r t v s;case $s in *[!0-9a-f]*) s=;;esac;` +
  `[ "$t" = @engine ]&&[ \${#s} = 64 ]||{ echo 'net-tuning: the plan does not start with "@engine <version> <sha256>"' >&2;exit 5;};` +
  `e=${ENGINE_INSTALL_DIR}/engine-$s.sh;` +
  `[ -f "$e" ]||{ f=$3/engine-$s.$4.sh;` +
  `[ -f "$f" ]||{ echo "net-tuning: engine $v ($s) is neither installed in \${e%/*} nor staged in $f on $(uname -n) (host rebuilt or files removed?): deliver it again with: pulumi up --replace '$5'" >&2;exit 6;};` +
  `n=\${e%/*}/.new.$$;{ mkdir -p -m 755 "\${e%/*}"&&cat "$f" >"$n"&&[ "$(sha256sum <"$n")" = "$s  -" ]&&mv -f "$n" "$e";}||{ rm -f "$n";echo "net-tuning: could not install engine $s from $f on $(uname -n): copy failed or its sha256 differs (staged file changed or damaged; run pulumi up --replace '$5')" >&2;exit 6;};};` +
  `exec /bin/sh "$e" "$1" "$2"`;

/**
 * The `create` (mode "create") or `update` (mode "update") of an apply Command. The two differ only in the engine
 * operation (`apply-create` / `apply-update`, seen by the engine as NT_APPLY_MODE). With become "sudo" the staging
 * directory is the SSH user's home, expanded before sudo.
 */
export function engineCommand(kind: HostKind, mode: ApplyMode, ownerId: string, engineUrn: string, become?: Become): string {
  if (!/^[A-Za-z0-9._-]+$/.test(ownerId)) throw new Error(`pulumi-net-tuning: invalid owner id ${JSON.stringify(ownerId)}`);
  const stage = become === "sudo" ? `"$HOME"/${ENGINE_STAGE_HOME}` : ENGINE_STAGE_ROOT;
  const run = `/bin/sh -c ${shQuote(ENGINE_BOOT)} net-tuning ${kind} apply-${mode} ${stage} ${ownerId} ${shQuote(engineUrn)}`;
  if (become !== "sudo") return run;
  return (
    `if [ "$(id -u)" = 0 ]; then ${run}; else NT_E=$(sudo -n true 2>&1) || { ` +
    `printf 'net-tuning: become "sudo" failed for user %s: %s. Give this user passwordless sudo (NOPASSWD) or connect as root.\\n' "$(id -un)" "$NT_E" >&2; exit 3; }; ` +
    `sudo -n ${run}; fi`
  );
}

/** The apply's stdin: `@engine <version> <sha256>`, then the plan (directives and the exact file). Nothing else. */
export function engineStdin(plan: string, e: Engine = engine()): string {
  const body = plan.endsWith("\n") ? plan : `${plan}\n`;
  return `${engineLine(e)}\n${body}`;
}
