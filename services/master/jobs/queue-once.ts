// One job per thing (a log to move, an artifact to move): queued under its own id, so a
// second add while it waits or runs is nothing; one that failed for good is not replaced by
// add(), so it is retried instead, with its attempts afresh.
import type { Queue } from 'bullmq';

export async function queueOnce<D>(queue: Queue<D>, name: string, data: D, jobId: string): Promise<void> {
  // BullMQ's name and data types are inferred from the queue; ours are plain.
  await (queue as unknown as Queue).add(name, data, { jobId });
  const job = await queue.getJob(jobId);
  if (job && (await job.isFailed())) {
    await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true }).catch(() => {
      // Retried by someone else meanwhile: queued, which is what we want.
    });
  }
}
