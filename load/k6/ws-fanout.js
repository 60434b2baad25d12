// Websocket event fan-out: each virtual user opens BASE_URL's /ws, subscribes to the
// scenario's path (builds/*/* by default), counts the event messages it receives while it
// holds the socket for holdSeconds, closes, and starts over (after 1 s if it failed).
//   k6 run -e BASE_URL=http://127.0.0.1:8080/api/v2 load/k6/ws-fanout.js
// ws_subscribe_ack: ms from sending startConsuming to its {"code":200} answer.
// ws_failed: sessions whose connection failed or whose subscription was not acknowledged.
// ws_events: event messages ({"k": routing key, "m": message}) received.
import { check, sleep } from 'k6';
import { Counter, Rate, Trend } from 'k6/metrics';
import ws from 'k6/ws';
import { optionsFor, wsUrl } from './lib.js';

const spec = JSON.parse(open('../scenarios.json'));
const sc = spec.scenarios.ws_fanout;
const ack = new Trend('ws_subscribe_ack', true);
const failed = new Rate('ws_failed');
const events = new Counter('ws_events');

export const options = optionsFor(spec, 'ws_fanout');

export default function () {
  let sentAt = 0;
  let acked = false;
  const res = ws.connect(wsUrl(), {}, (socket) => {
    socket.on('open', () => {
      sentAt = Date.now();
      socket.send(JSON.stringify({ cmd: 'startConsuming', path: sc.path, _id: 1 }));
    });
    socket.on('message', (data) => {
      const msg = JSON.parse(data);
      if (msg._id === 1) {
        ack.add(Date.now() - sentAt);
        acked = msg.code === 200;
      } else if (msg.k) {
        events.add(1);
      }
    });
    socket.on('error', () => socket.close());
    socket.setTimeout(() => socket.close(), sc.holdSeconds * 1000);
  });
  const ok = check(res, { 'status is 101': (r) => r && r.status === 101 });
  failed.add(!ok || !acked);
  // a failed session waits a moment instead of reconnecting at once
  if (!ok || !acked) sleep(1);
}
