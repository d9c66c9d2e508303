/**
 * Pulumi mocks for the components' resource-graph unit tests: records every registered resource, and gives each
 * `<name>-apply` Command the report a host program printed as its stdout. Call {@link mockCommands} before the
 * components are imported (they read the runtime settings at import).
 */
import * as pulumi from "@pulumi/pulumi";
import { planValues } from "../provider/sysctl/plan";

export interface Recorded {
  type: string;
  name: string;
  inputs: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * The fixture report as a host would print it for `stdin`'s plan: a NetTuning report lists its originals as values in
 * the order of its plan's keys (previous-values), so for a plan with other keys than the fixture's the mock host
 * answers that every original was "0" (one value per key of that plan); for a plan of the other kind, a report of no
 * setting.
 */
export function reportFor(applyStdout: string, stdin: string): string {
  // a plan of the other kind than the fixture's (a NicQueues in a file about NetTuning): a report of no setting
  if (/^same-as-plan\t1$/m.test(applyStdout) !== /^@kind sysctl$/m.test(stdin)) return "net-tuning-report v1\nend\nhost\tgzip base64";
  const m = /^previous-values\t(.*)$/m.exec(applyStdout);
  if (!m || !/^same-as-plan\t1$/m.test(applyStdout)) return applyStdout;
  const { keys } = planValues(stdin);
  if (m[1].split("\t").length === keys.length) return applyStdout;
  return applyStdout.replace(/^previous-values\t.*$/m, `previous-values\t${keys.map(() => "0").join("\t")}`);
}

export function mockCommands(applyStdout: string, project = "proj", stack = "dev") {
  const resources: Recorded[] = [];
  pulumi.runtime.setMocks(
    {
      newResource(args) {
        resources.push({ type: args.type, name: args.name, inputs: args.inputs });
        const state = { ...args.inputs };
        if (args.type === "command:remote:Command" && args.name.endsWith("-apply")) state.stdout = reportFor(applyStdout, String(args.inputs.stdin ?? ""));
        return { id: `${args.name}-id`, state };
      },
      call: (args) => args.inputs,
    },
    project,
    stack,
    false,
  );
  const byName = (n: string): Recorded => resources.filter((r) => r.name === n).slice(-1)[0];
  /** Registration is asynchronous (inputs resolve first): wait, bounded, until `count` resources named so exist. */
  async function registered(name: string, count = 1): Promise<Recorded> {
    for (let i = 0; i < 200 && resources.filter((r) => r.name === name).length < count; i++) await new Promise((r) => setTimeout(r, 10));
    const r = byName(name);
    if (!r) throw new Error(`${name} was never registered`);
    return r;
  }
  return { resources, byName, registered };
}

/** The value of an Output; rejects when an apply throws (apply() alone would swallow it). */
export function promiseOf<T>(o: pulumi.Output<T>): Promise<T> {
  return (o as unknown as { promise(): Promise<T> }).promise();
}

/**
 * Lets the components' last asynchronous work (warnings logged from inside Outputs) finish before the file ends: jest
 * fails a run that logs after its tests are done. Call at the top level of a test file that uses the mocks.
 */
export function settleAfterAll(ms = 300): void {
  afterAll(() => new Promise<void>((resolve) => setTimeout(resolve, ms)));
}
