-- Buildbot's invariants on generated data; every row must say ok = t.
--   psql -X -f load/generate/check.sql $DATABASE_URL
-- (foreign keys are enforced by the schema itself)
SELECT 'build numbers are 1..n per builder, in id order' AS invariant,
       bool_and(number = rn) AS ok
FROM (SELECT number, row_number() OVER (PARTITION BY builderid ORDER BY id) AS rn FROM builds) b
UNION ALL
SELECT 'a buildset is complete iff all its requests are',
       bool_and((bs.complete = 1) = r.all_done)
FROM buildsets bs
JOIN (SELECT buildsetid, bool_and(complete = 1) AS all_done FROM buildrequests GROUP BY buildsetid) r
  ON r.buildsetid = bs.id
UNION ALL
SELECT 'complete requests are claimed, have results >= 0 and complete_at; pending ones -1 and no build',
       bool_and(CASE WHEN br.complete = 1
                     THEN c.brid IS NOT NULL AND br.results >= 0 AND br.complete_at IS NOT NULL
                     ELSE br.results = -1 AND br.complete_at IS NULL
                          AND NOT EXISTS (SELECT 1 FROM builds b WHERE b.buildrequestid = br.id) END)
FROM buildrequests br LEFT JOIN buildrequest_claims c ON c.brid = br.id
UNION ALL
SELECT 'complete requests have a finished build with their results; retries end RETRY',
       bool_and(b.complete_at IS NOT NULL AND b.results IS NOT NULL AND b.started_at <= b.complete_at
                AND b.started_at >= br.submitted_at
                AND (b.results = 5 OR b.results = br.results))
FROM builds b JOIN buildrequests br ON br.id = b.buildrequestid
UNION ALL
SELECT 'hashes are 40 hex chars',
       bool_and(ss_hash ~ '^[0-9a-f]{40}$') FROM sourcestamps
UNION ALL
SELECT 'stdio chunks hold whole prefixed lines: line count matches first/last_line',
       bool_and(array_length(string_to_array(convert_from(content, 'UTF8'), E'\n'), 1) = last_line - first_line + 1
                AND convert_from(content, 'UTF8') ~ '^o' AND compressed = 0)
FROM logchunks
UNION ALL
SELECT 'logs num_lines = lines stored',
       bool_and(l.num_lines = c.n)
FROM logs l JOIN (SELECT logid, sum(last_line - first_line + 1) AS n FROM logchunks GROUP BY logid) c ON c.logid = l.id;
