/**
 * Harness lifecycle tests against real lab hosts (network namespaces running Debian's default sshd).
 * Each test uses its own Stack and its own marker directory on the hosts.
 */
import * as pulumi from "@pulumi/pulumi";
import { remote } from "@pulumi/command";
import { startLab, Lab, LabHost } from "../../testkit/lab";
import { capture, Stack, UNKNOWN, setenvMessage, UpResult, COMMAND_TYPE } from "../../testkit/harness";
import { nicProgram, ok, readSysctl, sysProgram } from "../../testkit/host";
import { NIC_REPORT, SYSCTL_REPORT } from "../unit/fixtures/report";

let lab: Lab;
let h0: LabHost;
let h1: LabHost;

beforeAll(async () => {
  lab = await startLab({ hosts: 2, tag: "harness" });
  [h0, h1] = lab.hosts;
}, 120_000);

afterAll(async () => {
  if (lab) await lab.stop();
});

let dirSeq = 0;
/** A fresh marker directory on both hosts. */
async function freshDir(): Promise<string> {
  const d = `/tmp/harness-${process.pid}-${++dirSeq}`;
  for (const h of [h0, h1]) {
    const r = await h.exec(`rm -rf ${d} && mkdir -p ${d}`);
    expect(r.code).toBe(0);
  }
  return d;
}
async function cat(h: LabHost, file: string): Promise<string> {
  const r = await h.exec(`cat ${file} 2>/dev/null || true`);
  return r.stdout;
}
const urnOf = (name: string) => `urn:pulumi:test::net-tuning::command:remote:Command::${name}`;

describe("harness against lab hosts", () => {
  test("create / update (update when set, else create) / delete of plain Commands", async () => {
    const d = await freshDir();
    const conn = h0.connection();
    const prog = (v: string) => () => {
      const withUpdate = new remote.Command("with-update", {
        connection: conn,
        create: `echo create-${v} >> ${d}/u.log; echo U${v}`,
        update: `echo update-${v} >> ${d}/u.log; echo U${v}`,
        delete: `echo delete >> ${d}/u.log`,
      });
      const noUpdate = new remote.Command("no-update", {
        connection: conn,
        create: `echo create-${v} >> ${d}/c.log; echo C${v}`,
        delete: `echo delete >> ${d}/c.log`,
      });
      return { u: withUpdate.stdout, c: noUpdate.stdout };
    };
    const s = new Stack();
    const r1 = await s.up(prog("1"));
    ok(r1);
    expect(r1.created.sort()).toEqual([urnOf("no-update"), urnOf("with-update")]);
    expect(r1.outputs).toEqual({ u: "U1", c: "C1" }); // trailing newline trimmed
    expect(r1.sessions.total).toBe(2);
    expect(await cat(h0, `${d}/u.log`)).toBe("create-1\n");

    const r2 = await s.up(prog("2"));
    ok(r2);
    expect(r2.updated.sort()).toEqual([urnOf("no-update"), urnOf("with-update")]);
    expect(r2.runs.map((x) => `${x.name}:${x.op}`).sort()).toEqual(["no-update:update", "with-update:update"]);
    expect(r2.sessions.byResource).toEqual({ [urnOf("no-update")]: 1, [urnOf("with-update")]: 1 });
    expect(await cat(h0, `${d}/u.log`)).toBe("create-1\nupdate-2\n");
    expect(await cat(h0, `${d}/c.log`)).toBe("create-1\ncreate-2\n");
    expect(r2.outputs).toEqual({ u: "U2", c: "C2" });

    const r3 = await s.destroy();
    ok(r3);
    expect(r3.deleted.sort()).toEqual([urnOf("no-update"), urnOf("with-update")]);
    expect(await cat(h0, `${d}/u.log`)).toBe("create-1\nupdate-2\ndelete\n");
    expect(await cat(h0, `${d}/c.log`)).toBe("create-1\ncreate-2\ndelete\n");
    expect(s.resources()).toEqual([]);
  });

  test("no remote session when nothing changed", async () => {
    const d = await freshDir();
    const prog = () => {
      const a = new remote.Command("a", { connection: h0.connection(), create: `echo a >> ${d}/log; echo A` });
      const b = new remote.Command("b", { connection: h1.connection(), create: pulumi.interpolate`echo ${a.stdout} >> ${d}/log` });
      return { a: a.stdout, b: b.stdout };
    };
    const s = new Stack();
    const r1 = await s.up(prog);
    ok(r1);
    expect(r1.sessions.total).toBe(2);
    expect(r1.sessions.byHost).toEqual({ [`${h0.address}:${h0.port}`]: 1, [`${h1.address}:${h1.port}`]: 1 });
    const r2 = await s.up(prog);
    ok(r2);
    expect(r2.sessions.total).toBe(0);
    expect(r2.runs).toEqual([]);
    expect(r2.unchanged.sort()).toEqual([urnOf("a"), urnOf("b")]);
    expect(r2.outputs).toEqual(r1.outputs);
    expect(await cat(h0, `${d}/log`)).toBe("a\n");
    expect(await cat(h1, `${d}/log`)).toBe("A\n"); // b saw a's real stdout
    ok(await s.destroy());
  });

  test("delete uses the stored delete and stdin, not the program's", async () => {
    const d = await freshDir();
    const conn = h0.connection();
    const v1 = () => {
      new remote.Command("keep", { connection: conn, create: "true" });
      new remote.Command("victim", {
        connection: conn,
        create: `echo created >> ${d}/log`,
        delete: `cat > ${d}/deleted-with; echo delete-v1 >> ${d}/log`,
        stdin: "stdin-v1",
      });
    };
    // v2 changes create (→ update) and would change delete + stdin, but ignores those: state keeps v1's
    const v2 = () => {
      new remote.Command("keep", { connection: conn, create: "true" });
      new remote.Command("victim", {
        connection: conn,
        create: `echo created-v2 >> ${d}/log`,
        delete: `echo delete-v2 >> ${d}/log`,
        stdin: "stdin-v2",
      }, { ignoreChanges: ["delete", "stdin"] });
    };
    const v3 = () => {
      new remote.Command("keep", { connection: conn, create: "true" });
    };
    const s = new Stack();
    ok(await s.up(v1));
    const r2 = await s.up(v2);
    ok(r2);
    expect(r2.updated).toEqual([urnOf("victim")]);
    expect(r2.runs).toHaveLength(1);
    expect(r2.runs[0]).toMatchObject({ op: "update", stdin: "stdin-v1" }); // ignored paths keep old values
    expect(s.get("victim")?.inputs.delete).toContain("delete-v1");
    expect(s.get("victim")?.inputs.stdin).toBe("stdin-v1");
    const r3 = await s.up(v3);
    ok(r3);
    expect(r3.deleted).toEqual([urnOf("victim")]);
    expect(r3.runs).toHaveLength(1);
    expect(r3.runs[0]).toMatchObject({ op: "delete", stdin: "stdin-v1" });
    expect(await cat(h0, `${d}/log`)).toBe("created\ncreated-v2\ndelete-v1\n");
    expect(await cat(h0, `${d}/deleted-with`)).toBe("stdin-v1");
    ok(await s.destroy());
  });

  test("Setenv of previous outputs is refused by the default sshd: warning, command still runs, env lacks it", async () => {
    const d = await freshDir();
    const conn = h0.connection();
    const prog = (v: string) => () => {
      const c = new remote.Command("envcheck", {
        connection: conn,
        create: `echo run-${v} >> ${d}/log; echo "stdout=[\${PULUMI_COMMAND_STDOUT-unset}]" >> ${d}/log; echo out-${v}`,
        delete: `echo "delete stdout=[\${PULUMI_COMMAND_STDOUT-unset}]" >> ${d}/log`,
      });
      return { out: c.stdout };
    };
    const s = new Stack();
    const r1 = await s.up(prog("1"));
    ok(r1);
    expect(r1.warnings).toEqual([]); // create: previous stdout empty → no Setenv at all
    expect(r1.runs[0].env).toEqual([]);
    const r2 = await s.up(prog("2"));
    ok(r2);
    expect(r2.runs[0].env).toEqual([{ name: "PULUMI_COMMAND_STDOUT", accepted: false, required: false }]);
    expect(r2.warnings).toEqual([{ urn: urnOf("envcheck"), op: "update", message: setenvMessage("PULUMI_COMMAND_STDOUT") }]);
    expect(r2.warnings[0].message).toMatch(/^Unable to set 'PULUMI_COMMAND_STDOUT'\. This only works if your SSH server is configured to accept\n\tthese variables via AcceptEnv\./);
    const r3 = await s.destroy();
    ok(r3);
    expect(r3.warnings).toHaveLength(1);
    expect(await cat(h0, `${d}/log`)).toBe("run-1\nstdout=[unset]\nrun-2\nstdout=[unset]\ndelete stdout=[unset]\n");

    // addPreviousOutputInEnv: false → no env request at all, no warning
    const quiet = (v: string) => () => {
      new remote.Command("quiet", { connection: conn, create: `echo q-${v}`, delete: "true", addPreviousOutputInEnv: false });
    };
    ok(await s.up(quiet("1")));
    const q2 = await s.up(quiet("2"));
    ok(q2);
    expect(q2.runs[0].env).toEqual([]);
    expect(q2.warnings).toEqual([]);
    ok(await s.destroy());
  });

  test("environment input: accepted names reach the command, a refused name fails the run before exec", async () => {
    const d = await freshDir();
    const conn = h0.connection();
    const s = new Stack();
    const r1 = await s.up(() => {
      new remote.Command("lang", { connection: conn, create: `echo "LANG=$LANG" > ${d}/lang`, environment: { LANG: "C.UTF-8" } });
    });
    ok(r1);
    expect(r1.runs[0].env).toEqual([{ name: "LANG", accepted: true, required: true }]);
    expect(await cat(h0, `${d}/lang`)).toBe("LANG=C.UTF-8\n");
    const r2 = await s.up(() => {
      new remote.Command("lang", { connection: conn, create: `echo "LANG=$LANG" > ${d}/lang`, environment: { LANG: "C.UTF-8" } });
      new remote.Command("foo", { connection: conn, create: `touch ${d}/foo-ran`, environment: { NT_FOO: "x" } });
    });
    expect(r2.ok).toBe(false);
    expect(r2.error).toBe('could not set environment variable "NT_FOO": ssh: setenv failed');
    expect(r2.sessions.total).toBe(1);
    expect((await h0.exec(`test -e ${d}/foo-ran`)).code).not.toBe(0);
    expect(s.get("foo")).toBeUndefined();
    ok(await s.destroy());
  });

  test("a failed create stores nothing and the next up runs create again", async () => {
    const d = await freshDir();
    const conn = h0.connection();
    const prog = () => {
      const c = new remote.Command("flaky", {
        connection: conn,
        create: `echo attempt >> ${d}/log; if [ ! -e ${d}/allow ]; then echo "not yet" >&2; exit 7; fi; echo done`,
        delete: `echo delete >> ${d}/log`,
      });
      return { out: c.stdout };
    };
    const s = new Stack();
    const r1 = await s.up(prog);
    expect(r1.ok).toBe(false);
    expect(r1.failures).toEqual([{ urn: urnOf("flaky"), op: "create", message: expect.any(String) }]);
    expect(r1.error).toBe(`Process exited with status 7: running ${JSON.stringify(`echo attempt >> ${d}/log; if [ ! -e ${d}/allow ]; then echo "not yet" >&2; exit 7; fi; echo done`)}:\nnot yet\n`);
    expect(r1.created).toEqual([]);
    expect(r1.outputs).toBeUndefined();
    expect(s.get("flaky")).toBeUndefined();
    await h0.exec(`touch ${d}/allow`);
    const r2 = await s.up(prog);
    ok(r2);
    expect(r2.created).toEqual([urnOf("flaky")]);
    expect(r2.runs.map((x) => x.op)).toEqual(["create"]);
    expect(r2.outputs).toEqual({ out: "done" });
    expect(await cat(h0, `${d}/log`)).toBe("attempt\nattempt\n");
    ok(await s.destroy());
  });

  test("a failed update keeps the old state; dependents are not run", async () => {
    const d = await freshDir();
    const conn = h0.connection();
    const prog = (v: string, fail: boolean) => () => {
      const c = new remote.Command("upd", {
        connection: conn,
        create: `echo create-${v} >> ${d}/log; echo v-${v}`,
        update: `echo update-${v} >> ${d}/log; ${fail ? "exit 5" : `echo v-${v}`}`,
      });
      const dep = new remote.Command("dep", { connection: conn, create: pulumi.interpolate`echo dep-${c.stdout} >> ${d}/log` });
      return { out: c.stdout, dep: dep.stdout };
    };
    const s = new Stack();
    ok(await s.up(prog("1", false)));
    const before = s.get("upd");
    const r2 = await s.up(prog("2", true));
    expect(r2.ok).toBe(false);
    expect(r2.error).toMatch(/^Process exited with status 5: running "echo update-2 >> .*; exit 5":\n$/);
    expect(r2.updated).toEqual([]);
    expect(s.get("upd")).toEqual(before); // old inputs and outputs
    expect(s.get("upd")?.outputs.stdout).toBe("v-1");
    expect(r2.runs.map((x) => x.name)).toEqual(["upd"]); // dep never ran
    const r3 = await s.up(prog("2", false));
    ok(r3);
    expect(r3.runs.map((x) => `${x.name}:${x.op}`)).toEqual(["upd:update", "dep:update"]);
    expect(await cat(h0, `${d}/log`)).toBe("create-1\ndep-v-1\nupdate-2\nupdate-2\ndep-v-2\n");
    ok(await s.destroy());
  });

  test("triggers change replaces: create-before-delete by default, delete first with deleteBeforeReplace", async () => {
    const d = await freshDir();
    const conn = h0.connection();
    const prog = (trigger: string, dbr: boolean) => () => {
      new remote.Command("rep", {
        connection: conn,
        create: `echo create-${trigger} >> ${d}/log`,
        update: `echo update-${trigger} >> ${d}/log`, // triggers replace even with update set
        delete: `echo delete >> ${d}/log`,
        triggers: [trigger],
      }, { deleteBeforeReplace: dbr });
    };
    const s = new Stack();
    ok(await s.up(prog("t1", false)));
    const r2 = await s.up(prog("t2", false));
    ok(r2);
    expect(r2.replaced).toEqual([urnOf("rep")]);
    expect(r2.runs.map((x) => x.op)).toEqual(["create", "delete"]);
    expect(r2.steps.filter((x) => x.type === COMMAND_TYPE).map((x) => x.kind)).toEqual(["replace", "delete-replaced"]);
    expect(await cat(h0, `${d}/log`)).toBe("create-t1\ncreate-t2\ndelete\n");
    const r3 = await s.up(prog("t3", true));
    ok(r3);
    expect(r3.runs.map((x) => x.op)).toEqual(["delete", "create"]);
    expect(await cat(h0, `${d}/log`)).toBe("create-t1\ncreate-t2\ndelete\ndelete\ncreate-t3\n");
    expect(s.pending()).toEqual([]);
    ok(await s.destroy());
  });

  test("deleteBeforeReplace cascades to dependents whose triggers come from the replaced resource", async () => {
    const d = await freshDir();
    const conn = h0.connection();
    const prog = (t: string) => () => {
      const a = new remote.Command("base", {
        connection: conn, create: `echo create-base-${t} >> ${d}/log; echo ${t}`, delete: `echo delete-base >> ${d}/log`, triggers: [t],
      }, { deleteBeforeReplace: true });
      new remote.Command("dependent", {
        connection: conn, create: pulumi.interpolate`echo create-dependent-${a.stdout} >> ${d}/log`, delete: `echo delete-dependent >> ${d}/log`,
        triggers: [a.stdout],
      });
    };
    const s = new Stack();
    ok(await s.up(prog("t1")));
    const r2 = await s.up(prog("t2"));
    ok(r2);
    expect(await cat(h0, `${d}/log`)).toBe("create-base-t1\ncreate-dependent-t1\ndelete-dependent\ndelete-base\ncreate-base-t2\ncreate-dependent-t2\n");
    expect(r2.replaced.sort()).toEqual([urnOf("base"), urnOf("dependent")]);
    ok(await s.destroy());
  });

  test("connection.host change is an in-place update, also with replaceOnChanges connection.host; replaceOnChanges connection replaces", async () => {
    const d = await freshDir();
    // the provider's schema makes `connection` secret and the engine diffs a secret as one value: a path inside it never
    // matches (the real engine, tests/cli/harness.test.ts); the whole key does
    const prog = (h: LabHost, roc: string[] | undefined) => () => {
      new remote.Command("mover", {
        connection: h.connection(),
        create: `echo create >> ${d}/log`,
        delete: `echo delete >> ${d}/log`,
      }, roc ? { replaceOnChanges: roc, deleteBeforeReplace: true } : {});
    };
    const s = new Stack();
    ok(await s.up(prog(h0, undefined)));
    const r2 = await s.up(prog(h1, ["connection.host", "connection.port"]));
    ok(r2);
    expect(r2.updated).toEqual([urnOf("mover")]);
    expect(await cat(h0, `${d}/log`)).toBe("create\n"); // old host's delete never ran
    expect(await cat(h1, `${d}/log`)).toBe("create\n");
    const r3 = await s.up(prog(h0, ["connection"]));
    ok(r3);
    expect(r3.replaced).toEqual([urnOf("mover")]);
    expect(r3.runs.map((x) => `${x.op}@${x.host}`)).toEqual([`delete@${h1.address}:${h1.port}`, `create@${h0.address}:${h0.port}`]);
    ok(await s.destroy());
  });

  test("parallelism: independent Commands overlap by default, --parallel 1 serialises them", async () => {
    const d = await freshDir();
    const conn = h0.connection();
    const prog = () => {
      for (const n of ["p1", "p2"]) {
        // wait (bounded, 3 s) until both have started: overlap is observed, not assumed from timing
        new remote.Command(n, {
          connection: conn,
          create: `echo start >> ${d}/log; i=0; while [ $i -lt 30 ] && [ $(grep -c start ${d}/log) -lt 2 ]; do sleep 0.1; i=$((i+1)); done; echo end >> ${d}/log`,
        });
      }
    };
    const s = new Stack();
    ok(await s.up(prog));
    expect(await cat(h0, `${d}/log`)).toBe("start\nstart\nend\nend\n");
    await h0.exec(`: > ${d}/log`);
    const s1 = new Stack({ parallel: 1 });
    ok(await s1.up(prog));
    expect(await cat(h0, `${d}/log`)).toBe("start\nend\nstart\nend\n");
  });

  test("dial errors: dialErrorLimit retries, provider error text, no session", async () => {
    const s = new Stack();
    const r = await s.up(() => {
      new remote.Command("nohost", { connection: { ...h0.connection(), port: 1, dialErrorLimit: 2 }, create: "true" });
    });
    expect(r.ok).toBe(false);
    expect(r.error).toBe(`after 2 failed attempts: dial tcp ${h0.address}:1: connect: connection refused`);
    expect(r.sessions.total).toBe(0);
    expect(r.runs[0]).toMatchObject({ sessionOpened: false, op: "create" });
    expect(s.resources().filter((e) => e.type === COMMAND_TYPE)).toEqual([]);
  });

  test("proxy (jump host) connection", async () => {
    const d = await freshDir();
    const s = new Stack();
    const target = { ...h0.connection(), host: "127.0.0.1", port: 22 }; // reachable only from inside h0
    const r = await s.up(() => {
      const c = new remote.Command("via-proxy", {
        connection: { ...target, proxy: h0.connection() },
        create: `hostname > ${d}/proxied; echo ok`,
      });
      return { out: c.stdout };
    });
    ok(r);
    expect(r.outputs).toEqual({ out: "ok" });
    expect((await cat(h0, `${d}/proxied`)).length).toBeGreaterThan(1);
  });

  test("a chain of 3: creates in dependency order, deletes in reverse", async () => {
    const d = await freshDir();
    const conn = h0.connection();
    const prog = () => {
      const a = new remote.Command("c1", { connection: conn, create: `echo create-c1 >> ${d}/log; echo one`, delete: `echo delete-c1 >> ${d}/log` });
      const b = new remote.Command("c2", { connection: conn, create: pulumi.interpolate`echo create-c2-${a.stdout} >> ${d}/log; echo two`, delete: `echo delete-c2 >> ${d}/log` });
      const c = new remote.Command("c3", { connection: conn, create: `echo create-c3 >> ${d}/log`, delete: `echo delete-c3 >> ${d}/log` }, { dependsOn: [b] });
      return { c: c.stdout };
    };
    const s = new Stack();
    const r1 = await s.up(prog);
    ok(r1);
    expect(r1.runs.map((x) => x.name)).toEqual(["c1", "c2", "c3"]);
    const r2 = await s.up(() => ({}));
    ok(r2);
    expect(r2.deleted).toEqual([urnOf("c3"), urnOf("c2"), urnOf("c1")]);
    expect(await cat(h0, `${d}/log`)).toBe("create-c1\ncreate-c2-one\ncreate-c3\ndelete-c3\ndelete-c2\ndelete-c1\n");
  });

  test("a Command without create: no session on create or update, its stored delete runs", async () => {
    const d = await freshDir();
    const conn = h0.connection();
    const prog = (v: string) => () => {
      new remote.Command("restore", { connection: conn, delete: `cat > ${d}/restored`, stdin: `orig-${v}` });
    };
    const s = new Stack();
    const r1 = await s.up(prog("1"));
    ok(r1);
    expect(r1.created).toEqual([urnOf("restore")]);
    expect(r1.sessions.total).toBe(0);
    expect(s.get("restore")?.outputs).toMatchObject({ stdout: "", stderr: "" });
    const r2 = await s.up(prog("2"));
    ok(r2);
    expect(r2.updated).toEqual([urnOf("restore")]);
    expect(r2.sessions.total).toBe(0);
    const r3 = await s.destroy();
    ok(r3);
    expect(r3.sessions.total).toBe(1);
    expect(await cat(h0, `${d}/restored`)).toBe("orig-2");
  });

  test("preview: no SSH, unknown stdout for new/changed Commands, known for unchanged", async () => {
    const d = await freshDir();
    const conn = h0.connection();
    const prog = (v: string) => () => {
      const a = new remote.Command("pa", { connection: conn, create: `echo A` });
      const b = new remote.Command("pb", { connection: conn, create: `echo ${v} > ${d}/pb; echo B${v}` });
      const c = new remote.Command("pc", { connection: conn, create: pulumi.interpolate`echo ${b.stdout}` });
      return { a: a.stdout, b: b.stdout };
    };
    const s = new Stack();
    const p1 = await s.preview(prog("1"));
    ok(p1);
    expect(p1.sessions.total).toBe(0);
    expect(p1.created.sort()).toEqual([urnOf("pa"), urnOf("pb"), urnOf("pc")]);
    const pc = p1.resources.find((r) => r.name === "pc");
    expect(pc?.inputs.create).toBe(UNKNOWN);
    expect(s.resources()).toEqual([]);
    ok(await s.up(prog("1")));
    const p2 = await s.preview(prog("2"));
    ok(p2);
    expect(p2.unchanged).toEqual([urnOf("pa")]);
    expect(p2.updated).toEqual([urnOf("pb"), urnOf("pc")]);
    expect(p2.resources.find((r) => r.name === "pa")?.outputs?.stdout).toBe("A");
    expect(p2.resources.find((r) => r.name === "pc")?.inputs.create).toBe(UNKNOWN);
    expect(await cat(h0, `${d}/pb`)).toBe("1\n");
    ok(await s.destroy());
  });
});

describe("the unit tests' report fixtures (tests/unit/fixtures/report) are what the host programs print", () => {
  /** The generation token is random per create: the fixtures hold a fixed one. */
  const fixed = (stdout: string) => stdout.replace(/^generation\t\S+$/m, "generation\t00000000-0000-4000-8000-000000000000");
  // Each on a fresh host state: destroyed afterwards, so the originals are the lab host's boot values again.
  test("NetTuning: the apply's stdout is the fixture byte for byte, and its values are the kernel's", async () => {
    const stack = new Stack({ project: "proj", stack: "dev" });
    try {
      const r = ok(await stack.up(sysProgram(h1, SYSCTL_REPORT.name, { sysctls: SYSCTL_REPORT.sysctls })));
      expect(r.runs.map((x) => fixed(x.stdout))).toEqual([SYSCTL_REPORT.report]);
      for (const [k, v] of Object.entries(r.outputs!.applied as Record<string, string>)) expect(await readSysctl(h1, k)).toBe(v);
    } finally {
      ok(await stack.destroy());
    }
  });
  test("NicQueues: the apply's stdout is the fixture byte for byte", async () => {
    const stack = new Stack({ project: "proj", stack: "dev" });
    try {
      // the apply alone: its feature change would otherwise be confirmed (a `confirm` report line, a second run)
      const r = ok(await stack.up(nicProgram(h1, NIC_REPORT.name, { ...NIC_REPORT.args, confirm: { timeoutSeconds: 0 } })));
      expect(r.runs.map((x) => fixed(x.stdout))).toEqual([NIC_REPORT.report]);
      expect((await h1.exec("cat /sys/class/net/eth0/tx_queue_len /sys/class/net/eth0/queues/rx-0/rps_flow_cnt")).stdout).toBe("3000\n256\n");
    } finally {
      ok(await stack.destroy());
    }
  });
});

describe("capture (no hosts)", () => {
  class Thing extends pulumi.ComponentResource {
    readonly out: pulumi.Output<string>;
    constructor(name: string, opts?: pulumi.ComponentResourceOptions) {
      super("net-tuning:index:Thing", name, {}, opts);
      const conn = { host: "192.0.2.1", user: "root", privateKey: "k" };
      const apply = new remote.Command(`${name}-apply`, { connection: conn, create: "echo hi", stdin: "x" }, {
        parent: this, replaceOnChanges: ["connection.host", "connection.port"], deleteBeforeReplace: true, additionalSecretOutputs: ["stderr"],
      });
      const restore = new remote.Command(`${name}-restore`, { connection: conn, delete: "restore", stdin: apply.stdin as pulumi.Output<string> }, {
        parent: this, dependsOn: [apply], deleteBeforeReplace: true,
      });
      void restore;
      this.out = apply.stdin as pulumi.Output<string>;
      this.registerOutputs({ out: this.out });
    }
  }
  test("records types, URNs, parents, options, dependencies, component outputs, stack outputs", async () => {
    const c = await capture(() => {
      const t = new Thing("t1");
      return { out: t.out };
    });
    expect(c.error).toBeUndefined();
    const byName = Object.fromEntries(c.resources.map((r) => [r.name, r]));
    expect(byName["t1"].type).toBe("net-tuning:index:Thing");
    expect(byName["t1-apply"].urn).toBe("urn:pulumi:test::net-tuning::net-tuning:index:Thing$command:remote:Command::t1-apply");
    expect(byName["t1-apply"].parent).toBe(byName["t1"].urn);
    expect(byName["t1-apply"].options).toMatchObject({
      deleteBeforeReplace: true, replaceOnChanges: expect.arrayContaining(["connection.host", "connection.port", "triggers[*]"]),
      additionalSecretOutputs: expect.arrayContaining(["stderr", "connection"]), // the SDK adds "connection"
    });
    expect(byName["t1-apply"].secretInputs).toContain("connection");
    expect(byName["t1-apply"].inputs.connection).toMatchObject({ host: "192.0.2.1", port: 22, user: "root" });
    expect(byName["t1-restore"].options.dependsOn).toEqual([byName["t1-apply"].urn]);
    expect(byName["t1-restore"].propertyDependencies.stdin).toEqual([byName["t1-apply"].urn]);
    expect(byName["t1"].outputs).toEqual({ out: "x" });
    expect(c.outputs).toEqual({ out: "x" });
  });

  test("preview capture marks unknowns; programs can be evaluated repeatedly and concurrently", async () => {
    const prog = () => {
      const a = new remote.Command("a", { connection: { host: "192.0.2.1" }, create: "echo a" });
      const b = new remote.Command("b", { connection: { host: "192.0.2.1" }, create: a.stdout });
      return { b: b.urn };
    };
    const results = await Promise.all([capture(prog, { preview: true }), capture(prog), capture(prog, { preview: true, stack: "other" })]);
    expect(results[0].resources.find((r) => r.name === "b")?.inputs.create).toBe(UNKNOWN);
    expect(results[1].resources.find((r) => r.name === "b")?.inputs.create).toBeUndefined(); // pure mocks: no stdout
    expect(results[2].resources[0].urn).toBe("urn:pulumi:other::net-tuning::pulumi:pulumi:Stack::net-tuning-other");
    for (let i = 0; i < 3; i++) {
      const r = await capture(prog);
      expect(r.resources.map((x) => x.name)).toEqual(["net-tuning-test", "a", "b"]);
    }
  });

  test("a program that throws is reported, not thrown", async () => {
    const s = new Stack();
    const r = await s.up(() => { throw new Error("bad args: rmem_max must be >= 4096"); });
    expect(r.ok).toBe(false);
    expect(r.failures[0].op).toBe("program");
    expect(r.error).toContain("bad args: rmem_max must be >= 4096");
  });
});
