/**
 * A journal's owner label (runtime.sh nt_write_owner, nt_owner_of): the file only messages read ("already managed by
 * <label>"), written by the shell and renamed into place without an fsync (issue #31's NicQueues process budget: one
 * process, mv, instead of dd + mv). After a power loss it may be empty: the messages then name the journal instead.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { runSh } from "../../testkit/localsh";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "nt-owner-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

test("written with mode 0600 and one line, replacing the old label; no temporary file left", () => {
  fs.writeFileSync(path.join(dir, "x.owner"), "old/label/a\n");
  const out = runSh(`NT_OWNER='proj/stack/web 1'; nt_write_owner "$D/x.owner" && echo ok; nt_owner_of "$D/x.orig"; echo "$NT_OWNER_OF"`, { env: { D: dir } });
  expect(out).toBe("ok\nproj/stack/web 1\n");
  expect(fs.readFileSync(path.join(dir, "x.owner"), "utf8")).toBe("proj/stack/web 1\n");
  expect(fs.statSync(path.join(dir, "x.owner")).mode & 0o777).toBe(0o600);
  expect(fs.readdirSync(dir)).toEqual(["x.owner"]);
});

test("a missing or empty label file: the journal's name", () => {
  fs.writeFileSync(path.join(dir, "y.owner"), "");
  const out = runSh(`nt_owner_of "$D/x.orig"; echo "$NT_OWNER_OF"; nt_owner_of "$D/y.orig"; echo "$NT_OWNER_OF"`, { env: { D: dir } });
  expect(out).toBe("x.orig\ny.orig\n");
});

test("a link planted at the temporary name is not followed: the write fails, the link's target is untouched", () => {
  fs.writeFileSync(path.join(dir, "victim"), "keep\n");
  // planted between nt_write_new's check of that name and its open (the race integrity.test.ts runs against a real
  // apply): here by its first umask, redefined
  const out = runSh(`NT_OWNER=p/s/n; p=0; umask() { command umask "$@"; [ $p = 1 ] || ln -s "$D/victim" "$D/.x.owner.net-tuning-new"; p=1; }; nt_write_owner "$D/x.owner" && echo written || echo refused`, {
    env: { D: dir },
  });
  expect(out.trim()).toBe("refused");
  expect(fs.readFileSync(path.join(dir, "victim"), "utf8")).toBe("keep\n");
  expect(fs.readdirSync(dir)).toEqual(["victim"]);
});
