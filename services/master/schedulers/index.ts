// The schedulers a master runs: SchedulerManager decides which (ownership) and runs them.
export { CronError, cronMatches, nextCronTime, parseCron } from './cron.js';
export {
  busSubscription,
  SchedulerManager,
  type SchedulerManagerOptions,
  type Subscribe,
  schedulerConfigProblems,
} from './manager.js';
