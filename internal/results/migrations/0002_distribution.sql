-- The Results tab asks, for one kernel and its arguments, every engine's medians across
-- runs: one range of this index answers it without reading the cells' JSON.
CREATE INDEX cells_distribution ON cells (kernel, args, engine, median_ns, run_id, engine_version, failure);
CREATE INDEX runs_created ON runs (created_ns);
