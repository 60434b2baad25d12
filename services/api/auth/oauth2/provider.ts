// What each OAuth2 provider is (github.ts, gitlab.ts, google.ts): where the browser is sent to
// consent, where the code is exchanged, and how the user's info is read with the access token.
import type { UserInfo } from '../session.js';

/** A GET on the provider's API with the access token; the JSON of a 2xx answer, else throws. */
export type ApiGet = (path: string) => Promise<unknown>;

/** A JSON POST to an absolute URL with the access token; the JSON of a 2xx answer, else throws. */
export type ApiPost = (url: string, body: unknown) => Promise<unknown>;

export interface Provider {
  /** The name and icon the web UI shows (Buildbot's name and faIcon). */
  name: string;
  faIcon: string;
  authUri: string;
  tokenUri: string;
  resourceEndpoint: string;
  /** Buildbot's authUriAdditionalParams. */
  authParams: Record<string, string>;
  /** How the API is given the token. */
  authorization(token: string): string;
  userInfo(get: ApiGet, post: ApiPost): Promise<UserInfo>;
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A string field of an API answer; throws naming it otherwise. */
export function text(o: unknown, key: string, what: string): string {
  const v = isObject(o) ? o[key] : undefined;
  if (typeof v !== 'string') throw new Error(`${what}: ${key} is not a string`);
  return v;
}

/** The `key` of each object of a list answer. */
export function names(list: unknown, key: string, what: string): string[] {
  if (!Array.isArray(list)) throw new Error(`${what} is not a list`);
  return list.map((o) => text(o, key, what));
}
