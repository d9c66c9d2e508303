/**
 * Conflict claims are per program run: the test kit's harness (like the engine) evaluates each `pulumi up` as a new
 * run, so a key that one run's resource set is free for another run's resource, while two resources of one run
 * claiming one key on one host are refused before anything is registered but the components.
 */
import { NetTuning } from "../../components/netTuning";
import { capture } from "../../testkit/harness";

const connection = { host: "198.18.7.1", user: "root", privateKey: "k" };

test("two runs may each set a key on a host; one run with two resources setting it is refused", async () => {
  const a = await capture(() => void new NetTuning("alpha", { connection, sysctls: { "net.core.somaxconn": 3001 } }));
  expect(a.error).toBeUndefined();
  const b = await capture(() => void new NetTuning("beta", { connection, sysctls: { "net.core.somaxconn": 3002 } }));
  expect(b.error).toBeUndefined();
  const both = await capture(() => {
    new NetTuning("alpha", { connection, sysctls: { "net.core.somaxconn": 3001 } });
    new NetTuning("beta", { connection, sysctls: { "net.core.somaxconn": 3002 } });
  });
  expect(both.error?.message).toBe(
    'NetTuning "beta": 1 invalid input:\n  - net.core.somaxconn is also set by NetTuning "alpha" on the same host (198.18.7.1:22): a key belongs to one NetTuning per host; set it in only one of them',
  );
  expect(both.resources.filter((r) => r.type === "command:remote:Command").map((r) => r.name)).not.toContain("beta-apply");
});
