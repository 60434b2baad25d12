// Waiting for something to finish, for a bounded time: a stopping process gives its running
// builds, or its last events, so long and then goes on without them.

/** True if `p` settled within `ms` (its rejection counts as settled); false if the time ran out first. */
export async function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const out = await Promise.race([
    p.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return out;
}
