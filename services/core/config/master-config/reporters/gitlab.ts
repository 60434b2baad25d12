// `type: gitlab`: Buildbot's GitLabStatusPush (services/master/reporters/kinds/gitlab.ts).
import { statusPush } from './status-push.js';

export const gitlab = statusPush('gitlab');
