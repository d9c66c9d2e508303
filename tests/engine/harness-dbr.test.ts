/**
 * The harness's delete-before-replace cascade follows the engine (pkg/resource/deploy/step_generator.go,
 * calculateDependentReplacements): a not-yet-registered dependent is deleted first only when its provider diff with
 * the properties taken from the replaced resource unknown is a replace — for a Command: its `triggers`, or a property
 * named by its own replaceOnChanges option. A dependent that only takes `stdin` from the replaced resource is an
 * update, so its stored delete runs AFTER the new create (issue #18's same-machine revert of 0.1.0).
 */
import * as pulumi from "@pulumi/pulumi";
import * as command from "@pulumi/command";
import { Stack } from "../../testkit/harness";
import { Lab, startLab } from "../../testkit/lab";
import { ok } from "../../testkit/host";

let lab: Lab;
beforeAll(async () => {
  lab = await startLab({ hosts: 1, tag: "dbr" });
}, 120000);
afterAll(async () => {
  await lab?.stop();
});

type Dep = "stdin" | "triggers" | "environment-roc";
const prog = (port: number, dep: Dep) => () => {
  const h = lab.hosts[0];
  const conn = { ...h.connection("root"), dialErrorLimit: port }; // a replace path that changes without a new host
  const a = new command.remote.Command("a", { connection: conn, create: "echo a", addPreviousOutputInEnv: false },
    // the whole connection: a path inside the secret `connection` never replaces under the real engine
    { replaceOnChanges: ["connection"], deleteBeforeReplace: true });
  const fromA = a.stdout.apply((s) => `${s}\n`);
  new command.remote.Command("b", {
    connection: conn,
    delete: "echo b-deleted",
    addPreviousOutputInEnv: false,
    ...(dep === "stdin" ? { stdin: fromA } : dep === "triggers" ? { triggers: [fromA] } : { environment: { LC_NT: pulumi.output(fromA).apply((s) => s.trim()) } }),
  }, dep === "environment-roc" ? { dependsOn: [a], replaceOnChanges: ["environment"] } : { dependsOn: [a] });
};

test.each<Dep>(["triggers", "environment-roc"])("dependent whose %s takes a value from the replaced resource: deleted before it", async (dep) => {
  const stack = new Stack({ project: "dbr", stack: dep });
  ok(await stack.up(prog(3, dep)));
  const r = ok(await stack.up(prog(4, dep)));
  const order = r.runs.map((x) => `${x.name} ${x.op}`);
  expect(order).toEqual(["b delete", "a create"]);
  expect(r.steps.filter((s) => s.urn.endsWith("::b")).map((s) => s.kind)).toEqual(["delete-replaced", "replace"]);
  ok(await stack.destroy());
});

test("dependent that only takes stdin from it: an update, not deleted before the new create", async () => {
  const stack = new Stack({ project: "dbr", stack: "stdin" });
  ok(await stack.up(prog(3, "stdin")));
  const r = ok(await stack.up(prog(4, "stdin")));
  expect(r.runs.map((x) => `${x.name} ${x.op}`)).toEqual(["a create"]);
  // b's own diff (its connection changed too) is an in-place update: its stored delete never runs
  expect(r.steps.filter((s) => s.urn.endsWith("::b")).map((s) => s.kind)).toEqual(["update"]);
  ok(await stack.destroy());
});
