/** The VM tier on Debian 13 (trixie): kernel 6.12, procps 4.0.4, ethtool 6.14. See suites.ts. */
import { debianSuite } from "./suites";

debianSuite("trixie", {
  debianVersion: /^13\./,
  kernel: /^6\.12\./,
  procps: /^sysctl from procps-ng 4\.0\.4$/,
  ethtool: /^ethtool version 6\.14/,
  missingKey: "net.ipv4.tcp_rto_max_ms", // Linux 6.15
});
