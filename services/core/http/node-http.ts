// node:http for the modules a process loads at its start, read through require rather than an
// ESM import. The first ESM import of node:http builds its ESM facade, which reads each of the
// module's exports once, the getters Node keeps lazy among them: http.WebSocket, CloseEvent and
// MessageEvent, which load undici (fetch's implementation) to answer. Required, the module is
// what it is for CommonJS (ws, ioredis and pg require it so), the getters left unread.
//
// Measured (Node 26.10, 2026-11-29 08:35-08:50, load 7-14; load/results/fleet.md's 08:20
// section has the commands): a fresh process importing node:http 42-47 ms of CPU, requiring it
// 4-5 ms (five each); service.js's import before and after, in turns, medians of seven:
// 484/466, 501/452, 553/430, 529/491 ms (load/fleet/import-cpu.ts). node:https has no such
// getters: imported as usual. Traced processes still see every request: the HTTP
// instrumentation patches node:http when it is required too (core/telemetry/tracing.ts).
import type * as NodeHttp from 'node:http';
import { createRequire } from 'node:module';

export const http = createRequire(import.meta.url)('node:http') as typeof NodeHttp;
