-- Buildbot 4.3's additions to the schema (alembic revisions 060 to 067), as its migrations make
-- them on PostgreSQL: projects (060, 062), the builders' project and description format (060,
-- 061), steps.locks_acquired_at (063), workers.pause_reason (064), buildsets.rebuilt_buildid
-- (065), builds.locks_duration_s (066) and the codebase tables (067). Names of tables, columns,
-- indexes and constraints are those the migrations give or PostgreSQL derives from them.
--
-- On a database that Buildbot 4.3 already upgraded (alembic revision 067) this migration is
-- recorded as adopted without running (migrate.ts), like 0001. On a Buildbot 3.7 database it
-- runs and leaves alembic_version at 059, so that a Buildbot 3.7 master sharing the database
-- keeps starting: every added column is nullable or has a default, and 3.7 never names them.
-- One difference from 066, for the same reason: builds.locks_duration_s keeps DEFAULT 0
-- (066 fills the column with 0 and drops the default), because a 3.7 master inserts builds
-- without it. `npm run migrate -- --to-buildbot-4` records revision 067 once 3.7 is gone.

-- 060: projects, and the builder's project.
CREATE TABLE public.projects (
    id serial PRIMARY KEY,
    name text NOT NULL,
    name_hash character varying(40) NOT NULL,
    slug character varying(50) NOT NULL,
    description text
);
ALTER TABLE public.builders ADD COLUMN projectid integer
    CONSTRAINT fk_builders_projectid REFERENCES public.projects(id) ON DELETE SET NULL;
CREATE INDEX builders_projectid ON public.builders USING btree (projectid);
CREATE UNIQUE INDEX projects_name_hash ON public.projects USING btree (name_hash);

-- 061 and 062: how a builder's and a project's description is written, and its HTML.
ALTER TABLE public.builders ADD COLUMN description_format text, ADD COLUMN description_html text;
ALTER TABLE public.projects ADD COLUMN description_format text, ADD COLUMN description_html text;

-- 063: when a step got its locks; a finished step got them when it started.
ALTER TABLE public.steps ADD COLUMN locks_acquired_at integer;
UPDATE public.steps SET locks_acquired_at = started_at;

-- 064: why a worker is paused.
ALTER TABLE public.workers ADD COLUMN pause_reason text;

-- 065: the build a build set rebuilds.
ALTER TABLE public.buildsets ADD COLUMN rebuilt_buildid integer
    CONSTRAINT rebuilt_buildid REFERENCES public.builds(id) ON DELETE SET NULL;

-- 066: how long a build waited for its locks (0 for every build before; see above).
ALTER TABLE public.builds ADD COLUMN locks_duration_s integer NOT NULL DEFAULT 0;

-- 067: codebases of a project, their commits and branches.
CREATE TABLE public.codebases (
    id serial PRIMARY KEY,
    projectid integer NOT NULL REFERENCES public.projects(id) ON DELETE CASCADE,
    name text NOT NULL,
    slug character varying(50) NOT NULL,
    name_hash character varying(40) NOT NULL
);
CREATE TABLE public.codebase_commits (
    id serial PRIMARY KEY,
    codebaseid integer NOT NULL REFERENCES public.codebases(id) ON DELETE CASCADE,
    author character varying(255) NOT NULL,
    committer character varying(255),
    comments text NOT NULL,
    when_timestamp integer NOT NULL,
    revision character varying(70) NOT NULL,
    parent_commitid integer REFERENCES public.codebase_commits(id) ON DELETE SET NULL
);
CREATE TABLE public.codebase_branches (
    id serial PRIMARY KEY,
    codebaseid integer NOT NULL REFERENCES public.codebases(id) ON DELETE CASCADE,
    name character varying(255) NOT NULL,
    name_hash character varying(40) NOT NULL,
    commitid integer REFERENCES public.codebase_commits(id) ON DELETE SET NULL,
    last_timestamp integer NOT NULL
);
CREATE UNIQUE INDEX codebases_projects_name_hash ON public.codebases USING btree (projectid, name_hash);
CREATE UNIQUE INDEX codebase_commits_unique ON public.codebase_commits USING btree (codebaseid, revision);
CREATE UNIQUE INDEX codebase_branches_unique ON public.codebase_branches USING btree (codebaseid, name_hash);
