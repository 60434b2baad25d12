// A command's output as runCommand hands it over, kept per stream.
import type { Stream } from '../../services/worker/command.js';

export function collect() {
  const parts: [Stream, string][] = [];
  return {
    on: (s: Stream, t: string) => parts.push([s, t]),
    /** Everything written to `s`, in order. */
    text: (s: Stream) =>
      parts
        .filter(([x]) => x === s)
        .map(([, t]) => t)
        .join(''),
  };
}
