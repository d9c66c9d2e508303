/**
 * The command provider itself under the real CLI: what pulumi-resource-command v1.2.1 did with bare
 * `command:remote:Command` resources (registered with a plain connection, no replaceOnChanges), recorded with the real
 * plugin built from a snapshot of its tag (testkit/cli/README.md), asserted here so that the stand-in
 * (testkit/cli/command-standin.ts) is held to it in every run without the real plugin. Checked under both.
 * One stack, its steps in order.
 */
import { CliProject, CliResult, explain, providerLabel, StackExport, toolchain } from "../../testkit/cli";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";

jest.setTimeout(600_000);

let host: LabHost;
useLab("cli", 1, async (hs) => {
  toolchain();
  host = hs[0];
});

// every entry of the config `cmds` a command:remote:Command of those inputs, registered as a custom resource would
// be by any SDK: the connection plain (its key a secret), no options but the provider version and the entry's `opts`
const PROGRAM = `"use strict";
const pulumi = require("@pulumi/pulumi");
const cfg = new pulumi.Config();
const connection = { host: cfg.require("host"), port: cfg.requireNumber("port"), user: cfg.require("user"), privateKey: cfg.requireSecret("privateKey") };
const out = {};
for (const [name, { opts, ...a }] of Object.entries(JSON.parse(cfg.require("cmds")))) {
  const r = new pulumi.CustomResource("command:remote:Command", name, { connection, ...a, stdout: undefined, stderr: undefined }, { version: "1.2.1", ...opts });
  out[name] = { stdout: r.stdout, stderr: r.stderr };
}
module.exports = out;
`;

type Res = NonNullable<StackExport["deployment"]["resources"]>[number] & { initErrors?: string[] };

describe(`pulumi-resource-command's own rules, real pulumi CLI + ${providerLabel()}`, () => {
  let p: CliProject;
  const declare = (cmds: Record<string, unknown>): Promise<void> => p.setConfig("cmds", JSON.stringify(cmds));
  const commands = async (): Promise<Record<string, Res>> => {
    const ex = await p.export(true);
    const rs = (ex.json.deployment.resources ?? []).filter((r) => r.type === "command:remote:Command") as Res[];
    return Object.fromEntries(rs.map((r) => [r.urn.split("::").pop() as string, r]));
  };
  const all = (r: CliResult): string => r.stdout + r.stderr;
  const OK = { create: "printf 'out1\\n\\n'; printf 'err1\\n' >&2", delete: "true" };

  beforeAll(async () => {
    const c = host.connection("root");
    p = new CliProject({ name: "cmdprov", program: PROGRAM, config: { host: c.host, port: String(c.port), user: c.user, cmds: "{}" }, secrets: { privateKey: c.privateKey } });
    await p.init();
  });

  test("Check: the connection is a secret with the provider's defaults; a failed create stores nothing; one newline trimmed; the output lines are the resource's status", async () => {
    await declare({ ok: OK, bad: { create: "echo partial; echo perr >&2; exit 3" } });
    const pv = await p.preview({ diff: true });
    expect(pv.code).toBe(0);
    expect(pv.stdout).toMatch(/connection: \[secret\]/);
    const up = await p.up({ skipPreview: true });
    expect(up.code).not.toBe(0);
    // the error: exit status, the command quoted, then stdout and stderr as they came (their order is a race)
    expect(all(up)).toMatch(/error: Process exited with status 3: running "echo partial; echo perr >&2; exit 3":\n {4}(partial\n {4}perr|perr\n {4}partial)\n/);
    expect(up.stdout).toMatch(/command:remote:Command ok creating \([^)]*\) out1\n/);
    expect(up.stdout).toMatch(/\+ 2 created/);
    const rs = await commands();
    expect(Object.keys(rs)).toEqual(["ok"]);
    expect(rs.ok.id).toMatch(/^ok[0-9a-f]{8}$/);
    expect(rs.ok.outputs).toMatchObject({ stdout: "out1\n", stderr: "err1" });
    const conn = rs.ok.inputs?.connection as { plaintext?: string };
    expect(typeof conn.plaintext).toBe("string"); // a secret
    expect(JSON.parse(conn.plaintext as string)).toMatchObject({ user: "root", port: 22, dialErrorLimit: 10, perDialTimeout: 15, host: host.connection("root").host });
  });

  test("a failed update is a plain error: the old inputs and outputs stay, no initialization error, the next preview shows the same update", async () => {
    await declare({ ok: { ...OK, create: "echo upd; echo uerr >&2; exit 4" } });
    const up = await p.up({ skipPreview: true });
    expect(up.code).not.toBe(0);
    expect(all(up)).toMatch(/error: Process exited with status 4: running "echo upd; echo uerr >&2; exit 4":/);
    // the previous stdout/stderr offered as PULUMI_COMMAND_STDOUT/STDERR, refused by the stock sshd (AcceptEnv LANG LC_*)
    expect(up.stdout).toContain("warning: Unable to set 'PULUMI_COMMAND_STDOUT'. This only works if your SSH server is configured to accept");
    expect(up.stdout).toContain("warning: Unable to set 'PULUMI_COMMAND_STDERR'.");
    const rs = await commands();
    expect(rs.ok.inputs?.create).toBe(OK.create);
    expect(rs.ok.outputs).toMatchObject({ create: OK.create, stdout: "out1\n", stderr: "err1" });
    expect(rs.ok.initErrors).toBeUndefined();
    const again = await p.preview();
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/~ 1 to update/);
  });

  test("Diff: triggers added replace; a changed element of triggers updates (replaceOnChanges is looked up by the whole path); the detailed diff names the path", async () => {
    const withUpdate = { ...OK, create: "echo newout", update: "echo updated" };
    await declare({ ok: { ...withUpdate, triggers: [1] } });
    let r = await p.up({ skipPreview: true });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\+-1 replaced/);
    expect((await commands()).ok.outputs?.stdout).toBe("newout");
    await declare({ ok: { ...withUpdate, triggers: [2] } });
    const pv = await p.preview({ diff: true });
    expect(pv.code).toBe(0);
    expect(pv.stdout).toMatch(/~ triggers: \[\n\s+~ \[0\]: 1 => 2\n\s+\]/);
    expect(pv.stdout).not.toMatch(/create\s+:/); // only the changed path is shown
    expect(pv.stdout).toMatch(/~ 1 to update/);
    r = await p.up({ skipPreview: true });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/~ 1 updated/);
    expect((await commands()).ok.outputs?.stdout).toBe("updated");
  });

  test("customTimeouts does not bound a run: a command stalled on the host (SIGSTOP) outlives a 5 s create timeout, and succeeds once resumed", async () => {
    // The engine sends the timeout in the CreateRequest; pulumi-go-provider's infer turns it into a context deadline,
    // but pulumi-command's session.Run never looks at the context (testkit/cli/README.md, "customTimeouts").
    await host.exec("rm -f /run/nt-stall.pid");
    const stall = "echo started; echo $$ > /run/nt-stall.pid; kill -STOP $$; echo resumed";
    const ok = { ...OK, create: "echo newout", update: "echo updated", triggers: [2] }; // as the test before left it
    await declare({ ok, stall: { create: stall, delete: "true", opts: { customTimeouts: { create: "5s" } } } });
    const t0 = Date.now();
    let settled = false;
    const running = p.up({ skipPreview: true }).finally(() => (settled = true));
    let pid = "";
    while (!pid && Date.now() - t0 < 120_000) {
      await new Promise((r) => setTimeout(r, 500));
      pid = (await host.exec("cat /run/nt-stall.pid 2>/dev/null")).stdout.trim();
    }
    expect(pid).toMatch(/^\d+$/);
    const stalledAt = Date.now();
    await new Promise((r) => setTimeout(r, 25_000)); // 5 times the timeout
    expect(settled).toBe(false);
    expect((await host.exec(`ps -o stat= -p ${pid}`)).stdout.trim()).toMatch(/^T/);
    await host.exec(`kill -CONT ${pid}`);
    const up = await running;
    expect(up.code === 0 ? "" : explain(up)).toBe("");
    expect(Date.now() - stalledAt).toBeGreaterThan(25_000);
    const rs = await commands();
    expect(rs.stall.outputs?.stdout).toBe("started\nresumed");
    expect((rs.stall as { customTimeouts?: unknown }).customTimeouts).toEqual({ create: 5 }); // stored, sent, not enforced
    await declare({ ok });
    expect((await p.up({ skipPreview: true })).code).toBe(0);
  });

  test("a failing delete fails the destroy and keeps the resource", async () => {
    await declare({ ok: { ...OK, create: "echo newout", update: "echo updated", triggers: [2], delete: "echo nope; exit 5" } });
    expect((await p.up({ skipPreview: true })).code).toBe(0);
    const d = await p.destroy();
    expect(d.code).not.toBe(0);
    expect(all(d)).toMatch(/error: Process exited with status 5: running "echo nope; exit 5":\n {4}nope/);
    expect(Object.keys(await commands())).toEqual(["ok"]);
    await declare({ ok: { ...OK, triggers: [2], create: "echo newout", update: "echo updated" } });
    const up = await p.up({ skipPreview: true });
    expect(up.code).toBe(0);
    const gone = await p.destroy();
    expect(gone.code === 0 ? "" : explain(gone)).toBe("");
    expect(await commands()).toEqual({});
    p.remove();
  });
});
