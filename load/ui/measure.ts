// The web UI timed by the browser's own clocks (Navigation Timing, the User Timing mark the
// home page sets once every list is shown, Resource Timing, requestAnimationFrame), in
// Debian's Chromium: the home page cold (a new profile: nothing cached) and warm (a reload:
// the hashed bundle from the cache), then the log viewer on the generator's 1,000,000-line
// log: open it, jump to the end, jump to random places, and scroll continuously.
//
//   node --import tsx load/ui/measure.ts URL RUNS OUT.json NOTE     (load/ui/run.sh runs it)
import { writeFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../../test/web/browser.js';

const [base = 'http://127.0.0.1:8041/', runsArg = '10', out = '', note = ''] = process.argv.slice(2);
const RUNS = Number(runsArg);

function stats(xs: number[]): { median: number; p95: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
  return { median: at(0.5), p95: at(0.95), max: s.at(-1)! };
}

async function homeOnce(page: Page, reload: boolean) {
  if (reload) await page.reload();
  else await page.goto(`${base}#/`);
  await page.waitForFunction(
    () => (globalThis as any).performance.getEntriesByName('flotilla:home-usable').length > 0,
    undefined,
    {
      timeout: 60_000,
    },
  );
  return page.evaluate(() => {
    const p = (globalThis as any).performance;
    const nav = p.getEntriesByType('navigation')[0];
    const usable = p.getEntriesByName('flotilla:home-usable')[0].startTime;
    const api = p
      .getEntriesByType('resource')
      .filter((r: any) => r.name.includes('/api/v2/') && r.responseEnd <= usable);
    const js = p.getEntriesByType('resource').filter((r: any) => r.name.endsWith('.js'));
    return {
      usable,
      domContentLoaded: nav.domContentLoadedEventEnd,
      apiRequests: api.length,
      slowestApi: Math.max(0, ...api.map((r: any) => r.duration)),
      jsTransferBytes: js.reduce((n: number, r: any) => n + r.transferSize, 0),
    };
  });
}

/**
 * performance.now() in the page once the element `selector` shows text (not the '…'
 * placeholder), checked every animation frame. A string, evaluated as it is: tsx would wrap
 * a named function of this file in a helper the page does not have.
 */
async function until(page: Page, selector: string): Promise<number> {
  return page.evaluate(`new Promise((resolve) => {
    const check = () => {
      const el = document.querySelector(${JSON.stringify(selector)});
      if (el && el.textContent !== '…') resolve(performance.now());
      else requestAnimationFrame(check);
    };
    check();
  })`) as Promise<number>;
}

/** A continuous scroll: 120 frames, 600 px a frame; the times between frames. */
const SCROLL_FRAMES = `new Promise((resolve) => {
  const el = document.querySelector('.log-scroll');
  el.scrollTop = 0;
  const gaps = [];
  let last = performance.now();
  let n = 0;
  const step = () => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
    el.scrollTop += 600;
    if (++n < 120) requestAnimationFrame(step);
    else resolve(gaps.slice(1));
  };
  requestAnimationFrame(step);
})`;

async function main() {
  const browser = await launchBrowser();
  const results: Record<string, unknown> = { note, runs: RUNS, at: new Date().toISOString() };
  try {
    const cold: Awaited<ReturnType<typeof homeOnce>>[] = [];
    const warm: Awaited<ReturnType<typeof homeOnce>>[] = [];
    for (let i = 0; i < RUNS; i++) {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await ctx.newPage();
      cold.push(await homeOnce(page, false));
      warm.push(await homeOnce(page, true));
      await ctx.close();
    }
    results.homeCold = {
      usable: stats(cold.map((r) => r.usable)),
      domContentLoaded: stats(cold.map((r) => r.domContentLoaded)),
      slowestApi: stats(cold.map((r) => r.slowestApi)),
      apiRequests: cold[0]!.apiRequests,
      jsTransferBytes: cold[0]!.jsTransferBytes,
    };
    results.homeWarm = {
      usable: stats(warm.map((r) => r.usable)),
      domContentLoaded: stats(warm.map((r) => r.domContentLoaded)),
      jsTransferBytes: warm[0]!.jsTransferBytes,
    };

    const get = async (path: string): Promise<any> =>
      (await fetch(`${base}api/v2/${path}`, { headers: { accept: 'application/json' } })).json();
    // The generator's huge log: on the newest build's `test` step (load/generate/generate.sql).
    const build = (await get('builds?order=-buildid&limit=1')).builds?.[0];
    const step = build && (await get(`builds/${build.buildid}/steps/test`)).steps?.[0];
    const log = step && (await get(`steps/${step.stepid}/logs/huge`)).logs?.[0];
    if (log) {
      const url = `${base}#/builders/${build.builderid}/builds/${build.number}/steps/${step.number}/logs/huge`;
      const open: number[] = [];
      const end: number[] = [];
      const jump: number[] = [];
      const frames: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        const page = await ctx.newPage();
        await page.goto(url);
        open.push(await until(page, '.ln[data-line="1"] .tx'));
        await page.locator('.log-scroll').focus();
        const t0 = await page.evaluate(() => (globalThis as any).performance.now());
        await page.keyboard.press('End');
        end.push((await until(page, `.ln[data-line="${log.num_lines}"] .tx`)) - t0);
        for (let k = 0; k < 5; k++) {
          const target = Math.floor(Math.random() * log.num_lines);
          const t1 = await page.evaluate((line) => {
            const el = (globalThis as any).document.querySelector('.log-scroll');
            el.scrollTop =
              (line / (globalThis as any).Number(el.dataset.lines)) * (el.scrollHeight - el.clientHeight);
            return (globalThis as any).performance.now();
          }, target);
          await page.waitForFunction(() => {
            const rows = [...(globalThis as any).document.querySelectorAll('.ln .tx')];
            return rows.length > 0 && rows.every((r: any) => r.textContent !== '…');
          });
          jump.push((await page.evaluate(() => (globalThis as any).performance.now())) - t1);
        }
        frames.push(...((await page.evaluate(SCROLL_FRAMES)) as number[]));
        await ctx.close();
      }
      results.log = {
        lines: log.num_lines,
        open: stats(open),
        jumpToEnd: stats(end),
        jumpAnywhere: stats(jump),
        scrollFrameMs: stats(frames),
      };
    }
  } finally {
    await browser.close();
  }
  if (out) writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  const ms = (s: any) => `${s.median.toFixed(0)} / ${s.p95.toFixed(0)}`;
  const r = results as any;
  const rows = [
    ['home, cold (new profile): usable', ms(r.homeCold.usable)],
    ['home, cold: DOMContentLoaded', ms(r.homeCold.domContentLoaded)],
    ['home, cold: slowest API read before usable', ms(r.homeCold.slowestApi)],
    ['home, warm (reload, bundle cached): usable', ms(r.homeWarm.usable)],
  ];
  if (r.log) {
    rows.push(
      [`log of ${r.log.lines.toLocaleString('en')} lines: open, first line shown`, ms(r.log.open)],
      ['log: End key to the last line shown', ms(r.log.jumpToEnd)],
      ['log: scrolled to a random place, every line there shown', ms(r.log.jumpAnywhere)],
      ['log: continuous scroll, time between frames', ms(r.log.scrollFrameMs)],
    );
  }
  console.log(
    `${note}; ${RUNS} runs; home page: ${r.homeCold.apiRequests} API reads, ${r.homeCold.jsTransferBytes} bytes of JS sent\n`,
  );
  console.log('| measure | median / p95 ms |\n|---|---|');
  for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
}

await main();
