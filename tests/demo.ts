/**
 * `npm run demo`: the main job on an embedded default, end to end, for a human to watch.
 *
 * Starts one lab host (a network namespace with its own sshd, Debian's default configuration: see
 * testkit/lab/README.md), runs the quickstart program (examples/quickstart) against it through the
 * command-provider harness (testkit/harness: pulumi-command 1.2.1 semantics over real SSH), and shows each step:
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
    await demo(lab);
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
