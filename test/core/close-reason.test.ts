// A WebSocket close reason must fit its frame: at most 123 UTF-8 bytes, never a broken character.
import { describe, expect, it } from 'vitest';
import { closeReason, MAX_CLOSE_REASON_BYTES } from '../../services/core/http/close-reason.js';

describe('closeReason', () => {
  it('keeps a short reason as it is', () => {
    expect(closeReason('too slow')).toBe('too slow');
  });

  it.each([
    ['ASCII', 'x'.repeat(500)],
    ['two-byte characters', 'é'.repeat(200)],
    ['three-byte characters', '€'.repeat(200)],
    ['astral characters', '🚀'.repeat(100)],
  ])('cuts %s to the frame, on a character boundary', (_what, reason) => {
    const cut = closeReason(reason);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(MAX_CLOSE_REASON_BYTES);
    expect(Buffer.byteLength(cut)).toBeGreaterThan(MAX_CLOSE_REASON_BYTES - 4);
    expect(reason.startsWith(cut)).toBe(true);
    expect(cut).not.toMatch(/\uFFFD/);
  });
});
