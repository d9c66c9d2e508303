#!/usr/bin/env node
/*
 * The language runtime the real-CLI suite gives the real `pulumi` CLI (through its `--client=ADDR` flag), because the
 * Go module proxy does not serve pulumi-language-nodejs (scripts/pulumi-toolchain.sh names the refusal every run).
 * It is the Node SDK's own LanguageServer (@pulumi/pulumi/automation/server, what Automation API inline programs use)
 * for every call but Run; Run does what pulumi-language-nodejs's Run does (sdk/nodejs/cmd/pulumi-language-nodejs,
 * execRuntime): it starts a fresh `node @pulumi/pulumi/cmd/run --monitor ... --engine ... --project ... --stack ...
 * --pwd ... [--dry-run] --parallel N --organization ... PROGRAM` with the config in PULUMI_CONFIG (keys as
 * "<namespace>:config:<name>") and PULUMI_CONFIG_SECRET_KEYS, and answers with the process's outcome: exit 0 → done,
 * 32 → bail (the program already reported its errors), else "Program exited with non-zero exit code: N". A program
 * therefore ends as it does under the real host: when its event loop drains. (The LanguageServer's in-process run
 * never returns after an error inside an Output's apply, since the gRPC server keeps the loop alive.)
 *
 * Usage: node testkit/cli/langhost.js PROGRAM.js
 *        node testkit/cli/langhost.js --project
 *   prints "port N" on stdout once listening on 127.0.0.1, then serves until stdin closes or SIGTERM. With --project,
 *   the program is the project's own, as the CLI describes it in the run request (Pulumi.yaml `main`: the program
 *   directory and entry point, `--pwd` the program directory, "." for package.json's main, TypeScript unless the
 *   runtime option `typescript` is false), as pulumi-language-nodejs runs it.
 */
"use strict";
const path = require("path");
const { spawn } = require("child_process");
const grpc = require("@grpc/grpc-js");
const { LanguageServer } = require("@pulumi/pulumi/automation/server");
const langrpc = require("@pulumi/pulumi/proto/language_grpc_pb");
const langproto = require("@pulumi/pulumi/proto/language_pb");
const runtime = require("@pulumi/pulumi/runtime");

const EXITED_AFTER_MESSAGE = 32; // nodeJSProcessExitedAfterShowingUserActionableMessage
const projectMode = process.argv[2] === "--project";
const program = process.argv[2] && !projectMode ? path.resolve(process.argv[2]) : "";
if (!program && !projectMode) {
  process.stderr.write("usage: node testkit/cli/langhost.js PROGRAM.js | --project\n");
  process.exit(2);
}
const runEntry = require.resolve("@pulumi/pulumi/cmd/run");

class ProcessLanguageServer extends LanguageServer {
  run(call, callback) {
    const req = call.request;
    const args = [runEntry];
    const add = (k, v) => v && args.push(`--${k}`, String(v));
    add("monitor", req.getMonitorAddress());
    add("engine", req.getArgsList()[0]); // with --client, the engine's address is the run's first argument
    add("organization", req.getOrganization());
    add("project", req.getProject());
    add("stack", req.getStack());
    const info = req.getInfo();
    const dir = projectMode ? info.getProgramDirectory() : path.dirname(program);
    add("pwd", dir);
    if (req.getDryrun()) args.push("--dry-run");
    add("parallel", req.getParallel());
    args.push(projectMode ? info.getEntryPoint() : program);
    const options = (projectMode && info.getOptions()?.toJavaScript()) || {};
    const config = {};
    for (const [k, v] of req.getConfigMap().entries()) {
      const i = k.indexOf(":");
      config[`${k.slice(0, i)}:config:${k.slice(i + 1)}`] = v;
    }
    const child = spawn(process.execPath, args, {
      cwd: dir,
      env: {
        ...process.env,
        PULUMI_CONFIG: JSON.stringify(config),
        PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(req.getConfigsecretkeysList()),
        ...(projectMode ? { PULUMI_NODEJS_TYPESCRIPT: String(options.typescript !== false) } : {}),
      },
      stdio: ["ignore", "inherit", "inherit"],
    });
    child.on("exit", (code, signal) => {
      const resp = new langproto.RunResponse();
      if (code === EXITED_AFTER_MESSAGE) resp.setBail(true);
      else if (code !== 0) resp.setError(`Program exited with non-zero exit code: ${code ?? signal}`);
      callback(undefined, resp);
    });
  }
}

const server = new grpc.Server({ ...(runtime.grpcChannelOptions || {}) });
server.addService(langrpc.LanguageRuntimeService, new ProcessLanguageServer(async () => undefined));
server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) {
    process.stderr.write(`langhost: cannot listen: ${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`port ${port}\n`);
});
const stop = () => server.tryShutdown(() => process.exit(0));
process.on("SIGTERM", stop);
process.stdin.on("end", stop);
process.stdin.resume();
