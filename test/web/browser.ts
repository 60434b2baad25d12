// Debian's Chromium (installed by npm test: deploy/local/lib.sh's ensure_browser), driven by
// playwright-core, headless, with the flags this machine's closed network needs (without
// the background-networking ones Chromium keeps calling out and is refused).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Browser, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM = '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core on the page as it is: serious and critical violations fail the test, with what
 * and where. Evaluated through the DevTools protocol, which the page's CSP does not govern
 * (an injected <script> would be refused, as it should be).
 */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  await page.evaluate(`${axeSource}\n;0`);
  const violations = (await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] }).then(r => r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map(n => n.target.join(' ')) })))`,
  )) as {
    id: string;
    impact: string;
    help: string;
    nodes: string[];
  }[];
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad, `${what}: ${JSON.stringify(bad, null, 1)}`).toEqual([]);
}

/** Everything a page says it was refused or failed at: CSP violations, script errors. */
export function watchPage(page: Page): { problems: string[]; apiRequests: string[] } {
  const problems: string[] = [];
  const apiRequests: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.hostname !== '127.0.0.1') problems.push(`request outside: ${r.url()}`);
    if (u.pathname.startsWith('/api/v2/') && r.method() === 'GET') apiRequests.push(u.pathname + u.search);
  });
  return { problems, apiRequests };
}

// The collections of the REST API: a read of one of these must name a limit.
const COLLECTIONS = new Set([
  'builders',
  'builds',
  'steps',
  'logs',
  'buildrequests',
  'buildsets',
  'changes',
  'workers',
  'masters',
  'forceschedulers',
  'schedulers',
  'data',
  'sourcestamps',
  'changesources',
  'change_builds',
]);

/** The reads that asked for a whole collection (no limit): there must be none. */
export function unpagedReads(urls: readonly string[]): string[] {
  return urls.filter((u) => {
    const url = new URL(u, 'http://x');
    const last = url.pathname.split('/').at(-1)!;
    return COLLECTIONS.has(last) && !url.searchParams.has('limit');
  });
}

/**
 * How a page that lists changes read their builds (issue 34 §3): `perChange`, the reads of
 * one change's builds each (`/changes/N/builds`), which must be none; `batched`, the reads of
 * a page of changes' builds at once (`/change_builds`); `total`, every API read.
 */
export function changeBuildReads(urls: readonly string[]): {
  perChange: string[];
  batched: number;
  total: number;
} {
  return {
    perChange: urls.filter((u) => /^\/api\/v2\/changes\/\d+\/builds\b/.test(u)),
    batched: urls.filter((u) => u.startsWith('/api/v2/change_builds?')).length,
    total: urls.length,
  };
}

/**
 * How a build page read its steps' logs (issue 34 §3): `perStep`, the reads of one step's
 * logs each (`/steps/N/logs`, `/builds/N/steps/M/logs`), which must be none; `batched`, the
 * reads of every log of a build at once (`/builds/N/logs`); `total`, every API read.
 */
export function buildLogReads(urls: readonly string[]): {
  perStep: string[];
  batched: number;
  total: number;
} {
  return {
    perStep: urls.filter((u) => /^\/api\/v2\/(.+\/)?steps\/[^/]+\/logs(\?|$)/.test(u)),
    batched: urls.filter((u) => /^\/api\/v2\/builds\/\d+\/logs(\?|$)/.test(u)).length,
    total: urls.length,
  };
}
