// nodemailer and nunjucks, loaded the first time a reporter needs one (a mail reporter's
// transport, a message formatter's template), not with the master's code: a master whose
// configuration has no reporters, or none of those, never loads them. Both are CommonJS, so
// a synchronous require does: reporters are made synchronously, in the configuration's check
// (config-check.ts), where a bad template or credential must fail the start.
//
// Measured, CPU of a fresh process importing the master's compiled code (node 26, load 10-17,
// five alternating rounds of 9-15 imports each; 2026-11-28 22:51-22:53 UTC):
//   node node_modules/typescript/bin/tsc -p tsconfig.build.json
//   node_modules/.bin/node --import tsx load/fleet/import-cpu.ts
// both loaded: medians 456-682 ms (median of the five 608), fastest 434 ms; loaded here:
// 413-558 ms (500), fastest 377 ms. About a tenth of the import, in a loaded machine's noise.
import { createRequire } from 'node:module';
import type Nodemailer from 'nodemailer';
import type Nunjucks from 'nunjucks';

const require = createRequire(import.meta.url);
let nunjucks: typeof Nunjucks | undefined;

export function loadNunjucks(): typeof Nunjucks {
  if (!nunjucks) {
    nunjucks = require('nunjucks') as typeof Nunjucks;
    nunjucks.installJinjaCompat();
  }
  return nunjucks;
}

export const loadNodemailer = (): typeof Nodemailer => require('nodemailer') as typeof Nodemailer;
