-- The keyed write notices (0016) at a fraction of their cost (issue 35: a build's start,
-- load/results/fleet.md 2026-11-29 03:30 and 05:05).
--
-- 0016's triggers were the most PostgreSQL time left in a build's start. The five keyed
-- writes of a start (its build, first property, a step inserted and updated, its log), 400
-- starts one statement each in one transaction (load/fleet/write-keys.sql, the command in its
-- head, in turns on the bench cluster, load 2.2-2.3, 2026-11-29 05:12):
--
--   0016's functions                        0.818, 0.821, 0.839 ms a start
--   0016's trigger, write_keys inlined      0.337, 0.345, 0.358 ms
--   this migration (both)                   0.317, 0.320, 0.313 ms
--   the keyed triggers disabled             0.220, 0.219, 0.218 ms
--
-- so the triggers' own cost falls from about 0.61 to 0.10 ms a start. Two changes:
--   - flotilla.write_keys is inlined: 0016 declared it IMMUTABLE but joined text to a number
--     with `||` (text || anynonarray, STABLE: it calls the type's output function), and
--     PostgreSQL inlines no IMMUTABLE SQL function whose body is less than immutable. Called
--     instead, once per row, a SQL function is parsed and planned again at each execution of
--     the query that calls it: most of what the triggers cost. Its text casts are immutable
--     and spell a bigint as `||` did;
--   - flotilla.notify_write_keys runs one statement a call where 0016's ran one per
--     transition table, one to make the keys distinct and one `PERFORM pg_notify` per key
--     (six for a build's INSERT, five for a step's UPDATE: 28 statements for the five writes
--     above, write_keys' own runs counted, 5 now): the keys of the rows before and after (one UNION ALL for an UPDATE), made
--     distinct, folded to the table's bare name past 100 parts or when a key has no value,
--     and sent, all in one query.
--
-- The notices are the same (channel flotilla_write_keys, the same payloads: test/db/
-- write-keys-0044.test.ts compares them with 0016's functions' for each kind of write; PostgreSQL
-- folds the repeats a transaction sends, and the folded bare name is sent once).
--
-- The branches on the table and the operation stay: a transition table exists only for the
-- events whose trigger names it, and a statement that names a missing one fails at its plan.
-- An IF's condition is evaluated by PL/pgSQL without the executor. The fifteen branches are
-- written out below from one template (a table's keys of a row, the rows they are read
-- from), so that they cannot differ but in those.

-- 0016's keys of a row, unchanged but for the casts.
CREATE OR REPLACE FUNCTION flotilla.write_keys(tbl text, id bigint, owner bigint, complete boolean)
RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE tbl
    WHEN 'builds' THEN ARRAY[
      'builds/id=' || id::text,
      'builds/builderid=' || owner::text,
      'builds/complete=' || CASE WHEN complete THEN 't' ELSE 'f' END,
      'builds/builderid=' || owner::text || '/complete=' || CASE WHEN complete THEN 't' ELSE 'f' END]
    WHEN 'steps' THEN ARRAY['steps/id=' || id::text, 'steps/buildid=' || owner::text]
    WHEN 'logs' THEN ARRAY['logs/id=' || id::text, 'logs/stepid=' || owner::text]
    WHEN 'logchunks' THEN ARRAY['logchunks/logid=' || owner::text]
    WHEN 'build_properties' THEN ARRAY['build_properties/buildid=' || owner::text]
  END
$$;

DO $migration$
DECLARE
  -- One branch's statement: the distinct keys of the rows (%s: one query of keys, or the
  -- UNION ALL of two), each sent, or the table's bare name once past 100 or with a NULL.
  send constant text := $s$
      PERFORM pg_notify('flotilla_write_keys', f.k) FROM (
        SELECT DISTINCT CASE WHEN count(*) OVER () > 100 OR bool_or(ks.k IS NULL) OVER () THEN TG_TABLE_NAME
                             ELSE ks.k END
        FROM (SELECT DISTINCT u.k FROM (%s) u(k)) ks) f(k);$s$;
  t record;
  keys text;
  branches text := '';
BEGIN
  -- Each table's keys of a row r, as 0016's triggers called flotilla.write_keys.
  FOR t IN SELECT * FROM (VALUES
      ('builds', 'r.id, r.builderid, r.complete_at IS NOT NULL'),
      ('steps', 'r.id, r.buildid, NULL'),
      ('logs', 'r.id, r.stepid, NULL'),
      ('logchunks', 'NULL, r.logid, NULL'),
      ('build_properties', 'NULL, r.buildid, NULL')) v(tbl, args) LOOP
    keys := format('SELECT unnest(flotilla.write_keys(%L, %s)) FROM %%s r', t.tbl, t.args);
    branches := branches || format($b$
  %s TG_TABLE_NAME = %L THEN
    IF TG_OP = 'INSERT' THEN%s
    ELSIF TG_OP = 'UPDATE' THEN%s
    ELSE%s
    END IF;$b$,
      CASE WHEN branches = '' THEN 'IF' ELSE 'ELSIF' END, t.tbl,
      format(send, format(keys, 'new_rows')),
      format(send, format(keys, 'new_rows') || ' UNION ALL ' || format(keys, 'old_rows')),
      format(send, format(keys, 'old_rows')));
  END LOOP;
  EXECUTE format($f$CREATE OR REPLACE FUNCTION flotilla.notify_write_keys() RETURNS trigger LANGUAGE plpgsql AS $body$
BEGIN%s
  END IF;
  RETURN NULL;
END $body$$f$, branches);
END $migration$;
