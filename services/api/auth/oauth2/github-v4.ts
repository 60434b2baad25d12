// Buildbot's GitHubAuth with apiVersion=4: the user is read through GitHub's GraphQL API (a
// POST of {"query": ...} to <api>/graphql, or <serverURL>/api/graphql on GitHub Enterprise):
// `viewer { email login name organizations(first: 100) { edges { node { login } } } }`; the
// groups are the organizations' logins. With getTeamsMembership, one more query asks each
// organization for the teams the user is in (`teams(first: 100, userLogins: [<login>])`), and
// each team adds the groups `<org>/<name>` and `<org>/<slug>` (Buildbot: the form GitHub's
// @org/team mentions use), sorted, after the organizations. An organization that answers null
// (its OAuth App access restrictions hide its teams) adds none. As Buildbot, the first 100
// organizations and teams of each only.
// Where we differ: Buildbot names each organization's field after its login with the
// characters GraphQL refuses made `_` (a login that starts with a digit makes the query
// invalid); here the fields are `org0`, `org1`, ... which GraphQL always takes; the strings
// are quoted as GraphQL strings, never pasted raw.
import type { UserInfo } from '../session.js';
import { type ApiPost, isObject, text } from './provider.js';

const VIEWER = `query {
  viewer {
    email
    login
    name
    organizations(first: 100) {
      edges {
        node {
          login
        }
      }
    }
  }
}`;

/** The `data` of a GraphQL answer; throws when there is none (GitHub's `errors` alone). */
function dataOf(answer: unknown): Record<string, unknown> {
  const data = isObject(answer) ? answer.data : undefined;
  if (!isObject(data)) throw new Error('GitHub GraphQL: the answer has no data');
  return data;
}

/** The `node`s of a connection's `edges`. */
function nodes(connection: unknown, what: string): unknown[] {
  const edges = isObject(connection) ? connection.edges : undefined;
  if (!Array.isArray(edges)) throw new Error(`GitHub GraphQL: ${what} has no edges`);
  return edges.map((e) => (isObject(e) ? e.node : undefined));
}

function teamsQuery(orgs: string[], login: string): string {
  const fields = orgs.map(
    (org, i) => `  org${i}: organization(login: ${JSON.stringify(org)}) {
    teams(first: 100, userLogins: [${JSON.stringify(login)}]) {
      edges {
        node {
          name
          slug
        }
      }
    }
  }`,
  );
  return `query getOrgTeamMembership {\n${fields.join('\n')}\n}`;
}

export async function githubV4User(post: ApiPost, endpoint: string, teams: boolean): Promise<UserInfo> {
  const viewer = dataOf(await post(endpoint, { query: VIEWER })).viewer;
  const username = text(viewer, 'login', 'GitHub GraphQL viewer');
  const orgs = nodes(isObject(viewer) ? viewer.organizations : undefined, 'viewer.organizations').map((n) =>
    text(n, 'login', 'GitHub GraphQL organization'),
  );
  const groups = [...orgs];
  if (teams && orgs.length > 0) {
    const data = dataOf(await post(endpoint, { query: teamsQuery(orgs, username) }));
    const found = new Set<string>();
    orgs.forEach((org, i) => {
      const answer = data[`org${i}`];
      if (answer === null || answer === undefined) return;
      for (const team of nodes(isObject(answer) ? answer.teams : undefined, `${org}'s teams`)) {
        found.add(`${org}/${text(team, 'name', 'GitHub GraphQL team')}`);
        found.add(`${org}/${text(team, 'slug', 'GitHub GraphQL team')}`);
      }
    });
    groups.push(...[...found].sort());
  }
  const str = (key: string) => (isObject(viewer) && typeof viewer[key] === 'string' ? viewer[key] : null);
  return { full_name: str('name'), email: str('email'), username, groups };
}
