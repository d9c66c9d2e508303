/** A fresh clone of this repository (committed tree plus working changes) in a temporary directory, for package tests. */
import { execFileSync, ExecFileSyncOptions } from "child_process";
import * as fs from "fs";
import * as path from "path";

export const REPO = path.resolve(__dirname, "../..");

/** Runs a command, failing with its output (bounded by `timeout`). */
export function run(cmd: string, args: string[], opts: ExecFileSyncOptions & { timeout: number }): string {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20, ...opts }) as string;
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(" ")} failed in ${opts.cwd}: ${err.message}\n${err.stdout ?? ""}\n${String(err.stderr ?? "").slice(-4000)}`);
  }
}

/** npm with the flags every package test uses (warm cache first, quiet). */
export function npm(cwd: string, args: string[], timeout = 300_000): string {
  return run("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], { cwd, timeout });
}

/** Copies the tracked and untracked-but-not-ignored files into `dir` and commits them as one snapshot. */
export function freshClone(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const files = run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: REPO, timeout: 30_000 }).split("\0").filter(Boolean);
  for (const f of files) {
    if (!fs.existsSync(path.join(REPO, f))) continue; // deleted in the working tree
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.copyFileSync(path.join(REPO, f), path.join(dir, f));
  }
  const git = (args: string[]) => run("git", ["-c", "user.email=test@example.invalid", "-c", "user.name=test", ...args], { cwd: dir, timeout: 60_000 });
  git(["init", "-q"]);
  git(["add", "-A"]);
  git(["commit", "-qm", "snapshot"]);
  return dir;
}
