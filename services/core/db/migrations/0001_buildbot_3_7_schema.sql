-- Buildbot 3.7's schema (alembic revision 059), exactly as a real Buildbot 3.7 master
-- creates it on PostgreSQL: the DDL of ../shared/oracle/schema.sql without pg_dump's
-- session settings and comments. Any change here breaks the promise that a Buildbot
-- master accepts this database as its own; test/db/schema.test.ts guards it.
-- Our own additions live in later migrations.

CREATE TABLE public.alembic_version (
    version_num character varying(32) NOT NULL
);

CREATE TABLE public.build_data (
    id integer NOT NULL,
    buildid integer NOT NULL,
    name character varying(256) NOT NULL,
    value bytea NOT NULL,
    length integer NOT NULL,
    source character varying(256) NOT NULL
);

CREATE SEQUENCE public.build_data_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.build_data_id_seq OWNED BY public.build_data.id;

CREATE TABLE public.build_properties (
    buildid integer NOT NULL,
    name character varying(256) NOT NULL,
    value text NOT NULL,
    source character varying(256) NOT NULL
);

CREATE TABLE public.builder_masters (
    id integer NOT NULL,
    builderid integer NOT NULL,
    masterid integer NOT NULL
);

CREATE SEQUENCE public.builder_masters_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.builder_masters_id_seq OWNED BY public.builder_masters.id;

CREATE TABLE public.builders (
    id integer NOT NULL,
    name text NOT NULL,
    description text,
    name_hash character varying(40) NOT NULL
);

CREATE SEQUENCE public.builders_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.builders_id_seq OWNED BY public.builders.id;

CREATE TABLE public.builders_tags (
    id integer NOT NULL,
    builderid integer NOT NULL,
    tagid integer NOT NULL
);

CREATE SEQUENCE public.builders_tags_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.builders_tags_id_seq OWNED BY public.builders_tags.id;

CREATE TABLE public.buildrequest_claims (
    brid integer NOT NULL,
    masterid integer NOT NULL,
    claimed_at integer NOT NULL
);

CREATE TABLE public.buildrequests (
    id integer NOT NULL,
    buildsetid integer NOT NULL,
    builderid integer NOT NULL,
    priority integer DEFAULT 0 NOT NULL,
    complete integer DEFAULT 0,
    results smallint,
    submitted_at integer NOT NULL,
    complete_at integer,
    waited_for smallint DEFAULT '0'::smallint
);

CREATE SEQUENCE public.buildrequests_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.buildrequests_id_seq OWNED BY public.buildrequests.id;

CREATE TABLE public.builds (
    id integer NOT NULL,
    number integer NOT NULL,
    builderid integer NOT NULL,
    buildrequestid integer NOT NULL,
    workerid integer,
    masterid integer NOT NULL,
    started_at integer NOT NULL,
    complete_at integer,
    state_string text NOT NULL,
    results integer
);

CREATE SEQUENCE public.builds_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.builds_id_seq OWNED BY public.builds.id;

CREATE TABLE public.buildset_properties (
    buildsetid integer NOT NULL,
    property_name character varying(256) NOT NULL,
    property_value text NOT NULL
);

CREATE TABLE public.buildset_sourcestamps (
    id integer NOT NULL,
    buildsetid integer NOT NULL,
    sourcestampid integer NOT NULL
);

CREATE SEQUENCE public.buildset_sourcestamps_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.buildset_sourcestamps_id_seq OWNED BY public.buildset_sourcestamps.id;

CREATE TABLE public.buildsets (
    id integer NOT NULL,
    external_idstring character varying(256),
    reason character varying(256),
    submitted_at integer NOT NULL,
    complete smallint DEFAULT '0'::smallint NOT NULL,
    complete_at integer,
    results smallint,
    parent_buildid integer,
    parent_relationship text
);

CREATE SEQUENCE public.buildsets_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.buildsets_id_seq OWNED BY public.buildsets.id;

CREATE TABLE public.change_files (
    changeid integer NOT NULL,
    filename character varying(1024) NOT NULL
);

CREATE TABLE public.change_properties (
    changeid integer NOT NULL,
    property_name character varying(256) NOT NULL,
    property_value text NOT NULL
);

CREATE TABLE public.change_users (
    changeid integer NOT NULL,
    uid integer NOT NULL
);

CREATE TABLE public.changes (
    changeid integer NOT NULL,
    author character varying(255) NOT NULL,
    committer character varying(255),
    comments text NOT NULL,
    branch character varying(255),
    revision character varying(255),
    revlink character varying(256),
    when_timestamp integer NOT NULL,
    category character varying(255),
    repository character varying(512) DEFAULT ''::character varying NOT NULL,
    codebase character varying(256) DEFAULT ''::character varying NOT NULL,
    project character varying(512) DEFAULT ''::character varying NOT NULL,
    sourcestampid integer NOT NULL,
    parent_changeids integer
);

CREATE SEQUENCE public.changes_changeid_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.changes_changeid_seq OWNED BY public.changes.changeid;

CREATE TABLE public.changesource_masters (
    changesourceid integer NOT NULL,
    masterid integer NOT NULL
);

CREATE TABLE public.changesources (
    id integer NOT NULL,
    name text NOT NULL,
    name_hash character varying(40) NOT NULL
);

CREATE SEQUENCE public.changesources_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.changesources_id_seq OWNED BY public.changesources.id;

CREATE TABLE public.configured_workers (
    id integer NOT NULL,
    buildermasterid integer NOT NULL,
    workerid integer NOT NULL
);

CREATE SEQUENCE public.configured_workers_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.configured_workers_id_seq OWNED BY public.configured_workers.id;

CREATE TABLE public.connected_workers (
    id integer NOT NULL,
    masterid integer NOT NULL,
    workerid integer NOT NULL
);

CREATE SEQUENCE public.connected_workers_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.connected_workers_id_seq OWNED BY public.connected_workers.id;

CREATE TABLE public.logchunks (
    logid integer NOT NULL,
    first_line integer NOT NULL,
    last_line integer NOT NULL,
    content bytea,
    compressed smallint NOT NULL
);

CREATE TABLE public.logs (
    id integer NOT NULL,
    name text NOT NULL,
    slug character varying(50) NOT NULL,
    stepid integer NOT NULL,
    complete smallint NOT NULL,
    num_lines integer NOT NULL,
    type character varying(1) NOT NULL
);

CREATE SEQUENCE public.logs_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.logs_id_seq OWNED BY public.logs.id;

CREATE TABLE public.masters (
    id integer NOT NULL,
    name text NOT NULL,
    name_hash character varying(40) NOT NULL,
    active integer NOT NULL,
    last_active integer NOT NULL
);

CREATE SEQUENCE public.masters_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.masters_id_seq OWNED BY public.masters.id;

CREATE TABLE public.object_state (
    objectid integer NOT NULL,
    name character varying(255) NOT NULL,
    value_json text NOT NULL
);

CREATE TABLE public.objects (
    id integer NOT NULL,
    name character varying(128) NOT NULL,
    class_name character varying(128) NOT NULL
);

CREATE SEQUENCE public.objects_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.objects_id_seq OWNED BY public.objects.id;

CREATE TABLE public.patches (
    id integer NOT NULL,
    patchlevel integer NOT NULL,
    patch_base64 text NOT NULL,
    patch_author text NOT NULL,
    patch_comment text NOT NULL,
    subdir text
);

CREATE SEQUENCE public.patches_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.patches_id_seq OWNED BY public.patches.id;

CREATE TABLE public.scheduler_changes (
    schedulerid integer NOT NULL,
    changeid integer NOT NULL,
    important integer
);

CREATE TABLE public.scheduler_masters (
    schedulerid integer NOT NULL,
    masterid integer NOT NULL
);

CREATE TABLE public.schedulers (
    id integer NOT NULL,
    name text NOT NULL,
    name_hash character varying(40) NOT NULL,
    enabled smallint DEFAULT '1'::smallint
);

CREATE SEQUENCE public.schedulers_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.schedulers_id_seq OWNED BY public.schedulers.id;

CREATE TABLE public.sourcestamps (
    id integer NOT NULL,
    ss_hash character varying(40) NOT NULL,
    branch character varying(256),
    revision character varying(256),
    patchid integer,
    repository character varying(512) DEFAULT ''::character varying NOT NULL,
    codebase character varying(256) DEFAULT ''::character varying NOT NULL,
    project character varying(512) DEFAULT ''::character varying NOT NULL,
    created_at integer NOT NULL
);

CREATE SEQUENCE public.sourcestamps_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.sourcestamps_id_seq OWNED BY public.sourcestamps.id;

CREATE TABLE public.steps (
    id integer NOT NULL,
    number integer NOT NULL,
    name character varying(50) NOT NULL,
    buildid integer NOT NULL,
    started_at integer,
    complete_at integer,
    state_string text NOT NULL,
    results integer,
    urls_json text NOT NULL,
    hidden smallint DEFAULT '0'::smallint NOT NULL
);

CREATE SEQUENCE public.steps_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.steps_id_seq OWNED BY public.steps.id;

CREATE TABLE public.tags (
    id integer NOT NULL,
    name text NOT NULL,
    name_hash character varying(40) NOT NULL
);

CREATE SEQUENCE public.tags_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.tags_id_seq OWNED BY public.tags.id;

CREATE TABLE public.test_code_paths (
    id integer NOT NULL,
    builderid integer NOT NULL,
    path text NOT NULL
);

CREATE SEQUENCE public.test_code_paths_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.test_code_paths_id_seq OWNED BY public.test_code_paths.id;

CREATE TABLE public.test_names (
    id integer NOT NULL,
    builderid integer NOT NULL,
    name text NOT NULL
);

CREATE SEQUENCE public.test_names_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.test_names_id_seq OWNED BY public.test_names.id;

CREATE TABLE public.test_result_sets (
    id integer NOT NULL,
    builderid integer NOT NULL,
    buildid integer NOT NULL,
    stepid integer NOT NULL,
    description text,
    category text NOT NULL,
    value_unit text NOT NULL,
    tests_passed integer,
    tests_failed integer,
    complete smallint NOT NULL
);

CREATE SEQUENCE public.test_result_sets_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.test_result_sets_id_seq OWNED BY public.test_result_sets.id;

CREATE TABLE public.test_results (
    id integer NOT NULL,
    builderid integer NOT NULL,
    test_result_setid integer NOT NULL,
    test_nameid integer,
    test_code_pathid integer,
    line integer,
    duration_ns integer,
    value text NOT NULL
);

CREATE SEQUENCE public.test_results_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.test_results_id_seq OWNED BY public.test_results.id;

CREATE TABLE public.users (
    uid integer NOT NULL,
    identifier character varying(255) NOT NULL,
    bb_username character varying(128),
    bb_password character varying(128)
);

CREATE TABLE public.users_info (
    uid integer NOT NULL,
    attr_type character varying(128) NOT NULL,
    attr_data character varying(128) NOT NULL
);

CREATE SEQUENCE public.users_uid_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.users_uid_seq OWNED BY public.users.uid;

CREATE TABLE public.workers (
    id integer NOT NULL,
    name character varying(50) NOT NULL,
    info text NOT NULL,
    paused smallint DEFAULT '0'::smallint NOT NULL,
    graceful smallint DEFAULT '0'::smallint NOT NULL
);

CREATE SEQUENCE public.workers_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.workers_id_seq OWNED BY public.workers.id;

ALTER TABLE ONLY public.build_data ALTER COLUMN id SET DEFAULT nextval('public.build_data_id_seq'::regclass);

ALTER TABLE ONLY public.builder_masters ALTER COLUMN id SET DEFAULT nextval('public.builder_masters_id_seq'::regclass);

ALTER TABLE ONLY public.builders ALTER COLUMN id SET DEFAULT nextval('public.builders_id_seq'::regclass);

ALTER TABLE ONLY public.builders_tags ALTER COLUMN id SET DEFAULT nextval('public.builders_tags_id_seq'::regclass);

ALTER TABLE ONLY public.buildrequests ALTER COLUMN id SET DEFAULT nextval('public.buildrequests_id_seq'::regclass);

ALTER TABLE ONLY public.builds ALTER COLUMN id SET DEFAULT nextval('public.builds_id_seq'::regclass);

ALTER TABLE ONLY public.buildset_sourcestamps ALTER COLUMN id SET DEFAULT nextval('public.buildset_sourcestamps_id_seq'::regclass);

ALTER TABLE ONLY public.buildsets ALTER COLUMN id SET DEFAULT nextval('public.buildsets_id_seq'::regclass);

ALTER TABLE ONLY public.changes ALTER COLUMN changeid SET DEFAULT nextval('public.changes_changeid_seq'::regclass);

ALTER TABLE ONLY public.changesources ALTER COLUMN id SET DEFAULT nextval('public.changesources_id_seq'::regclass);

ALTER TABLE ONLY public.configured_workers ALTER COLUMN id SET DEFAULT nextval('public.configured_workers_id_seq'::regclass);

ALTER TABLE ONLY public.connected_workers ALTER COLUMN id SET DEFAULT nextval('public.connected_workers_id_seq'::regclass);

ALTER TABLE ONLY public.logs ALTER COLUMN id SET DEFAULT nextval('public.logs_id_seq'::regclass);

ALTER TABLE ONLY public.masters ALTER COLUMN id SET DEFAULT nextval('public.masters_id_seq'::regclass);

ALTER TABLE ONLY public.objects ALTER COLUMN id SET DEFAULT nextval('public.objects_id_seq'::regclass);

ALTER TABLE ONLY public.patches ALTER COLUMN id SET DEFAULT nextval('public.patches_id_seq'::regclass);

ALTER TABLE ONLY public.schedulers ALTER COLUMN id SET DEFAULT nextval('public.schedulers_id_seq'::regclass);

ALTER TABLE ONLY public.sourcestamps ALTER COLUMN id SET DEFAULT nextval('public.sourcestamps_id_seq'::regclass);

ALTER TABLE ONLY public.steps ALTER COLUMN id SET DEFAULT nextval('public.steps_id_seq'::regclass);

ALTER TABLE ONLY public.tags ALTER COLUMN id SET DEFAULT nextval('public.tags_id_seq'::regclass);

ALTER TABLE ONLY public.test_code_paths ALTER COLUMN id SET DEFAULT nextval('public.test_code_paths_id_seq'::regclass);

ALTER TABLE ONLY public.test_names ALTER COLUMN id SET DEFAULT nextval('public.test_names_id_seq'::regclass);

ALTER TABLE ONLY public.test_result_sets ALTER COLUMN id SET DEFAULT nextval('public.test_result_sets_id_seq'::regclass);

ALTER TABLE ONLY public.test_results ALTER COLUMN id SET DEFAULT nextval('public.test_results_id_seq'::regclass);

ALTER TABLE ONLY public.users ALTER COLUMN uid SET DEFAULT nextval('public.users_uid_seq'::regclass);

ALTER TABLE ONLY public.workers ALTER COLUMN id SET DEFAULT nextval('public.workers_id_seq'::regclass);

ALTER TABLE ONLY public.alembic_version
    ADD CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num);

ALTER TABLE ONLY public.build_data
    ADD CONSTRAINT build_data_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.builder_masters
    ADD CONSTRAINT builder_masters_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.builders
    ADD CONSTRAINT builders_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.builders_tags
    ADD CONSTRAINT builders_tags_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.buildrequests
    ADD CONSTRAINT buildrequests_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.builds
    ADD CONSTRAINT builds_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.buildset_sourcestamps
    ADD CONSTRAINT buildset_sourcestamps_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.buildsets
    ADD CONSTRAINT buildsets_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.changes
    ADD CONSTRAINT changes_pkey PRIMARY KEY (changeid);

ALTER TABLE ONLY public.changesource_masters
    ADD CONSTRAINT changesource_masters_pkey PRIMARY KEY (changesourceid);

ALTER TABLE ONLY public.changesources
    ADD CONSTRAINT changesources_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.configured_workers
    ADD CONSTRAINT configured_workers_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.connected_workers
    ADD CONSTRAINT connected_workers_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.logs
    ADD CONSTRAINT logs_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.masters
    ADD CONSTRAINT masters_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.objects
    ADD CONSTRAINT objects_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.patches
    ADD CONSTRAINT patches_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.scheduler_masters
    ADD CONSTRAINT scheduler_masters_pkey PRIMARY KEY (schedulerid);

ALTER TABLE ONLY public.schedulers
    ADD CONSTRAINT schedulers_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.sourcestamps
    ADD CONSTRAINT sourcestamps_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.steps
    ADD CONSTRAINT steps_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.tags
    ADD CONSTRAINT tags_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.test_code_paths
    ADD CONSTRAINT test_code_paths_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.test_names
    ADD CONSTRAINT test_names_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.test_result_sets
    ADD CONSTRAINT test_result_sets_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.test_results
    ADD CONSTRAINT test_results_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (uid);

ALTER TABLE ONLY public.workers
    ADD CONSTRAINT workers_pkey PRIMARY KEY (id);

CREATE UNIQUE INDEX build_data_buildid_name ON public.build_data USING btree (buildid, name);

CREATE INDEX build_properties_buildid ON public.build_properties USING btree (buildid);

CREATE INDEX builder_masters_builderid ON public.builder_masters USING btree (builderid);

CREATE UNIQUE INDEX builder_masters_identity ON public.builder_masters USING btree (builderid, masterid);

CREATE INDEX builder_masters_masterid ON public.builder_masters USING btree (masterid);

CREATE UNIQUE INDEX builder_name_hash ON public.builders USING btree (name_hash);

CREATE INDEX builders_tags_builderid ON public.builders_tags USING btree (builderid);

CREATE UNIQUE INDEX builders_tags_unique ON public.builders_tags USING btree (builderid, tagid);

CREATE UNIQUE INDEX buildrequest_claims_brids ON public.buildrequest_claims USING btree (brid);

CREATE INDEX buildrequests_builderid ON public.buildrequests USING btree (builderid);

CREATE INDEX buildrequests_buildsetid ON public.buildrequests USING btree (buildsetid);

CREATE INDEX buildrequests_complete ON public.buildrequests USING btree (complete);

CREATE INDEX builds_buildrequestid ON public.builds USING btree (buildrequestid);

CREATE INDEX builds_masterid ON public.builds USING btree (masterid);

CREATE UNIQUE INDEX builds_number ON public.builds USING btree (builderid, number);

CREATE INDEX builds_workerid ON public.builds USING btree (workerid);

CREATE INDEX buildset_properties_buildsetid ON public.buildset_properties USING btree (buildsetid);

CREATE INDEX buildset_sourcestamps_buildsetid ON public.buildset_sourcestamps USING btree (buildsetid);

CREATE UNIQUE INDEX buildset_sourcestamps_unique ON public.buildset_sourcestamps USING btree (buildsetid, sourcestampid);

CREATE INDEX buildsets_complete ON public.buildsets USING btree (complete);

CREATE INDEX buildsets_submitted_at ON public.buildsets USING btree (submitted_at);

CREATE INDEX change_files_changeid ON public.change_files USING btree (changeid);

CREATE INDEX change_properties_changeid ON public.change_properties USING btree (changeid);

CREATE INDEX change_users_changeid ON public.change_users USING btree (changeid);

CREATE INDEX changes_author ON public.changes USING btree (author);

CREATE INDEX changes_branch ON public.changes USING btree (branch);

CREATE INDEX changes_category ON public.changes USING btree (category);

CREATE INDEX changes_revision ON public.changes USING btree (revision);

CREATE INDEX changes_sourcestampid ON public.changes USING btree (sourcestampid);

CREATE INDEX changes_when_timestamp ON public.changes USING btree (when_timestamp);

CREATE UNIQUE INDEX changesource_name_hash ON public.changesources USING btree (name_hash);

CREATE INDEX configured_workers_buildmasterid ON public.configured_workers USING btree (buildermasterid);

CREATE UNIQUE INDEX configured_workers_identity ON public.configured_workers USING btree (buildermasterid, workerid);

CREATE INDEX configured_workers_workers ON public.configured_workers USING btree (workerid);

CREATE UNIQUE INDEX connected_workers_identity ON public.connected_workers USING btree (masterid, workerid);

CREATE INDEX connected_workers_masterid ON public.connected_workers USING btree (masterid);

CREATE INDEX connected_workers_workers ON public.connected_workers USING btree (workerid);

CREATE INDEX ix_buildrequest_claims_masterid ON public.buildrequest_claims USING btree (masterid);

CREATE INDEX logchunks_firstline ON public.logchunks USING btree (logid, first_line);

CREATE INDEX logchunks_lastline ON public.logchunks USING btree (logid, last_line);

CREATE UNIQUE INDEX logs_slug ON public.logs USING btree (stepid, slug);

CREATE UNIQUE INDEX master_name_hashes ON public.masters USING btree (name_hash);

CREATE UNIQUE INDEX name_per_object ON public.object_state USING btree (objectid, name);

CREATE UNIQUE INDEX object_identity ON public.objects USING btree (name, class_name);

CREATE INDEX scheduler_changes_changeid ON public.scheduler_changes USING btree (changeid);

CREATE INDEX scheduler_changes_schedulerid ON public.scheduler_changes USING btree (schedulerid);

CREATE UNIQUE INDEX scheduler_changes_unique ON public.scheduler_changes USING btree (schedulerid, changeid);

CREATE UNIQUE INDEX scheduler_name_hash ON public.schedulers USING btree (name_hash);

CREATE UNIQUE INDEX sourcestamps_ss_hash_key ON public.sourcestamps USING btree (ss_hash);

CREATE UNIQUE INDEX steps_name ON public.steps USING btree (buildid, name);

CREATE UNIQUE INDEX steps_number ON public.steps USING btree (buildid, number);

CREATE INDEX steps_started_at ON public.steps USING btree (started_at);

CREATE UNIQUE INDEX tag_name_hash ON public.tags USING btree (name_hash);

CREATE INDEX test_code_paths_path ON public.test_code_paths USING btree (builderid, path);

CREATE INDEX test_names_name ON public.test_names USING btree (builderid, name);

CREATE UNIQUE INDEX users_bb_user ON public.users USING btree (bb_username);

CREATE UNIQUE INDEX users_identifier ON public.users USING btree (identifier);

CREATE UNIQUE INDEX users_info_attrs ON public.users_info USING btree (attr_type, attr_data);

CREATE INDEX users_info_uid ON public.users_info USING btree (uid);

CREATE UNIQUE INDEX users_info_uid_attr_type ON public.users_info USING btree (uid, attr_type);

CREATE UNIQUE INDEX workers_name ON public.workers USING btree (name);

ALTER TABLE ONLY public.build_data
    ADD CONSTRAINT build_data_buildid_fkey FOREIGN KEY (buildid) REFERENCES public.builds(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.build_properties
    ADD CONSTRAINT build_properties_buildid_fkey FOREIGN KEY (buildid) REFERENCES public.builds(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.builder_masters
    ADD CONSTRAINT builder_masters_builderid_fkey FOREIGN KEY (builderid) REFERENCES public.builders(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.builder_masters
    ADD CONSTRAINT builder_masters_masterid_fkey FOREIGN KEY (masterid) REFERENCES public.masters(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.builders_tags
    ADD CONSTRAINT builders_tags_builderid_fkey FOREIGN KEY (builderid) REFERENCES public.builders(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.builders_tags
    ADD CONSTRAINT builders_tags_tagid_fkey FOREIGN KEY (tagid) REFERENCES public.tags(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.buildrequest_claims
    ADD CONSTRAINT buildrequest_claims_brid_fkey FOREIGN KEY (brid) REFERENCES public.buildrequests(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.buildrequest_claims
    ADD CONSTRAINT buildrequest_claims_masterid_fkey FOREIGN KEY (masterid) REFERENCES public.masters(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.builds
    ADD CONSTRAINT buildrequestid FOREIGN KEY (buildrequestid) REFERENCES public.buildrequests(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.buildrequests
    ADD CONSTRAINT buildrequests_builderid_fkey FOREIGN KEY (builderid) REFERENCES public.builders(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.buildrequests
    ADD CONSTRAINT buildrequests_buildsetid_fkey FOREIGN KEY (buildsetid) REFERENCES public.buildsets(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.builds
    ADD CONSTRAINT builds_builderid_fkey FOREIGN KEY (builderid) REFERENCES public.builders(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.builds
    ADD CONSTRAINT builds_masterid_fkey FOREIGN KEY (masterid) REFERENCES public.masters(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.builds
    ADD CONSTRAINT builds_workerid_fkey FOREIGN KEY (workerid) REFERENCES public.workers(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.buildset_properties
    ADD CONSTRAINT buildset_properties_buildsetid_fkey FOREIGN KEY (buildsetid) REFERENCES public.buildsets(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.buildset_sourcestamps
    ADD CONSTRAINT buildset_sourcestamps_buildsetid_fkey FOREIGN KEY (buildsetid) REFERENCES public.buildsets(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.buildset_sourcestamps
    ADD CONSTRAINT buildset_sourcestamps_sourcestampid_fkey FOREIGN KEY (sourcestampid) REFERENCES public.sourcestamps(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.change_files
    ADD CONSTRAINT change_files_changeid_fkey FOREIGN KEY (changeid) REFERENCES public.changes(changeid) ON DELETE CASCADE;

ALTER TABLE ONLY public.change_properties
    ADD CONSTRAINT change_properties_changeid_fkey FOREIGN KEY (changeid) REFERENCES public.changes(changeid) ON DELETE CASCADE;

ALTER TABLE ONLY public.change_users
    ADD CONSTRAINT change_users_changeid_fkey FOREIGN KEY (changeid) REFERENCES public.changes(changeid) ON DELETE CASCADE;

ALTER TABLE ONLY public.change_users
    ADD CONSTRAINT change_users_uid_fkey FOREIGN KEY (uid) REFERENCES public.users(uid) ON DELETE CASCADE;

ALTER TABLE ONLY public.changes
    ADD CONSTRAINT changes_parent_changeids_fkey FOREIGN KEY (parent_changeids) REFERENCES public.changes(changeid) ON DELETE SET NULL;

ALTER TABLE ONLY public.changes
    ADD CONSTRAINT changes_sourcestampid_fkey FOREIGN KEY (sourcestampid) REFERENCES public.sourcestamps(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.changesource_masters
    ADD CONSTRAINT changesource_masters_changesourceid_fkey FOREIGN KEY (changesourceid) REFERENCES public.changesources(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.changesource_masters
    ADD CONSTRAINT changesource_masters_masterid_fkey FOREIGN KEY (masterid) REFERENCES public.masters(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.configured_workers
    ADD CONSTRAINT configured_workers_buildermasterid_fkey FOREIGN KEY (buildermasterid) REFERENCES public.builder_masters(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.configured_workers
    ADD CONSTRAINT configured_workers_workerid_fkey FOREIGN KEY (workerid) REFERENCES public.workers(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.connected_workers
    ADD CONSTRAINT connected_workers_masterid_fkey FOREIGN KEY (masterid) REFERENCES public.masters(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.connected_workers
    ADD CONSTRAINT connected_workers_workerid_fkey FOREIGN KEY (workerid) REFERENCES public.workers(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.logchunks
    ADD CONSTRAINT logchunks_logid_fkey FOREIGN KEY (logid) REFERENCES public.logs(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.logs
    ADD CONSTRAINT logs_stepid_fkey FOREIGN KEY (stepid) REFERENCES public.steps(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.object_state
    ADD CONSTRAINT object_state_objectid_fkey FOREIGN KEY (objectid) REFERENCES public.objects(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.buildsets
    ADD CONSTRAINT parent_buildid FOREIGN KEY (parent_buildid) REFERENCES public.builds(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.scheduler_changes
    ADD CONSTRAINT scheduler_changes_changeid_fkey FOREIGN KEY (changeid) REFERENCES public.changes(changeid) ON DELETE CASCADE;

ALTER TABLE ONLY public.scheduler_changes
    ADD CONSTRAINT scheduler_changes_schedulerid_fkey FOREIGN KEY (schedulerid) REFERENCES public.schedulers(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.scheduler_masters
    ADD CONSTRAINT scheduler_masters_masterid_fkey FOREIGN KEY (masterid) REFERENCES public.masters(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.scheduler_masters
    ADD CONSTRAINT scheduler_masters_schedulerid_fkey FOREIGN KEY (schedulerid) REFERENCES public.schedulers(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.sourcestamps
    ADD CONSTRAINT sourcestamps_patchid_fkey FOREIGN KEY (patchid) REFERENCES public.patches(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.steps
    ADD CONSTRAINT steps_buildid_fkey FOREIGN KEY (buildid) REFERENCES public.builds(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.test_code_paths
    ADD CONSTRAINT test_code_paths_builderid_fkey FOREIGN KEY (builderid) REFERENCES public.builders(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.test_names
    ADD CONSTRAINT test_names_builderid_fkey FOREIGN KEY (builderid) REFERENCES public.builders(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.test_result_sets
    ADD CONSTRAINT test_result_sets_builderid_fkey FOREIGN KEY (builderid) REFERENCES public.builders(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.test_result_sets
    ADD CONSTRAINT test_result_sets_buildid_fkey FOREIGN KEY (buildid) REFERENCES public.builds(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.test_result_sets
    ADD CONSTRAINT test_result_sets_stepid_fkey FOREIGN KEY (stepid) REFERENCES public.steps(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.test_results
    ADD CONSTRAINT test_results_builderid_fkey FOREIGN KEY (builderid) REFERENCES public.builders(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.test_results
    ADD CONSTRAINT test_results_test_code_pathid_fkey FOREIGN KEY (test_code_pathid) REFERENCES public.test_code_paths(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.test_results
    ADD CONSTRAINT test_results_test_nameid_fkey FOREIGN KEY (test_nameid) REFERENCES public.test_names(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.test_results
    ADD CONSTRAINT test_results_test_result_setid_fkey FOREIGN KEY (test_result_setid) REFERENCES public.test_result_sets(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.users_info
    ADD CONSTRAINT users_info_uid_fkey FOREIGN KEY (uid) REFERENCES public.users(uid) ON DELETE CASCADE;


INSERT INTO public.alembic_version (version_num) VALUES ('059');
