/**
 * The lifecycle harness (testkit/harness, which most lab tests use) against the real engine: the same scenarios, in the
 * same order, run once through the harness and once through the real `pulumi` CLI, each on a lab host of its own that
 * starts alike. Compared for each step: the operation on each child resource (create, update, replace, delete, same),
 * the SSH sessions the host saw by what they ran, the host's values and our file, and what the state holds after a
 * failure. A disagreement fails the test; the table of both sides is printed either way (bench/results/real-cli.md
 * keeps one).
 */
import * as pulumi from "@pulumi/pulumi";
import { CliProject, clearSessions, countKinds, logSessions, providerLabel, sessions, toolchain } from "../../testkit/cli";
import { Stack, UpResult } from "../../testkit/harness";
import type { LabHost } from "../../testkit/lab";
import { useLab } from "../../testkit/jest";
import { NetTuning } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";
import { declare, Declared, fileOf, projectOn, values } from "./fixtures";

jest.setTimeout(900_000);

let hh: LabHost; // the harness's host
let hc: LabHost; // the CLI's host
useLab("clivsh", 2, async (hs) => {
  toolchain();
  [hh, hc] = hs;
  for (const h of hs) {
    await logSessions(h);
    const r = await h.exec("/usr/sbin/sshd -p 2222 -o PidFile=/run/sshd-2222.pid -f /etc/ssh/sshd_config -h /etc/ssh/ssh_host_ed25519_key");
    if (r.code !== 0) throw new Error(`second sshd: ${r.stderr}`);
  }
});

const SOMAX = "net.core.somaxconn";
const FIN = "net.ipv4.tcp_fin_timeout";

type Ops = Record<string, string>;
interface Side {
  ok: boolean;
  ops: Ops;
  sessions: Partial<Record<string, number>>;
  values: Record<string, string>;
  file: string | null;
  /** child resources in state after the step (names) */
  state: string[];
  errors: number;
}

/** A child's name, the delivery's address and hash left out (each side's host has its own address). */
const nameOf = (urn: string) => (urn.split("::").pop() as string).replace(/^net-tuning-engine-.*$/, "net-tuning-engine-*");
const sorted = (o: Ops): Ops => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
const CHILD = /command:remote:(Command|CopyToRemote)$/;

/** The harness's view of a step: its step kinds per child. */
function harnessOps(r: UpResult): Ops {
  const ops: Ops = {};
  for (const s of r.steps) if (CHILD.test(s.type)) ops[nameOf(s.urn)] = s.kind === "delete-replaced" ? ops[nameOf(s.urn)] ?? "replace" : s.kind;
  for (const f of r.failures) if (f.urn) ops[nameOf(f.urn)] = "failed";
  return sorted(ops);
}

/** The engine's view: `pulumi up --json` engine events, the op of each child's finished (or failed) step. */
function cliOps(stdout: string): { ops: Ops; errors: number } {
  const ops: Ops = {};
  let errors = 0;
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    let e: Record<string, { metadata?: { op: string; urn: string; type: string }; severity?: string } | undefined>;
    try {
      e = JSON.parse(line);
    } catch {
      continue;
    }
    const done = e.resOutputsEvent?.metadata;
    if (done && CHILD.test(done.type)) ops[nameOf(done.urn)] = ["create-replacement", "delete-replaced", "replace"].includes(done.op) ? "replace" : done.op;
    const failed = e.resOpFailedEvent?.metadata;
    if (failed && CHILD.test(failed.type)) ops[nameOf(failed.urn)] = "failed";
    if (e.diagnosticEvent?.severity === "error") errors++;
  }
  return { ops: sorted(ops), errors };
}

function harnessProgram(host: LabHost, port: number, decl: Record<string, Declared>) {
  return () => {
    const c = { ...host.connection("root"), port };
    const out: Record<string, unknown> = {};
    for (const [name, r] of Object.entries(decl)) {
      // "outputs" / "secrets": those arguments (or one entry, "sysctls.KEY") through pulumi.output / pulumi.secret,
      // as tests/cli/fixtures PROGRAM does for the CLI's side
      const args: Record<string, unknown> = { ...r.args };
      for (const [how, wrap] of [[r.outputs, pulumi.output], [r.secrets, pulumi.secret]] as const) {
        for (const [k, v] of Object.entries(how ?? {})) {
          const [a, b] = k.split(/\.(.*)/);
          args[a] = b ? { ...((args[a] as object) ?? {}), [b]: wrap(v) } : wrap(v);
        }
      }
      const res = r.kind === "nic" ? new NicQueues(name, { connection: c, ...args } as never) : new NetTuning(name, { connection: c, ...args } as never);
      out[name] = { applied: res.applied, previous: res.previous };
    }
    return out;
  };
}

interface Scenario {
  what: string;
  decl: Record<string, Declared>;
  port?: number;
  before?: (h: LabHost) => Promise<unknown>;
  destroy?: boolean;
}

const WEB = (sysctls: Record<string, unknown>, extra: Record<string, unknown> = {}): Declared => ({ kind: "sysctl", args: { sysctls, ...extra } });
const NIC = (h: LabHost): Declared => ({ kind: "nic", args: { interface: h.iface, persistence: "rc.local", txQueueLength: 2200, features: { gro: true } } });
const base = (h: LabHost, fin = 21, extra: Record<string, unknown> = {}) => ({ web: WEB({ [SOMAX]: 8192, [FIN]: fin }, extra), nq: NIC(h) });

const scenarios: ((h: LabHost) => Scenario)[] = [
  (h) => ({ what: "create", decl: base(h) }),
  (h) => ({ what: "nothing changed", decl: base(h) }),
  (h) => ({ what: "one value changed", decl: base(h, 23) }),
  (h) => ({
    what: "the same values, one through an Output and one as a secret (the plan gains its @secret line)",
    decl: { web: { ...WEB({}), outputs: { [`sysctls.${FIN}`]: 23 }, secrets: { [`sysctls.${SOMAX}`]: 8192 } }, nq: NIC(h) },
  }),
  (h) => ({ what: "the secret's value changed", decl: { web: { ...WEB({}), outputs: { [`sysctls.${FIN}`]: 23 }, secrets: { [`sysctls.${SOMAX}`]: 8300 } }, nq: NIC(h) } }),
  (h) => ({ what: "a NIC feature changed (confirmed by default: the -restore child's create, a second session)", decl: { ...base(h, 23), nq: { kind: "nic", args: { ...NIC(h).args, features: { gro: false } } } } }),
  (h) => ({ what: "back to plain values", decl: base(h, 23) }),
  (h) => ({ what: "move to another address of the machine (port 2222)", decl: base(h, 23), port: 2222 }),
  (h) => ({ what: "file renamed", decl: base(h, 23, { fileName: "91-renamed.conf" }), port: 2222 }),
  (h) => ({
    what: "failing apply (a file appeared that overrides a key at boot)",
    decl: base(h, 27, { fileName: "91-renamed.conf" }),
    port: 2222,
    before: (x) => x.exec(`printf '${FIN} = 31\\n' > /etc/sysctl.d/99-zz-other.conf`),
  }),
  (h) => ({ what: "the conflict removed: up converges", decl: base(h, 27, { fileName: "91-renamed.conf" }), port: 2222, before: (x) => x.exec("rm -f /etc/sysctl.d/99-zz-other.conf") }),
  (h) => ({ what: "destroy", decl: base(h, 27, { fileName: "91-renamed.conf" }), port: 2222, destroy: true }),
];

async function hostSide(h: LabHost, ok: boolean, ops: Ops, errors: number, state: string[]): Promise<Side> {
  const file = (await fileOf(h, "/etc/sysctl.d/91-renamed.conf")) ?? (await fileOf(h, "/etc/sysctl.d/90-net-tuning-web.conf"));
  const kinds = countKinds(await sessions(h));
  return { ok, ops, sessions: Object.fromEntries(Object.entries(kinds).sort(([a], [b]) => a.localeCompare(b))), values: await values(h, [SOMAX, FIN]), file: file?.replace(/owner: \S+/, "owner: *") ?? null, state, errors };
}

test(`harness and real engine (${providerLabel()}) agree, step by step`, async () => {
  // live reads in the harness's runs too (they are off under its mock monitor by default): the real engine does them
  process.env.NET_TUNING_LIVE_PREVIEW = "1";
  const stack = new Stack({ project: "ntcmp", stack: "test" });
  let cli: CliProject | undefined;
  const table: string[] = ["| step | harness | engine |", "|---|---|---|"];
  const disagreements: string[] = [];
  for (const make of scenarios) {
    const sh = make(hh);
    const sc = make(hc);
    // harness
    await sh.before?.(hh);
    await clearSessions(hh);
    const r = sh.destroy ? await stack.destroy() : await stack.up(harnessProgram(hh, sh.port ?? 22, sh.decl));
    const hs = await hostSide(hh, r.ok, harnessOps(r), r.failures.length, stack.resources().filter((e) => CHILD.test(e.type)).map((e) => nameOf(e.urn)).sort());
    // real CLI
    await sc.before?.(hc);
    if (!cli) cli = await projectOn(hc, "ntcmp", "root", sc.decl);
    else {
      await declare(cli, sc.decl);
      await cli.setConfig("port", String(sc.port ?? 22));
    }
    await clearSessions(hc);
    const u = sc.destroy ? await cli.withProgram(["destroy", "--yes", "--skip-preview", "--json", "--non-interactive", "--stack", cli.stack]) : await cli.withProgram(["up", "--yes", "--skip-preview", "--json", "--non-interactive", "--stack", cli.stack]);
    const co = cliOps(u.stdout);
    const exported = (await cli.export()).json.deployment.resources ?? [];
    const cs = await hostSide(hc, u.code === 0, co.ops, co.errors, exported.filter((e) => CHILD.test(e.type)).map((e) => nameOf(e.urn)).sort());
    const fmt = (s: Side) => `${s.ok ? "ok" : "failed"}; ${Object.entries(s.ops).sort().map(([k, v]) => `${k}: ${v}`).join(", ") || "no step"}; sessions ${JSON.stringify(s.sessions)}; state ${s.state.length}`;
    table.push(`| ${sc.what} | ${fmt(hs)} | ${fmt(cs)} |`);
    for (const k of ["ok", "ops", "sessions", "values", "file", "state"] as const) {
      if (JSON.stringify(hs[k]) !== JSON.stringify(cs[k])) disagreements.push(`${sc.what}: ${k}: harness ${JSON.stringify(hs[k])}, engine ${JSON.stringify(cs[k])}`);
    }
  }
  process.stdout.write(`${table.join("\n")}\n`);
  cli?.remove();
  expect(disagreements).toEqual([]);
});
