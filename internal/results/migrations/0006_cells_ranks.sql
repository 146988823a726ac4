-- The quantiles of an engine's medians read at their ranks, when no run field filters:
-- the narrowest index that holds them in order, so that a read to the middle rank walks
-- the fewest pages.
CREATE INDEX cells_ranks ON cells (kernel, args, failure, engine, median_ns);
