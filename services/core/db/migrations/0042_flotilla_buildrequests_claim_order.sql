-- flotilla:concurrent
-- Each builder's pending requests in the order a master claims them (highest priority, then
-- the oldest, then the lowest id), so that a claim pass reads, for each builder with an idle
-- worker, its first few candidates from this index (services/core/data/buildrequests.ts,
-- pendingBuildRequests) instead of ranking the whole queue. Measured on 25,000 pending over
-- 1,000 builders (load/results/fleet.md, 2026-11-28 22:30): a pass for 20 builders 268 ms ->
-- 3 ms, for all 1,000 204 ms -> 53 ms (pgbench -T 8, one client, load 34-40).
CREATE INDEX CONCURRENTLY IF NOT EXISTS flotilla_buildrequests_claim_order
  ON public.buildrequests USING btree (builderid, priority DESC, submitted_at, id)
  WHERE coalesce(complete, 0) = 0;
