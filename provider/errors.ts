/**
 * One problem of a resource's input: the message (names the input, the value and the fix) and the argument it is
 * about, as a property path (`rings.rx`, `sysctls["net.core.somaxconn"]`, `profiles[1].name`; "" = the resource as
 * a whole). Made where the path is known, so nothing reads it back out of the message: the components report it to
 * the engine per property (pulumi.InputPropertiesError), which other languages show beside the argument.
 */
export interface Problem {
  readonly path: string;
  readonly message: string;
}

/** A {@link Problem}. */
export function problemAt(path: string, message: string): Problem {
  return { path, message };
}

/** Problems about one argument (`path`), from messages that already name it. */
export function problemsAt(path: string, messages: readonly string[]): Problem[] {
  return messages.map((m) => problemAt(path, m));
}

/**
 * An error in what the user declared, found before anything on a host changes.
 * `problems` lists every problem found (not just the first), each naming the input, the value and the fix;
 * `details` the same with the property path of each ("" where the thrower has none: the sizing helpers' own options).
 */
export class InputError extends Error {
  readonly problems: string[];
  readonly details: readonly Problem[];
  constructor(resource: string, problems: readonly (string | Problem)[]) {
    const details = problems.map((p) => (typeof p === "string" ? problemAt("", p) : p));
    super(
      `${resource}: ${details.length} invalid input${details.length === 1 ? "" : "s"}:\n` +
        details.map((p) => `  - ${p.message}`).join("\n"),
    );
    this.name = "InputError";
    this.problems = details.map((p) => p.message);
    this.details = details;
  }
}
