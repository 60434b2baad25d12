// What warning_counting_shell, compile and test do (Buildbot's WarningCountingShellCommand.run):
// read the suppressions (suppressionList, then suppressionFile from the worker: a file that
// cannot be read fails the step before the command runs, with no log, as Buildbot's
// getFileContentFromWorker with abandonOnFailure), run the command counting warnings in its
// `stdio` log (warnings.ts), then add the `warnings (N)` log when there were any, add N to
// the build's `warnings-count` property (source WarningCountingShellCommand), and end with
// the command's results made WARNINGS by any warning, FAILURE past maxWarnCount.
//
// Buildbot's Test sets no `tests-*` properties: tests-total, tests-passed, tests-failed and
// tests-warnings are statistics its subclasses' parsers set (setTestResults), never
// properties, and Test itself sets none, so its summary is `test`, as here.
import { posix } from 'node:path';
import { builderDir, type StepConfig } from '../../../core/config/master-config.js';
import { setBuildProperty } from '../../../core/data/index.js';
import { pythonRegExp } from '../../../core/python-regex.js';
import { Results, worst } from '../../../core/results.js';
import { commandSummary, stepSummary } from '../summary.js';
import { renderCommand, runCommand } from './command.js';
import { completeLog } from './complete-log.js';
import type { StepContext, StepKind, StepOutcome } from './step.js';
import { StepLogs } from './step-logs.js';
import { parseSuppressions, WarningCounter } from './warnings.js';

type WarningStep = Extract<StepConfig, { type: 'warning_counting_shell' | 'compile' | 'test' }>;

/** The most of a suppression file read (Buildbot reads all of it); past it the step fails. */
export const MAX_SUPPRESSION_FILE = 1024 * 1024;

/** The suppression file's text, or why the step ends without running its command. */
async function readSuppressionFile(
  c: StepContext<WarningStep>,
  file: string,
  signal: AbortSignal,
): Promise<string | StepOutcome> {
  const blocks: Uint8Array[] = [];
  let bytes = 0;
  const end = await c.build.worker
    .upload(
      {
        path: posix.join(builderDir(c.build.builder), c.step.workdir ?? 'build', file),
        maxsize: MAX_SUPPRESSION_FILE,
        blocksize: 32 * 1024,
      },
      async (block) => {
        bytes += block.length;
        if (bytes > MAX_SUPPRESSION_FILE)
          throw new Error(`suppression file over ${MAX_SUPPRESSION_FILE} bytes`);
        blocks.push(block);
      },
      signal,
    )
    .catch(() => ({ rc: 1, text: '' }));
  if ('lost' in end)
    return { results: Results.RETRY, summary: stepSummary(c.text, Results.RETRY), workerLost: end.reason };
  if (end.rc !== 0) return { results: Results.FAILURE, summary: stepSummary(c.text, Results.FAILURE) };
  return Buffer.concat(blocks).toString('utf8');
}

async function runCounting(c: StepContext<WarningStep>, signal: AbortSignal): Promise<StepOutcome> {
  const { step } = c;
  const counter = new WarningCounter(step);
  if (step.suppressionList)
    counter.suppress(
      step.suppressionList.map(([file, warning, start, end]) => ({
        file: file === null ? null : pythonRegExp(file),
        warning: warning === null ? null : pythonRegExp(warning),
        start,
        end,
      })),
    );
  if (step.suppressionFile !== undefined) {
    const text = await readSuppressionFile(c, c.render(step.suppressionFile), signal);
    if (typeof text !== 'string') return text;
    try {
      counter.suppress(parseSuppressions(text));
    } catch (err) {
      if (!(err instanceof SyntaxError)) throw err;
      await completeLog(c, 'err.text', `suppression file ${step.suppressionFile}: ${err.message}`);
      return { results: Results.EXCEPTION, summary: stepSummary(c.text, Results.EXCEPTION) };
    }
  }
  const logs = new StepLogs(c);
  const r = await runCommand(c, signal, renderCommand(step.command, c.render), {
    logs,
    observe: (stream, line) => counter.line(stream, line),
  });
  if (r.workerLost) {
    await logs.finish();
    return { results: r.results, summary: stepSummary(c.text, r.results), workerLost: r.workerLost };
  }
  if (counter.count)
    await (await logs.open(`warnings (${counter.count})`, 't')).write('o', counter.logText());
  await logs.finish();
  const before = c.props['warnings-count']?.[0];
  const total = (typeof before === 'number' ? before : 0) + counter.count;
  await c.writes.transact((tx) =>
    setBuildProperty(tx, c.build.buildid, 'warnings-count', total, 'WarningCountingShellCommand'),
  );
  let results = r.results;
  if (step.maxWarnCount !== undefined && counter.count > step.maxWarnCount)
    results = worst(results, Results.FAILURE);
  else if (counter.count) results = worst(results, Results.WARNINGS);
  return { results, summary: stepSummary(c.text, results) };
}

/** A warning-counting kind; Buildbot names its steps `generic`, `compile` and `test`. */
export function warningCounting<C extends WarningStep>(defaultName: string): StepKind<C> {
  return {
    defaultName,
    // Buildbot's ShellMixin: the command as rendered, unless descriptionDone (compile's, test's).
    describe: (step, render) => commandSummary(renderCommand(step.command, render)),
    run: (c, signal) => runCounting(c as StepContext<WarningStep>, signal),
  };
}
