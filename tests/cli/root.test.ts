/**
 * The repository root is a Pulumi project (Pulumi.yaml, `main: examples/quickstart/`): `pulumi preview` there runs the
 * quickstart against this checkout (issue #31). The quickstart imports the package by name, as a copied project does;
 * from the checkout, `net-tuning` resolves through examples/node_modules/net-tuning, a package.json whose main and
 * types are this checkout's dist (a package cannot import itself by name from a directory with its own package.json,
 * even with `exports`: Node's self-reference looks only at the nearest package.json, examples/quickstart's).
 *
 * The root's files as committed (Pulumi.yaml, package.json, tsconfig.json, examples/) are copied into a temporary
 * directory, with dist and node_modules linked, so the CLI's stack files land there and not in the checkout. The
 * program is run as pulumi-language-nodejs runs it (testkit/cli/langhost.js --project: the program directory and
 * entry point from the run request, TypeScript).
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { CliProject, clearSessions, countKinds, explain, logSessions, providerLabel, sessions, toolchain } from "../../testkit/cli";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";
import { snapshot } from "../../testkit/host";

jest.setTimeout(600_000);
const ROOT = path.resolve(__dirname, "../..");

let host: LabHost;
useLab("cliroot", 1, async (hs) => {
  toolchain();
  host = hs[0];
  await logSessions(host);
});

/** The committed files of the root project (git ls-files), copied into `dir`; dist and node_modules linked. */
function layRoot(dir: string): void {
  for (const f of fs.readdirSync(dir)) fs.rmSync(path.join(dir, f), { recursive: true, force: true });
  const files = execFileSync("git", ["ls-files", "-z", "--", "Pulumi.yaml", "package.json", "tsconfig.json", "examples"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter(Boolean);
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, f), path.join(dir, f));
  }
  fs.mkdirSync(path.join(dir, "state"));
  fs.symlinkSync(path.join(ROOT, "dist"), path.join(dir, "dist"));
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"));
}

test(`real pulumi CLI + ${providerLabel()}: \`pulumi preview\` at the repository root runs the quickstart (main: examples/quickstart/) with this checkout's package`, async () => {
  expect(fs.readFileSync(path.join(ROOT, "Pulumi.yaml"), "utf8")).toMatch(/^main: examples\/quickstart\/$/m);
  const c = host.connection("root");
  const before = await snapshot(host);
  const p = new CliProject({ name: "net-tuning-quickstart", program: "", ownProgram: true, config: { host: c.host, port: String(c.port), user: c.user }, secrets: { privateKey: c.privateKey } });
  layRoot(p.dir);
  await p.init();
  await clearSessions(host);
  const pv = await p.preview({ diff: true });
  expect([pv.code, explain(pv)]).toEqual([0, expect.any(String)]);
  const out = pv.stdout + pv.stderr;
  // the quickstart's NetTuning (compiled by ts-node, typed by the package's declarations), planned and read live;
  // the engine copy and both children of a plain address
  expect(out).toMatch(/NetTuning "quickstart" on \S+: \d+ of 6 settings will change \(live → declared\)/);
  expect(out).toContain(`filePath: "/etc/sysctl.d/90-net-tuning-quickstart.conf"`);
  expect(out).toMatch(/\+ 5 to create/);
  expect(countKinds(await sessions(host))).toEqual({ "live-read": 1 });
  expect(await snapshot(host)).toBe(before);
  p.remove();
});
