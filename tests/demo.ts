/**
 * `npm run demo`: the main job on an embedded default, end to end, for a human to watch.
 *
 * Starts one lab host (a network namespace with its own sshd, Debian's default configuration: see
 * testkit/lab/README.md) and runs the quickstart's settings (examples/quickstart) against it. When the real Pulumi
 * toolchain is built (`sh scripts/pulumi-toolchain.sh`, as `npm test` and CI do), every step is the real `pulumi` CLI
 * v3.248.0 (testkit/cli: a file:// backend in a temporary directory; what it shows is the CLI's own output, and the
 * SSH sessions are counted on the host); otherwise (or with NT_DEMO_HARNESS=1) the quickstart program runs through
 * the command-provider harness (testkit/harness: pulumi-command 1.2.1 semantics over real SSH). Each step:
 *   preview   → the plan a reviewer sees in `pulumi preview --diff` (no SSH session)
 *   up        → the values applied and the values they replaced (2 SSH sessions: the engine copy, the apply)
 *   up again  → nothing to do (0 SSH sessions)
 *   destroy   → the originals restored (1 SSH session)
 * Every step is checked on the host itself (without SSH). Exit 0 when every check passed, 1 otherwise.
 * Needs root (like the lab). Bounded: gives up after DEMO_TIMEOUT_MS (default 120 s).
 */
import { Stack, UpResult } from "../testkit/harness";
import { Lab, LabHost, startLab } from "../testkit/lab";
import { fileOn, ok, readSysctl } from "../testkit/host";
import { configFor, exampleProgram } from "./examples/load";
import { planPart, table } from "./examples/render";
import { clearSessions, CliProject, countKinds, languageLabel, logSessions, providerLabel, sessions, toolchain, toolchainBuilt } from "../testkit/cli";
import { PROGRAM } from "./cli/fixtures";

const PROJECT = "net-tuning-quickstart";
const FILE = "/etc/sysctl.d/90-net-tuning-quickstart.conf";
const TIMEOUT_MS = Number(process.env.DEMO_TIMEOUT_MS ?? 120_000);

const bold = (s: string) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const dim = (s: string) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s);
const say = (s = "") => process.stdout.write(s + "\n");
const indent = (text: string, pad = "    ") => text.replace(/\n$/, "").split("\n").map((l) => pad + l).join("\n");

let failures = 0;
let passed: string[] = [];
/** Records one check on the host; failures are printed at once, passes summarised by {@link verified}. */
function check(what: string, okay: boolean, detail = ""): void {
  if (okay) passed.push(what);
  else {
    failures++;
    say(`  ${bold("FAIL")}  ${what}${detail ? `: ${detail}` : ""}`);
  }
}
function verified(summary: string): void {
  if (passed.length) say(`  ${dim(`verified on the host (${passed.length} checks):`)} ${summary}`);
  passed = [];
}

/** Values as the kernel reads them back (whitespace collapsed), read inside the host without SSH. */
async function readOnHost(host: LabHost, keys: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const k of keys) out[k] = await readSysctl(host, k);
  return out;
}


/** Runs one harness operation with the components' pulumi.log.warn output collected instead of printed. */
async function quietly<T>(f: () => Promise<T>): Promise<{ value: T; logged: string[] }> {
  const logged: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void logged.push(args.map(String).join(" "));
  try {
    return { value: await f(), logged };
  } finally {
    console.warn = warn;
  }
}

async function demo(lab: Lab): Promise<void> {
  const host = lab.hosts[0];
  const conn = host.connection("root");
  say(`${bold("[1/5] lab host")} ${host.netns}: ${conn.user}@${conn.host}:${conn.port}, sshd ready in ${lab.startupMs[0]} ms`);

  const stack = new Stack({
    project: PROJECT,
    stack: "demo",
    config: configFor(PROJECT, { host: conn.host, port: conn.port, user: conn.user, privateKey: conn.privateKey }),
    secretConfigKeys: [`${PROJECT}:privateKey`],
  });
  const program = exampleProgram("quickstart");

  // ---------------------------------------------------------------- preview
  say();
  say(`${bold("[2/5] pulumi preview --diff")} ${dim("(what the reviewer sees in the pull request)")}`);
  const { value: preview, logged } = await quietly(() => stack.preview(program));
  ok(preview, "preview");
  for (const s of preview.steps) say(`  + ${s.type.padEnd(28)} ${s.urn.split("::").pop()}  ${s.kind}`);
  const applyReg = preview.resources.find((r) => r.name === "quickstart-apply");
  if (!applyReg) throw new Error("the quickstart program declared no quickstart-apply Command");
  const plan = planPart(applyReg.inputs.stdin);
  say(`  stdin of quickstart-apply (${String(applyReg.inputs.stdin).split("\n").length} lines in all):`);
  say(indent(plan, "    │ "));
  const keys = plan
    .split("\n")
    .filter((l) => /^[a-z0-9_.-]+ = /.test(l))
    .map((l) => l.split(" = ")[0]);
  const planned = Object.fromEntries(
    plan.split("\n").filter((l) => /^[a-z0-9_.-]+ = /.test(l)).map((l) => [l.split(" = ")[0], l.split(" = ")[1]]),
  );
  say(dim("  (for a new resource `pulumi preview --diff` prints only the first lines of stdin; for a change it prints a line diff of this text)"));
  for (const w of [...new Set(logged.map((l) => l.replace(/^warning: (\[runtime\] )?/, "")))]) say(`  ${bold("warning:")} ${w}`);
  check("SSH sessions during preview = 0", preview.sessions.total === 0, `${preview.sessions.total}`);
  check(`${keys.length} keys planned`, keys.length > 0);
  const originals = await readOnHost(host, keys);
  check("nothing changed on the host", (await fileOn(host, FILE)) === undefined, `${FILE} exists`);
  verified(`no SSH session, ${FILE} not written`);

  // ---------------------------------------------------------------- up
  say();
  say(bold("[3/5] pulumi up"));
  const { value: up } = await quietly(() => stack.up(program));
  ok(up, "up");
  const applied = (up.outputs?.applied ?? {}) as Record<string, string>;
  const previous = (up.outputs?.previous ?? {}) as Record<string, string>;
  const now = await readOnHost(host, keys);
  say(table([["key", "previous", "applied", "on the host now"], ...keys.map((k) => [k, previous[k] ?? "", applied[k] ?? "", now[k]])]));
  say(`  SSH sessions: ${up.sessions.total}   file: ${up.outputs?.filePath}`);
  // the engine delivery (one SFTP session, once per engine version) and the apply
  check("SSH sessions = 2 (engine copy + apply)", up.sessions.total === 2, `${up.sessions.total}`);
  for (const k of keys) check(`${k} = ${planned[k]} on the host`, now[k] === planned[k], `found ${now[k]}`);
  check("previous = the host's originals", keys.every((k) => previous[k] === originals[k]));
  const file = await fileOn(host, FILE);
  check(`${FILE} = the reviewed content`, file !== undefined && plan.includes(file), file === undefined ? "missing" : "differs");
  verified(`every value read back from /proc/sys, previous = the originals, ${FILE} = the reviewed text`);

  // ---------------------------------------------------------------- up again
  say();
  say(`${bold("[4/5] pulumi up")} ${dim("(again, nothing changed in the program)")}`);
  const { value: again } = await quietly(() => stack.up(program));
  ok(again, "second up");
  say(`  ${again.unchanged.length} unchanged, ${again.created.length + again.updated.length + again.replaced.length} changed; SSH sessions: ${again.sessions.total}`);
  check("SSH sessions = 0", again.sessions.total === 0, `${again.sessions.total}`);
  check("values still applied", JSON.stringify(await readOnHost(host, keys)) === JSON.stringify(now));
  verified("values unchanged");

  // ---------------------------------------------------------------- destroy
  say();
  say(bold("[5/5] pulumi destroy"));
  const { value: destroy } = await quietly(() => stack.destroy());
  ok(destroy, "destroy");
  const restored = await readOnHost(host, keys);
  say(table([["key", "applied", "restored", "original"], ...keys.map((k) => [k, now[k], restored[k], originals[k]])]));
  say(`  SSH sessions: ${destroy.sessions.total}`);
  check("SSH sessions = 1", destroy.sessions.total === 1, `${destroy.sessions.total}`);
  for (const k of keys) check(`${k} back to ${originals[k]}`, restored[k] === originals[k], `found ${restored[k]}`);
  check(`${FILE} removed`, (await fileOn(host, FILE)) === undefined);
  verified(`every original back, ${FILE} removed`);
}

/** The quickstart's settings (examples/quickstart/index.ts) as the real-CLI suite's program takes them. */
const QUICKSTART = {
  "net.core.somaxconn": 4096,
  "net.ipv4.tcp_max_syn_backlog": 8192,
  "net.ipv4.tcp_rmem": [4096, 131072, 16777216],
  "net.ipv4.tcp_wmem": [4096, 65536, 16777216],
  "net.ipv4.tcp_fin_timeout": 30,
  "net.ipv4.ip_local_port_range": [10000, 65001],
};
const norm = (v: unknown) => (Array.isArray(v) ? v.join(" ") : String(v));

/** The lines of a CLI output from the last line that matches `heading` to the next line that starts a section. */
function block(out: string, heading: RegExp): string {
  const lines = out.split("\n");
  const i = lines.map((l) => heading.test(l)).lastIndexOf(true);
  if (i < 0) return "";
  const end = lines.findIndex((l, j) => j > i && /^\S/.test(l));
  return lines.slice(i, end < 0 ? undefined : end).join("\n");
}

async function demoCli(lab: Lab): Promise<void> {
  const host = lab.hosts[0];
  const conn = host.connection("root");
  const tc = toolchain();
  say(`${bold("[1/5] lab host")} ${host.netns}: ${conn.user}@${conn.host}:${conn.port}, sshd ready in ${lab.startupMs[0]} ms`);
  say(dim(`  pulumi ${tc.version} (${tc.dir}), programs served by ${languageLabel()}, command provider: ${providerLabel()}`));
  await logSessions(host);
  const keys = Object.keys(QUICKSTART);
  const originals = await readOnHost(host, keys);
  const p = new CliProject({
    name: "net-tuning-quickstart",
    program: PROGRAM,
    config: { host: conn.host, port: String(conn.port), user: conn.user, resources: JSON.stringify({ quickstart: { kind: "sysctl", args: { sysctls: QUICKSTART } } }) },
    secrets: { privateKey: conn.privateKey },
  });
  try {
    await p.init();
    say();
    say(`${bold("[2/5] pulumi preview --diff")} ${dim("(what the reviewer sees in the pull request)")}`);
    await clearSessions(host);
    const pv = await p.preview({ diff: true });
    check("pulumi preview exits 0", pv.code === 0, pv.stderr);
    say(indent(block(pv.stdout + pv.stderr, /NetTuning "quickstart" on /), "    │ "));
    say(indent(pv.stdout.split("\n").filter((l) => /stdin +:/.test(l)).join("\n").trim(), "    │ "));
    say(dim("  (for a new resource the CLI prints the first lines of stdin; for a change, a line diff of the plan)"));
    const ps = countKinds(await sessions(host));
    check("preview: one read-only session (the live read), nothing changed", JSON.stringify(ps) === JSON.stringify({ "live-read": 1 }), JSON.stringify(ps));
    check("nothing changed on the host", (await fileOn(host, FILE)) === undefined, `${FILE} exists`);
    verified(`sessions ${JSON.stringify(ps)}, ${FILE} not written`);

    say();
    say(bold("[3/5] pulumi up --yes"));
    await clearSessions(host);
    const up = await p.up();
    check("pulumi up exits 0", up.code === 0, up.stdout.slice(-2000));
    say(indent(block(up.stdout, /^Resources:/), "    │ "));
    const now = await readOnHost(host, keys);
    say(table([["key", "original", "declared", "on the host now"], ...keys.map((k) => [k, originals[k], norm(QUICKSTART[k as keyof typeof QUICKSTART]), now[k]])]));
    const us = countKinds(await sessions(host));
    say(`  SSH sessions on the host: ${JSON.stringify(us)}`);
    check("up: 2 live reads (its preview and its update), the engine copy, 1 apply", JSON.stringify(us) === JSON.stringify({ "live-read": 2, sftp: 1, apply: 1 }), JSON.stringify(us));
    for (const k of keys) check(`${k} on the host`, now[k] === norm(QUICKSTART[k as keyof typeof QUICKSTART]), `found ${now[k]}`);
    verified("every value read back from /proc/sys");

    say();
    say(`${bold("[4/5] pulumi up --yes")} ${dim("(again, nothing changed in the program)")}`);
    await clearSessions(host);
    const again = await p.up();
    check("second up exits 0", again.code === 0, again.stdout.slice(-2000));
    say(indent(block(again.stdout, /^Resources:/), "    │ "));
    const as = countKinds(await sessions(host));
    say(`  SSH sessions on the host: ${JSON.stringify(as)} ${dim("(one live read per program run; nothing that changes the host)")}`);
    check("no mutating session", JSON.stringify(as) === JSON.stringify({ "live-read": 2 }), JSON.stringify(as));
    verified("values unchanged");

    say();
    say(bold("[5/5] pulumi destroy --yes"));
    await clearSessions(host);
    const d = await p.destroy();
    check("pulumi destroy exits 0", d.code === 0, d.stdout.slice(-2000));
    const restored = await readOnHost(host, keys);
    say(table([["key", "applied", "restored", "original"], ...keys.map((k) => [k, now[k], restored[k], originals[k]])]));
    const ds = countKinds(await sessions(host));
    say(`  SSH sessions on the host: ${JSON.stringify(ds)}`);
    check("destroy: one restore session", JSON.stringify(ds) === JSON.stringify({ restore: 1 }), JSON.stringify(ds));
    for (const k of keys) check(`${k} back to ${originals[k]}`, restored[k] === originals[k], `found ${restored[k]}`);
    check(`${FILE} removed`, (await fileOn(host, FILE)) === undefined);
    verified(`every original back, ${FILE} removed`);
  } finally {
    p.remove();
  }
}

async function main(): Promise<number> {
  if (process.getuid?.() !== 0) {
    say("npm run demo needs root: it starts a lab host (network namespace + sshd). Try: sudo npm run demo");
    return 2;
  }
  say(bold("pulumi-net-tuning demo: examples/quickstart on a fresh host, preview → up → up → destroy"));
  say();
  let lab: Lab | undefined;
  const timer = setTimeout(() => {
    say(`\n${bold("FAIL")} the demo did not finish within ${TIMEOUT_MS / 1000} s`);
    void (lab?.stop() ?? Promise.resolve()).finally(() => process.exit(1));
  }, TIMEOUT_MS);
  try {
    lab = await startLab({ hosts: 1, tag: "demo" });
    const real = process.env.NT_DEMO_HARNESS !== "1" && toolchainBuilt();
    if (!real) say(dim("(the real Pulumi toolchain is not built: `sh scripts/pulumi-toolchain.sh` builds it; this run uses the harness)"));
    await (real ? demoCli(lab) : demo(lab));
  } catch (e) {
    failures++;
    say(`\n${bold("FAIL")} ${(e as Error).message}`);
  } finally {
    await lab?.stop().catch((e: Error) => {
      failures++;
      say(`${bold("FAIL")} stopping the lab: ${e.message}`);
    });
    clearTimeout(timer);
  }
  say();
  say(failures === 0 ? bold("OK: every check passed; the lab host is gone.") : bold(`${failures} check(s) failed.`));
  return failures === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    say(`demo crashed: ${(e as Error)?.stack ?? String(e)}`);
    process.exit(1);
  },
);
