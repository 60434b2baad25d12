// What opening a PostgreSQL connection costs the client's process (node-postgres: the socket,
// the startup, SCRAM's key derivation and HMACs through WebCrypto), as a master pays it for
// each connection its pool opens (phase S's first burst opens 24: load/results/fleet.md,
// 2026-11-29 08:20). Opens N connections one after another, then closes them, ROUNDS times;
// prints this process's CPU a connection for each round (the first pays for loading and
// compiling the code it runs).
//
//   DATABASE_URL="$(BENCH_PG_PORT=24440 load/bench/cluster.sh url fleet_run)" N=24 ROUNDS=3 node --import tsx load/bench/connection-cost.ts
import pg from 'pg';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL: the database to connect to');
const n = Number(process.env.N ?? 24);
const rounds = Number(process.env.ROUNDS ?? 3);
for (let round = 1; round <= rounds; round++) {
  const before = process.cpuUsage();
  const clients: pg.Client[] = [];
  for (let i = 0; i < n; i++) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    clients.push(client);
  }
  const used = process.cpuUsage(before);
  console.log(
    `round ${round}: ${n} connections, ${((used.user + used.system) / 1000 / n).toFixed(2)} ms of this process's CPU each`,
  );
  await Promise.all(clients.map((c) => c.end()));
}
