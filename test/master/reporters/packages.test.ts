// A master whose configuration has no reporters loads neither nodemailer nor nunjucks
// (services/master/reporters/packages.ts says why): a fresh process imports the master's code
// and lists the packages it resolved. A reporter that needs one gets it. BullMQ neither: the
// jobs and the reporters load it when they start (master.ts); every in-process master of the
// suite starts the jobs (test/master/jobs/, reporters/ with reporters configured). Nor
// @msgpack/msgpack: msgpack_experimental_v7's server loads when it is configured
// (test/master/workers/listeners.test.ts starts it, and PB's, through the protocols' map).
import { describe, expect, it } from 'vitest';
import { loadNodemailer, loadNunjucks } from '../../../services/master/reporters/packages.js';
import { afterMasterImport } from '../../helpers/master-import.js';

const LAZY = ['nodemailer', 'nunjucks', 'bullmq', '@msgpack/msgpack'];

describe("the reporters' packages", () => {
  it("are not loaded with a master's code", () => {
    const loaded = afterMasterImport<string[]>(
      `import { registerHooks } from 'node:module';
      const urls = new Set();
      registerHooks({ resolve: (s, c, next) => { const r = next(s, c); urls.add(r.url); return r; } });`,
      `const packages = [...urls].map((u) => u.match(/\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//)?.[1]);
      console.log(JSON.stringify([...new Set(packages.filter(Boolean))]));`,
    );
    // The check can fail: the master's own packages are seen (js-yaml, not yaml: the second
    // YAML parser is loaded only for a text js-yaml refuses, core/config/yaml-data.ts).
    expect(loaded).toEqual(expect.arrayContaining(['pg', 'ioredis', 'js-yaml']));
    expect(loaded.filter((p) => LAZY.includes(p))).toEqual([]);
  });

  it('are there when a reporter asks, the same each time, nunjucks with its Jinja methods', () => {
    expect(typeof loadNodemailer().createTransport).toBe('function');
    const n = loadNunjucks();
    expect(loadNunjucks()).toBe(n);
    expect(n.renderString("{{ d.get('a') }}", { d: { a: 'x' } })).toBe('x');
  });
});
