/** The resource's own sysctls override its profile's, in either key form (review 7 L4: a slash-form key was "given twice"). */
import { planSysctls } from "../../provider/sysctl/plan";
import { webServer } from "../../provider/sizing";
import { ownerOf } from "../../provider/owner";

const owner = ownerOf("p", "s", "web");

test.each([["net.core.somaxconn"], ["net/core/somaxconn"]])("%s = 1024 overrides webServer()'s somaxconn", (key) => {
  const profile = webServer();
  expect(profile.sysctls["net.core.somaxconn"]).toBeDefined();
  expect(profile.sysctls["net.core.somaxconn"]).not.toBe(1024);
  const p = planSysctls({ owner, name: "web", profile, sysctls: { [key]: 1024 } } as never);
  const somax = Object.entries(p.values).filter(([k]) => k.replace(/\//g, ".") === "net.core.somaxconn");
  expect(somax).toEqual([[expect.any(String), "1024"]]);
  expect(p.fileContent).toMatch(/^net[./]core[./]somaxconn = 1024$/m);
  expect(p.fileContent).not.toMatch(new RegExp(`somaxconn = ${profile.sysctls["net.core.somaxconn"]}$`, "m"));
});

test("the same key twice in the resource's own sysctls (two forms) is still refused", () => {
  expect(() => planSysctls({ owner, name: "web", sysctls: { "net.core.somaxconn": 1, "net/core/somaxconn": 2 } } as never)).toThrow(/given twice/);
});
