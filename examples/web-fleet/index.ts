// Scenario B: a fleet of high-concurrency web servers (Nginx/Tomcat; the web guide's host: 32 cores, 64 GB, 10G).
//
// Each server's tuning is declared next to the server itself: its connection is built from the server's outputs
// (address, SSH key), and it depends on the server, so Pulumi tunes a server only once it exists, re-tunes a
// replacement server, and restores the old values first when a server moves to another address.
//
// `Server` below is a stand-in for your cloud provider's instance (aws.ec2.Instance, gcp.compute.Instance,
// hcloud.Server, …): it only hands out the address and key given in config. Replace it and keep the rest.
//
//   pulumi config set --path 'servers[0]' 203.0.113.21
//   pulumi config set --path 'servers[1]' 203.0.113.22
//   pulumi config set --secret privateKey "$(cat ~/.ssh/id_ed25519)"
//   pulumi config set memory 64GB            # optional: scales tcp_mem to the servers' memory
//   pulumi preview --diff && pulumi up
import * as pulumi from "@pulumi/pulumi";
import { CATALOGUE, NetTuning, webServer } from "net-tuning";

const config = new pulumi.Config();

/** Stand-in for a cloud instance: the outputs a real provider's server resource has. */
class Server extends pulumi.ComponentResource {
  /** Address the server is reached at over SSH. */
  public readonly publicIp: pulumi.Output<string>;
  /** Private key of the server's SSH key pair (a secret). */
  public readonly privateKey: pulumi.Output<string>;
  /** SSH port and user of the image. */
  public readonly sshPort: pulumi.Output<number>;
  public readonly sshUser: pulumi.Output<string>;

  constructor(name: string, args: { address: string; port: number; user: string; privateKey: pulumi.Input<string> }, opts?: pulumi.ComponentResourceOptions) {
    super("example:index:Server", name, {}, opts);
    this.publicIp = pulumi.output(args.address);
    this.privateKey = pulumi.secret(args.privateKey);
    this.sshPort = pulumi.output(args.port);
    this.sshUser = pulumi.output(args.user);
    this.registerOutputs({ publicIp: this.publicIp, sshPort: this.sshPort, sshUser: this.sshUser });
  }
}

const addresses = config.requireObject<string[]>("servers");
const port = config.getNumber("port") ?? 22;
const user = config.get("user") ?? "root";
const privateKey = config.requireSecret("privateKey");
const become = user === "root" ? undefined : ("sudo" as const);

// The web guide's web template: backlogs 65535, TIME_WAIT reuse and buckets, keepalive 600/60/3, buffers 4096 87380/65536
// 16777216, tcp_mem scaled to `memory` when given, conntrack 1000000 (fs.file-max deliberately not set: see warnings).
const memory = config.get("memory");
let profile = webServer(memory ? { memory } : undefined);

// Inside containers or network namespaces the host-wide keys (net.core.rmem_max/wmem_max, tcp_mem, nf_conntrack_max…)
// are absent or read-only: with `hostWideKeys: false` only the per-namespace keys are set (the host's own
// tuning must then set the others).
if (config.getBoolean("hostWideKeys") === false) {
  const dropped = Object.keys(profile.sysctls).filter((k) => CATALOGUE[k]?.scope !== "netns");
  profile = {
    ...profile,
    name: `${profile.name} (per-namespace keys only)`,
    sysctls: Object.fromEntries(Object.entries(profile.sysctls).filter(([k]) => !dropped.includes(k))),
    rationale: Object.fromEntries(Object.entries(profile.rationale).filter(([k]) => !dropped.includes(k))),
    warnings: [...profile.warnings, `hostWideKeys is false: not set here (host-wide): ${dropped.join(", ")}`],
  };
}

const fleet = addresses.map((address, i) => {
  const name = `web-${i + 1}`;
  const server = new Server(name, { address, port, user, privateKey });
  const tuning = new NetTuning(
    `${name}-tuning`,
    {
      connection: { host: server.publicIp, port: server.sshPort, user: server.sshUser, privateKey: server.privateKey },
      become,
      profile,
    },
    { dependsOn: [server] },
  );
  return { name, server, tuning };
});

export const servers = fleet.map((f) => f.server.publicIp);
export const applied = pulumi.all(Object.fromEntries(fleet.map((f) => [f.name, f.tuning.applied])));
export const previous = pulumi.all(Object.fromEntries(fleet.map((f) => [f.name, f.tuning.previous])));
export const warnings = fleet[0]?.tuning.warnings ?? [];
