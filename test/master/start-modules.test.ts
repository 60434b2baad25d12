// What a master's code loads with its import that it does not use: undici, fetch's
// implementation, which Node loads for node:http's lazy getters (http.WebSocket, CloseEvent,
// MessageEvent) the first time node:http is imported as an ES module. The master's importers of
// node:http read it through require instead (services/core/http/node-http.ts: 40 ms of CPU at
// every start). A fresh process imports the master's code and lists Node's own loaded modules.
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
