// `type: github`: Buildbot's GitHubStatusPush (services/master/reporters/kinds/github.ts).
import { statusPush } from './status-push.js';

export const github = statusPush('github');
