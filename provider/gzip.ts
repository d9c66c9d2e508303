import { gzipSync } from "zlib";

/**
 * gzip at level 9 with a fixed header (mtime 0, OS "Unix"): the same bytes on every machine with the same zlib, so
 * what goes into a child's stdin (and Pulumi state) does not change with the machine that runs the program.
 */
export function gzipFixed(data: Buffer): Buffer {
  const gz = gzipSync(data, { level: 9 });
  gz.writeUInt32LE(0, 4); // header: no mtime
  gz[9] = 3; // header: OS "Unix" on every machine (zlib writes the build platform's code)
  return gz;
}
