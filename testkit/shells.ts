/**
 * The POSIX shells every host program must run under: dash (Debian/Ubuntu /bin/sh), bash in POSIX mode
 * (RHEL/CentOS /bin/sh) and busybox ash (Alpine-like hosts). Not filtered by what is installed: a missing
 * shell fails the tests that use it (scripts/deps.sh installs dash, bash and busybox).
 */
import { execFileSync, ExecFileSyncOptions, spawnSync, SpawnSyncOptions, SpawnSyncReturns } from "child_process";

/** How each shell is started: argv before `-c script` / `-n file`. */
export const SHELL_ARGV = {
  dash: ["dash"],
  "bash --posix": ["bash", "--posix"],
  "busybox ash": ["busybox", "ash"],
} as const;
export type ShellName = keyof typeof SHELL_ARGV;
export const SHELLS = Object.keys(SHELL_ARGV) as ShellName[];

/** `execFileSync` of `shell` with `args` after the shell's own argv (e.g. `["-c", script, "$0", "$1"]`). */
export function execShell(shell: ShellName, args: string[], opts: ExecFileSyncOptions & { encoding: "utf8" }): string {
  const [cmd, ...pre] = SHELL_ARGV[shell];
  return execFileSync(cmd, [...pre, ...args], opts) as string;
}

export function spawnShell(shell: ShellName, args: string[], opts: Omit<SpawnSyncOptions, "encoding"> = {}): SpawnSyncReturns<string> {
  const [cmd, ...pre] = SHELL_ARGV[shell];
  return spawnSync(cmd, [...pre, ...args], { ...opts, encoding: "utf8" });
}
