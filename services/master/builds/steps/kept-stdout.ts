// What a command wrote to stdout, kept in the master's memory for the step that asked (a
// set_property's value, a glob's matches, git's answers). A worker runs someone else's code,
// and that code can write without end: each caller names the most it keeps, and past it
// keeps none, since a value cut short would be a wrong one used silently.

/** Keeps text up to `max` bytes (UTF-8; none with max unset); past it, none of it. */
export function keeper(max: number | undefined) {
  const parts: string[] = [];
  let bytes = 0;
  let tooLong = false;
  return {
    add(text: string): void {
      if (max === undefined || tooLong) return;
      bytes += Buffer.byteLength(text);
      if (bytes > max) {
        tooLong = true;
        parts.length = 0;
      } else parts.push(text);
    },
    text: () => parts.join(''),
    get tooLong() {
      return tooLong;
    },
  };
}
