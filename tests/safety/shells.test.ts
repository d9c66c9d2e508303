/**
 * The engine under every shell the project promises (dash, bash --posix, busybox ash): the exact apply and restore
 * stdin the components generate, run as root on a lab host with `<shell> program < stdin`, for NetTuning (40 keys)
 * and NicQueues (rc.local). Values applied and read back, the report complete, and the restore leaves the host
 * byte-identical.
 */
import { Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { snapshot } from "../../testkit/host";
import { engine } from "../../provider/host/engine";
import { GZIP_MARKER } from "../../provider/host/programs";
import { netTuningSysctls, readValues, SYSCTLS } from "../../bench/keys";
import { nicProgram, sysProgram } from "../reliability/common";

jest.setTimeout(300000);

let lab: Lab;
let h0: LabHost;
beforeAll(async () => {
  lab = await startLab({ hosts: 1, tag: "shells" });
  [h0] = lab.hosts;
}, 120000);
afterAll(async () => {
  await lab?.stop();
});

/** The apply and restore stdin of a resource, as the components render them (taken from a harness preview-free up). */
async function stdins(program: () => unknown, name: string): Promise<{ apply: string; restore: string }> {
  const stack = new Stack({ project: "shells", stack: name });
  const r = await stack.up(program as never);
  if (!r.ok) throw new Error(r.error);
  const apply = String(stack.resources().find((e) => e.name.endsWith("-apply"))!.inputs.stdin);
  const restore = String(stack.resources().find((e) => e.name.endsWith("-restore"))!.inputs.stdin);
  const d = await stack.destroy();
  if (!d.ok) throw new Error(d.error);
  // the restore belongs to the apply rerun below (a new generation), not to the harness's: without its @generation
  expect(restore).toMatch(/^@generation \S+\n/m);
  return { apply, restore: restore.replace(/^@generation \S+\n/m, "") };
}

/**
 * Runs a stdin under `shell` as root the way the bootstraps do, with that shell instead of /bin/sh: an apply stdin
 * (`@engine` line first) by the engine file on its plan; a restore stdin by its program (unpacked when gzip|base64).
 */
async function run(shell: string, stdin: string): Promise<{ code: number; stdout: string; stderr: string }> {
  if (stdin.startsWith("@engine ")) {
    const kind = /^@kind (\S+)$/m.exec(stdin)![1];
    const e = engine();
    expect(stdin.split("\n")[0]).toBe(`@engine ${e.version} ${e.sha256}`);
    const plan = stdin.slice(stdin.indexOf("\n") + 1);
    const put = await h0.exec(`d=$(mktemp -d /tmp/net-tuning-eng.XXXXXX) && cat > "$d/engine" && echo "$d"`, { stdin: e.text });
    expect(put.code).toBe(0);
    const d = put.stdout.trim();
    try {
      return await h0.exec(`${shell} ${d}/engine ${kind} apply-create`, { stdin: plan, timeoutMs: 60000 });
    } finally {
      await h0.exec(`rm -rf ${d}`);
    }
  }
  return h0.exec(
    `d=$(mktemp -d /tmp/net-tuning-in.XXXXXX) && cat > "$d/in" && sed '1,/^@program$/d' "$d/in" > "$d/p" && ` +
      `{ IFS= read -r l < "$d/p"; [ "$l" != ${GZIP_MARKER} ] || { sed 1d "$d/p" | base64 -d | gzip -dc > "$d/q" && mv "$d/q" "$d/p"; }; } && ` +
      `${shell} "$d/p" "$d" < "$d/in"`,
    { stdin, timeoutMs: 60000 },
  );
}

const SHELLS = ["dash", "bash --posix", "busybox sh"];

test.each(SHELLS)("NetTuning 40 keys under %s: apply, report, restore", async (shell) => {
  const orig = await readValues(h0);
  const s = await stdins(sysProgram(h0, "sh", { fileName: "90-bench.conf", sysctls: netTuningSysctls(), bootOverride: "warn" }), `nt-${shell.split(" ")[0]}`);
  const before = await snapshot(h0);
  const a = await run(shell, s.apply);
  expect(a.stderr).toBe("");
  expect(a.code).toBe(0);
  expect(await readValues(h0)).toEqual(SYSCTLS);
  const applied = a.stdout.split("\n").filter((l) => l.startsWith("applied\t"));
  expect(applied.length).toBe(40);
  expect(a.stdout).toMatch(/^generation\t[0-9a-zA-Z-]+$/m);
  const previous = Object.fromEntries(a.stdout.split("\n").filter((l) => l.startsWith("previous\t")).map((l) => l.split("\t").slice(1)));
  expect(previous).toEqual(orig);
  const r = await run(shell, s.restore);
  expect(r.code).toBe(0);
  expect(await readValues(h0)).toEqual(orig);
  expect(await snapshot(h0)).toBe(before);
});

test.each(SHELLS)("NicQueues under %s: apply (rc.local), restore", async (shell) => {
  const NIC = { interface: "eth0", persistence: "rc.local" as const, channels: { rx: 2 }, txQueueLength: 3100 };
  const s = await stdins(nicProgram(h0, "shn", NIC), `nic-${shell.split(" ")[0]}`);
  const before = await snapshot(h0);
  const a = await run(shell, s.apply);
  expect(a.stderr).toBe("");
  expect(a.code).toBe(0);
  expect((await h0.exec("cat /sys/class/net/eth0/tx_queue_len")).stdout.trim()).toBe("3100");
  expect((await h0.exec("grep -c '^# BEGIN pulumi-net-tuning' /etc/rc.local")).stdout.trim()).toBe("1");
  const r = await run(shell, s.restore);
  expect(r.code).toBe(0);
  expect(await snapshot(h0)).toBe(before);
});
