-- The Results tab's counts without a scan of the cells: cell_counts holds, for each
-- kernel, arguments and engine and each combination of the filters' fields, how many
-- cells did not fail (n) and when the first of them was stored (first_ns). Save adds to
-- it as it stores a cell (countCell), Delete recounts the groups it touched; the cells
-- stored before this migration are counted here. A filter on time (Since, Until) still
-- counts the cells themselves.
CREATE TABLE cell_counts (
	kernel TEXT NOT NULL,
	args TEXT NOT NULL,
	engine TEXT NOT NULL,
	source TEXT NOT NULL,
	browser TEXT NOT NULL,
	os TEXT NOT NULL,
	cores INTEGER NOT NULL,
	engine_version TEXT NOT NULL,
	wasmgap TEXT NOT NULL,
	n INTEGER NOT NULL,
	first_ns BIGINT NOT NULL,
	PRIMARY KEY (kernel, args, engine, source, browser, os, cores, engine_version, wasmgap)
);
INSERT INTO cell_counts (kernel, args, engine, source, browser, os, cores, engine_version, wasmgap, n, first_ns)
	SELECT kernel, args, engine, source, browser, os, cores, engine_version, wasmgap, COUNT(*), MIN(created_ns)
	FROM cells WHERE failure = ''
	GROUP BY kernel, args, engine, source, browser, os, cores, engine_version, wasmgap;
