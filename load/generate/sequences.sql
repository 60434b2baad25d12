-- Every sequence past the last id, so that a server inserting next does not collide:
-- included (\ir) by generate.sql and fleet.sql at their end.
\echo sequences
SELECT setval('masters_id_seq', (SELECT max(id) FROM masters)),
       setval('builders_id_seq', (SELECT max(id) FROM builders)),
       setval('workers_id_seq', (SELECT max(id) FROM workers)),
       setval('tags_id_seq', greatest(1, (SELECT max(id) FROM tags))),
       setval('builders_tags_id_seq', greatest(1, (SELECT max(id) FROM builders_tags))),
       setval('builder_masters_id_seq', greatest(1, (SELECT max(id) FROM builder_masters))),
       setval('configured_workers_id_seq', greatest(1, (SELECT max(id) FROM configured_workers))),
       setval('sourcestamps_id_seq', (SELECT max(id) FROM sourcestamps)),
       setval('changes_changeid_seq', (SELECT max(changeid) FROM changes)),
       setval('buildsets_id_seq', (SELECT max(id) FROM buildsets)),
       setval('buildset_sourcestamps_id_seq', (SELECT max(id) FROM buildset_sourcestamps)),
       setval('buildrequests_id_seq', (SELECT max(id) FROM buildrequests)),
       setval('builds_id_seq', (SELECT max(id) FROM builds)),
       setval('steps_id_seq', (SELECT max(id) FROM steps)),
       setval('logs_id_seq', (SELECT max(id) FROM logs));
