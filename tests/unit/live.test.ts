/** The comparator per read-back form that the live read, drift, adoption and the audit share (provider/sysctl/readback.ts). */
import { readbackForm, sameValue } from "../../provider/sysctl/readback";

describe("sameValue: one comparator per key form", () => {
  test("whitespace-insensitive for multi-value keys", () => {
    expect(sameValue("net.ipv4.tcp_rmem", "4096\t131072\t6291456", "4096 131072  6291456")).toBe(true);
    expect(sameValue("net.ipv4.tcp_rmem", "4096\t131072\t6291456", "4096 131072 6291457")).toBe(false);
  });
  test("power-of-2 keys: the kernel's rounding is not a difference; 0 stays 0", () => {
    expect(readbackForm("net.core.rps_sock_flow_entries")).toBe("pow2");
    expect(sameValue("net.core.rps_sock_flow_entries", "32768", "20000")).toBe(true);
    expect(sameValue("net.core.rps_sock_flow_entries", "16384", "20000")).toBe(false);
    expect(sameValue("net.core.rps_sock_flow_entries", "0", "0")).toBe(true);
  });
  test("millisecond-jiffies keys: 250 written reads back 252 at HZ=250, which is the same", () => {
    expect(readbackForm("net.ipv4.tcp_invalid_ratelimit")).toBe("msJiffies");
    expect(sameValue("net.ipv4.tcp_invalid_ratelimit", "252", "250")).toBe(true);
    expect(sameValue("net.ipv4.tcp_invalid_ratelimit", "260", "250")).toBe(false);
    expect(sameValue("net.ipv4.tcp_invalid_ratelimit", "248", "250")).toBe(false);
    expect(sameValue("net.core.somaxconn", "4097", "4096")).toBe(false);
  });
});
