// The reason of a WebSocket close frame: a control frame's payload is at most 125 bytes, two
// of them the status code (RFC 6455, 5.5), and `ws` throws on a longer reason. Reasons can
// carry what an operator or a client wrote, in any script: cut by UTF-8 bytes, on a
// character boundary.
export const MAX_CLOSE_REASON_BYTES = 123;

export function closeReason(reason: string): string {
  if (Buffer.byteLength(reason) <= MAX_CLOSE_REASON_BYTES) return reason;
  let out = '';
  let bytes = 0;
  for (const ch of reason) {
    const n = Buffer.byteLength(ch);
    if (bytes + n > MAX_CLOSE_REASON_BYTES) break;
    out += ch;
    bytes += n;
  }
  return out;
}
