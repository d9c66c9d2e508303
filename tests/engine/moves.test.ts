/**
 * Moves through the component wiring (common.ts): both children have replaceOnChanges on their connection
 * and no deleteBeforeReplace, so a move replaces them create-before-delete, in the engine's order (step_generator:
 * replaced olds are deleted at the end, in reverse dependency order): the engine delivery of the new address (a
 * stack-level resource named after it: created) and the new apply (apply-create) on the new machine first, then the
 * old `-restore`'s stored delete on the old one, then the old address's delivery (no longer registered: deleted, which
 * runs nothing). (Same-machine moves need the generation check of the safety work: tests/safety.)
 */
import { NetTuning } from "../../components/netTuning";
import { MOVE_KEYS } from "../../components/common";
import { capture, COMMAND_TYPE, COPY_TYPE, Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { ok, sysctl } from "../../testkit/host";

let lab: Lab;
beforeAll(async () => {
  lab = await startLab({ hosts: 2, tag: "moves" });
}, 120000);
afterAll(async () => {
  await lab?.stop();
});
const K = "net.core.somaxconn";
const prog = (h: LabHost) => () => {
  new NetTuning("web", { connection: h.connection("root"), sysctls: { [K]: 8300 } });
};

test("every child: replaceOnChanges on its connection, no deleteBeforeReplace; the delivery is named after the address", async () => {
  const c = await capture(prog(lab.hosts[0]));
  const kids = c.resources.filter((r) => r.type === COMMAND_TYPE);
  expect(kids.map((r) => r.name).sort()).toEqual(["web-apply", "web-restore"]);
  for (const r of kids) {
    expect(r.options.replaceOnChanges.filter((p) => !p.startsWith("triggers"))).toEqual(MOVE_KEYS);
    expect(r.options.deleteBeforeReplace).toBe(false);
  }
  // not connection.host/port/user/proxy: the engine diffs the secret `connection` as one value, so those paths never
  // matched under the real CLI (tests/cli/harness.test.ts)
  expect(MOVE_KEYS).toEqual(["connection"]);
  const copies = c.resources.filter((r) => r.type === COPY_TYPE);
  expect(copies.map((r) => r.name)).toEqual([expect.stringMatching(new RegExp(`^net-tuning-engine-${lab.hosts[0].address.replace(/\./g, "\\.")}-[0-9a-f]{8}$`))]);
  // another address is another delivery (name): nothing to replace
  expect(copies[0].options.replaceOnChanges.filter((p) => !p.startsWith("triggers"))).toEqual([]);
  expect(copies[0].options.deleteBeforeReplace).toBe(false);
});

test("a move to another machine: new delivery + apply-create there first, then the old restore restores the old machine", async () => {
  const [a, b] = lab.hosts;
  const origA = await sysctl(a, K);
  const origB = await sysctl(b, K);
  const stack = new Stack({ project: "mv", stack: "lab" });
  ok(await stack.up(prog(a)));
  expect(await sysctl(a, K)).toBe("8300");
  const r = ok(await stack.up(prog(b)));
  const replaced = r.steps.filter((s) => s.kind === "replace").map((s) => s.urn.split("::").pop()).sort();
  expect(replaced).toEqual(["web-apply", "web-restore"]);
  const copyStep = (kind: string) => r.steps.filter((s) => s.kind === kind && s.urn.includes("::net-tuning-engine-")).map((s) => s.urn.split("::").pop());
  expect(copyStep("create")).toEqual([expect.stringMatching(new RegExp(`^net-tuning-engine-${b.address.replace(/\./g, "\\.")}-`))]);
  expect(copyStep("delete")).toEqual([expect.stringMatching(new RegExp(`^net-tuning-engine-${a.address.replace(/\./g, "\\.")}-`))]);
  expect(r.steps.filter((s) => s.kind === "replace").every((s) => s.deleteBeforeReplace === false)).toBe(true);
  const applyB = r.runs.find((x) => x.name === "web-apply")!;
  const restoreA = r.runs.find((x) => x.name === "web-restore")!;
  expect([applyB.op, applyB.host, applyB.cmd.includes(" apply-create ")]).toEqual(["create", `${b.address}:${b.port}`, true]);
  expect([restoreA.op, restoreA.host]).toEqual(["delete", `${a.address}:${a.port}`]);
  expect(r.copies.map((c) => c.host)).toEqual([`${b.address}:${b.port}`]);
  // engine order: copy, then apply on B, then the deferred delete on A
  expect(r.copies[0].seq).toBeLessThan(applyB.seq);
  expect(applyB.seq).toBeLessThan(restoreA.seq);
  expect(await sysctl(a, K)).toBe(origA);
  expect(await sysctl(b, K)).toBe("8300");
  ok(await stack.destroy());
  expect(await sysctl(b, K)).toBe(origB);
});
