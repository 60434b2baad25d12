// The schedulers a master runs: SchedulerManager decides which (ownership) and runs them.
export { CronError, cronMatches, nextCronTime, parseCron } from './cron.js';
export { SchedulerManager, type SchedulerManagerOptions, schedulerConfigProblems } from './manager.js';
