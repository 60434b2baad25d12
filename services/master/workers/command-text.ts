// What a worker says during a transfer or another command that is not a shell command (its
// stderr and header text: buildbot-worker's "Cannot open file ..." for a path not there) is
// kept in the master's memory until the command ends, then goes into the step's log. A worker
// runs someone else's code and can say as much as it likes while the command runs, so the
// master keeps the start of it, and says how much more it dropped.

/**
 * The most kept, in UTF-16 code units (so at most 128 KiB of memory a command). What a
 * worker says about a transfer is a line or two (buildbot_worker/commands/transfer.py, and
 * Flotilla's agent, services/worker/transfer.ts); 64 Ki leaves room for a traceback.
 */
export const MAX_COMMAND_TEXT = 64 * 1024;

/** Text kept up to MAX_COMMAND_TEXT; past it, a line saying how many characters were dropped. */
export function commandText() {
  let text = '';
  let dropped = 0;
  return {
    add(t: string): void {
      const room = MAX_COMMAND_TEXT - text.length;
      if (dropped === 0 && t.length <= room) {
        text += t;
        return;
      }
      // Once cut, the rest is dropped: the kept text is the start, without gaps. A surrogate
      // pair is kept whole or not at all, so the text stays well-formed.
      let cut = dropped === 0 ? room : 0;
      if (cut > 0 && /[\uD800-\uDBFF]/.test(t[cut - 1]!)) cut--;
      text += t.slice(0, cut);
      dropped += t.length - cut;
    },
    text: () =>
      dropped === 0
        ? text
        : `${text}\n[the worker said ${dropped} more characters; the master kept the first ${MAX_COMMAND_TEXT}]\n`,
  };
}
