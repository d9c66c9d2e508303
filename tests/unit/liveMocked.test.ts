/**
 * Live previews under setMocks with the SSH read replaced by a canned answer of the host (no engine, no host).
 *
 * Secrets in live previews (issue #13, "the read never puts secrets into logs or outputs"): with secret declared
 * settings (`sysctls: pulumi.secret({...})`, or a secret value inside) the messages name keys but show "(secret)"
 * for every value (declared, on the host now, last applied), and `live` and `drift` are secret Outputs. A resource
 * whose settings are not secret keeps its values in the messages and plain outputs (control).
 *
 * A record the login user cannot read (`!record-unreadable`): drift is not checked, so the -apply child keeps the
 * token stored in state (ignoreChanges ["update"]), as for an unreachable host: no change shown by itself.
 */
import * as pulumi from "@pulumi/pulumi";

jest.mock("../../provider/live/ssh", () => {
  const actual = jest.requireActual("../../provider/live/ssh");
  const fake = jest.fn(async (c: { host: string }, _cmd: string, stdin: string) => {
      // every requested owner: last applied 4096, on the host now 1234 (drift), and a file as applied
      if (c.host === FAILED_HOST) return { ok: false, reason: `${c.host}:22: connection refused`, ms: 1 };
      const owners = [...stdin.matchAll(/(?:^|NT_LIVE_REQ=')(?:sysctl|nic)\t([A-Za-z0-9._-]+)\t/gm)].map((m) => m[1]);
      const lines = ["net-tuning-live v2"];
      for (const o of owners) {
        if (c.host === UNREADABLE_RECORD_HOST) {
          lines.push(`!owner ${o}`, "!record-unreadable", "value\tnet.core.somaxconn\t1234");
          continue;
        }
        lines.push(`!owner ${o}`, "!record", `|net-tuning-converged v1\t${o}\tabc123\tproj/dev/x`,
          "|value\tnet.core.somaxconn\t4096", "|file\t/etc/sysctl.d/90-x.conf\t11 22",
          "digest\t/etc/sysctl.d/90-x.conf\t11 22", "value\tnet.core.somaxconn\t1234");
      }
      lines.push("!end");
      return { ok: true, code: 0, stdout: lines.join("\n") + "\n", stderr: "", ms: 1 };
  });
  return { ...actual, readOverSsh: fake, readOverSshLimited: fake };
});

const UNREADABLE_RECORD_HOST = "198.18.7.99";
const FAILED_HOST = "198.18.7.98";
const props = new Map<string, Record<string, unknown>>();
const record: pulumi.ResourceTransformation = (a) => (opts.set(a.name, a.opts), props.set(a.name, a.props), undefined);
/** The `update` command of a registered child (known: the connection is known in these tests). */
async function updateOf(name: string): Promise<string> {
  const u = pulumi.output(props.get(name)!.update) as unknown as { isKnown: Promise<boolean>; promise(): Promise<string> };
  expect(await u.isKnown).toBe(true);
  return u.promise();
}
const logs: string[] = [];
const opts = new Map<string, pulumi.CustomResourceOptions>();
const registered: string[] = [];
pulumi.runtime.setMocks(
  { newResource: (a) => (registered.push(a.name), { id: `${a.name}-id`, state: { ...a.inputs } }), call: (a) => a.inputs },
  "proj", "dev", true,
);
import { NetTuning } from "../../components/netTuning";

beforeAll(() => {
  process.env.NET_TUNING_LIVE_PREVIEW = "1";
  jest.spyOn(pulumi.log, "info").mockImplementation(((m: string) => (logs.push(`info: ${m}`), Promise.resolve())) as never);
  jest.spyOn(pulumi.log, "warn").mockImplementation(((m: string) => (logs.push(`warn: ${m}`), Promise.resolve())) as never);
});
afterAll(() => {
  delete process.env.NET_TUNING_LIVE_PREVIEW;
  return new Promise((r) => setTimeout(r, 300));
});

async function until(f: () => boolean): Promise<void> {
  for (let i = 0; i < 300 && !f(); i++) await new Promise((r) => setTimeout(r, 10));
}
const value = <T>(o: pulumi.Output<T>) => (o as unknown as { promise(): Promise<T> }).promise();

test.each([
  ["a secret sysctls map", () => pulumi.secret({ "net.core.somaxconn": 8192 })],
  ["a secret value inside", () => ({ "net.core.somaxconn": pulumi.secret(8192) })],
])("%s: messages show keys and (secret), never a value; live and drift are secrets", async (_what, sysctls) => {
  logs.length = 0;
  const name = `sec${registered.length}`;
  const r = new NetTuning(name, { connection: { host: `198.18.7.${10 + registered.length}`, user: "root", privateKey: "k" }, sysctls: sysctls() as never });
  await until(() => registered.includes(`${name}-apply`) && logs.some((l) => l.startsWith("warn:")));
  const mine = logs.filter((l) => l.includes(`NetTuning "${name}"`));
  expect(mine.some((l) => l.startsWith("info:") && l.includes("net.core.somaxconn: (secret) → (secret)"))).toBe(true);
  expect(mine.some((l) => l.startsWith("warn:") && l.includes("net.core.somaxconn: (secret) (last applied) → (secret) (on the host now)"))).toBe(true);
  for (const l of mine) expect(l).not.toMatch(/8192|1234|4096/);
  expect(await pulumi.isSecret(r.live)).toBe(true);
  expect(await pulumi.isSecret(r.drift)).toBe(true);
  expect(await value(r.live)).toEqual({ "net.core.somaxconn": "1234" });
});

test("control: settings not secret are shown, and live/drift are plain", async () => {
  logs.length = 0;
  const r = new NetTuning("plain", { connection: { host: "198.18.7.2", user: "root", privateKey: "k" }, sysctls: { "net.core.somaxconn": 8192 } });
  await until(() => registered.includes("plain-apply") && logs.some((l) => l.startsWith("warn:")));
  expect(logs.some((l) => l.includes("net.core.somaxconn: 1234 → 8192"))).toBe(true);
  expect(logs.some((l) => l.includes("net.core.somaxconn: 4096 (last applied) → 1234 (on the host now)"))).toBe(true);
  expect(await pulumi.isSecret(r.live)).toBe(false);
  expect(await pulumi.isSecret(r.drift)).toBe(false);
  expect(await value(r.drift)).toEqual({ "net.core.somaxconn": "4096 → 1234" });
});

test("a record this user cannot read: drift not checked, the -apply child keeps its stored token (ignoreChanges update)", async () => {
  logs.length = 0;
  new NetTuning("norec", { connection: { host: UNREADABLE_RECORD_HOST, user: "ops", privateKey: "k" }, sysctls: { "net.core.somaxconn": 8192 } }, { transformations: [record] });
  await until(() => registered.includes("norec-apply"));
  expect(logs.join("\n")).toContain("is not readable by this user: drift is not checked");
  expect(opts.get("norec-apply")).toBeDefined();
  expect(opts.get("norec-apply")!.ignoreChanges).toEqual(["create", "update"]);
  const update = await updateOf("norec-apply");
  expect(update).toContain(" apply-update ");
  expect(update).not.toMatch(/apply-update@/); // token "0": no @token suffix
});

test("a host that cannot be read: -apply captured, ignoreChanges update, token 0 (no @) in update", async () => {
  new NetTuning("down", { connection: { host: FAILED_HOST, user: "root", privateKey: "k" }, sysctls: { "net.core.somaxconn": 8192 } }, { transformations: [record] });
  await until(() => registered.includes("down-apply"));
  expect(opts.get("down-apply")).toBeDefined();
  expect(opts.get("down-apply")!.ignoreChanges).toEqual(["create", "update"]);
  const update = await updateOf("down-apply");
  expect(update).toContain(" apply-update ");
  expect(update).not.toMatch(/apply-update@/); // token "0": no @token suffix
});

test("drift: the repair token in update (apply-update@<16 hex>), nothing ignored", async () => {
  new NetTuning("drifted", { connection: { host: "198.18.7.97", user: "root", privateKey: "k" }, sysctls: { "net.core.somaxconn": 8192 } }, { transformations: [record] });
  await until(() => registered.includes("drifted-apply"));
  expect(opts.get("drifted-apply")).toBeDefined();
  expect(opts.get("drifted-apply")!.ignoreChanges ?? []).toEqual([]);
  expect(await updateOf("drifted-apply")).toMatch(/ sysctl apply-update@[0-9a-f]{16} /);
});

test("two resources on one host share one read (one batch per host and run: project, stack, dry-run)", async () => {
  const { readOverSshLimited } = jest.requireMock("../../provider/live/ssh") as { readOverSshLimited: jest.Mock };
  const calls0 = readOverSshLimited.mock.calls.length;
  const conn = { host: "198.18.7.50", user: "root", privateKey: "k" };
  new NetTuning("pairA", { connection: conn, sysctls: { "net.core.somaxconn": 8192 } });
  new NetTuning("pairB", { connection: conn, sysctls: { "net.ipv4.tcp_fin_timeout": 20 } });
  await until(() => registered.includes("pairA-apply") && registered.includes("pairB-apply"));
  const mine = readOverSshLimited.mock.calls.slice(calls0).filter((c) => (c[0] as { host: string }).host === conn.host);
  expect(mine).toHaveLength(1);
  expect(String(mine[0][2]).match(/proj\.dev\.pair[AB]-/g)?.length).toBe(2);
});
