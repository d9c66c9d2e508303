// A safe rollout for a fleet (docs/safe-rollout.md, "Rollout"): one NetTuning per server, applied to a canary first,
// then in three waves. Each host watches its own listen-queue counters for `soakSeconds` after the change and rolls it
// back itself when they rise (the verify gate); a host that refuses, fails or rolls back does not fail `pulumi up`,
// it is counted: after each wave, a budget check counts the failures of the whole fleet so far and halts the rollout
// (fails `up`, later waves untouched) once they exceed `maxFailures`. Each `up` runs the failed hosts again; set
// `resume` to the id the halt printed to go on past it.
//
//   pulumi config set --path 'servers[0]' 203.0.113.21     # the canary
//   pulumi config set --path 'servers[1]' 203.0.113.22     # … the rest, in rollout order
//   pulumi config set --secret privateKey "$(cat ~/.ssh/id_ed25519)"
//   pulumi preview --diff && pulumi up
import * as pulumi from "@pulumi/pulumi";
import { NetTuning, rollout } from "net-tuning";

const config = new pulumi.Config();
const servers = config.requireObject<string[]>("servers");
const port = config.getNumber("port") ?? 22;
const user = config.get("user") ?? "root";
const privateKey = config.requireSecret("privateKey");
const somaxconn = config.getNumber("somaxconn") ?? 4096;
const maxFailures = config.get("maxFailures") ?? "10%";

const fleet = rollout(
  servers,
  {
    canary: 1,
    // three waves after the canary, whatever the fleet's size (a share of it, rounded up)
    waveSize: "34%",
    maxFailures: /^[0-9]+$/.test(maxFailures) ? Number(maxFailures) : maxFailures,
    bakeSeconds: config.getNumber("bakeSeconds") ?? 300,
    resume: config.get("resume"),
  },
  // the host's resources, created with ctx.opts (the wave's dependency on the previous budget check)
  (address, ctx) =>
    new NetTuning(
      `web-${address}`,
      {
        connection: { host: address, port, user, privateKey },
        become: user === "root" ? undefined : "sudo",
        sysctls: { "net.core.somaxconn": somaxconn, "net.ipv4.tcp_max_syn_backlog": 2 * somaxconn },
        // kept only when the listen queues do not overflow more during the soak than before it
        verify: { soakSeconds: config.getNumber("soakSeconds") ?? 60, maxIncrease: { "TcpExt.ListenOverflows": 0, "TcpExt.ListenDrops": 0 } },
      },
      ctx.opts,
    ),
);

/** The servers wave by wave (the canary first). */
export const waves = fleet.waves;
/** Each server's status: applied, refused, failed, rolledBack or unconfirmed. */
export const statuses = fleet.statuses;
/** The servers applied, and the others with their host's message. */
export const summary = fleet.summary;
