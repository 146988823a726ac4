-- A run measured by a farm's agent names its machine (machine_name, and machine_desc: the
-- agent's description of it as JSON), and each of its cells names the farm job it answers
-- and the agent that measured it. A job's result is stored once: job_id is unique (NULL,
-- for the cells of bench and of the page, repeats freely).
ALTER TABLE runs ADD COLUMN machine_name TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN machine_desc TEXT NOT NULL DEFAULT '';
ALTER TABLE cells ADD COLUMN job_id TEXT;
ALTER TABLE cells ADD COLUMN agent TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX cells_job_id ON cells (job_id);
