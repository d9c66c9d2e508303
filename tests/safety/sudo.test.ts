/**
 * The become "sudo" way to root of the apply and restore (provider/host/programs.ts sudoLine: a line of their stdin,
 * which the command's /bin/sh reads and evaluates) under every login shell (dash, bash --posix, busybox ash, zsh), with
 * a stand-in `sudo` first in PATH that logs its arguments: the line runs the program under `sudo -n` with no check
 * before it (no process on the way that works), recognises sudo's own refusal after the fact (exit 3, sudo's message,
 * the user and the NOPASSWD fix), keeps a program's own exit 1, and as root runs the program without sudo. The
 * commands themselves carry no sudo (an error of pulumi-command, which repeats the command, shows none of it). The
 * confirm's short form (`sudo -n` unless root, in its command). Real sudo on lab hosts: tests/engine/engine.test.ts,
 * tests/safety/procs.test.ts.
 */
import { execFileSync, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { APPLY_RUN, confirmCommand, engineCommand, engineStdin, frameRestore, RESTORE_BOOT, restoreCommand, restoreStdin, sudoLine } from "../../provider/host/programs";
import { SHELL_ARGV } from "../../testkit/shells";

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "nt-sudo-"));
  fs.chmodSync(tmp, 0o755);
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/**
 * A stand-in sudo: logs "sudo ARGS" to $tmp/log, then "refuse" (sudo's message, exit 1, as sudo -n does when it
 * would prompt), "fail" (the program under it exits 1; the probe `sudo -n /bin/sh -c :` works), "shonly" (as "fail",
 * but any command other than /bin/sh is refused, as under a sudoers rule `NOPASSWD: /bin/sh`) or "run" (runs the
 * command as is).
 */
type Mode = "refuse" | "fail" | "shonly" | "run" | "missing";
function fakeSudo(mode: Mode): string {
  const bin = path.join(tmp, `bin-${mode}`);
  fs.mkdirSync(bin, { recursive: true, mode: 0o755 });
  if (mode === "missing") {
    // the whole PATH (below): the tools the wrapper and this test start, and no sudo
    for (const t of ["setpriv", "dash", "bash", "busybox", "zsh", "id", "sh"]) {
      const to = path.join(bin, t);
      if (!fs.existsSync(to)) fs.symlinkSync(execFileSync("sh", ["-c", `command -v ${t}`], { encoding: "utf8" }).trim(), to);
    }
    return bin;
  }
  const body = {
    refuse: `echo "sudo: a password is required" >&2; exit 1`,
    fail: `[ "$*" = "-n /bin/sh -c :" ] && exit 0; exit 1`,
    shonly: `[ "$2" = /bin/sh ] || { echo "sudo: a password is required" >&2; exit 1; }; [ "$*" = "-n /bin/sh -c :" ] && exit 0; exit 1`,
    run: `shift; exec "$@"`,
  }[mode as "refuse" | "fail" | "shonly" | "run"];
  fs.writeFileSync(path.join(bin, "sudo"), `#!/bin/sh\necho "sudo $*" >> ${tmp}/log\n${body}\n`, { mode: 0o755 });
  return bin;
}

/** The login shells: the POSIX ones the host programs run under, and zsh (a common login shell; it does not split
 * unquoted parameter expansions). */
const LOGIN: Record<string, readonly string[]> = { ...SHELL_ARGV, zsh: ["zsh"] };

function run(shell: string, [cmd, input]: readonly [string, string], mode: Mode, asRoot = false): { status: number | null; stderr: string; log: string[] } {
  fs.writeFileSync(path.join(tmp, "log"), "");
  fs.chmodSync(path.join(tmp, "log"), 0o666);
  const who = asRoot ? [] : ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"];
  const argv = [...who, ...LOGIN[shell], "-c", cmd];
  const r = spawnSync(argv[0], argv.slice(1), {
    input,
    encoding: "utf8",
    env: { PATH: mode === "missing" ? fakeSudo(mode) : `${fakeSudo(mode)}:/usr/sbin:/usr/bin:/sbin:/bin`, HOME: tmp, LC_ALL: "C" },
  });
  const log = fs.readFileSync(path.join(tmp, "log"), "utf8").split("\n").filter(Boolean);
  return { status: r.status, stderr: r.stderr, log };
}

/**
 * Each command with the head of its stdin: up to the line the command evaluates, so that the program under sudo finds
 * the rest empty (the apply's: the `@engine` line and the sudo line; the restore's: the sudo line).
 */
const TOKEN = "198.18.0.2-1a2b3c4d";
const head = (stdin: string, lines: number) => stdin.split("\n").slice(0, lines).join("\n") + "\n";
const commands = {
  apply: [engineCommand("sysctl", "create", TOKEN, "sudo"), head(engineStdin("@net-tuning v1\n", undefined, "sudo"), 2)],
  restore: [restoreCommand(TOKEN, "sudo"), head(restoreStdin("sysctl", "@net-tuning v1\n", true, undefined, "sudo"), 1)],
} as const;

test("the commands carry no sudo: the stdin does (its lines as the command reads them)", () => {
  for (const [cmd] of Object.values(commands)) expect(cmd).not.toMatch(/sudo/);
  expect(commands.apply[1].split("\n")[1]).toBe(sudoLine(APPLY_RUN));
  expect(commands.restore[1]).toBe(`${sudoLine(RESTORE_BOOT)}\n`);
  // without become, the same apply command, and no sudo line in either stdin
  expect(engineCommand("sysctl", "create", TOKEN, undefined, true)).toBe(commands.apply[0]);
  expect(engineStdin("@net-tuning v1\n")).not.toMatch(/sudo -n/);
  expect(restoreStdin("sysctl", "@net-tuning v1\n", true)).not.toMatch(/sudo -n/);
});

describe.each(Object.keys(LOGIN))("the sudo wrapper with %s as the login shell", (shell) => {
  test.each(Object.keys(commands) as (keyof typeof commands)[])("%s: sudo refuses: exit 3 naming the user, sudo's message and the fix; nothing else ran", (name) => {
    const r = run(shell, commands[name], "refuse");
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('net-tuning: become "sudo" failed for user nobody: sudo: a password is required. Give this user passwordless sudo (NOPASSWD) or connect as root.\n');
    // the program under sudo, then the one check that tells sudo's refusal from the program's exit 1
    expect(r.log).toHaveLength(2);
    expect(r.log[0]).toMatch(/^sudo -n \/bin\/sh -c /);
    expect(r.log[1]).toBe("sudo -n /bin/sh -c :");
  });

  test("a program's own exit 1 under sudo stays exit 1, without the become message", () => {
    const r = run(shell, commands.apply, "fail");
    expect(r.status).toBe(1);
    expect(r.stderr).not.toContain("become");
    expect(r.log.map((l) => l.split(" ").slice(0, 3).join(" "))).toEqual(["sudo -n /bin/sh", "sudo -n /bin/sh"]);
    expect(r.log[1]).toBe("sudo -n /bin/sh -c :");
  });

  test.each(Object.keys(commands) as (keyof typeof commands)[])(
    "%s: a sudoers rule that allows only /bin/sh: the program's own exit 1 stays exit 1 (the probe runs /bin/sh, not true)",
    (name) => {
      const r = run(shell, commands[name], "shonly");
      expect(r.status).toBe(1);
      expect(r.stderr).not.toContain("become");
      expect(r.log[1]).toBe("sudo -n /bin/sh -c :");
      // negative control: under the same rule `sudo -n true` is refused, which the old probe took for sudo's refusal
      const probe = spawnSync("sh", ["-c", "sudo -n true"], { encoding: "utf8", env: { PATH: `${fakeSudo("shonly")}:/usr/bin:/bin` } });
      expect(probe.status).toBe(1);
      expect(probe.stderr).toBe("sudo: a password is required\n");
    },
  );

  test("on the way that works, sudo runs once and nothing checks before it (the program's status is kept)", () => {
    // the stand-in does not make us root: the command under it refuses with its own exit 5 (empty stdin)
    const r = run(shell, commands.apply, "run");
    expect(r.log).toHaveLength(1);
    expect(r.log[0]).toMatch(/^sudo -n \/bin\/sh -c /);
    expect(r.status).toBe(5);
    expect(r.stderr).toBe("net-tuning: stdin cut or no @engine line; nothing was changed\n");
  });

  test.each(Object.keys(commands) as (keyof typeof commands)[])("%s: the program under sudo succeeds: exit 0 and nothing else (the command does not go on)", (name) => {
    // the line the program under sudo evaluates (the apply's: after its @engine line) just exits 0; the restore's
    // bootstrap runs a program that does
    const [cmd, input] = commands[name];
    const rest = name === "apply" ? "@engine 0 x\nexit 0\n" : restoreStdin("sysctl", "@net-tuning v1\n", false).replace(/\n@program\n[^]*$/, "\n@program\nexit 0\n");
    const r = run(shell, [cmd, name === "apply" ? input + rest : input + frameRestore(rest.replace(/@end [0-9a-f]{64}\n$/, ""))], "run");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.log).toHaveLength(1);
  });

  test("no sudo on the host: exit 3 naming the user and the shell's 'not found', not a bare 127", () => {
    const r = run(shell, commands.apply, "missing");
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/net-tuning: become "sudo" failed for user nobody: .*(sudo.*not found|not found: sudo).*\. Give this user passwordless sudo \(NOPASSWD\) or connect as root\.\n/);
  });

  test("as root: no sudo at all (the builtin -O / test), the program runs directly", () => {
    const r = run(shell, commands.apply, "refuse", true);
    expect(r.log).toEqual([]);
    expect(r.status).toBe(5);
    expect(r.stderr).toBe("net-tuning: stdin cut or no @engine line; nothing was changed\n");
  });

  test("the restore's stdin cut inside its sudo line: nothing runs, no sudo (exit 1)", () => {
    const r = run(shell, [commands.restore[0], commands.restore[1].slice(0, 40)], "run");
    expect(r.log).toEqual([]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe("net-tuning: restore stdin cut; nothing restored\n");
  });

  test("the confirm: under sudo -n unless root; sudo's refusal is sudo's own message and exit 1", () => {
    const confirm = confirmCommand("sysctl", "abc", "0123abcd", undefined, "sudo");
    const refused = run(shell, [confirm, ""], "refuse");
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe("sudo: a password is required\n");
    expect(refused.log).toHaveLength(1);
    expect(refused.log[0]).toMatch(/^sudo -n \/bin\/sh -c /);
    // as root: no sudo; the program itself runs (and finds no engine installed under that name: exit 6)
    const root = run(shell, [confirm, ""], "refuse", true);
    expect(root.log).toEqual([]);
    expect(root.status).toBe(6);
    expect(root.stderr).toMatch(/net-tuning on .*: \/usr\/local\/lib\/pulumi-net-tuning\/engine-[0-9a-f]{64}\.sh missing or not root's\n/);
  });
});
