// auth.oauth2: Buildbot's OAuth2 logins GitHubAuth, GitLabAuth and GoogleAuth (buildbot/www/
// oauth2.py), by `provider`, with Buildbot's argument names: clientId, the client secret from an
// environment variable or a file, GitHub's serverURL (GitHub Enterprise) and GitLab's
// instanceUri; GitHub's apiVersion (3: REST, 4: GraphQL) and getTeamsMembership (4 only: the
// user's teams as `org/name` and `org/slug` groups). authUri, tokenUri and resourceEndpoint replace the provider's own (a proxy, a
// local test server); each must be https, or http on the loopback interface.
import { z } from 'zod';
import { credentialUrl } from './urls.js';

export const OAUTH2_PROVIDERS = ['github', 'gitlab', 'google'] as const;

export const oauth2 = z
  .object({
    provider: z.enum(OAUTH2_PROVIDERS),
    clientId: z.string().min(1),
    clientSecret_env: z.string().min(1).optional(),
    clientSecret_file: z.string().min(1).optional(),
    serverURL: credentialUrl().optional(),
    instanceUri: credentialUrl().optional(),
    authUri: credentialUrl().optional(),
    tokenUri: credentialUrl().optional(),
    resourceEndpoint: credentialUrl().optional(),
    autologin: z.boolean().default(false),
    apiVersion: z.union([z.literal(3), z.literal(4)]).default(3),
    getTeamsMembership: z.boolean().default(false),
  })
  .strict()
  .refine((o) => (o.clientSecret_env === undefined) !== (o.clientSecret_file === undefined), {
    message: 'expected exactly one of clientSecret_env, clientSecret_file',
  })
  .refine((o) => o.provider !== 'gitlab' || o.instanceUri !== undefined, {
    message: 'GitLab needs instanceUri (https://gitlab.example.org)',
  })
  .refine((o) => o.serverURL === undefined || o.provider === 'github', {
    message: 'serverURL is for GitHub (Enterprise) only',
  })
  .refine((o) => o.instanceUri === undefined || o.provider === 'gitlab', {
    message: 'instanceUri is for GitLab only',
  })
  .refine((o) => o.provider === 'github' || (o.apiVersion === 3 && !o.getTeamsMembership), {
    message: 'apiVersion and getTeamsMembership are for GitHub only',
    path: ['apiVersion'],
  })
  // Buildbot's config error: teams are read through GitHub's GraphQL API only.
  .refine((o) => !o.getTeamsMembership || o.apiVersion === 4, {
    message: 'getTeamsMembership needs apiVersion: 4 (GitHub API v4, GraphQL)',
    path: ['getTeamsMembership'],
  });
