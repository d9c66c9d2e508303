/**
 * The API docs build without warnings (TypeDoc with warnings as errors, as `npm run docs`) and show only the public
 * API: exactly what index.ts exports, with the landing page, and none of the internals (planNic, tryParseBytes, …).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO, run } from "./freshClone";

test("typedoc: 0 warnings, the landing page, and exactly the public API", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "net-tuning-docs-"));
  try {
    const json = path.join(tmp, "api.json");
    const out = run(process.execPath, [path.join(REPO, "node_modules/typedoc/bin/typedoc"), "--options", "typedoc.json", "--treatWarningsAsErrors", "--out", path.join(tmp, "html"), "--json", json], {
      cwd: REPO,
      timeout: 300_000,
    });
    expect(out).not.toMatch(/warning|error/i);
    const api = JSON.parse(fs.readFileSync(json, "utf8"));
    // A const enum (Become, BootOverride, Persistence) is listed twice: the object and its type.
    const names = [...new Set<string>((api.children ?? []).map((c: { name: string }) => c.name))].sort();
    expect(names).toEqual(
      [
        "NetTuning", "NetTuningArgs", "BootOverride", "NicQueues", "NicQueuesArgs", "NicRings", "NicChannels", "NicCoalesce", "NicRps", "NicIrqAffinity",
        "Persistence", "Become", "ProfileSpec", "PresetSpec", "ProfileName", "PresetName", "GuardAction", "longFatFlows", "manySmallFlows", "webServer", "database", "proxyGateway", "nvmeTcpLatency",
        "nvmeTcpThroughput", "GuardOptions", "FlowOptions", "NvmeThroughputOptions", "combine", "SysctlProfile", "SysctlValue", "VerifyArgs", "Verification", "VerificationReading", "ConfirmArgs", "rollout", "Rollout", "RolloutOptions", "RolloutContext", "RolloutSummary", "HostStatus", "nicPresets", "throughput",
        "lowLatency", "NicPreset", "NicPresetName", "bdp", "BdpArgs", "Bandwidth", "Rtt", "ByteSize", "CATALOGUE", "REJECTED_KEYS", "CatalogueEntry",
        "RejectedKey", "InputError", "Problem", "NicSettingsValues", "NicRingsValues", "NicChannelsValues", "NicCoalesceValues", "NicRpsValues",
        "NicIrqAffinityValues", "NicSettingsArgs", "SysctlRule", "RuleCondition", "KeyRef",
      ].sort(),
    );
    const index = fs.readFileSync(path.join(tmp, "html/index.html"), "utf8");
    expect(index).toContain("net-tuning API reference");
    for (const internal of ["planNic", "renderNicRestoreStdin", "tryParseBytes", "validateSysctls", "planSysctls", "NicPresetSchema"]) expect(names).not.toContain(internal);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}, 320_000);
