// How much uploads may store (docs/security.md, "Upload sizes"). Buildbot's master cuts an
// upload at its step's maxsize and has no limit when the step sets none; every artifact here
// is a PostgreSQL large object that all masters and API pods share, so an upload without a
// limit could fill the database (issue 28's review saw a 1 GB upload grow PostgreSQL's
// folder from 66 MB to 2.3 GB). The master enforces both limits itself, counting bytes as
// they arrive, whatever the worker says (services/master/builds/steps/upload-limit.ts).
import { z } from 'zod';

const bytes = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

export const artifacts = z
  .object({
    // The maxsize of an upload step that sets none, in bytes (default 256 MiB): past it the
    // master stops the upload and the step fails, keeping nothing. A step's own maxsize
    // overrides it, larger or smaller.
    default_maxsize: bytes.default(256 * 1024 * 1024),
    // The bytes all the artifacts of one build may take together (default 1 GiB): an upload
    // that would take the build past it is stopped and fails the same way. A second upload to
    // the same name replaces the first, which then counts no more.
    build_quota: bytes.default(1024 * 1024 * 1024),
  })
  .strict();
