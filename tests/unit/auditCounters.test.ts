/**
 * The counter reader (provider/audit/counters.ts, issue #33): parsers on text captured from a lab host (kernel 6.18,
 * ethtool 6.1) right after a listener with backlog 1 took a burst of 40 connects and 3 client sockets were closed
 * (TIME_WAIT); and the rendered sh run for real under dash and busybox sh on this machine.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import { COUNTER_CATALOGUE, counterDeltas, counterDoc, headlineCounters, parseCounters, parseEthtoolStats, parseProcPairs, parseSoftnet, renderCounterSh } from "../../provider/audit/counters";
import { auditProgram, parseAudit } from "../../provider/audit/program";

/** renderCounterSh(["eth0"]) run as root inside a lab host (testkit/lab), verbatim. */
const CAPTURED = `@@counters netstat
TcpExt: SyncookiesSent SyncookiesRecv SyncookiesFailed EmbryonicRsts PruneCalled RcvPruned OfoPruned OutOfWindowIcmps LockDroppedIcmps ArpFilter TW TWRecycled TWKilled PAWSActive PAWSEstab BeyondWindow TSEcrRejected PAWSOldAck PAWSTimewait DelayedACKs DelayedACKLocked DelayedACKLost ListenOverflows ListenDrops TCPHPHits TCPPureAcks TCPHPAcks TCPRenoRecovery TCPSackRecovery TCPSACKReneging TCPSACKReorder TCPRenoReorder TCPTSReorder TCPFullUndo TCPPartialUndo TCPDSACKUndo TCPLossUndo TCPLostRetransmit TCPRenoFailures TCPSackFailures TCPLossFailures TCPFastRetrans TCPSlowStartRetrans TCPTimeouts TCPLossProbes TCPLossProbeRecovery TCPRenoRecoveryFail TCPSackRecoveryFail TCPRcvCollapsed TCPBacklogCoalesce TCPDSACKOldSent TCPDSACKOfoSent TCPDSACKRecv TCPDSACKOfoRecv TCPAbortOnData TCPAbortOnClose TCPAbortOnMemory TCPAbortOnTimeout TCPAbortOnLinger TCPAbortFailed TCPMemoryPressures TCPMemoryPressuresChrono TCPSACKDiscard TCPDSACKIgnoredOld TCPDSACKIgnoredNoUndo TCPSpuriousRTOs TCPMD5NotFound TCPMD5Unexpected TCPMD5Failure TCPSackShifted TCPSackMerged TCPSackShiftFallback TCPBacklogDrop PFMemallocDrop TCPMinTTLDrop TCPDeferAcceptDrop IPReversePathFilter TCPTimeWaitOverflow TCPReqQFullDoCookies TCPReqQFullDrop TCPRetransFail TCPRcvCoalesce TCPOFOQueue TCPOFODrop TCPOFOMerge TCPChallengeACK TCPSYNChallenge TCPFastOpenActive TCPFastOpenActiveFail TCPFastOpenPassive TCPFastOpenPassiveFail TCPFastOpenListenOverflow TCPFastOpenCookieReqd TCPFastOpenBlackhole TCPSpuriousRtxHostQueues BusyPollRxPackets TCPAutoCorking TCPFromZeroWindowAdv TCPToZeroWindowAdv TCPWantZeroWindowAdv TCPSynRetrans TCPOrigDataSent TCPHystartTrainDetect TCPHystartTrainCwnd TCPHystartDelayDetect TCPHystartDelayCwnd TCPACKSkippedSynRecv TCPACKSkippedPAWS TCPACKSkippedSeq TCPACKSkippedFinWait2 TCPACKSkippedTimeWait TCPACKSkippedChallenge TCPWinProbe TCPKeepAlive TCPMTUPFail TCPMTUPSuccess TCPDelivered TCPDeliveredCE TCPAckCompressed TCPZeroWindowDrop TCPRcvQDrop TCPWqueueTooBig TCPFastOpenPassiveAltKey TcpTimeoutRehash TcpDuplicateDataRehash TCPDSACKRecvSegs TCPDSACKIgnoredDubious TCPMigrateReqSuccess TCPMigrateReqFailure TCPPLBRehash TCPAORequired TCPAOBad TCPAOKeyNotFound TCPAOGood TCPAODroppedIcmps
TcpExt: 0 0 0 0 0 0 0 0 0 0 3 0 0 0 0 0 0 0 0 1 0 0 76 76 0 10 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 38 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 38 8 0 0 0 0 0 0 0 0 0 0 0 0 0 0 13 0 0 0 0 0 0 38 0 0 0 0 0 0 0 0 0 0 0
IpExt: InNoRoutes InTruncatedPkts InMcastPkts OutMcastPkts InBcastPkts OutBcastPkts InOctets OutOctets InMcastOctets OutMcastOctets InBcastOctets OutBcastOctets InCsumErrors InNoECTPkts InECT1Pkts InECT0Pkts InCEPkts ReasmOverlaps
IpExt: 0 0 0 0 0 0 6560 6449 0 0 0 0 0 112 0 0 0 0
MPTcpExt: MPCapableSYNRX MPCapableSYNTX MPCapableSYNACKRX MPCapableACKRX MPCapableFallbackACK MPCapableFallbackSYNACK MPCapableSYNTXDrop MPCapableSYNTXDisabled MPCapableEndpAttempt MPFallbackTokenInit MPTCPRetrans MPJoinNoTokenFound MPJoinSynRx MPJoinSynBackupRx MPJoinSynAckRx MPJoinSynAckBackupRx MPJoinSynAckHMacFailure MPJoinAckRx MPJoinAckHMacFailure MPJoinRejected MPJoinSynTx MPJoinSynTxCreatSkErr MPJoinSynTxBindErr MPJoinSynTxConnectErr DSSNotMatching DSSCorruptionFallback DSSCorruptionReset InfiniteMapTx InfiniteMapRx DSSNoMatchTCP DataCsumErr OFOQueueTail OFOQueue OFOMerge NoDSSInWindow DuplicateData AddAddr AddAddrTx AddAddrTxDrop EchoAdd EchoAddTx EchoAddTxDrop PortAdd AddAddrDrop MPJoinPortSynRx MPJoinPortSynAckRx MPJoinPortAckRx MismatchPortSynRx MismatchPortAckRx RmAddr RmAddrDrop RmAddrTx RmAddrTxDrop RmSubflow MPPrioTx MPPrioRx MPFailTx MPFailRx MPFastcloseTx MPFastcloseRx MPRstTx MPRstRx SubflowStale SubflowRecover SndWndShared RcvWndShared RcvWndConflictUpdate RcvWndConflict MPCurrEstab Blackhole MPCapableDataFallback MD5SigFallback DssFallback SimultConnectFallback FallbackFailed WinProbe
MPTcpExt: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
@@counters snmp
Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams InUnknownProtos InDiscards InDelivers OutRequests OutDiscards OutNoRoutes ReasmTimeout ReasmReqds ReasmOKs ReasmFails FragOKs FragFails FragCreates OutTransmits
Ip: 2 64 112 0 0 0 0 0 112 111 0 0 0 0 0 0 0 0 0 111
Icmp: InMsgs InErrors InCsumErrors InDestUnreachs InTimeExcds InParmProbs InSrcQuenchs InRedirects InEchos InEchoReps InTimestamps InTimestampReps InAddrMasks InAddrMaskReps OutMsgs OutErrors OutRateLimitGlobal OutRateLimitHost OutDestUnreachs OutTimeExcds OutParmProbs OutSrcQuenchs OutRedirects OutEchos OutEchoReps OutTimestamps OutTimestampReps OutAddrMasks OutAddrMaskReps
Icmp: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors
Tcp: 1 200 120000 -1 43 6 0 4 0 112 73 38 0 7 0
Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
Udp: 0 0 0 0 0 0 0 0 0
UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
UdpLite: 0 0 0 0 0 0 0 0 0
@@counters softnet
000d3c44 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 0000c228 00000000 00000000 00000000 00000000 00000000
000e3e85 00000000 00000001 00000000 00000000 00000000 00000000 00000000 00000000 00005d8a 00000000 00000000 00000001 00000000 00000000
@@counters timewait
3
0
@@counters conntrack
0
262144
@@counters ethtool eth0
NIC statistics:
     peer_ifindex: 917
     rx_queue_0_xdp_packets: 0
     rx_queue_0_xdp_bytes: 0
     rx_queue_0_drops: 0
     rx_queue_0_xdp_redirect: 0
     rx_queue_0_xdp_drops: 0
     rx_queue_0_xdp_tx: 0
     rx_queue_0_xdp_tx_errors: 0
     rx_queue_1_xdp_packets: 0
     rx_queue_1_xdp_bytes: 0
     rx_queue_1_drops: 0
     rx_queue_1_xdp_redirect: 0
     rx_queue_1_xdp_drops: 0
     rx_queue_1_xdp_tx: 0
     rx_queue_1_xdp_tx_errors: 0
     rx_queue_2_xdp_packets: 0
     rx_queue_2_xdp_bytes: 0
     rx_queue_2_drops: 0
     rx_queue_2_xdp_redirect: 0
     rx_queue_2_xdp_drops: 0
     rx_queue_2_xdp_tx: 0
     rx_queue_2_xdp_tx_errors: 0
     rx_queue_3_xdp_packets: 0
     rx_queue_3_xdp_bytes: 0
     rx_queue_3_drops: 0
     rx_queue_3_xdp_redirect: 0
     rx_queue_3_xdp_drops: 0
     rx_queue_3_xdp_tx: 0
     rx_queue_3_xdp_tx_errors: 0
     tx_queue_0_xdp_xmit: 0
     tx_queue_0_xdp_xmit_errors: 0
     tx_queue_1_xdp_xmit: 0
     tx_queue_1_xdp_xmit_errors: 0
     tx_queue_2_xdp_xmit: 0
     tx_queue_2_xdp_xmit_errors: 0
     tx_queue_3_xdp_xmit: 0
     tx_queue_3_xdp_xmit_errors: 0
@@counters end
`;

describe("parseCounters on captured text", () => {
  const c = parseCounters(CAPTURED);

  it("names every field of /proc/net/netstat and /proc/net/snmp Group.Field, with its value", () => {
    expect(c["TcpExt.ListenOverflows"]).toBe(76);
    expect(c["TcpExt.ListenDrops"]).toBe(76);
    expect(c["TcpExt.TW"]).toBe(3);
    expect(c["Tcp.RetransSegs"]).toBe(38);
    expect(c["Tcp.OutSegs"]).toBe(73);
    expect(c["Tcp.MaxConn"]).toBe(-1);
    expect(c["IpExt.InOctets"]).toBe(6560);
    expect(c["Udp.RcvbufErrors"]).toBe(0);
    expect(c["Udp.SndbufErrors"]).toBe(0);
    // every field: as many names as the files have fields
    const fields = CAPTURED.split("\n").filter((l) => /^\w+: [A-Za-z]/.test(l)).reduce((n, l) => n + l.trim().split(/\s+/).length - 1, 0);
    expect(Object.keys(c).filter((k) => /^[A-Z]\w*\./.test(k) && !k.startsWith("ethtool.")).length).toBe(fields);
  });

  it("sums softnet_stat's hex columns over CPUs; counts TIME_WAIT from tcp and tcp6; conntrack fill", () => {
    expect(c["softnet.processed"]).toBe(0x000d3c44 + 0x000e3e85);
    expect(c["softnet.dropped"]).toBe(0);
    expect(c["softnet.time_squeeze"]).toBe(1);
    expect(c["sockets.timeWait"]).toBe(3);
    expect(c["conntrack.count"]).toBe(0);
    expect(c["conntrack.max"]).toBe(262144);
    expect(c["conntrack.fill"]).toBe(0);
  });

  it("names ethtool -S statistics ethtool.<iface>.<name>", () => {
    expect(c["ethtool.eth0.rx_queue_0_drops"]).toBe(0);
    expect(c["ethtool.eth0.peer_ifindex"]).toBeGreaterThan(0);
    const lines = CAPTURED.split("@@counters ethtool eth0\n")[1].split("@@counters end")[0].split("\n").filter((l) => /^\s+\S.*: \d+$/.test(l));
    expect(Object.keys(c).filter((k) => k.startsWith("ethtool.eth0.")).length).toBe(lines.length);
  });

  it("every catalogue counter that is not per interface is read from the captured text, and each has its doc", () => {
    for (const d of COUNTER_CATALOGUE) {
      expect(d.reference).not.toBe("");
      if (!d.name.includes("<iface>")) expect(c[d.name]).toBeDefined();
    }
    expect(counterDoc("ethtool.eno1.rx_no_buffer_count")?.name).toBe("ethtool.<iface>.rx_no_buffer");
    expect(counterDoc("ethtool.eno1.rx_missed_errors")?.name).toBe("ethtool.<iface>.rx_missed");
    expect(counterDoc("Tcp.RetransSegs")?.source).toBe("/proc/net/snmp");
    expect(headlineCounters(c)).toMatchObject({ "TcpExt.ListenOverflows": 76, "softnet.dropped": 0, "sockets.timeWait": 3, "conntrack.fill": 0 });
  });

  it("an absent source gives no names; a mismatched header/value pair is skipped", () => {
    const noConntrack = parseCounters(CAPTURED.replace(/@@counters conntrack\n0\n262144\n/, ""));
    expect(noConntrack["conntrack.fill"]).toBeUndefined();
    expect(noConntrack["TcpExt.ListenOverflows"]).toBe(76);
    expect(parseProcPairs("Tcp: RtoAlgorithm RtoMin\nUdp: 1 2\n")).toEqual({});
    expect(parseSoftnet("")).toEqual({});
    expect(parseEthtoolStats("lo", "no stats available\n")).toEqual({});
  });

  it("counterDeltas: counters as after − before, gauges as the level after", () => {
    const after = { ...c, "TcpExt.ListenOverflows": 80, "sockets.timeWait": 1 };
    expect(counterDeltas(c, after)).toMatchObject({ "TcpExt.ListenOverflows": 4, "Tcp.RetransSegs": 0, "sockets.timeWait": 1, "conntrack.fill": 0 });
  });

  it("refuses an interface name that is not one", () => {
    expect(() => renderCounterSh(["eth0; rm -rf /"])).toThrow(/invalid interface name/);
  });
});

describe.each(["/bin/dash", "/usr/bin/busybox"])("the rendered sh under %s on this machine", (shell) => {
  const argv = shell.endsWith("busybox") ? ["sh", "-s"] : ["-s"];
  it("the counter reader prints every source and parses to the catalogue's names", () => {
    const r = spawnSync(shell, argv, { input: renderCounterSh("all"), encoding: "utf8" });
    expect(r.status).toBe(0);
    const c = parseCounters(r.stdout);
    for (const name of ["TcpExt.ListenOverflows", "Tcp.RetransSegs", "Udp.RcvbufErrors", "softnet.dropped", "softnet.time_squeeze", "sockets.timeWait"]) expect(Number.isInteger(c[name])).toBe(true);
    const cpus = fs.readFileSync("/proc/net/softnet_stat", "utf8").trim().split("\n").length;
    expect(cpus).toBeGreaterThan(0);
  });

  it("the whole audit program runs and parses (values as the files read)", () => {
    const program = auditProgram();
    const r = spawnSync(shell, argv, { input: program, encoding: "utf8", env: { PATH: "/usr/bin:/bin" } });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const f = parseAudit(r.stdout);
    expect(f.kernel).toBe(require("os").release());
    expect(f.sysctls["net.ipv4.tcp_rmem"]).toBe(fs.readFileSync("/proc/sys/net/ipv4/tcp_rmem", "utf8").trim().split(/\s+/).join(" "));
    expect(f.sysctls["net.core.somaxconn"]).toBe(fs.readFileSync("/proc/sys/net/core/somaxconn", "utf8").trim());
    expect(f.cpus).toBe(require("os").cpus().length);
    expect(f.counters["softnet.processed"]).toBeGreaterThan(0);
  });
});
