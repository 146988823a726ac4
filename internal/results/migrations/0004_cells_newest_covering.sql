-- The newest points read from the index alone, as the counts and quantiles are.
DROP INDEX cells_newest;
CREATE INDEX cells_newest ON cells (kernel, args, failure, engine, run_id, median_ns, created_ns, source, browser, browser_version, os, cores, engine_version, wasmgap);
