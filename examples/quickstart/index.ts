// Quickstart: tune one host given by stack config (host, port, user, privateKey).
//   pulumi config set host 203.0.113.10 && pulumi config set --secret privateKey "$(cat ~/.ssh/id_ed25519)"
//   pulumi preview --diff   # shows the exact sysctl.d file that will be written
//   pulumi up               # applies all-or-nothing;  pulumi destroy  # restores the previous values
import * as pulumi from "@pulumi/pulumi";
import { NetTuning } from "net-tuning";

const config = new pulumi.Config();
const connection = {
  host: config.require("host"),
  port: config.getNumber("port") ?? 22,
  user: config.get("user") ?? "root",
  privateKey: config.requireSecret("privateKey"),
};

const tuning = new NetTuning("quickstart", {
  connection,
  become: connection.user === "root" ? undefined : "sudo",
  sysctls: {
    "net.core.somaxconn": 4096,
    "net.ipv4.tcp_max_syn_backlog": 8192,
    "net.ipv4.tcp_rmem": [4096, 131072, 16777216],
    "net.ipv4.tcp_wmem": [4096, 65536, 16777216],
    "net.ipv4.tcp_fin_timeout": 30,
    "net.ipv4.ip_local_port_range": [10000, 65001], // bounds of different parity, as the kernel prefers
  },
});

export const applied = tuning.applied;
export const previous = tuning.previous;
export const filePath = tuning.filePath;
export const warnings = tuning.warnings;
