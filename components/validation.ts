/**
 * Checks shared by NetTuning and NicQueues for the arguments that are not part of a plan (`become`, `persist`,
 * `restoreOnDelete`), untyped JavaScript and other languages included, and the one error both components raise:
 * an {@link InputError} listing every problem that is also a `pulumi.InputPropertiesError` (property paths), so the
 * engine shows it per property when the component is served to Python, Go, C# or YAML.
 */
import * as pulumi from "@pulumi/pulumi";
import { hostKeyProblem } from "../provider/live/hostKey";
import { InputError, Problem, problemAt, problemsAt } from "../provider/errors";
import { levenshtein } from "../provider/sysctl/validate";

/**
 * How the SSH user gets root on the host. `"sudo"`: the commands run under `sudo -n` (never prompts);
 * `"none"`: the SSH user must be root.
 */
export const Become = {
  /** Run the host programs under `sudo -n` (never prompts). */
  Sudo: "sudo",
  /** Run them as the SSH user, which must be root (the default). */
  None: "none",
} as const;
/** A value of {@link Become}: `"sudo"` or `"none"`. */
export type Become = (typeof Become)[keyof typeof Become];

/** Problems with `become` and the boolean arguments, each naming the property and the fix. */
export function commonProblems(values: { become?: unknown; booleans: Record<string, unknown> }): Problem[] {
  const problems: Problem[] = [];
  const b = values.become;
  if (b !== undefined && b !== null && b !== "sudo" && b !== "none") {
    problems.push(problemAt("become", `become ${JSON.stringify(b)} is not supported: use "sudo" (runs sudo -n, never prompts) or "none" (the SSH user is root); doas, su and others are not supported`));
  }
  for (const [name, v] of Object.entries(values.booleans)) {
    if (v !== undefined && v !== null && typeof v !== "boolean") {
      problems.push(problemAt(name, `${name} ${JSON.stringify(v)} must be true or false (a boolean, not a string or number)`));
    }
  }
  return problems;
}

/**
 * Problems for arguments a component does not take (a typo, untyped JavaScript, a spread of unrelated options): each
 * would otherwise be dropped without a word. The closest argument name is suggested (same letters in another case, at
 * most 2 edits apart, or one name starting with the other: txqueuelen → txQueueLength).
 */
export function unknownArgProblems(args: object, known: readonly string[]): Problem[] {
  return Object.keys(args)
    .filter((k) => !known.includes(k))
    .map((k) => {
      const lower = k.toLowerCase();
      const near =
        known.find((n) => n.toLowerCase() === lower) ??
        known.find((n) => levenshtein(lower, n.toLowerCase(), 2) <= 2) ??
        known.find((n) => Math.min(n.length, k.length) >= 5 && (n.toLowerCase().startsWith(lower) || lower.startsWith(n.toLowerCase())));
      return problemAt(k, `${k} is not an argument of this resource, so it would be ignored: ${near ? `did you mean ${near}?` : "remove it"} (the arguments: ${known.join(", ")})`);
    });
}

/**
 * Problems with `connection` the component can see (the provider checks the rest): missing, not an object, without a
 * plain `host` string, or without any way to log in (loginProblems). A connection that is an Output as a whole is left
 * to the provider.
 */
export function connectionProblems(c: unknown): Problem[] {
  const shape = "{ host, port, user, privateKey or password } (the @pulumi/command remote connection)";
  if (c === undefined || c === null) return [problemAt("connection", `connection is required: the SSH connection of the host, ${shape}`)];
  if (pulumi.Output.isInstance(c) || c instanceof Promise) return [];
  if (typeof c !== "object" || Array.isArray(c)) return [problemAt("connection", `connection ${JSON.stringify(c)} must be an object ${shape}`)];
  const h = (c as { host?: unknown }).host;
  if (pulumi.Output.isInstance(h) || h instanceof Promise) return [];
  if (typeof h !== "string" || h.trim() === "") return [problemAt("connection.host", `connection.host ${h === undefined ? "is missing" : `${JSON.stringify(h)} is not a host name or address`}: set it to the host's name or IP address`)];
  return loginProblems(c as Record<string, unknown>, "connection");
}

/**
 * A connection (or its `proxy`) with no way to log in: no `privateKey`, `password` or `agentSocketPath`, and no
 * SSH_AUTH_SOCK in the environment (the command provider and the live read fall back to that agent). The SSH login
 * would fail on the host at `up`; the preview refuses it instead. A field given as an Output (a secret from config)
 * counts as given; an empty string does not. A plain `hostKey` that is not an SSH public key is a problem too.
 */
function loginProblems(c: Record<string, unknown>, path: string): Problem[] {
  const given = (v: unknown) => (typeof v === "string" ? v !== "" : v !== undefined && v !== null);
  const problems: Problem[] = [];
  const agentFromEnv = (process.env.SSH_AUTH_SOCK ?? "") !== "";
  if (!given(c.privateKey) && !given(c.password) && !given(c.agentSocketPath) && !agentFromEnv) {
    problems.push(problemAt(path,
      `${path} has no privateKey, password or agentSocketPath (and SSH_AUTH_SOCK is not set), so the SSH login would fail on the host: ` +
        `set ${path}.privateKey (e.g. config.requireSecret("sshKey")), ${path}.password, or ${path}.agentSocketPath (an ssh-agent socket)`,
    ));
  }
  // a hostKey @pulumi/command cannot parse fails every Command at `up`: refused here (issue #32)
  problems.push(...problemsAt(`${path}.hostKey`, hostKeyProblem(`${path}.hostKey`, c.hostKey)));
  const p = c.proxy;
  if (typeof p === "object" && p !== null && !Array.isArray(p) && !pulumi.Output.isInstance(p) && !(p instanceof Promise)) {
    problems.push(...loginProblems(p as Record<string, unknown>, `${path}.proxy`));
  }
  return problems;
}

/** `become` as the host command wiring takes it (`"sudo"` or none). */
export function becomeOf(b: unknown): "sudo" | undefined {
  return b === "sudo" ? "sudo" : undefined;
}

/**
 * One error for every problem: an InputError (message and `problems`) that the provider host reports per property,
 * with each problem's own path.
 */
export function inputError(resource: string, problems: readonly Problem[]): InputError {
  const e = new InputError(resource, problems) as InputError & { errors: pulumi.InputPropertyErrorDetails[] };
  e.errors = problems.map((p) => ({ propertyPath: p.path, reason: p.message }));
  // Marks the error as a pulumi.InputPropertiesError (that is how the SDK recognises one) without losing InputError,
  // and as a pulumi.RunError: the Node.js runner then prints the message without a stack trace, once (it reports an
  // error object once however many promises it rejected).
  Object.defineProperty(e, "__pulumiInputPropertiesError", { value: true, enumerable: false });
  Object.defineProperty(e, "__pulumiRunError", { value: true, enumerable: false });
  // The SDK prefixes the message of an error that rejects an input with the property it was serializing, once per
  // Output it passes through ('error serializing property "stdin": error serializing property "remotePath": …'): the
  // message stays the resource's own (the property paths are in `errors`).
  const message = e.message;
  Object.defineProperty(e, "message", { get: () => message, set: () => undefined, enumerable: false, configurable: true });
  return e;
}

/** Problems of a thrown InputError, or rethrows anything else (a bug must not read as bad input). */
export function problemsOf(fn: () => void): Problem[] {
  try {
    fn();
    return [];
  } catch (e) {
    if (e instanceof InputError) return [...e.details];
    throw e;
  }
}
