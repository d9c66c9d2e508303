/**
 * The live-read limiter (provider/live/ssh.ts): at most n reads in flight, FIFO, a failing read frees its slot, and a
 * read's own clock (its deadline) starts when it runs, not when it is queued. Pure: fake reads on timers; then the
 * real readOverSshLimited against a loopback listener that accepts and never answers (a hung sshd).
 */
import * as net from "net";
import { limiter, LIVE_READ_CONCURRENCY, readOverSshLimited } from "../../provider/live/ssh";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("the process-wide bound is 32", () => {
  expect(LIVE_READ_CONCURRENCY).toBe(32);
});

test("at most n in flight, all finish, started in FIFO order; the deadline starts at dial time", async () => {
  const l = limiter(32);
  let inFlight = 0;
  let max = 0;
  const started: number[] = [];
  const t0 = Date.now();
  // fake reads of 20 ms each, 100 queued at once
  const results = await Promise.all(
    Array.from({ length: 100 }, (_, i) =>
      l.run(async () => {
        const dial = Date.now();
        started.push(i);
        inFlight++;
        max = Math.max(max, inFlight);
        expect(l.inFlight()).toBeLessThanOrEqual(32);
        await sleep(20);
        inFlight--;
        return { i, waited: dial - t0, ran: Date.now() - dial };
      })),
  );
  expect(max).toBe(32);
  expect(started).toEqual(Array.from({ length: 100 }, (_, i) => i));
  expect(results.map((r) => r.i)).toEqual(Array.from({ length: 100 }, (_, i) => i));
  // the 33rd and later waited for a slot, yet each ran its full 20 ms from its own start
  expect(results[99].waited).toBeGreaterThanOrEqual(55);
  for (const r of results) expect(r.ran).toBeGreaterThanOrEqual(15);
  expect(l.inFlight()).toBe(0);
  expect(l.queued()).toBe(0);
});

test("a read that fails or throws frees its slot; its error reaches its caller only", async () => {
  const l = limiter(1);
  const a = l.run(async () => { await sleep(5); throw new Error("refused"); });
  const b = l.run(() => { throw new Error("sync"); });
  const c = l.run(async () => "ok");
  await expect(a).rejects.toThrow("refused");
  await expect(b).rejects.toThrow("sync");
  await expect(c).resolves.toBe("ok");
  expect(l.inFlight()).toBe(0);
});

test("n must be a positive integer", () => {
  expect(() => limiter(0)).toThrow(/not a positive integer/);
});

test("readOverSshLimited: 40 hung hosts, 300 ms bound: 32 dial at once, 8 after; each times out 300 ms after its own dial", async () => {
  const sockets: net.Socket[] = [];
  const accepted: number[] = [];
  const server = net.createServer((s) => {
    sockets.push(s);
    accepted.push(Date.now());
    s.on("error", () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  try {
    const t0 = Date.now();
    const rs = await Promise.all(Array.from({ length: 40 }, () => readOverSshLimited({ host: "127.0.0.1", port }, "true", "", 300)));
    const total = Date.now() - t0;
    for (const r of rs) {
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(/no answer within|Timed out while waiting for handshake/);
      // measured from the dial: a deadline started at queue time would give the last 8 reads ~0 ms of their own
      expect(r.ms).toBeGreaterThanOrEqual(290);
      expect(r.ms).toBeLessThan(1500);
    }
    // 32 dials in the first round, the other 8 only after the first reads timed out
    expect(accepted.filter((t) => t - t0 < 250).length).toBe(32);
    expect(accepted.filter((t) => t - t0 >= 250).length).toBe(8);
    expect(total).toBeGreaterThanOrEqual(590); // two rounds
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  }
});
