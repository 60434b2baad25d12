// Counting warnings in a command's output, as Buildbot's WarningCountingShellCommand does
// (buildbot/steps/shell.py, 3.7): every line of the `stdio` log, whatever its stream (the
// worker's header lines too), is looked at once stored. A line that directoryEnterPattern
// finds pushes the directory its group 1 names; one that directoryLeavePattern finds (with a
// directory pushed) pops it; any other that warningPattern matches at its start is a warning,
// unless a suppression covers it: a suppression's file expression matches (at its start) the
// warning's file, joined under the directories pushed; its warning expression is found in the
// warning's text; its line range holds the warning's line. Lines longer than 16384 characters
// are not looked at (Buildbot's LogLineObserver drops them).
//
// Buildbot keeps every warning line in memory to write the `warnings (N)` log at the end (its
// name has the count). A command that prints without end would fill the master's memory, so
// at most MAX_KEPT_BYTES of them are kept; past that they are still counted, and the log ends
// with a line saying how many were not kept. 4 MiB holds 40,000 warnings of 100 characters.
import type { OutputStream } from '../../../core/protocol/messages.js';
import { matchAtStart, pythonRegExp } from '../../../core/python-regex.js';

export const MAX_KEPT_BYTES = 4 * 1024 * 1024;
const MAX_LINE = 16384;

export interface Suppression {
  file: RegExp | null;
  warning: RegExp | null;
  start: number | null;
  end: number | null;
}

export interface CounterOptions {
  warningPattern: string;
  warningExtractor: 'whole_line' | 'regexp_groups';
  directoryEnterPattern: string;
  directoryLeavePattern: string;
}

export class WarningCounter {
  count = 0;
  private readonly kept: string[] = [];
  private keptBytes = 0;
  private readonly directories: string[] = [];
  private readonly suppressions: Suppression[] = [];
  private readonly pattern: RegExp;
  private readonly enter: RegExp;
  private readonly leave: RegExp;

  constructor(private readonly o: CounterOptions) {
    this.pattern = pythonRegExp(o.warningPattern, 'y');
    this.enter = pythonRegExp(o.directoryEnterPattern);
    this.leave = pythonRegExp(o.directoryLeavePattern);
  }

  suppress(list: readonly Suppression[]): void {
    this.suppressions.push(...list);
  }

  /** One stored line of the `stdio` log. */
  line(_stream: OutputStream, line: string): void {
    if (line.length > MAX_LINE) return;
    const entered = this.enter.exec(line);
    if (entered) {
      this.directories.push(entered[1] ?? '');
      return;
    }
    if (this.directories.length && this.leave.test(line)) {
      this.directories.pop();
      return;
    }
    const match = matchAtStart(this.pattern, line);
    if (match && !this.suppressed(line, match)) this.add(line);
  }

  private suppressed(line: string, match: RegExpExecArray): boolean {
    if (!this.suppressions.length) return false;
    let [file, lineNo, text] =
      this.o.warningExtractor === 'regexp_groups'
        ? [match[1] ?? null, match[2] !== undefined ? Number.parseInt(match[2], 10) : null, match[3] ?? '']
        : [null, null, line];
    if (file && this.directories.length) file = `${this.directories.join('/')}/${file}`;
    return this.suppressions.some(
      (s) =>
        (file === null || s.file === null || matchAtStart(s.file, file) !== null) &&
        (s.warning === null || s.warning.test(text)) &&
        (s.start === null || s.end === null || (lineNo !== null && s.start <= lineNo && lineNo <= s.end)),
    );
  }

  private add(line: string): void {
    this.count++;
    const bytes = Buffer.byteLength(line) + 1;
    if (this.keptBytes + bytes > MAX_KEPT_BYTES) return;
    this.keptBytes += bytes;
    this.kept.push(line);
  }

  /** The `warnings (N)` log's text: the warning lines, each ended by a newline. */
  logText(): string {
    const missing = this.count - this.kept.length;
    const note = missing ? [`(${missing} more warnings not kept: over ${MAX_KEPT_BYTES} bytes)`] : [];
    return `${[...this.kept, ...note].join('\n')}\n`;
  }
}

// Buildbot's suppression file: blank lines and # comments skipped; others
// `FILE-RE : WARN-RE [: START[-END]]` (START alone is that one line).
const COMMENT_OR_EMPTY = /^\s*(#.*)?$/;
const SUPPRESSION_LINE = /^\s*(.+?)\s*:\s*(.+?)\s*(?:[:]\s*([0-9]+)(?:-([0-9]+))?\s*)?$/;

/** A suppression file's text as suppressions; throws SyntaxError for an expression with no JavaScript form. */
export function parseSuppressions(text: string): Suppression[] {
  const out: Suppression[] = [];
  for (const line of text.split('\n')) {
    if (COMMENT_OR_EMPTY.test(line)) continue;
    const m = SUPPRESSION_LINE.exec(line);
    if (!m) continue;
    const start = m[3] !== undefined ? Number.parseInt(m[3], 10) : null;
    const end = m[4] !== undefined ? Number.parseInt(m[4], 10) : start;
    out.push({ file: pythonRegExp(m[1]!), warning: pythonRegExp(m[2]!), start, end });
  }
  return out;
}
