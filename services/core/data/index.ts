// The data operations, one module: each is a function over a transaction (transaction.ts)
// that queues its events, published with Buildbot's routing keys once the transaction commits.
export * from './api-tokens.js';
export * from './artifacts.js';
export * from './audit.js';
export * from './builders.js';
export * from './buildrequests.js';
export * from './builds.js';
export * from './buildsets.js';
export * from './changes.js';
export * from './changesources.js';
export * from './job-runs.js';
export * from './locks.js';
export * from './log-objects.js';
export * from './logs.js';
export * from './masters.js';
export * from './projects.js';
export * from './properties.js';
export * from './report-details.js';
export * from './reporter-deliveries.js';
export * from './schedulers.js';
export * from './sourcestamps.js';
export * from './steps.js';
export * from './superseded.js';
export * from './transaction.js';
export * from './users.js';
export * from './workers.js';
