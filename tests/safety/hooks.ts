/**
 * The lab's fault-injection hooks (testkit/lab-engine.sh, an overlay of the lab's build of the engine; the package's
 * engine has only inert step markers): they act when the root-owned file /etc/pulumi-net-tuning-test-hooks exists.
 * Lab hosts have a private /etc, so a hook never reaches the machine. Importing this module makes the components of
 * the importing test file deliver the lab's engine (testkit/labEngine.ts).
 */
import type { LabHost } from "../../testkit/lab";
import { useLabEngine } from "../../testkit/labEngine";

useLabEngine();

export const HOOKS = "/etc/pulumi-net-tuning-test-hooks";

export async function run(host: LabHost, cmd: string): Promise<string> {
  const r = await host.exec(cmd);
  if (r.code !== 0) throw new Error(`${cmd} failed on ${host.name}: ${r.stderr}`);
  return r.stdout;
}

/** Writes the hook file (root, 0644); an empty list removes it. */
export async function setHooks(host: LabHost, lines: string[]): Promise<void> {
  if (!lines.length) return clearHooks(host);
  const body = lines.map((l) => `${l}\n`).join("");
  const r = await host.exec(`cat > ${HOOKS}.new && chmod 0644 ${HOOKS}.new && chown 0:0 ${HOOKS}.new && mv -f ${HOOKS}.new ${HOOKS}`, { stdin: body });
  if (r.code !== 0) throw new Error(`setHooks: ${r.stderr}`);
}
export async function clearHooks(host: LabHost): Promise<void> {
  await run(host, `rm -f ${HOOKS} /run/nt-hold /run/nt-paused`);
}

/** Makes the next `pause-after-step` wait (until release) and clears an old pause marker. */
export async function hold(host: LabHost): Promise<void> {
  await run(host, "rm -f /run/nt-paused; : > /run/nt-hold");
}
export async function release(host: LabHost): Promise<void> {
  await run(host, "rm -f /run/nt-hold");
}
/** Waits (bounded, 20 s) until a run sits in its pause; returns the paused program's pid. */
export async function waitPaused(host: LabHost): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const r = await host.exec("cat /run/nt-paused 2>/dev/null");
    if (r.code === 0 && /^\d+$/.test(r.stdout.trim())) return Number(r.stdout.trim());
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`no host program paused on ${host.name}`);
}
/** Waits (bounded, 30 s) until no host program of ours runs on the host. */
export async function waitNoProgram(host: LabHost): Promise<void> {
  for (let i = 0; i < 300; i++) {
    // the installed engine (apply) or a restore program unpacked into the bootstrap's private directory
    if ((await host.exec("pgrep -f 'pulumi-net-tuning/engine-[0-9a-f]*\\.sh|net-tuning-in\\..*/p'")).code !== 0) return;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`a host program still runs on ${host.name}`);
}
