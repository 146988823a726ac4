-- A warm-up study: one kernel with its arguments timed call by call on several engines,
-- several executions each, with its analysis (warmup.Report as JSON in study), stored by
-- `wasmgap warmup` and by the page's Warm-up view.
CREATE TABLE warmup_studies (
	id {{id}},
	created_ns BIGINT NOT NULL,
	source TEXT NOT NULL,
	wasmgap TEXT NOT NULL,
	kernel TEXT NOT NULL,
	args TEXT NOT NULL,
	engines TEXT NOT NULL,
	study TEXT NOT NULL
);
CREATE INDEX warmup_studies_created ON warmup_studies (created_ns);
