// A finished text log of one message (Buildbot's addCompleteLog, type 't'), for the steps
// that write one: a transfer's `stderr`, set_property's `property changes`.
import { addLog, appendLog, finishLog } from '../../../core/data/index.js';
import { logText } from '../line-splitter.js';
import type { StepContext } from './step.js';

/** Adds the log with all its text and finishes it, secrets redacted, compressed as the configuration says. */
export async function completeLog(c: StepContext, name: string, text: string): Promise<void> {
  const clean = logText(c.build.redactor.clean(text));
  // In the step's order of writes: after its command's logs finished (step-writes.ts).
  await c.writes.transact(async (tx) => {
    const logid = await addLog(tx, c.stepid, name, 't');
    await appendLog(tx, logid, clean, { codec: c.deps.codec });
    await finishLog(tx, logid);
  });
}
