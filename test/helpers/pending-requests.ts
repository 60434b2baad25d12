// The SQL of a plain queue for the planner tests (test/db/): one master `m`, the named
// builders, and `count` pending requests of one build set each, on the builders in turn.
// Plain text (not a tagged template): the tests send it on a pg.Client with their own
// statements around it.
export function pendingRequestsSql(count: number, builders: readonly string[]): string {
  const names = builders.map((b) => `('${b}', md5('${b}'))`).join(', ');
  return `
    INSERT INTO masters (name, name_hash, active, last_active) VALUES ('m', md5('m'), 1, 0);
    INSERT INTO builders (name, name_hash) VALUES ${names};
    WITH bs AS (
      INSERT INTO buildsets (reason, submitted_at, complete, results)
      SELECT 'x', 0, 0, -1 FROM generate_series(1, ${count}) RETURNING id),
    b AS (SELECT array_agg(id ORDER BY id) AS ids FROM builders)
    INSERT INTO buildrequests (buildsetid, builderid, priority, complete, results, submitted_at, waited_for)
    SELECT bs.id, b.ids[1 + bs.id % array_length(b.ids, 1)], 0, 0, -1, 0, 0 FROM bs, b;`;
}
