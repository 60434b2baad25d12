// What a master's code loads with its import that it does not use: undici, fetch's
// implementation, which Node loads for node:http's lazy getters (http.WebSocket, CloseEvent,
// MessageEvent) the first time node:http is imported as an ES module. The master's importers of
// node:http read it through require instead (services/core/http/node-http.ts: 40 ms of CPU at
// every start). Nor bcryptjs, which only the API's logins use: the configuration's check reads a
// user's scrypt hash through core/auth/scrypt-hash.ts. A fresh process imports the master's code
// and lists what it loaded.
import { expect, it } from 'vitest';
import { afterMasterImport } from '../helpers/master-import.js';

it("a master's code loads node:http without undici", () => {
  const loaded = afterMasterImport<string[]>(
    '',
    `console.log(JSON.stringify(process.moduleLoadList.filter((m) => /^NativeModule (http|internal\\/deps\\/undici)/.test(m))));`,
  );
  // The check can fail: node:http is there (the probe server and the worker listener use it).
  expect(loaded).toContain('NativeModule http');
  expect(loaded.filter((m) => m.includes('undici'))).toEqual([]);
});

it("a master's code reads a user's hash without bcryptjs", () => {
  const loaded = afterMasterImport<string[]>(
    `import { registerHooks } from 'node:module';
    const urls = [];
    registerHooks({ resolve: (s, c, next) => { const r = next(s, c); urls.push(r.url); return r; } });`,
    `console.log(JSON.stringify(urls.filter((u) => /core\\/auth\\/|node_modules\\/bcryptjs\\//.test(u)).map((u) => u.replace(/.*\\/(services|node_modules)\\//, ''))));`,
  );
  // The check can fail: the hash's reader is loaded (master-config/auth.ts).
  expect(loaded.some((u) => /^core\/auth\/scrypt-hash\.[jt]s$/.test(u))).toBe(true);
  expect(loaded.filter((u) => u.startsWith('bcryptjs/') || u.includes('htpasswd'))).toEqual([]);
});
