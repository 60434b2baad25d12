-- GET /builds/N?property=*  (pgbench -D build=N): one build and all its properties.
SELECT b.id, b.number, b.builderid, b.buildrequestid, b.workerid, b.masterid, b.started_at,
       b.complete_at, b.complete_at IS NOT NULL AS complete, b.state_string, b.results,
       (SELECT json_object_agg(p.name, json_build_array(p.value::json, p.source))
          FROM build_properties p WHERE p.buildid = b.id) AS properties
FROM builds b
WHERE b.id = :build;
