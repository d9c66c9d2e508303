/**
 * Static checks of what this package puts on a host: the assembled engine file and the bootstraps pass
 * `shellcheck -s sh` and parse in dash, bash --posix and busybox ash; the engine is deterministic and named by its
 * sha256; the restore program round-trips through gzip|base64 exactly as the restore bootstrap unpacks it.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { gzipSync } from "zlib";
import { assembleEngine, CONVERGED_DIR, engine, enginePath } from "../../provider/host/engine";
import { HOST_KINDS, KINDS, STATE_ROOT } from "../../provider/kinds";
import { completeApplied, completePrevious, completeReport, parseReport } from "../../provider/report";
import { planValues } from "../../provider/sysctl/plan";
import {
  APPLY_RUN,
  confirmCommand,
  ENGINE_BOOT,
  engineCommand,
  engineStdin,
  fallbackProgram,
  frameRestore,
  readRestoreStdin,
  RESTORE_BOOT,
  RESTORE_SUDO_RUN,
  restoreCommand,
  restoreStdin,
  sudoLine,
  urnLookup,
} from "../../provider/host/programs";
import { SHELLS, SHELL_ARGV } from "../../testkit/shells";
import { LAB_OVERLAY, labEngine } from "../../testkit/labEngine";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "nt-static-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const TOKEN = "198.18.0.2-1a2b3c4d";

function shells(file: string): void {
  const sc = spawnSync("shellcheck", ["-s", "sh", file], { encoding: "utf8" });
  expect(sc.error).toBeUndefined(); // shellcheck must be installed
  expect(sc.stdout + sc.stderr).toBe("");
  expect(sc.status).toBe(0);
  for (const [cmd, args] of [["dash", ["-n"]], ["bash", ["--posix", "-n"]], ["busybox", ["ash", "-n"]]] as const) {
    const r = spawnSync(cmd, [...args, file], { encoding: "utf8" });
    expect(r.error).toBeUndefined();
    expect([cmd, r.status, r.stderr]).toEqual([cmd, 0, ""]);
  }
}

test("the engine file: shellcheck clean, parses in dash/bash/ash, deterministic, named and hashed by its content", () => {
  const e = engine();
  const file = enginePath(e);
  expect(path.basename(file)).toBe(e.localName);
  expect(e.localName).toBe(`e-${e.version}-${e.sha256.slice(0, 16)}.sh`); // the FileAsset's path is stored in state: short
  expect(e.fileName).toBe(`engine-${e.sha256}.sh`); // its name on the host
  expect(fs.readFileSync(file, "utf8")).toBe(e.text);
  expect(assembleEngine().sha256).toBe(e.sha256);
  expect(spawnSync("sha256sum", [file], { encoding: "utf8" }).stdout.split(" ")[0]).toBe(e.sha256);
  shells(file);
  expect(engineStdin("@net-tuning v1\n").split("\n")[0]).toBe(`@engine ${e.version} ${e.sha256}`);
});

test("the package's engine holds no fault-injection code: only inert step markers; the lab's build adds its overlay and passes the same checks", () => {
  const e = engine();
  // the markers are no-ops in the package's engine
  expect(e.text).toContain("nt_step() { :; }\nnt_mark() { :; }\n");
  for (const lab of ["pulumi-net-tuning-test-hooks", `kill -KILL "$$"`, "/run/nt-paused", "/run/nt-hold", "sleep 3600", "fail-undo", "fail-journal-backup", "nt_lab_"]) {
    expect([lab, e.text.includes(lab)]).toEqual([lab, false]);
  }
  const overlay = fs.readFileSync(LAB_OVERLAY, "utf8");
  const l = labEngine();
  expect(l.version).toBe(e.version);
  expect(l.sha256).not.toBe(e.sha256);
  // the same engine with the overlay after the runtime and counters.sh: nothing else differs
  expect(l.text.replace(overlay, "")).toBe(e.text);
  expect(l.text.indexOf(overlay)).toBeGreaterThan(e.text.indexOf("nt_mark() { :; }"));
  shells(enginePath(l, tmp));
});

test("the bootstraps (root, sudo, restore): shellcheck clean and parse in dash/bash/ash; short", () => {
  const cmds = {
    root: engineCommand("sysctl", "create", TOKEN),
    sudo: engineCommand("nic", "update", TOKEN, "sudo"),
    restore: restoreCommand(TOKEN),
    restoreSudo: restoreCommand(TOKEN, "sudo"),
    confirmSudo: confirmCommand("nic", "abc", "0123abcd", undefined, "sudo"),
  };
  // the programs run by sh -c, as scripts (the sudo lines too: evaluated by the command's /bin/sh); the command lines
  // (the sudo lines hide their sh -c from shellcheck, whose SC2016 "expressions don't expand in single quotes" is then
  // the point: the program is one literal word)
  const lines = { applyRun: APPLY_RUN, engineBoot: ENGINE_BOOT, restoreBoot: RESTORE_BOOT, restoreSudoRun: RESTORE_SUDO_RUN, sudoApply: sudoLine(APPLY_RUN), sudoRestore: sudoLine(RESTORE_BOOT) };
  for (const [name, text] of Object.entries({ ...lines, ...cmds })) {
    const f = path.join(tmp, `${name}.sh`);
    // SC2015 (A && B || C is not if-then-else): the apply bootstrap's `[ -O $d ]&&[ -O "$e" ]||{ refuse;}` means exactly
    // "unless both are root's, refuse" (C must run when A holds and B does not); SC2016: the recovery command printed
    // for the user holds a literal $( ) (it runs in the user's shell, not here)
    // SC2086: the apply bootstrap leaves $e (a fixed directory and 64 hex digits) and exit's $1 unquoted, for size
    const directives = [
      /^sudo|Sudo$/.test(name) || /--show-urns/.test(text) ? "SC2016" : "",
      /-O \$d \]&&/.test(text) ? "SC2015" : "",
      /exec \/bin\/sh \$e /.test(text) ? "SC2086" : "",
      // SC2154: the apply bootstrap uses t v s, which the command (APPLY_RUN) read before evaluating it
      name === "engineBoot" ? "SC2154" : "",
      name === "applyRun" ? "SC2034" : "",
      // SC2086: the sudo line's `$p` is two words on purpose (sudo -n, or exec)
      name.startsWith("sudo") ? "SC2086" : "",
    ].filter(Boolean);
    fs.writeFileSync(f, `${directives.length ? `# shellcheck disable=${directives.join(",")}\n` : ""}${text}\n`);
    shells(f);
  }
  // the provider repeats the command in every error, and each is stored several times per host (issue #12): short
  // (the bootstrap is the apply stdin's second line, stored twice per resource; the command four times)
  expect(ENGINE_BOOT.length).toBeLessThanOrEqual(720); // 690
  // the converged records' directory the live read reads is the engine's NT_CONVERGED_DIR (one name)
  expect(engine().text).toContain(`\nNT_CONVERGED_DIR=${CONVERGED_DIR}\n`);
  // the kinds' descriptors (provider/kinds.ts): the journals' root is the engine's NT_ROOT, whose kind directories
  // are $NT_ROOT/<kind>; every source they name exists
  expect(engine().text).toContain(`\nNT_ROOT=${STATE_ROOT}\n`);
  expect(engine().text).toContain("NT_STATE=$NT_ROOT/$NT_KIND\n");
  for (const k of HOST_KINDS) {
    expect(KINDS[k].journalDir).toBe(`${STATE_ROOT}/${k}`);
    for (const f of [...KINDS[k].engineFiles, ...KINDS[k].fallbackFiles, KINDS[k].fallbackAdopt]) expect(fs.existsSync(path.join(__dirname, "../../provider/host/sh", f))).toBe(true);
  }
  expect(cmds.root.length).toBeLessThan(210); // 203 with this token (795 with the bootstrap in it, 962 with the delivery's URN and the staging directory)
  expect(cmds.sudo).toBe(engineCommand("nic", "update", TOKEN, undefined, true)); // the way to root is in the stdin
  expect(cmds.restoreSudo.length).toBeLessThan(170); // 167 (was 843 with the sudo wrapper and the bootstrap in it)
  expect(cmds.restore.length).toBeLessThan(485); // 481: under timeout, the directory removed by an EXIT trap (RESTORE_BOUND, issue #32: the fallback restore's deadline); 339 (was 633: the installed engine is checked by the fallback program now, in the compressed stream); 445: the @end line's sha256 checked, issue #32
  expect(() => engineCommand("sysctl", "create", "bad id;rm")).toThrow(/invalid delivery token/);
  expect(() => restoreCommand("-x")).toThrow(/invalid delivery token/);
  // the recovery command the bootstrap prints finds the delivery's URN in the user's stack
  expect(urnLookup("net-tuning-engine-198.18.0.2-1a2b3c4d")).toBe("pulumi stack --show-urns|grep -o 'urn:pulumi:[^ ]*::net-tuning-engine-198\\.18\\.0\\.2-1a2b3c4d$'");
  const listing = `Current stack resources (3):\n    TYPE  NAME\n    │  URN: urn:pulumi:prod::web::command:remote:CopyToRemote::net-tuning-engine-198.18.0.2-1a2b3c4d\n    │  URN: urn:pulumi:prod::web::command:remote:CopyToRemote::net-tuning-engine-198.18.0.2-1a2b3c4dx\n`;
  const found = spawnSync("sh", ["-c", urnLookup("net-tuning-engine-198.18.0.2-1a2b3c4d").replace("pulumi stack --show-urns", "cat")], { input: listing, encoding: "utf8" });
  expect(found.stdout).toBe("urn:pulumi:prod::web::command:remote:CopyToRemote::net-tuning-engine-198.18.0.2-1a2b3c4d\n");
});

test("the restore stdin: @restore plain, the rest (the @engine line, the plan, @program, the fallback) round-tripping through gzip|base64 as the bootstrap unpacks it", () => {
  const e = engine();
  for (const kind of ["sysctl", "nic"] as const) {
    const head = `@net-tuning v1\n@kind ${kind}\n@owner p/s/r\n@owner-id p.s.r-12345678\n`;
    // the restore choice stays readable (a preview shows `restoreOnDelete: false` as `@restore 0`)
    const what = kind === "sysctl" ? "@file /etc/sysctl.d/90-x.conf\n" : "@interface eth0\n";
    const rest = `@orig a.b\t1 2\n@generation 3f2b8c1e\n`;
    const stdin = restoreStdin(kind, head + what + "@restore 0\n" + rest, true);
    const plain = `@restore 0\n@engine ${e.version} ${e.sha256}\n${head}${what}${rest}@program\n${fallbackProgram(kind)}`;
    expect(stdin).toMatch(/^@restore 0\n[A-Za-z0-9+/=]+\n$/);
    expect(readRestoreStdin(stdin)).toBe(plain);
    // the bootstrap's unpacking, run by sh on the stored text: the plain form, byte for byte
    const f = path.join(tmp, `${kind}.in`);
    fs.writeFileSync(f, stdin);
    const unpack = `${/if grep[^]*?;fi&&/.exec(RESTORE_BOOT)![0]} { `;
    const fail = `;};${/echo "net-tuning[^]*$/.exec(RESTORE_BOOT)![0]}`;
    const run = (what2: string) => spawnSync("sh", ["-c", `cp "$1" i && ${unpack} ${what2}&&exit${fail}`, "x", f], { encoding: "utf8", cwd: tmp });
    const r = run("cat in");
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(plain);
    // a damaged blob: the error, exit 1, nothing run
    fs.writeFileSync(f, stdin.replace(/\n([A-Za-z0-9+/]{20})/, "\nAAAAAAAAAAAAAAAAAAAA"));
    const bad = run("echo ran");
    expect(bad.status).toBe(1);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toContain("restore stdin cut or damaged, or /tmp full; nothing restored");
    // a compressed stdin cut after its first line, or inside its base64 line (with or without a newline at the cut):
    // gzip refuses it (no end line needed: its trailer holds the CRC-32 and the length)
    for (const cut of [stdin.slice(0, stdin.indexOf("\n") + 1), stdin.slice(0, Math.floor(stdin.length / 2)), `${stdin.slice(0, stdin.length - 9)}\n`]) {
      fs.writeFileSync(f, cut);
      const c = run("echo ran");
      expect(c.status).toBe(1);
      expect(c.stdout).toBe("");
      expect(c.stderr).toContain("net-tuning: restore stdin cut or damaged, or /tmp full; nothing restored");
    }
    // the plain form (a host without gzip or base64) is taken as it is, once its end line is checked and removed
    fs.writeFileSync(f, frameRestore(plain));
    expect(run("cat in").stdout).toBe(plain);
    expect(restoreStdin(kind, head + what + "@restore 0\n" + rest, false)).toBe(frameRestore(plain));
    // without its end line, or with another sum: refused
    fs.writeFileSync(f, plain);
    expect(run("echo ran").status).toBe(1);
    fs.writeFileSync(f, frameRestore(plain).replace("@orig a.b\t1 2", "@orig a.b\t1 3"));
    expect(run("echo ran").status).toBe(1);
    expect(restoreStdin(kind, head + what + "@restore 0\n" + rest, true)).toBe(stdin); // deterministic
    // without a @restore line (never rendered so): restoring is the default
    expect(readRestoreStdin(restoreStdin(kind, "p\n", true))).toBe(`@restore 1\n@engine ${e.version} ${e.sha256}\np\n@program\n${fallbackProgram(kind)}`);
    // a plan that gives adopted files or rc.local lines back carries the fallback with the kind's adoption part
    const adopted = kind === "sysctl" ? "@adopted /etc/sysctl.d/10-x.conf\tfile\t644\t0:0\t1\t0\n" : "# adopted: rc.local lines (adoptRcLocalLines) of /etc/rc.local, given back from the host's journal on delete\n";
    expect(restoreStdin(kind, adopted, false)).toBe(frameRestore(`@restore 1\n@engine ${e.version} ${e.sha256}\n${adopted}@program\n${fallbackProgram(kind, true)}`));
    expect(fallbackProgram(kind, true)).not.toBe(fallbackProgram(kind));
  }
});

test.each(SHELLS)("the restore bootstrap: a stdin without its @program line (damaged state) fails with exit 1, it does not run an empty program (%s)", (shell) => {
  const e = engine();
  const argv = [...SHELL_ARGV[shell], "-c", RESTORE_BOOT, "net-tuning", TOKEN];
  // a clean environment, as sshd gives a command (HOME of nobody: no start-up file of root's is read)
  const env = { PATH: process.env.PATH, HOME: "/nonexistent", LANG: "C" };
  const r = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", ...argv], { input: `@restore 1\n@engine ${e.version} ${e.sha256}\n@net-tuning v1\n@kind sysctl\n`, encoding: "utf8", env });
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/^(base64|gzip): .*\nnet-tuning: restore stdin cut or damaged, or \/tmp full; nothing restored\n$/s); // the decoder's own message first
});

test("previous-values: the originals of the report's key list, paired in order; a count that differs is refused", () => {
  // same-as-plan: the key list is the plan's keys, in the plan's order (the plan of the run that printed the report)
  const plan = planValues("@net-tuning v1\n@content\n# a comment\nb = 2\na = 1\n\nc = 3 4\n");
  expect(plan).toEqual({ keys: ["b", "a", "c"], values: { b: "2", a: "1", c: "3 4" } });
  const r = parseReport("net-tuning-report v1\nsame-as-plan\t1\nprevious-values\t20\t\t30 31\nprevious\tz\t9\nend\n");
  const done = completeReport(r, plan);
  expect(done.previous).toEqual({ a: "", b: "20", c: "30 31", z: "9" });
  expect(done.applied).toEqual({ a: "1", b: "2", c: "3 4" });
  expect(done.extra).toEqual({});
  expect(() => completeReport(parseReport("net-tuning-report v1\nsame-as-plan\t1\nprevious-values\t10\t20\nend\n"), plan)).toThrow(/2 original values for 3 keys/);
  expect(() => completePrevious(r)).toThrow(/needs the plan's keys/);
  // without same-as-plan (the nic kind): the key list is the report's applied lines, in order
  const nic = parseReport("net-tuning-report v1\napplied\teth0/rps.rx-1\t3\napplied\teth0/rps.rx-0\t3\nprevious-values\t1\t0\nend\n");
  expect(completePrevious(nic).previous).toEqual({ "eth0/rps.rx-0": "0", "eth0/rps.rx-1": "1" });
  expect(completeReport(nic).applied).toEqual({ "eth0/rps.rx-1": "3", "eth0/rps.rx-0": "3" });
  // a report without the line is as it was
  const old = parseReport("net-tuning-report v1\nprevious\ta\t0\nend\n");
  expect(completeReport(old)).toBe(old);
});

test("a same-as-plan report: applied values equal to the plan's are filled in from the plan, unread keys are not", () => {
  const declared = { a: "1", b: "4096\t87380 6291456", c: "3", d: "5" };
  const r = parseReport("net-tuning-report v1\nsame-as-plan\t1\napplied\tc\t4\nunread\td\nwarning\td cannot be read back\nprevious\ta\t0\nend\n");
  expect(r.unread).toEqual(["d"]);
  const done = completeApplied(r, declared);
  expect(done.applied).toEqual({ a: "1", b: "4096 87380 6291456", c: "4" });
  expect(done.extra).toEqual({});
  expect(done.previous).toEqual({ a: "0" });
  // a report without the line (the 0.1.0 engine, the nic kind) is taken as it is
  const full = parseReport("net-tuning-report v1\napplied\ta\t1\nend\n");
  expect(completeApplied(full, declared)).toBe(full);
});

test("the report: a host line after end names the host's tools; anything else after end is ignored", () => {
  const body = "net-tuning-report v1\napplied\tnet.core.somaxconn\t8192\nprevious\tnet.core.somaxconn\t4096\nend\n";
  expect(parseReport(`${body}host\tgzip base64\n`)).toEqual({
    applied: { "net.core.somaxconn": "8192" }, appliedKeys: ["net.core.somaxconn"], previous: { "net.core.somaxconn": "4096" }, warnings: [], extra: {}, hostTools: ["gzip", "base64"],
  });
  expect(parseReport(body).hostTools).toBeUndefined();
  expect(parseReport(`${body}applied\tx\t1\n`).applied).toEqual({ "net.core.somaxconn": "8192" });
  expect(() => parseReport("net-tuning-report v1\napplied\tk\tv\n")).toThrow(/not a complete report/);
});
