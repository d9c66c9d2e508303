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

/**
 * The command line given to @pulumi/command: runs the program with /bin/sh whatever the login shell's flavour
 * (sh, bash, dash). With become "sudo", checks `sudo -n` first so a password prompt or a denial is reported clearly.
 */
export function hostCommand(kind: HostKind, op: HostOp, become?: Become): string {
  const program = shQuote(hostProgram(kind, op));
  if (become !== "sudo") return `/bin/sh -c ${program} net-tuning`;
  return [
    `NT_P=${program}`,
    `if [ "$(id -u)" = 0 ]; then exec /bin/sh -c "$NT_P" net-tuning; fi`,
    `if ! NT_E=$(sudo -n true 2>&1); then printf 'net-tuning: become "sudo" failed for user %s: %s. Give this user passwordless sudo (NOPASSWD) or connect as root.\\n' "$(id -un)" "$NT_E" >&2; exit 3; fi`,
    `exec sudo -n /bin/sh -c "$NT_P" net-tuning`,
  ].join("\n");
}
