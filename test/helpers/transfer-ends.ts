// The master's ends of a file transfer, for tests of both worker protocols: a sink that keeps
// the blocks an upload writes (and notices a block written before the last one was stored),
// and a source that hands a download its bytes a block at a time.

/** Keeps each uploaded block; `overlapped` says whether a write began before the previous ended. */
export function collector() {
  const blocks: Buffer[] = [];
  let writing = 0;
  let overlapped = false;
  return {
    write: async (b: Uint8Array) => {
      if (writing++) overlapped = true;
      blocks.push(Buffer.from(b));
      // Yield, so that a sender that does not wait for this write would start the next one.
      await new Promise((r) => setImmediate(r));
      writing--;
    },
    bytes: () => Buffer.concat(blocks),
    count: () => blocks.length,
    overlapped: () => overlapped,
  };
}

/** Reads `data` on, at most `n` bytes per call, and an empty block at its end. */
export function reader(data: Buffer) {
  let at = 0;
  return async (n: number) => {
    const block = data.subarray(at, at + n);
    at += block.length;
    return block;
  };
}
