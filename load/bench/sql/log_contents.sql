-- GET /logs/N/contents?offset=500000&limit=100  (pgbench -D log=N): the log row, then only
-- the chunks that cover lines 500000..500099 (the API decodes and trims them).
SELECT id, name, slug, stepid, complete, num_lines, type FROM logs WHERE id = :log;
SELECT first_line, last_line, content, compressed
FROM logchunks
WHERE logid = :log AND first_line <= 500099 AND last_line >= 500000
ORDER BY first_line;
