/**
 * The harness's command:remote:CopyToRemote against a lab host (pulumi-command 1.2.1 semantics): SFTP as the SSH
 * user, parents created, relative paths in the home, in-place write; diff by asset hash only; an update copies
 * again only when the hash or remotePath changed; triggers replace; no delete.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import * as command from "@pulumi/command";
import { Stack } from "../../testkit/harness";
import { Lab, LabHost, startLab } from "../../testkit/lab";
import { ok } from "../../testkit/host";

let lab: Lab;
let dir: string;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "nt-copy-"));
  lab = await startLab({ hosts: 1, tag: "copy" });
}, 120000);
afterAll(async () => {
  await lab?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});
function file(name: string, text: string): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
}
const prog = (h: LabHost, local: string, remotePath: string, extra: { triggers?: string[]; connChange?: boolean } = {}) => () => {
  new command.remote.CopyToRemote("c", {
    connection: { ...h.connection("sudo"), ...(extra.connChange ? { dialErrorLimit: 3 } : {}) },
    source: new pulumi.asset.FileAsset(local),
    remotePath,
    triggers: extra.triggers,
  });
};

test("create, same hash elsewhere, connection-only change, new content, new path, triggers, delete", async () => {
  const h = lab.hosts[0];
  const user = h.sudoUser.user;
  const home = `/home/${user}`;
  const a = file("a.txt", "one\n");
  const stack = new Stack({ project: "copy", stack: "lab" });
  const r1 = ok(await stack.up(prog(h, a, "deep/er/x.txt")));
  expect(r1.sessions.total).toBe(1);
  expect(r1.copies.map((c) => [c.op, c.remotePath])).toEqual([["create", "deep/er/x.txt"]]);
  expect((await h.exec(`cat ${home}/deep/er/x.txt; stat -c '%U' ${home}/deep/er/x.txt ${home}/deep/er`)).stdout).toBe(`one\n${user}\n${user}\n`);
  const entry = stack.get("c")!;
  expect((entry.inputs.source as { hash: string }).hash).toMatch(/^[0-9a-f]{64}$/);

  // the same content under another local path: no change (assets compare by hash)
  const a2 = file("a-copy.txt", "one\n");
  const r2 = ok(await stack.up(prog(h, a2, "deep/er/x.txt")));
  expect([r2.sessions.total, r2.steps.find((s) => s.urn.endsWith("::c"))!.kind]).toEqual([0, "same"]);

  // a connection change alone: an update that copies nothing
  const r3 = ok(await stack.up(prog(h, a2, "deep/er/x.txt", { connChange: true })));
  expect([r3.sessions.total, r3.steps.find((s) => s.urn.endsWith("::c"))!.kind]).toEqual([0, "update"]);

  // new content: copied again, in place
  await h.exec(`echo stale > ${home}/deep/er/x.txt`);
  const b = file("b.txt", "two\n");
  const r4 = ok(await stack.up(prog(h, b, "deep/er/x.txt", { connChange: true })));
  expect(r4.copies.map((c) => c.op)).toEqual(["update"]);
  expect((await h.exec(`cat ${home}/deep/er/x.txt`)).stdout).toBe("two\n");

  // new remotePath: copied again; the old file stays (no delete)
  const r5 = ok(await stack.up(prog(h, b, "/tmp/y.txt", { connChange: true })));
  expect(r5.copies.map((c) => [c.op, c.remotePath])).toEqual([["update", "/tmp/y.txt"]]);
  expect((await h.exec(`cat /tmp/y.txt ${home}/deep/er/x.txt`)).stdout).toBe("two\ntwo\n");

  // triggers: replace (create-before-delete; the delete does nothing)
  const r6 = ok(await stack.up(prog(h, b, "/tmp/y.txt", { connChange: true, triggers: ["x"] })));
  expect(r6.steps.find((s) => s.urn.endsWith("::c"))!.kind).toBe("replace");
  expect(r6.copies.map((c) => c.op)).toEqual(["create"]);

  const d = ok(await stack.destroy());
  expect(d.sessions.total).toBe(0);
  expect((await h.exec("cat /tmp/y.txt")).stdout).toBe("two\n");
});
