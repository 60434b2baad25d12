-- One chunk for each log of 3-7 lines made so far (the step logs), stored as Buildbot stores
-- stdio ('o' + line, joined by \n, no final newline, compressed=0): included (\ir) by
-- generate.sql and fleet.sql once their logs rows exist.
INSERT INTO logchunks (logid, first_line, last_line, content, compressed)
SELECT l.id, 0, l.num_lines - 1,
       convert_to(string_agg('o' || 'step ' || l.stepid || ' line ' || j || ': ' || md5(l.id || ':' || j), E'\n' ORDER BY j), 'UTF8'),
       0
FROM logs l, generate_series(0, 6) AS j
WHERE j < l.num_lines
GROUP BY l.id, l.num_lines;
