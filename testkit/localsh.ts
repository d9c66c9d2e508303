/** Runs the host programs' sh functions on this machine, for unit tests of the engine and the nic kind. */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

export { SHELLS } from "./shells";

/** Where the host programs' sh sources live. */
export const SH_DIR = path.join(__dirname, "../provider/host/sh");

/**
 * Runs `script` with `shell` (default /bin/sh; a shell of testkit/shells.ts such as "busybox ash") after sourcing runtime.sh, nicspec.sh and nic.sh (as the engine assembles them), with `NT_TMP` = `tmp` (or a
 * fresh temporary directory, removed afterwards); returns stdout and throws on a non-zero exit (the error carries
 * status, stdout and stderr).
 */
export function runSh(script: string, opts: { shell?: string; input?: string; tmp?: string; env?: Record<string, string> } = {}): string {
  const tmp = opts.tmp ?? fs.mkdtempSync(path.join(os.tmpdir(), "nic-unit-"));
  try {
    const [cmd, ...shellArgs] = (opts.shell ?? "/bin/sh").split(" ");
    return execFileSync(cmd, [...shellArgs, "-c", `. "$1/runtime.sh"; . "$1/nicspec.sh"; . "$1/nic.sh"; NT_TMP="$2"; ${script}`, "nic-test", SH_DIR, tmp], {
      input: opts.input ?? "",
      encoding: "utf8",
      env: { ...process.env, ...opts.env },
    });
  } finally {
    if (!opts.tmp) fs.rmSync(tmp, { recursive: true, force: true });
  }
}
