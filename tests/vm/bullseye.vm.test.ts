/** The VM tier on Debian 11 (bullseye): kernel 5.10, procps 3.3.17 (sysctl -w exits 0 on failure), ethtool 5.9. See suites.ts. */
import { debianSuite } from "./suites";

debianSuite("bullseye", {
  debianVersion: /^11\./,
  kernel: /^5\.10\./,
  procps: /^sysctl from procps-ng 3\.3\.17$/,
  ethtool: /^ethtool version 5\.9$/,
  missingKey: "net.ipv4.tcp_plb_enabled", // Linux 6.2
});
