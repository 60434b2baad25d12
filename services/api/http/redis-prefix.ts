// The prefix of every Redis key the API pods keep (rate limits, login throttling, sessions):
// one constant, so the operator's commands (services/api/auth-cli.ts) find the pods' keys.
export const REDIS_KEY_PREFIX = 'flotilla:';
