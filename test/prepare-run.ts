// What vitest's global setup does, once for a run of several vitest processes
// (deploy/local/test.sh starts the end-to-end files and the rest as two, side by side): the
// template databases and the services' build. Prints the build's folder, which the caller
// hands to both in the environment (each one's global setup then skips) and removes after.
import setup from './global-setup.js';
import { SERVICES_BUILD_ENV } from './helpers/service-build.js';

await setup();
process.stdout.write(`${process.env[SERVICES_BUILD_ENV]}\n`);
