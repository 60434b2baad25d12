// The owner and repository a git URL names, for the forges' status APIs (Buildbot's
// giturlparse, whose unit tests list the forms): https://host/owner/repo.git,
// ssh://git@host:2222/owner/repo, git@host:owner/repo.git, git://host/owner/repo; a GitLab
// subgroup stays in the owner (`group/sub`). Anything else (a local path) names none.
const GIT_URL =
  /^(?:https?:\/\/|ssh:\/\/|git:\/\/)?(?:[^@]*@)?[^/:]+(?::(?:\d+\/)?|\/)(?:(?<owner>.+)\/)?(?<repo>[^/]+?)(?:\.git)?$/;

export interface GitRepoName {
  owner: string;
  repo: string;
}

export function gitRepoName(url: string): GitRepoName | null {
  const m = GIT_URL.exec(url);
  const owner = m?.groups?.owner;
  const repo = m?.groups?.repo;
  return owner && repo ? { owner, repo } : null;
}
