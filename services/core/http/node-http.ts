// node:http for the modules a process loads at its start, read through require rather than an
// ESM import. The first ESM import of node:http builds its ESM facade, which reads each of the
// module's exports once, the getters Node keeps lazy among them: http.WebSocket, CloseEvent and
// MessageEvent, which load undici (fetch's implementation) to answer. Required, the module is
// what it is for CommonJS (ws, ioredis and pg require it so), the getters left unread.
//
// Measured (Node 26.10, 2026-11-29 08:35-08:45, load 9-14): a fresh process importing node:http
// 42-47 ms of CPU, requiring it 4-5 ms (five each,
// `node --input-type=module -e "... await import('node:http') ..."`); service.js's import with
// the master's three importers of node:http as they were and through require, in turns, medians
// of seven: 386/341, 315/292, 413/314 ms (`RUNS=7 node_modules/.bin/node --import tsx
// load/fleet/import-cpu.ts B/services/master/service.js`, B from test/helpers/service-build.ts).
// node:https has no such getters: imported as usual. Traced processes still see every request:
// the HTTP instrumentation patches node:http through require as well (core/telemetry/tracing.ts).

import type * as NodeHttp from 'node:http';
import { createRequire } from 'node:module';

export const http = createRequire(import.meta.url)('node:http') as typeof NodeHttp;
