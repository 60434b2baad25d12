// What a control action receives: the JSON-RPC call as http/jsonrpc.ts decoded it. Declared
// here, beside the actions, so that control/ needs nothing from http/.
import type { Match } from '../registry/paths.js';

export interface ActionCall {
  match: Match;
  method: string;
  params: Record<string, unknown>;
  /** Who asks: Buildbot's owner rule (email, username or full name; "anonymous"). */
  owner: string;
}

/** What a resource does with a POST: answer a result, or throw (../errors/catalogue.ts). */
export type ControlHandler = (call: ActionCall) => Promise<unknown>;
