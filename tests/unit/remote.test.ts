/**
 * The children register `command:remote:Command` and `command:remote:CopyToRemote` through components/remote.ts (fewer
 * Outputs than @pulumi/command's classes make: 1,000 hosts show each). The engine must receive exactly what the
 * package's classes send, for every kind of connection, in update and in preview: the same inputs with the
 * connection's defaults and secret wrapper, dependencies, options and provider version. A difference here would show
 * as a diff of every resource on the upgrade that brought it.
 */
import * as pulumi from "@pulumi/pulumi";
import * as command from "@pulumi/command";
import { capture, registrationsByName } from "../../testkit/harness";
import { registeredConnection, RemoteCommand, RemoteCopy } from "../../components/remote";
import { MOVE_KEYS } from "../../components/delivery";

const KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nSECRETKEY\n";
type Conn = pulumi.Input<command.types.input.remote.ConnectionArgs>;
const connections: { label: string; conn: () => Conn }[] = [
  { label: "plain root", conn: () => ({ host: "198.18.4.1", privateKey: KEY }) },
  { label: "plain user, port, limits set", conn: () => ({ host: "198.18.4.2", port: 2222, user: "ops", privateKey: KEY, dialErrorLimit: 3, perDialTimeout: 5 }) },
  { label: "through a bastion (proxy)", conn: () => ({ host: "10.0.0.5", user: "ops", privateKey: KEY, proxy: { host: "198.18.4.3", user: "jump", privateKey: KEY } }) },
  { label: "a secret key inside", conn: () => ({ host: "198.18.4.4", privateKey: pulumi.secret(KEY) }) },
  { label: "the whole connection an Output", conn: () => pulumi.output({ host: "198.18.4.5", user: "root", privateKey: KEY }) },
  { label: "a proxy that is an Output", conn: () => ({ host: "10.0.0.6", privateKey: KEY, proxy: pulumi.output({ host: "198.18.4.6", privateKey: KEY }) }) },
];

const outputsOf = (r: { name: string; type: string }) => (r.type === "command:remote:Command" && r.name.endsWith("-apply") ? { stdout: "REPORT", stderr: "" } : undefined);

/** The children of one resource and a delivery, registered with the package's classes or with components/remote.ts. */
function program(lean: boolean, conn: () => Conn) {
  return () => {
    const parent = new pulumi.ComponentResource("net-tuning:index:NetTuning", "t", {});
    const c = conn();
    const registered = lean ? registeredConnection(c) : undefined;
    const source = new pulumi.asset.FileAsset(__filename);
    const copyOpts: pulumi.CustomResourceOptions = { replaceOnChanges: MOVE_KEYS };
    const copy = lean
      ? new RemoteCopy("net-tuning-engine-x", { connection: registered!, source, remotePath: "/var/lib/pulumi-net-tuning/incoming/engine.x.sh" }, copyOpts)
      : new command.remote.CopyToRemote("net-tuning-engine-x", { connection: c, source, remotePath: "/var/lib/pulumi-net-tuning/incoming/engine.x.sh" }, copyOpts);
    const applyArgs = { create: "run create", update: "run update", stdin: "@engine 1 abc\nplan\n", addPreviousOutputInEnv: false, logging: "stderr" as const };
    const applyOpts: pulumi.CustomResourceOptions = { parent, replaceOnChanges: MOVE_KEYS, dependsOn: [copy], ignoreChanges: ["update"] };
    const apply = lean ? new RemoteCommand("t-apply", { connection: registered!, ...applyArgs }, applyOpts) : new command.remote.Command("t-apply", { connection: c, ...applyArgs }, applyOpts);
    const restoreArgs = { delete: "run restore", stdin: apply.stdout.apply((o) => `restore after ${o}\n`), logging: "stderr" as const };
    const restoreOpts: pulumi.CustomResourceOptions = { parent, replaceOnChanges: MOVE_KEYS, dependsOn: [apply] };
    if (lean) new RemoteCommand("t-restore", { connection: registered!, ...restoreArgs }, restoreOpts);
    else new command.remote.Command("t-restore", { connection: c, ...restoreArgs }, restoreOpts);
  };
}

describe("components/remote.ts registers what @pulumi/command's classes register", () => {
  for (const { label, conn } of connections) {
    for (const preview of [false, true]) {
      test(`${label}${preview ? " (preview)" : ""}`, async () => {
        const opts = { project: "proj", stack: "dev", outputsOf, preview };
        const ours = await registrationsByName(program(true, conn), opts);
        const theirs = await registrationsByName(program(false, conn), opts);
        expect(Object.keys(ours).sort()).toEqual(["net-tuning-engine-x", "proj-dev", "t", "t-apply", "t-restore"]);
        expect(ours).toEqual(theirs);
        const apply = theirs["t-apply"] as { options: { version: string; additionalSecretOutputs: string[] }; secretInputs: string[]; rawInputs: { connection: unknown } };
        // the comparison covers what matters: the provider version, the connection a secret with the defaults applied
        expect(apply.options.version).toBe(require("@pulumi/command/package.json").version);
        expect(apply.options.additionalSecretOutputs).toEqual(["connection"]);
        expect(apply.secretInputs).toContain("connection");
        if (!preview) expect(JSON.stringify(apply.rawInputs.connection)).toMatch(/"dialErrorLimit":\d+.*"perDialTimeout":\d+.*"port":\d+/);
      });
    }
  }

  test("the -apply child's stdout and stdin are Outputs of what the host printed and what was sent", async () => {
    let seen: [string, string | undefined] | undefined;
    const r = await capture(() => {
      const a = new RemoteCommand("t-apply", { connection: registeredConnection({ host: "198.18.4.7" }), create: "x", stdin: "plan\n" });
      pulumi.all([a.stdout, a.stdin]).apply((v) => (seen = v));
    }, { outputsOf });
    expect(r.error).toBeUndefined();
    expect(seen).toEqual(["REPORT", "plan\n"]);
  });
});
