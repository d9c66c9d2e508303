import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { PACKAGE_VERSION } from "../version";
import { HOST_KINDS, type HostKind, KINDS, STATE_ROOT } from "../kinds";

/**
 * The host engine: ONE POSIX sh file holding the shared runtime, every kind and the entry point, delivered once per
 * host and version by a `command:remote:CopyToRemote` child and installed under its content hash (see ARCHITECTURE.md,
 * "One engine per host"). This module assembles the file from `sh/` (deterministic: the same sources give the same
 * bytes and hash on every machine) and finds or writes it on disk for the FileAsset.
 */
const SH_DIR = path.join(__dirname, "sh");
/** Where the engine file lives next to this module: dist/provider/host/engine (built) or provider/host/engine (source). */
export const ENGINE_DIR = path.join(__dirname, "engine");
/** Root-owned install directory on the host (0755, files 0644 root). */
export const ENGINE_INSTALL_DIR = "/usr/local/lib/pulumi-net-tuning";
/**
 * World-readable record of the last successful apply per owner (runtime.sh NT_CONVERGED_DIR, which nt_converged_write
 * creates root's and 0755 when missing), read by the live read without sudo.
 */
export const CONVERGED_DIR = "/var/lib/pulumi-net-tuning-converged";
/** Staging directory for the SFTP copy when connected as root (SFTP writes as the SSH user, no sudo). */
export const ENGINE_STAGE_ROOT = `${STATE_ROOT}/incoming`;
/** Staging directory relative to the SSH user's home (SFTP relative paths are home-relative) for become "sudo". */
export const ENGINE_STAGE_HOME = ".cache/pulumi-net-tuning";

export interface Engine {
  version: string;
  sha256: string;
  text: string;
  /** File name on the host: `engine-<sha256>.sh`. */
  fileName: string;
  /**
   * File name in ENGINE_DIR (the FileAsset's path, stored twice per host in Pulumi state): `e-<version>-<16 hex of
   * the sha256>.sh`. The asset's own hash is the whole sha256.
   */
  localName: string;
}


/**
 * A kind's text wrapped in its loader function (`nt_kind_<kind>`; main.sh and the live read call the one named by
 * KIND): both kinds define the same hook names. `text` ends with a newline.
 */
export function kindLoader(kind: HostKind, text: string): string {
  return `nt_kind_${kind}() {\n${text}:\n}\n`;
}

/** After the sysctl loader: a sysctl run other than the live read dispatches there (and exits). */
const SYSCTL_EARLY = `if [ "$NT_ENGINE_KIND" = sysctl ] && [ "$NT_ENGINE_OP" != live ]; then nt_engine_main; exit; fi\n`;

function read(name: string, dir: string): string {
  const t = fs.readFileSync(path.join(dir, name), "utf8");
  return t.endsWith("\n") ? t : `${t}\n`;
}

/**
 * Assembles the engine from the sh sources in `dir` (default: the package's own): prelude, runtime.sh, counters.sh (the
 * verify gate's reader, generated from provider/counters/sources.ts), main.sh (the
 * dispatch, a function), the sysctl kind, the sysctl dispatch, the nic kind, the dispatch of everything else. Kind
 * files are wrapped in loader functions because both define the same hook names (kind_get, kind_set, ...); main.sh
 * calls the one named by KIND. `overlay`: sh text placed after the runtime and counters.sh, before main.sh (the lab's
 * fault-injection build, testkit/labEngine.ts, redefines the runtime's inert step markers there); the package's
 * engine has none.
 */
export function assembleEngine(dir: string = SH_DIR, version: string = PACKAGE_VERSION, overlay = ""): Engine {
  const prelude =
    `#!/bin/sh\n# pulumi-net-tuning ${version} host engine (generated from provider/host/sh by provider/host/engine.ts; do not edit)\n` +
    `# shellcheck disable=SC2317 # functions are called indirectly (hooks, traps, kind loaders)\n` +
    `NT_ENGINE_KIND=\${1:-}\nNT_ENGINE_OP=\${2:-}\n` +
    // only a restore takes arguments 3 to 5 on (the bootstrap's private directory, the SSH user's staging directory,
    // the delivery token)
    `if [ $# -ge 2 ] && [ "$2" = restore ]; then shift 2; else set --; fi\n`;
  const [sysctl, nic] = HOST_KINDS.map((k) => kindLoader(k, KINDS[k].engineFiles.map((f) => read(f, dir)).join("")));
  // main.sh defines nt_engine_main; a sysctl run (not "live") starts it before the nic kind is reached, so the shell
  // never parses that text (dash parses each function definition as it reaches it); everything else after both kinds
  const extra = overlay && !overlay.endsWith("\n") ? `${overlay}\n` : overlay;
  const text = `${prelude}${read("runtime.sh", dir)}${read("counters.sh", dir)}${extra}${read("main.sh", dir)}${sysctl}${SYSCTL_EARLY}${nic}nt_engine_main; exit\n`;
  const sha256 = createHash("sha256").update(text).digest("hex");
  return { version, sha256, text, fileName: `engine-${sha256}.sh`, localName: `e-${version.replace(/[^A-Za-z0-9.-]/g, "_")}-${sha256.slice(0, 16)}.sh` };
}

let cached: Engine | undefined;
/** The engine the components deliver: this package's (assembled once per process), unless {@link useEngine} set one. */
export function engine(): Engine {
  cached ??= assembleEngine();
  return cached;
}
/** For tests and tools: make the components deliver `e` (e.g. another version's engine); no argument = this package's. */
export function useEngine(e?: Engine): void {
  cached = e;
}

/**
 * Path of an engine file on this machine, for the FileAsset. Built packages ship it (npm run build writes it into
 * dist/provider/host/engine); from the source tree (ts-node, jest) it is written on first use. The path is not
 * part of any diff (the engine compares assets by hash only), so it may differ between machines and checkouts.
 */
const checked = new Set<string>();
export function enginePath(e: Engine = engine(), dir: string = ENGINE_DIR): string {
  const file = path.join(dir, e.localName);
  if (checked.has(file)) return file;
  try {
    if (fs.readFileSync(file, "utf8") === e.text) {
      checked.add(file);
      return file;
    }
  } catch {
    /* absent: write it */
  }
  fs.mkdirSync(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, e.text, { mode: 0o644 });
  fs.renameSync(tmp, file);
  checked.add(file);
  return file;
}

/** The one line of the plan that names the engine: `@engine <version> <sha256>` (first line of the apply's stdin). */
export function engineLine(e: Engine = engine()): string {
  return `@engine ${e.version} ${e.sha256}`;
}
