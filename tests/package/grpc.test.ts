/**
 * The package served to other languages, without the Pulumi CLI: in a fresh clone after `npm install`, the package is
 * started as the Node.js language host starts a component plugin (`node <@pulumi/pulumi>/cmd/run-plugin <dir>
 * <engine address>`, which prints its port). Over gRPC this test fetches the schema (GetSchema) and constructs
 * NetTuning and NicQueues with plain JSON inputs as a Python program sends them (numbers as doubles, the key as a
 * secret) against a fake engine and resource monitor run in this process. The child Commands must carry exactly the
 * plan the TypeScript path renders; a bad input must get the TypeScript path's message, with property paths.
 */
import { ChildProcess, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { addressKey, sharedToken } from "../../components/delivery";
import { engineCommand, engineStdin, restoreCommand } from "../../provider/host/programs";
import { planNic } from "../../provider/nic/plan";
import { ownerOf } from "../../provider/owner";
import { resolvePreset, resolveProfiles } from "../../provider/sizing/spec";
import { planSysctls } from "../../provider/sysctl/plan";
import { freshClone, npm } from "./freshClone";

// The gRPC runtime and generated stubs of the SDK the clone installed (the same ones the plugin uses).
const PULUMI_DIR = path.dirname(require.resolve("@pulumi/pulumi/package.json"));
const grpc = require(require.resolve("@grpc/grpc-js", { paths: [PULUMI_DIR] }));
const provrpc = require("@pulumi/pulumi/proto/provider_grpc_pb");
const provproto = require("@pulumi/pulumi/proto/provider_pb");
const resrpc = require("@pulumi/pulumi/proto/resource_grpc_pb");
const resproto = require("@pulumi/pulumi/proto/resource_pb");
const engrpc = require("@pulumi/pulumi/proto/engine_grpc_pb");
const engproto = require("@pulumi/pulumi/proto/engine_pb");
const structproto = require("google-protobuf/google/protobuf/struct_pb");
const emptyproto = require("google-protobuf/google/protobuf/empty_pb");
const statusproto = require("@pulumi/pulumi/proto/status_pb");
const errorproto = require("@pulumi/pulumi/proto/errors_pb");

const PROJECT = "py-fleet";
const STACK = "prod";
const SECRET_SIG = "4dabf18193072939515e22adb298388d";
const SECRET = (value: string) => ({ [SECRET_SIG]: "1b47061264138c4ac30d75fd1eb44270", value });

interface Registered {
  type: string;
  name: string;
  custom: boolean;
  parent: string;
  object: Record<string, any>;
}
let tmp = "";
let plugin: ChildProcess | undefined;
let pluginLog = "";
let provider: any;
let fakes: any;
const registered: Registered[] = [];
const logs: string[] = [];

/** Fake engine (Log, root resource) and resource monitor (register, echo inputs as outputs) on one server. */
async function startFakes(): Promise<{ server: any; address: string }> {
  const server = new grpc.Server();
  let root = "";
  server.addService(engrpc.EngineService, {
    log: (call: any, cb: any) => {
      logs.push(`${call.request.getSeverity()}: ${call.request.getMessage()}`);
      cb(null, new emptyproto.Empty());
    },
    getRootResource: (_c: any, cb: any) => {
      const r = new engproto.GetRootResourceResponse();
      r.setUrn(root);
      cb(null, r);
    },
    setRootResource: (call: any, cb: any) => {
      root = call.request.getUrn();
      cb(null, new engproto.SetRootResourceResponse());
    },
  });
  server.addService(resrpc.ResourceMonitorService, {
    supportsFeature: (call: any, cb: any) => {
      const r = new resproto.SupportsFeatureResponse();
      r.setHassupport(["secrets", "resourceReferences"].includes(call.request.getId()));
      cb(null, r);
    },
    registerResource: (call: any, cb: any) => {
      const q = call.request;
      const object = q.getObject()?.toJavaScript() ?? {};
      registered.push({ type: q.getType(), name: q.getName(), custom: q.getCustom(), parent: q.getParent(), object });
      const r = new resproto.RegisterResourceResponse();
      r.setUrn(`urn:pulumi:${STACK}::${PROJECT}::${q.getType()}::${q.getName()}`);
      if (q.getCustom()) r.setId(`${q.getName()}-id`);
      // A finished create of a remote.Command: its outputs are its inputs plus stdout. An -apply prints a complete
      // report with nothing in it (no host here; an apply that printed nothing is refused as a damaged engine).
      const stdout = q.getName().endsWith("-apply") ? "net-tuning-report v1\nend\n" : "";
      r.setObject(structproto.Struct.fromJavaScript(q.getCustom() ? { ...object, stdout, stderr: "" } : {}));
      cb(null, r);
    },
    registerResourceOutputs: (_c: any, cb: any) => cb(null, new emptyproto.Empty()),
  });
  const port: number = await new Promise((res, rej) => server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e: Error | null, p: number) => (e ? rej(e) : res(p))));
  return { server, address: `127.0.0.1:${port}` };
}

function call<T>(method: string, req: unknown): Promise<T> {
  return new Promise((res, rej) => provider[method](req, { deadline: Date.now() + 120_000 }, (e: unknown, r: T) => (e ? rej(e) : res(r))));
}

function constructRequest(type: string, name: string, inputs: Record<string, unknown>): unknown {
  const q = new provproto.ConstructRequest();
  q.setProject(PROJECT);
  q.setStack(STACK);
  q.setOrganization("organization");
  q.setDryrun(false);
  q.setParallel(4);
  q.setMonitorendpoint(fakes.address);
  q.setType(type);
  q.setName(name);
  q.setInputs(structproto.Struct.fromJavaScript(inputs));
  q.setAcceptsOutputValues(false);
  return q;
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "net-tuning-grpc-"));
  const clone = freshClone(path.join(tmp, "clone"));
  npm(clone, ["install"], 600_000); // runs prepare: dist is what run-plugin loads
  fakes = await startFakes();
  plugin = spawn(process.execPath, [path.join(clone, "node_modules/@pulumi/pulumi/cmd/run-plugin"), clone, fakes.address], { cwd: clone, stdio: ["ignore", "pipe", "pipe"] });
  const port: string = await new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`run-plugin printed no port in 120 s:\n${pluginLog}`)), 120_000);
    plugin!.stdout!.on("data", (d: Buffer) => {
      pluginLog += d.toString();
      const m = /^(\d+)\s*$/m.exec(pluginLog);
      if (m) {
        clearTimeout(timer);
        res(m[1]);
      }
    });
    plugin!.stderr!.on("data", (d: Buffer) => (pluginLog += d.toString()));
    plugin!.on("exit", (code) => rej(new Error(`run-plugin exited with ${code}:\n${pluginLog}`)));
  });
  provider = new provrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
}, 900_000);

afterAll(async () => {
  provider?.close();
  if (plugin && plugin.exitCode === null) plugin.kill("SIGTERM");
  await new Promise<void>((r) => (fakes ? fakes.server.tryShutdown(() => r()) : r()));
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe("GetSchema", () => {
  let schema: any;
  beforeAll(async () => {
    const r: any = await call("getSchema", new provproto.GetSchemaRequest());
    schema = JSON.parse(r.getSchema());
  });

  test("the provider name is the package name and matches the type tokens", () => {
    expect(schema.name).toBe("net-tuning");
    expect(Object.keys(schema.resources).sort()).toEqual(["net-tuning:index:NetTuning", "net-tuning:index:NicQueues"]);
  });

  test("every documented argument and output, with its type and a description", () => {
    const nt = schema.resources["net-tuning:index:NetTuning"];
    const nq = schema.resources["net-tuning:index:NicQueues"];
    expect(Object.keys(nt.inputProperties).sort()).toEqual(["acknowledge", "adopt", "become", "bootOverride", "confirm", "connection", "fileName", "livePreview", "persist", "profile", "profiles", "restoreOnDelete", "sysctls", "verify"]);
    expect(Object.keys(nq.inputProperties).sort()).toEqual(
      ["adoptRcLocalLines", "become", "bootOverride", "channels", "coalesce", "confirm", "connection", "features", "interface", "irqAffinity", "livePreview", "persistence", "preset", "restoreOnDelete", "rings", "rps", "txQueueLength", "verify"],
    );
    expect(nt.requiredInputs).toEqual(["connection"]);
    expect(nq.requiredInputs.sort()).toEqual(["connection", "interface"]);
    // endpoint: the non-secret user@host:port of both (issue #33); hostKeyFingerprint: the key the live read was shown
    // (#32); verification: the verify gate's readings and verdict (#34); status: the last run's outcome (#34: always
    // "applied" outside a TypeScript rollout)
    expect(Object.keys(nt.properties).sort()).toEqual(["acknowledged", "applied", "drift", "endpoint", "fileContent", "filePath", "hostKeyFingerprint", "live", "previous", "status", "verification", "warnings"]);
    expect(Object.keys(nq.properties).sort()).toEqual(["applied", "drift", "endpoint", "hostKeyFingerprint", "live", "persistedAs", "previous", "status", "verification", "warnings"]);
    for (const r of [nt, nq]) for (const [k, p] of Object.entries<any>({ ...r.inputProperties, ...r.properties })) expect([k, (p.description ?? "").length > 20]).toEqual([k, true]);
    expect(nt.inputProperties.sysctls).toMatchObject({ type: "object", additionalProperties: { $ref: "pulumi.json#/Any" } });
    expect(nt.inputProperties.profile.$ref).toBe("#/types/net-tuning:index:ProfileSpec");
    expect(nt.inputProperties.profiles).toMatchObject({ type: "array", items: { $ref: "#/types/net-tuning:index:ProfileSpec" } });
    expect(nq.inputProperties.rings.$ref).toBe("#/types/net-tuning:index:NicRings");
    expect(nq.inputProperties.preset.$ref).toBe("#/types/net-tuning:index:PresetSpec");
    expect(nt.inputProperties.adopt).toMatchObject({ type: "array", items: { type: "string" } });
    expect(nq.inputProperties.adoptRcLocalLines).toMatchObject({ type: "array", items: { type: "string" } });
    const t = schema.types;
    expect(t["net-tuning:index:Become"].enum.map((e: any) => e.value).sort()).toEqual(["none", "sudo"]);
    expect(t["net-tuning:index:BootOverride"].enum.map((e: any) => e.value).sort()).toEqual(["error", "ignore", "warn"]);
    expect(t["net-tuning:index:Persistence"].enum.map((e: any) => e.value).sort()).toEqual(["auto", "none", "rc.local", "systemd"]);
    expect(Object.keys(t["net-tuning:index:ProfileSpec"].properties).sort()).toEqual(["bandwidth", "concurrency", "congestionControl", "errorAt", "guard", "memory", "name", "pacing", "rtt", "warnAt"]);
    expect(Object.keys(t["net-tuning:index:NicCoalesce"].properties)).toHaveLength(22);
    // the verify gate (issue #34): the argument and the output are named types of the schema
    expect(nt.inputProperties.verify.$ref).toBe("#/types/net-tuning:index:VerifyArgs");
    expect(Object.keys(t["net-tuning:index:VerifyArgs"].properties).sort()).toEqual(["maxIncrease", "maxLevel", "soakSeconds"]);
    expect(t["net-tuning:index:VerifyArgs"].properties.maxIncrease).toMatchObject({ type: "object", additionalProperties: { type: "number" } });
    expect(nq.properties.verification.$ref).toBe("#/types/net-tuning:index:Verification");
    // the confirmed apply (issue #34): a named type with one required number (0 turns it off: no unions in a schema)
    for (const r of [nt, nq]) expect(r.inputProperties.confirm.$ref).toBe("#/types/net-tuning:index:ConfirmArgs");
    expect(t["net-tuning:index:ConfirmArgs"].properties.timeoutSeconds).toMatchObject({ type: "number" });
    expect(t["net-tuning:index:ConfirmArgs"].required).toEqual(["timeoutSeconds"]);
    expect(Object.keys(t["net-tuning:index:ConnectionArgs"].properties)).toEqual(expect.arrayContaining(["host", "port", "user", "privateKey", "proxy"]));
  });
});

describe("Construct with plain JSON inputs (as from Python)", () => {
  test("NetTuning from a profile spec: the child Commands carry the TypeScript path's plan", async () => {
    const inputs = {
      connection: { host: "198.18.0.2", port: 22.0, user: "admin", privateKey: SECRET("KEY") },
      become: "sudo",
      profile: { name: "longFatFlows", bandwidth: "10Gbit", rtt: "40ms", concurrency: 2000.0, memory: "128GiB" },
      sysctls: { "net.core.somaxconn": 8192.0, "net.ipv4.tcp_rmem": [4096.0, 262144.0, 134217728.0] },
    };
    const r: any = await call("construct", constructRequest("net-tuning:index:NetTuning", "gw", inputs));
    expect(r.getUrn()).toBe(`urn:pulumi:${STACK}::${PROJECT}::net-tuning:index:NetTuning::gw`);
    const expected = planSysctls({
      owner: ownerOf(PROJECT, STACK, "gw"),
      name: "gw",
      sysctls: inputs.sysctls,
      profile: resolveProfiles(inputs.profile, undefined).profile,
    });
    const apply = registered.find((x) => x.name === "gw-apply")!;
    expect(apply.type).toBe("command:remote:Command");
    // (become "sudo": the way to root in the stdin, before the bootstrap)
    expect(apply.object.stdin).toBe(engineStdin(expected.stdin, undefined, "sudo"));
    // the engine delivery: an argument holding a secret (here the key inside the connection) reaches a construct as one
    // secret Output, so the address is not a plain value when the component registers: a stack-level CopyToRemote of
    // this resource's own (named after its owner id), staged in the user's home
    const token = ownerOf(PROJECT, STACK, "gw").id;
    const delivery = registered.find((x) => x.type === "command:remote:CopyToRemote" && x.name === `net-tuning-engine-${token}`)!;
    expect(delivery.object.remotePath).toBe(`.cache/pulumi-net-tuning/engine.${token}.sh`);
    expect(apply.object.create).toBe(engineCommand("sysctl", "create", token, "sudo", true));
    expect(JSON.stringify(apply.object.connection)).toContain(SECRET_SIG); // the key stays a secret
    expect(registered.find((x) => x.name === "gw-restore")!.object.delete).toBe(restoreCommand(token, "sudo", true));
    const state = r.getState().toJavaScript();
    expect(state.fileContent).toBe(expected.fileContent);
  });

  test("NicQueues from a preset spec: the plan equals the TypeScript path's", async () => {
    // a key: since issue #32 item 11b a connection with no way to log in is refused (a plain one keeps it a plain value)
    const inputs = { connection: { host: "198.18.0.3", user: "root", privateKey: "KEY" }, interface: "eth0", preset: { name: "throughput" }, channels: { combined: 4.0 } };
    await call("construct", constructRequest("net-tuning:index:NicQueues", "gw-eth0", inputs));
    const expected = planNic({ owner: ownerOf(PROJECT, STACK, "gw-eth0"), name: "gw-eth0", interface: "eth0", channels: inputs.channels, preset: resolvePreset(inputs.preset).preset });
    const apply = registered.find((x) => x.name === "gw-eth0-apply")!;
    expect(apply.object.stdin).toBe(engineStdin(expected.stdin));
    // a connection without a secret or a dependency reaches the component as a plain value: the stack's shared
    // delivery to the address (named after host and a hash of project, stack and address), staged as root
    const token = sharedToken(PROJECT, STACK, addressKey(inputs.connection)!, false);
    expect(token).toMatch(/^198\.18\.0\.3-[0-9a-f]{8}$/);
    const copies = registered.filter((x) => x.type === "command:remote:CopyToRemote");
    expect(copies.map((x) => x.name)).toContain(`net-tuning-engine-${token}`);
    expect(copies.map((x) => x.name)).not.toContain(`net-tuning-engine-${ownerOf(PROJECT, STACK, "gw-eth0").id}`);
    expect(copies.find((x) => x.name === `net-tuning-engine-${token}`)!.object.remotePath).toBe(`/var/lib/pulumi-net-tuning/incoming/engine.${token}.sh`);
    expect(apply.object.create).toBe(engineCommand("nic", "create", token));
  });

  test("a bad input: INVALID_ARGUMENT with the TypeScript message and a property path per problem; no child registered", async () => {
    const before = registered.length;
    const inputs = { connection: { host: "198.18.0.3", privateKey: "KEY" }, interface: "eth0", become: "doas", rings: { rx: 5000000.0 }, restoreOnDelete: "no" };
    const err: any = await call("construct", constructRequest("net-tuning:index:NicQueues", "bad", inputs)).then(
      () => undefined,
      (e) => e,
    );
    expect(err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    const message =
      'NicQueues "bad": 3 invalid inputs:\n' +
      '  - become "doas" is not supported: use "sudo" (runs sudo -n, never prompts) or "none" (the SSH user is root); doas, su and others are not supported\n' +
      '  - restoreOnDelete "no" must be true or false (a boolean, not a string or number)\n' +
      "  - rings.rx must be an integer from 1 to 1048576 (descriptors)";
    expect(err.details).toBe(message);
    const status = statusproto.Status.deserializeBinary(err.metadata.get("grpc-status-details-bin")[0]);
    const details = errorproto.InputPropertiesError.deserializeBinary(status.getDetailsList()[0].getValue());
    expect(details.getErrorsList().map((e: any) => e.getPropertyPath())).toEqual(["become", "restoreOnDelete", "rings.rx"]);
    expect(registered.slice(before).filter((x) => x.custom)).toEqual([]);
  });
});
