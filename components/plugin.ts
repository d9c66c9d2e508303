/**
 * The component provider that serves NetTuning and NicQueues to Python, Go, C#, Java and YAML programs
 * (`pulumi package add`; PulumiPlugin.yaml). The Node.js language host starts a plugin with
 * `node @pulumi/pulumi/cmd/run-plugin <package dir>`, which loads package.json `main`, this module: it exports one
 * function and no component class, so run-plugin calls it instead of inferring a schema, and it serves the schema
 * generated from the args interfaces (schema.json, scripts/gen-schema.ts), where the union types TypeScript users see
 * (`number | "max"`, `"all" | number[]`, a sysctl's `number | string | number[]`) are schema `oneOf` types.
 * TypeScript programs import the package by name, which package.json `exports` maps to index.js.
 */
import * as pulumi from "@pulumi/pulumi";
import { NetTuningProvider } from "./provider";

/** Starts the provider's gRPC server with the arguments run-plugin passes on (the engine's address). */
function serve(): Promise<void> {
  return pulumi.provider.main(new NetTuningProvider(), process.argv.slice(2));
}

export = serve;
