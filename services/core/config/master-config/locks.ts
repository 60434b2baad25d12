// Locks (Buildbot's util.MasterLock and util.WorkerLock), named here and taken by builders
// and steps through their `locks` lists:
//   locks:
//     - { name: database, type: master, maxCount: 2 }
//     - { name: cpu, type: worker, maxCount: 1, maxCountForWorker: { big-box: 4 } }
//   builders: [{ ..., locks: [database] }]                      # counting, 1 unit
//   steps: [{ ..., locks: [{ lock: cpu, mode: exclusive }] }]
// A master lock is one semaphore for the whole cluster; a worker lock is one per worker,
// of maxCountForWorker[worker] (else maxCount) units. They hold across every master
// (core/data/locks.ts).
import { z } from 'zod';
import { identifier } from './identifiers.js';

export const lock = z
  .object({
    name: identifier,
    type: z.enum(['master', 'worker']),
    maxCount: z.number().int().min(1).default(1),
    maxCountForWorker: z.record(z.number().int().min(0)).default({}),
  })
  .strict()
  .refine((l) => l.type === 'worker' || Object.keys(l.maxCountForWorker).length === 0, {
    message: 'maxCountForWorker is for worker locks',
  });

/** A builder's or step's access to a lock (Buildbot's lock.access(mode, count)): counting unless `exclusive`. */
export const lockAccess = z.union([
  identifier.transform((name) => ({ lock: name, mode: 'counting' as const, count: 1 })),
  z
    .object({
      lock: identifier,
      mode: z.enum(['counting', 'exclusive']).default('counting'),
      count: z.number().int().min(0).default(1),
    })
    .strict()
    .refine((a) => a.mode === 'counting' || a.count === 1, { message: 'an exclusive access counts 1' }),
]);

export type LockAccessConfig = z.infer<typeof lockAccess>;
