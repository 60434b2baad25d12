// Websocket event fan-out: each virtual user opens BASE_URL's /ws, subscribes to the
// scenario's path (builds/*/* by default), counts the event messages it receives while it
// holds the socket for holdSeconds, closes, and starts over (after 1 s if it failed).
//   k6 run -e BASE_URL=http://127.0.0.1:8080/api/v2 load/k6/ws-fanout.js
// Uses k6's websockets module (k6/websockets, the browser's WebSocket API), not the older
// k6/ws. The iteration lasts until the socket is closed.
// ws_subscribe_ack: ms from sending startConsuming to its {"code":200} answer.
// ws_failed: sessions whose connection failed or whose subscription was not acknowledged.
// ws_sessions: sessions held to the end with their subscription acknowledged.
// ws_events: event messages ({"k": routing key, "m": message}) received; events flow only
// while something builds, so no threshold is set on it.
import { check } from 'k6';
import { Counter, Rate, Trend } from 'k6/metrics';
import { setTimeout } from 'k6/timers';
import { WebSocket } from 'k6/websockets';
import { optionsFor, wsUrl } from './lib.js';

const spec = JSON.parse(open('../scenarios.json'));
const sc = spec.scenarios.ws_fanout;
const ack = new Trend('ws_subscribe_ack', true);
const failed = new Rate('ws_failed');
const sessions = new Counter('ws_sessions');
const events = new Counter('ws_events');

export const options = optionsFor(spec, 'ws_fanout');

export default function () {
  let sentAt = 0;
  let opened = false;
  let acked = false;
  const socket = new WebSocket(wsUrl());
  socket.onopen = () => {
    opened = true;
    sentAt = Date.now();
    socket.send(JSON.stringify({ cmd: 'startConsuming', path: sc.path, _id: 1 }));
    setTimeout(() => socket.close(), sc.holdSeconds * 1000);
  };
  socket.onmessage = (e) => {
    const msg = JSON.parse(e.data);
    if (msg._id === 1) {
      ack.add(Date.now() - sentAt);
      acked = msg.code === 200;
    } else if (msg.k) {
      events.add(1);
    }
  };
  socket.onerror = () => socket.close();
  socket.onclose = () => {
    const ok = check(null, {
      'socket opened': () => opened,
      'subscription acknowledged': () => acked,
    });
    failed.add(!ok);
    if (ok) sessions.add(1);
    // a failed session waits a moment instead of reconnecting at once: the iteration lasts
    // until this timer fires
    else setTimeout(() => {}, 1000);
  };
}
