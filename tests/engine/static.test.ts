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
import { assembleEngine, engine, enginePath } from "../../provider/host/engine";
import { completeApplied, parseReport } from "../../provider/report";
import { ENGINE_BOOT, engineCommand, engineStdin, fallbackProgram, GZIP_MARKER, hostProgram, readRestoreStdin, RESTORE_BOOT, restoreCommand, restoreStdin } from "../../provider/host/programs";
import { SHELLS, SHELL_ARGV } from "../../testkit/shells";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "nt-static-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const URN = "urn:pulumi:prod::web::net-tuning:index:NetTuning$command:remote:CopyToRemote::web-engine";

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
  expect(path.basename(file)).toBe(`engine-${e.sha256}.sh`);
  expect(fs.readFileSync(file, "utf8")).toBe(e.text);
  expect(assembleEngine().sha256).toBe(e.sha256);
  expect(spawnSync("sha256sum", [file], { encoding: "utf8" }).stdout.split(" ")[0]).toBe(e.sha256);
  shells(file);
  expect(engineStdin("@net-tuning v1\n").split("\n")[0]).toBe(`@engine ${e.version} ${e.sha256}`);
});

test("the bootstraps (root, sudo, restore): shellcheck clean and parse in dash/bash/ash; short", () => {
  const cmds = {
    root: engineCommand("sysctl", "create", "web.prod.web-12345678", URN),
    sudo: engineCommand("nic", "update", "web.prod.web-12345678", URN, "sudo"),
    restore: restoreCommand("sysctl"),
    restoreSudo: restoreCommand("nic", "sudo"),
  };
  // the programs run by sh -c, as scripts; the command lines (the sudo form hides the sh -c from shellcheck, whose
  // SC2016 "expressions don't expand in single quotes" is then the point: the program is one literal word)
  for (const [name, text] of Object.entries({ engineBoot: ENGINE_BOOT, restoreBoot: RESTORE_BOOT, ...cmds })) {
    const f = path.join(tmp, `${name}.sh`);
    // SC2015 (A && B || C is not if-then-else): the apply bootstrap's `[ -O $d ]&&[ -O "$e" ]||{ refuse;}` means exactly
    // "unless both are root's, refuse" (C must run when A holds and B does not)
    const directives = [name.startsWith("sudo") || name === "restoreSudo" ? "SC2016" : "", /-O \$d \]&&/.test(text) ? "SC2015" : ""].filter(Boolean);
    fs.writeFileSync(f, `${directives.length ? `# shellcheck disable=${directives.join(",")}\n` : ""}${text}\n`);
    shells(f);
  }
  // the provider repeats the command in every error: keep it short
  expect(ENGINE_BOOT.length).toBeLessThanOrEqual(700); // stored 8 times per host (issue #12): 699 (an empty engine re-installed, sync before the rename)
  expect(cmds.root.length).toBeLessThan(950); // 898 with this URN (was about 1,100)
  expect(cmds.restore.length).toBeLessThan(610); // 596: unpacking the gzip|base64 rest, running the installed engine when the plan names it and its sha256 matches, refusing an empty program
  expect(() => engineCommand("sysctl", "create", "bad id;rm", URN)).toThrow(/invalid owner id/);
});

test("the restore stdin: the identifying lines plain, the rest (originals, @program, the fallback) round-tripping through gzip|base64 as the bootstrap unpacks it", () => {
  const e = engine();
  for (const kind of ["sysctl", "nic"] as const) {
    const head = `@net-tuning v1\n@kind ${kind}\n@owner p/s/r\n@owner-id p.s.r-12345678\n`;
    // the file/interface and the restore choice stay readable too (a preview shows `restoreOnDelete: false` as `@restore 0`)
    const what = kind === "sysctl" ? "@file /etc/sysctl.d/90-x.conf\n@restore 1\n" : "@interface eth0\n@restore 1\n";
    const rest = `@orig a.b\t1 2\n@generation 3f2b8c1e\n`;
    const stdin = restoreStdin(kind, head + what + rest, true);
    const plain = `@engine ${e.version} ${e.sha256}\n${head}${what}${rest}@program\n${fallbackProgram(kind)}`;
    expect(stdin).toMatch(new RegExp(`^@engine ${e.version} ${e.sha256}\n${head}${what}${GZIP_MARKER}\n[A-Za-z0-9+/=]+\n$`));
    expect(readRestoreStdin(stdin)).toBe(plain);
    // the bootstrap's unpacking, run by sh on the stored text: the plain form, byte for byte
    const f = path.join(tmp, `${kind}.in`);
    fs.writeFileSync(f, stdin);
    const unpack = `${/z=[^]*?;fi&&/.exec(RESTORE_BOOT)![0]} { `;
    const fail = `;};${/echo "net-tuning[^]*$/.exec(RESTORE_BOOT)![0]}`;
    const r = spawnSync("sh", ["-c", `cp "$1" in && ${unpack} cat in&&exit${fail}`, "x", f], { encoding: "utf8", cwd: tmp });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(plain);
    // a damaged blob: the error, exit 1, nothing run
    fs.writeFileSync(f, stdin.replace(/\n([A-Za-z0-9+/]{20})/, "\nAAAAAAAAAAAAAAAAAAAA"));
    const bad = spawnSync("sh", ["-c", `d=$(mktemp -d) && cp "$1" in && ${unpack} echo ran&&exit${fail}`, "x", f], { encoding: "utf8", cwd: tmp });
    expect(bad.status).toBe(1);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toContain("net-tuning: cannot unpack the restore stdin (gzip, base64?)");
    fs.writeFileSync(f, plain);
    expect(spawnSync("sh", ["-c", `cp "$1" in && ${unpack} cat in&&exit${fail}`, "x", f], { encoding: "utf8", cwd: tmp }).stdout).toBe(plain);
    // the layout before the one-stream stdin (plain originals, "@program", then the gzip'd program alone) unpacks to the same plain form
    fs.writeFileSync(f, `@engine ${e.version} ${e.sha256}\n${head}${what}${rest}@program\n${GZIP_MARKER}\n${gzipSync(Buffer.from(fallbackProgram(kind))).toString("base64")}\n`);
    expect(spawnSync("sh", ["-c", `cp "$1" in && ${unpack} cat in&&exit${fail}`, "x", f], { encoding: "utf8", cwd: tmp }).stdout).toBe(plain);
    expect(restoreStdin(kind, head + what + rest, true)).toBe(stdin); // deterministic
    // a plain plan line (an original, the generation) stops the plain head: nothing after it stays readable
    expect(restoreStdin(kind, "p\n", true)).toMatch(new RegExp(`^@engine ${e.version} ${e.sha256}\n${GZIP_MARKER}\n[A-Za-z0-9+/=]+\n$`));
    expect(restoreStdin(kind, "p\n", false)).toBe(`@engine ${e.version} ${e.sha256}\np\n@program\n${fallbackProgram(kind)}`);
    // a plan that gives adopted files or rc.local lines back carries the engine's full (tree-shaken) restore instead
    const adopted = kind === "sysctl" ? "@adopted /etc/sysctl.d/10-x.conf\tfile\t644\t0:0\t1\t0\n" : "# adopted: rc.local lines (adoptRcLocalLines) of /etc/rc.local, given back from the host's journal on delete\n";
    expect(restoreStdin(kind, adopted, false)).toBe(`@engine ${e.version} ${e.sha256}\n${adopted}@program\n${hostProgram(kind, "restore", true)}`);
  }
});

test.each(SHELLS)("the restore bootstrap: a stdin without its @program line (damaged state) fails with exit 1, it does not run an empty program (%s)", (shell) => {
  const e = engine();
  const argv = [...SHELL_ARGV[shell], "-c", RESTORE_BOOT, "net-tuning", "sysctl"];
  const r = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", ...argv], { input: `@engine ${e.version} ${e.sha256}\n@net-tuning v1\n@kind sysctl\n`, encoding: "utf8" });
  expect(r.status).toBe(1);
  expect(r.stderr).toBe("net-tuning: cannot unpack the restore stdin (gzip, base64?)\n");
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
    applied: { "net.core.somaxconn": "8192" }, previous: { "net.core.somaxconn": "4096" }, warnings: [], extra: {}, hostTools: ["gzip", "base64"],
  });
  expect(parseReport(body).hostTools).toBeUndefined();
  expect(parseReport(`${body}applied\tx\t1\n`).applied).toEqual({ "net.core.somaxconn": "8192" });
  expect(() => parseReport("net-tuning-report v1\napplied\tk\tv\n")).toThrow(/not a complete report/);
});
