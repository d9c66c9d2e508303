/**
 * Live-preview wiring under setMocks (issue #13): off by default under mocks (no SSH from unit tests), on with
 * NET_TUNING_LIVE_PREVIEW=1; a connection that is an unknown Output (a server created in the same preview) is not
 * read: one info, and the -apply child gets token 0 (its commands as without live previews); a non-boolean `livePreview` is refused.
 */
import * as pulumi from "@pulumi/pulumi";
import { ownerOf } from "../../provider/owner";

const logs: string[] = [];
const opts = new Map<string, pulumi.CustomResourceOptions>();
const props = new Map<string, Record<string, unknown>>();
const registeredNames: string[] = [];
pulumi.runtime.setMocks(
  {
    newResource(args) {
      registeredNames.push(args.name);
      // a "server" whose address is not known during preview: no `stdout` in its state
      const state = args.name === "server" ? {} : { ...args.inputs };
      return { id: `${args.name}-id`, state };
    },
    call: (args) => args.inputs,
  },
  "proj",
  "dev",
  true,
);
import { NetTuning } from "../../components/netTuning";
import { NicQueues } from "../../components/nicQueues";
import { InputError } from "../../provider/errors";
import { liveEnabled, liveStats } from "../../components/live";
import * as command from "@pulumi/command";

const record: pulumi.ResourceTransformation = (a) => {
  opts.set(a.name, a.opts);
  props.set(a.name, a.props);
  return undefined;
};
beforeAll(() => {
  jest.spyOn(pulumi.log, "info").mockImplementation(((m: string) => (logs.push(`info: ${m}`), Promise.resolve())) as never);
  jest.spyOn(pulumi.log, "warn").mockImplementation(((m: string) => (logs.push(`warn: ${m}`), Promise.resolve())) as never);
});
afterAll(() => new Promise((r) => setTimeout(r, 300)));

async function until(f: () => boolean): Promise<void> {
  for (let i = 0; i < 300 && !f(); i++) await new Promise((r) => setTimeout(r, 10));
}

test("off under mocks unless NET_TUNING_LIVE_PREVIEW=1; livePreview: false always off", () => {
  delete process.env.NET_TUNING_LIVE_PREVIEW;
  expect(liveEnabled(undefined)).toBe(false);
  process.env.NET_TUNING_LIVE_PREVIEW = "1";
  expect(liveEnabled(undefined)).toBe(true);
  expect(liveEnabled(false)).toBe(false);
  process.env.NET_TUNING_LIVE_PREVIEW = "0";
  expect(liveEnabled(true)).toBe(false);
  delete process.env.NET_TUNING_LIVE_PREVIEW;
});

test("a connection not known yet: no read, one info, -apply registered with token 0 and no ignoreChanges", async () => {
  process.env.NET_TUNING_LIVE_PREVIEW = "1";
  const reads = liveStats.reads;
  const server = new command.remote.Command("server", { connection: { host: "198.18.9.9" }, create: "true" });
  new NetTuning("late", { connection: { host: server.stdout, user: "root", privateKey: "k" }, sysctls: { "net.core.somaxconn": 4096 } }, { transformations: [record] });
  await until(() => registeredNames.includes("late-apply"));
  expect(registeredNames).toContain("late-apply");
  // the child was captured, with nothing ignored (token "0": the commands as without live previews). Its `update`
  // does not depend on the connection (the address unknown here gives the resource a delivery of its own, named after
  // its owner id): " apply-update " without an "@token".
  expect(opts.get("late-apply")).toBeDefined();
  expect(opts.get("late-apply")!.ignoreChanges ?? []).toEqual([]);
  const u = pulumi.output(props.get("late-apply")!.update) as unknown as { isKnown: Promise<boolean>; promise(): Promise<string> };
  expect(await u.isKnown).toBe(true);
  expect(await u.promise()).toContain(` sysctl apply-update ${ownerOf(pulumi.getProject(), pulumi.getStack(), "late").id}`);
  expect(logs).toContain(`info: NetTuning "late": live preview skipped: the connection is not known yet (a server created in this run?); the preview shows the plan only`);
  expect(liveStats.reads).toBe(reads);
});

test("livePreview must be a boolean", () => {
  expect(() => new NetTuning("bad", { connection: { host: "198.18.9.10", privateKey: "k" }, sysctls: { "net.core.somaxconn": 4096 }, livePreview: "yes" as never })).toThrow(
    /livePreview must be true or false \(got "yes"\)/,
  );
});
test("livePreview's problem is one of the resource's list: with become: \"doas\" one InputError names both (NetTuning, NicQueues)", () => {
  const thrown = (f: () => unknown): InputError => {
    try {
      f();
    } catch (e) {
      return e as InputError;
    }
    throw new Error("did not throw");
  };
  const conn = { host: "198.18.9.11", privateKey: "k" };
  const t = thrown(() => new NetTuning("bad2", { connection: conn, sysctls: { "net.core.somaxconn": 4096 }, livePreview: "yes" as never, become: "doas" as never }));
  const n = thrown(() => new NicQueues("bad3", { connection: conn, interface: "eth0", txQueueLength: 1000, livePreview: "yes" as never, become: "doas" as never }));
  for (const e of [t, n]) {
    expect(e).toBeInstanceOf(InputError);
    expect(e.problems).toHaveLength(2);
    expect(e.problems).toContain('livePreview must be true or false (got "yes")');
    expect(e.problems.some((p) => p.startsWith("become"))).toBe(true);
  }
});
afterAll(() => {
  delete process.env.NET_TUNING_LIVE_PREVIEW;
});
