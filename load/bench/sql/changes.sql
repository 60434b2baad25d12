-- GET /changes?order=-changeid&limit=50, and GET /changes?limit=50 (newest first is
-- Flotilla's default order for changes, so both are this query).
-- pgbench -D total=0: the page alone; 1: page + counter row; 2: page + exact count(*).
SELECT c.changeid, c.author, c.committer, c.comments, c.branch, c.revision, c.revlink,
       c.when_timestamp, c.category, c.repository, c.codebase, c.project, c.parent_changeids,
       ss.id AS ssid, ss.branch AS ss_branch, ss.revision AS ss_revision, ss.repository AS ss_repository,
       ss.codebase AS ss_codebase, ss.project AS ss_project, ss.created_at AS ss_created_at,
       p.patchlevel, p.patch_base64, p.patch_author, p.patch_comment, p.subdir,
       (SELECT array_agg(f.filename) FROM change_files f WHERE f.changeid = c.changeid) AS files,
       (SELECT json_object_agg(cp.property_name, cp.property_value)
          FROM change_properties cp WHERE cp.changeid = c.changeid) AS properties
FROM changes c
JOIN sourcestamps ss ON ss.id = c.sourcestampid
LEFT JOIN patches p ON p.id = ss.patchid
ORDER BY c.changeid DESC
LIMIT 50;
\if :total = 1
SELECT n FROM load_bench.counts WHERE collection = 'changes' AND scope = '';
\elif :total = 2
SELECT count(*) FROM changes;
\endif
