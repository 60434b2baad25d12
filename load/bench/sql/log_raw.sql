-- GET /logs/N/raw  (pgbench -D log=N): the log row and every chunk in line order
-- (about 70 MB for the 1,000,000-line log; the API streams them, pgbench buffers them).
SELECT id, name, slug, stepid, complete, num_lines, type FROM logs WHERE id = :log;
SELECT content, compressed FROM logchunks WHERE logid = :log ORDER BY first_line;
