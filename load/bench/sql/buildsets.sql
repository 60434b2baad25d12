-- GET /buildsets?order=-bsid&limit=50, with each buildset's source stamps (and patches).
-- pgbench -D total=0: the page alone; 1: page + counter row; 2: page + exact count(*).
SELECT bs.id, bs.external_idstring, bs.reason, bs.submitted_at, bs.complete, bs.complete_at,
       bs.results, bs.parent_buildid, bs.parent_relationship,
       (SELECT json_agg(json_build_object('ssid', ss.id, 'branch', ss.branch, 'revision', ss.revision,
                                          'repository', ss.repository, 'codebase', ss.codebase,
                                          'project', ss.project, 'created_at', ss.created_at,
                                          'patchid', ss.patchid) ORDER BY ss.id)
          FROM buildset_sourcestamps bss JOIN sourcestamps ss ON ss.id = bss.sourcestampid
         WHERE bss.buildsetid = bs.id) AS sourcestamps
FROM buildsets bs
ORDER BY bs.id DESC
LIMIT 50;
\if :total = 1
SELECT n FROM load_bench.counts WHERE collection = 'buildsets' AND scope = '';
\elif :total = 2
SELECT count(*) FROM buildsets;
\endif
