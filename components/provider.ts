/**
 * The component provider of NetTuning and NicQueues (served by components/plugin.ts): the schema generated from the
 * args interfaces (schema.json, scripts/gen-schema.ts) and `construct`.
 */
import * as pulumi from "@pulumi/pulumi";
import * as fs from "fs";
import * as path from "path";
import { NetTuning } from "./netTuning";
import { NicQueues } from "./nicQueues";

/** The served components by class name; their type tokens are `<package name>:index:<class name>`. */
export const COMPONENTS: Record<string, new (name: string, args: never, opts?: pulumi.ComponentResourceOptions) => pulumi.ComponentResource> = { NetTuning, NicQueues };

interface PackageSchema {
  name: string;
  version: string;
  resources: Record<string, { properties?: Record<string, unknown> }>;
}

/** The package's root (the directory of its package.json): the source tree, or the built package above dist/. */
function packageRoot(): string {
  let dir = __dirname;
  for (let i = 0; i < 4 && !fs.existsSync(path.join(dir, "package.json")); i++) dir = path.dirname(dir);
  return dir;
}

/** Serves schema.json and constructs the components (pulumi-language-nodejs calls construct for a program's resource). */
export class NetTuningProvider implements pulumi.provider.Provider {
  readonly version: string;
  private readonly schemaText: string;
  private readonly spec: PackageSchema;

  constructor(root: string = packageRoot()) {
    this.schemaText = fs.readFileSync(path.join(root, "schema.json"), "utf8");
    this.spec = JSON.parse(this.schemaText) as PackageSchema;
    this.version = this.spec.version;
  }

  async getSchema(): Promise<string> {
    return this.schemaText;
  }

  async construct(name: string, type: string, inputs: pulumi.Inputs, options: pulumi.ComponentResourceOptions): Promise<pulumi.provider.ConstructResult> {
    const [pkg, mod, cls] = type.split(":");
    const Component = pkg === this.spec.name && (mod === "index" || mod === "") ? COMPONENTS[cls] : undefined;
    const resource = this.spec.resources[type];
    if (!Component || !resource) {
      throw new Error(`${this.spec.name} has no component "${type}": it serves ${Object.keys(this.spec.resources).join(", ")}`);
    }
    const instance = new Component(name, inputs as never, options);
    const state: Record<string, unknown> = {};
    for (const output of Object.keys(resource.properties ?? {})) state[output] = (instance as unknown as Record<string, unknown>)[output];
    return { urn: instance.urn, state };
  }
}
