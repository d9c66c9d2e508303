/**
 * The characters an original may have: the engine refuses a value outside its kind's set before anything changes
 * (`NT_ORIG_CHARS` in provider/host/sh/sysctl.sh and nic.sh), and the components store originals only inside the
 * same set (renderSysctlRestoreStdin, renderNicRestoreStdin). The two must agree, character by character, or a value
 * the host accepted would fail in the component after the host changed.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { renderNicRestoreStdin } from "../../provider/nic/plan";
import { ownerOf } from "../../provider/owner";
import { renderSysctlRestoreStdin } from "../../provider/sysctl/plan";

const owner = ownerOf("p", "s", "r");
const chars = ["\t", ...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))];

/** The kind file's NT_ORIG_CHARS, evaluated by dash with NT_TAB set as runtime.sh sets it; then which chars it refuses. */
function refusedByEngine(file: string): string[] {
  const src = fs.readFileSync(path.join(__dirname, "../../provider/host/sh", file), "utf8");
  const line = /^NT_ORIG_CHARS=.*$/m.exec(src)?.[0];
  expect(line).toBeDefined();
  // the kind's generated tables come first in the engine (sysctlspec.sh's NTS_VALUE_CHARS)
  const spec = fs.readFileSync(path.join(__dirname, "../../provider/host/sh", file.replace(/\.sh$/, "spec.sh")), "utf8");
  const vars = spec.split("\n").filter((l) => /^NTS_\w+_CHARS=/.test(l)).join("\n");
  const script = `NT_TAB='\t'; ${vars}\n${line}\nwhile IFS= read -r c; do case "x$c" in *[!$NT_ORIG_CHARS]*) printf '%s\\n' "$c" ;; esac; done`;
  // one character per line; the tab is given as itself (IFS= keeps it)
  const r = spawnSync("dash", ["-c", script], { input: chars.map((c) => `${c}\n`).join(""), encoding: "utf8" });
  expect(r.status).toBe(0);
  return r.stdout.split("\n").filter((l, i, a) => i < a.length - 1);
}

test.each([
  ["sysctl.sh", (v: string) => renderSysctlRestoreStdin(owner, "/etc/sysctl.d/90-x.conf", { "net.core.somaxconn": `1${v}` }, true)],
  ["nic.sh", (v: string) => renderNicRestoreStdin(owner, "eth0", { "eth0/txqueuelen": `1${v}` }, true)],
] as const)("%s: the engine refuses exactly the characters the component would refuse to store", (file, render) => {
  const engine = refusedByEngine(file);
  const component = chars.filter((c) => {
    try {
      render(c);
      return false;
    } catch {
      return true;
    }
  });
  expect(engine).toEqual(component);
  expect(engine).toContain("|");
  expect(engine).not.toContain("a");
});

test("the sysctl fallback restore (restore-sysctl.sh k_ok, written for size without the generated tables) accepts exactly the sets of provider/sysctl/validate.ts", () => {
  const { SYSCTL_KEY_CHARS, SYSCTL_VALUE_CHARS } = require("../../provider/sysctl/validate") as typeof import("../../provider/sysctl/validate");
  const src = fs.readFileSync(path.join(__dirname, "../../provider/host/sh/restore-sysctl.sh"), "utf8");
  const kOk = /^k_ok\(\) \{\n[\s\S]*?\n\}$/m.exec(src)?.[0];
  expect(kOk).toBeDefined();
  // each character c: as a key "a<c>b" and as an original "1<c>"; which the fallback accepts, as "key value" lines
  const script = `T='\t'\n${kOk}\nwhile IFS= read -r c; do k_ok "a\${c}b" 1 && printf 'k%s\\n' "$c"; k_ok a "1\${c}" && printf 'v%s\\n' "$c"; done; exit 0`;
  const r = spawnSync("dash", ["-c", script], { input: chars.map((c) => `${c}\n`).join(""), encoding: "utf8" });
  expect(r.status).toBe(0);
  const got = r.stdout.split("\n").filter(Boolean);
  const keyOk = new RegExp(`^[${SYSCTL_KEY_CHARS}]$`);
  const valueOk = new RegExp(`^[\t${SYSCTL_VALUE_CHARS}]$`);
  expect(got.filter((l) => l[0] === "k").map((l) => l.slice(1))).toEqual(chars.filter((c) => keyOk.test(c)));
  expect(got.filter((l) => l[0] === "v").map((l) => l.slice(1))).toEqual(chars.filter((c) => valueOk.test(c)));
});
