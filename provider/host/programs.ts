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
