// The object-store benchmark's S3 server (test/helpers/s3-server.ts: in memory, every
// signature checked) in a process of its own, so that its CPU is not the API's. Prints its
// endpoint, then serves until killed.
import { S3Server } from '../../../test/helpers/s3-server.js';

const s3 = await S3Server.start({ bucket: process.env.S3_BUCKET ?? 'bench' });
process.stdout.write(`${s3.endpoint}\n`);
// A clean exit on SIGTERM, so that a CPU profile (run.ts's PROFILE) is written.
process.once('SIGTERM', () => void s3.close().then(() => process.exit(0)));
