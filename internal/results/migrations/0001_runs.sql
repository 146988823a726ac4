-- A run: one `wasmgap bench`, one server cell of the playground, or one shared set of a
-- browser's cells, with the environment it ran in. {{id}} and {{real}} are the dialect's
-- auto-increment key and double (results.dialect).
CREATE TABLE runs (
	id {{id}},
	created_ns BIGINT NOT NULL,
	source TEXT NOT NULL,
	plan TEXT NOT NULL,
	machine TEXT NOT NULL,
	wasmgap TEXT NOT NULL,
	go TEXT NOT NULL,
	cpu TEXT NOT NULL,
	cores INTEGER NOT NULL,
	os TEXT NOT NULL,
	arch TEXT NOT NULL,
	browser TEXT NOT NULL,
	browser_version TEXT NOT NULL,
	user_agent TEXT NOT NULL,
	hardware_concurrency INTEGER NOT NULL,
	cross_origin_isolated INTEGER NOT NULL,
	timer_resolution_ns {{real}} NOT NULL,
	method TEXT NOT NULL,
	environment TEXT NOT NULL
);

-- A cell: one kernel with its arguments on one engine, with every sample and the noise
-- record in result (measure.Result as JSON).
CREATE TABLE cells (
	id {{id}},
	run_id BIGINT NOT NULL REFERENCES runs (id),
	pos INTEGER NOT NULL,
	kernel TEXT NOT NULL,
	args TEXT NOT NULL,
	engine TEXT NOT NULL,
	engine_version TEXT NOT NULL,
	median_ns {{real}} NOT NULL,
	failure TEXT NOT NULL,
	result TEXT NOT NULL
);

CREATE INDEX cells_run ON cells (run_id);
CREATE INDEX runs_plan_machine ON runs (plan, machine, id);
