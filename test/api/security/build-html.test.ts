// Review issue 13, finding 8 (low, found on the way): an html log a build wrote was sent with
// the web UI's policy, which lets the origin's scripts run; it keeps the sandbox.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addLog, appendLog, transact } from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import { useReviewStack } from '../lib/review-stack.js';

const review = useReviewStack();

describe('HTML that a build wrote', () => {
  it("is a download whose policy runs nothing, not the web UI's", async () => {
    const [step] = await review.stack.db.pool.query(sql`SELECT id FROM steps ORDER BY id LIMIT 1`);
    const logid = await transact({ db: review.stack.db.pool, redis: review.stack.redis }, async (tx) => {
      const id = await addLog(tx, step.id, `report ${randomUUID()}`, 'h');
      await appendLog(tx, id, '<script>fetch("/api/v2/workers/1",{method:"POST"})</script>\n');
      return id;
    });
    const admin = await review.stack.login('admin');
    const a = await review.stack.get(`/api/v2/logs/${logid}/raw`, { session: admin });
    expect(a.status).toBe(200);
    expect(String(a.headers['content-type'])).toMatch(/^text\/html/);
    expect(String(a.headers['content-disposition'])).toMatch(/^attachment/);
    const csp = String(a.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain('sandbox');
    expect(csp).not.toContain("script-src 'self'");
  });
});
