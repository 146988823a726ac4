-- The Results tab's query answered from indexes alone, with no join and no row sent to
-- Go per cell: each cell carries its run's filterable fields, and three covering indexes
-- give each engine's count and quantiles (cells_quantiles), its medians per wasmgap
-- version (cells_versions) and its newest runs (cells_newest). facets holds the values
-- the filters can take.
ALTER TABLE cells ADD COLUMN created_ns BIGINT NOT NULL DEFAULT 0;
ALTER TABLE cells ADD COLUMN source TEXT NOT NULL DEFAULT '';
ALTER TABLE cells ADD COLUMN browser TEXT NOT NULL DEFAULT '';
ALTER TABLE cells ADD COLUMN browser_version TEXT NOT NULL DEFAULT '';
ALTER TABLE cells ADD COLUMN os TEXT NOT NULL DEFAULT '';
ALTER TABLE cells ADD COLUMN cores INTEGER NOT NULL DEFAULT 0;
ALTER TABLE cells ADD COLUMN wasmgap TEXT NOT NULL DEFAULT '';
UPDATE cells SET
	created_ns = (SELECT r.created_ns FROM runs r WHERE r.id = cells.run_id),
	source = (SELECT r.source FROM runs r WHERE r.id = cells.run_id),
	browser = (SELECT r.browser FROM runs r WHERE r.id = cells.run_id),
	browser_version = (SELECT r.browser_version FROM runs r WHERE r.id = cells.run_id),
	os = (SELECT r.os FROM runs r WHERE r.id = cells.run_id),
	cores = (SELECT r.cores FROM runs r WHERE r.id = cells.run_id),
	wasmgap = (SELECT r.wasmgap FROM runs r WHERE r.id = cells.run_id);
DROP INDEX cells_distribution;
CREATE INDEX cells_quantiles ON cells (kernel, args, failure, engine, median_ns, created_ns, source, browser, os, cores, engine_version, wasmgap);
CREATE INDEX cells_versions ON cells (kernel, args, failure, engine, wasmgap, median_ns, created_ns, source, browser, os, cores, engine_version);
CREATE INDEX cells_newest ON cells (kernel, args, failure, engine, run_id);
CREATE TABLE facets (kind TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (kind, value));
INSERT INTO facets (kind, value) SELECT DISTINCT 'browser', browser FROM runs WHERE browser <> '';
INSERT INTO facets (kind, value) SELECT DISTINCT 'os', os FROM runs WHERE os <> '';
INSERT INTO facets (kind, value) SELECT DISTINCT 'cores', CAST(cores AS TEXT) FROM runs WHERE cores > 0;
INSERT INTO facets (kind, value) SELECT DISTINCT 'wasmgap', wasmgap FROM runs WHERE wasmgap <> '';
INSERT INTO facets (kind, value) SELECT DISTINCT 'engine_version', engine_version FROM cells WHERE engine_version <> '';
