/**
 * Upgrades are quiet (issue #12): two package versions with different engines in one test. Upgrading shows, per
 * resource, only the `@engine` line changing in the plan plus the engine delivery; the host keeps every value and
 * file byte for byte (mtimes included), and destroy with the new version restores the true originals.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { NetTuning } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";
import { assembleEngine, engine, useEngine } from "../../provider/host/engine";
import { COPY_TYPE, COMMAND_TYPE, Stack, UpResult } from "../../testkit/harness";
import { readRestoreStdin } from "../../provider/host/programs";
import { Lab, startLab } from "../../testkit/lab";
import { ok, snapshot, sysctl } from "../../testkit/host";

let lab: Lab;
beforeAll(async () => {
  lab = await startLab({ hosts: 1, tag: "upgrade" });
}, 120000);
afterAll(async () => {
  useEngine();
  await lab?.stop();
});

const hostFiles = (s: string) =>
  s.split("\n").filter((l) => !/\/usr\/local\/lib\/pulumi-net-tuning|\/var\/lib\/pulumi-net-tuning\/incoming/.test(l)).join("\n");
/**
 * The same without file mtimes: today's engine (runtime.sh nt_commit_files, owned by the safety work) rewrites a
 * managed file with identical content on every apply, so only content, mode and size are compared here.
 */
const hostContent = (s: string) => hostFiles(s).split("\n").map((l) => l.replace(/^(\/\S+ \d+ \S* \d+) \d+\.\d+$/, "$1")).join("\n");

test("this version → the next (another engine): only the @engine line and the delivery change, host values untouched", async () => {
  const host = lab.hosts[0];
  const v1 = engine();
  // "the next package version": the same sources with a changed engine (a new main.sh comment), another version
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nt-engine-v2-"));
  const shDir = path.join(__dirname, "../../provider/host/sh");
  for (const f of fs.readdirSync(shDir)) fs.copyFileSync(path.join(shDir, f), path.join(dir, f));
  fs.appendFileSync(path.join(dir, "main.sh"), "# next version\n");
  const v2 = assembleEngine(dir, `${v1.version}-next`);
  expect(v2.sha256).not.toBe(v1.sha256);

  const orig = { somaxconn: await sysctl(host, "net.core.somaxconn"), fin: await sysctl(host, "net.ipv4.tcp_fin_timeout") };
  const before = await snapshot(host);
  const prog = () => {
    new NetTuning("t", { connection: host.connection("root"), sysctls: { "net.core.somaxconn": 8100, "net.ipv4.tcp_fin_timeout": 22 } });
    new NicQueues("q", { connection: host.connection("root"), interface: host.iface, txQueueLength: 1700 });
  };
  const stack = new Stack({ project: "upg", stack: "lab" });
  useEngine(v1);
  ok(await stack.up(prog));
  const old = stack.resources();
  const applied = await snapshot(host);

  useEngine(v2);
  const p = ok(await stack.preview(prog));
  // preview, per resource: the engine child (new hash), the apply (its stdin) and the -restore child (its @engine line;
  // its stdin also comes from the apply's report, unknown until the apply ran) change
  const changes = (x: UpResult) =>
    x.steps.filter((s) => s.kind !== "same" && (s.type === COMMAND_TYPE || s.type === COPY_TYPE)).map((s) => `${s.urn.split("::").pop()} ${s.kind}`).sort();
  const delivery = old.find((e) => e.type === COPY_TYPE)!.name; // one for both resources
  expect(changes(p)).toEqual([`${delivery} update`, "q-apply update", "q-restore update", "t-apply update", "t-restore update"]);
  const r = ok(await stack.up(prog));
  // the -restore children: a state-only update (their plan names the engine that restores), no session
  expect(changes(r)).toEqual([`${delivery} update`, "q-apply update", "q-restore update", "t-apply update", "t-restore update"]);
  expect(r.copies.map((c) => c.name)).toEqual([delivery]);
  expect(r.sessions.total).toBe(3); // one copy, an apply per resource
  expect(r.runs.map((x) => [x.name, x.op]).sort()).toEqual([["q-apply", "update"], ["t-apply", "update"]]);
  for (const name of ["t-apply", "q-apply"]) {
    const a = String(old.find((e) => e.name === name)!.inputs.stdin).split("\n");
    const b = String(stack.get(name)!.inputs.stdin).split("\n");
    expect(b.length).toBe(a.length);
    const changed = a.map((l, i) => (l === b[i] ? -1 : i)).filter((i) => i >= 0);
    expect(changed).toEqual([0]);
    expect([a[0], b[0]]).toEqual([`@engine ${v1.version} ${v1.sha256}`, `@engine ${v2.version} ${v2.sha256}`]);
    const o = old.find((e) => e.name === name)!;
    expect([stack.get(name)!.inputs.create, stack.get(name)!.inputs.update]).toEqual([o.inputs.create, o.inputs.update]);
  }
  // the restore children keep their stored originals and fallback program: only their @engine line changes (in the
  // compressed part: its base64 line differs)
  for (const name of ["t-restore", "q-restore"]) {
    const o = old.find((e) => e.name === name)!.inputs;
    const n = stack.get(name)!.inputs;
    expect({ ...n, stdin: undefined }).toEqual({ ...o, stdin: undefined });
    const [a, b] = [readRestoreStdin(String(o.stdin)).split("\n"), readRestoreStdin(String(n.stdin)).split("\n")];
    expect([a[1], b[1]]).toEqual([`@engine ${v1.version} ${v1.sha256}`, `@engine ${v2.version} ${v2.sha256}`]);
    expect([b[0], ...b.slice(2)]).toEqual([a[0], ...a.slice(2)]);
  }
  // the host: every value, file content and mode as after the first apply; both engines installed side by side
  expect(hostContent(await snapshot(host))).toBe(hostContent(applied));
  const ls = (await host.exec("ls /usr/local/lib/pulumi-net-tuning")).stdout.split("\n").filter(Boolean).sort();
  expect(ls).toEqual([`engine-${v1.sha256}.sh`, `engine-${v2.sha256}.sh`].sort());
  // the next up is quiet
  expect((await stack.up(prog)).sessions.total).toBe(0);
  const d = ok(await stack.destroy());
  // the engine the restore plans name (the new one) restores
  expect(d.runs.map((x) => /^restored-by\t(.*)$/m.exec(x.stdout ?? "")?.[1])).toEqual([`engine ${v2.fileName}`, `engine ${v2.fileName}`]);
  expect(await sysctl(host, "net.core.somaxconn")).toBe(orig.somaxconn);
  expect(await sysctl(host, "net.ipv4.tcp_fin_timeout")).toBe(orig.fin);
  expect(hostFiles(await snapshot(host))).toBe(hostFiles(before));
  fs.rmSync(dir, { recursive: true, force: true });
});
