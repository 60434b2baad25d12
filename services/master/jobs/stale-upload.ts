// A multipart upload a move left open when its master died mid-upload (streamed-put.ts):
// its parts are invisible but kept, and billed, until aborted. A move keeps its upload's id
// in its job's data as the upload opens; the job's next run (another master, once the dead
// one's lock lapses) aborts it before it starts its own. A live master aborts its own on any
// failure; this covers the one that could not. (A bucket lifecycle rule aborting incomplete
// uploads after a day is the backstop for what neither reaches: docs/object-store.md.)
import type { Job } from 'bullmq';
import type { ObjectStore } from '../../core/objstore/client.js';
import type { OpenUpload } from '../../core/objstore/streamed-put.js';

export interface WithUpload {
  /** The multipart upload the last run opened (not cleared: aborting twice is harmless). */
  upload?: OpenUpload;
}

/** Aborts the upload a previous run of this job left open, if any. */
export async function abortStaleUpload(store: ObjectStore, job: Job<WithUpload>): Promise<void> {
  const upload = job.data.upload;
  if (upload) await store.abortMultipartUpload(upload.key, upload.uploadId);
}

/** What putStreamed tells of an upload it opens: kept in the job for its next run. */
export const keepUploadIn =
  <D extends WithUpload>(job: Job<D>) =>
  (upload: OpenUpload): Promise<void> =>
    job.updateData({ ...job.data, upload });
