-- 0006_schedule_fires: one row per fire of a schedule (docs/design.md §13). The
-- primary key makes a fire run once, whichever process claims it first.
CREATE TABLE schedule_fires (
	name        TEXT NOT NULL,
	fire_at     INTEGER NOT NULL, -- unix microseconds
	claimed_by  TEXT NOT NULL,
	claimed_at  INTEGER NOT NULL,
	conv_key    TEXT NOT NULL DEFAULT '',
	outcome     TEXT NOT NULL,
	finished_at INTEGER,
	PRIMARY KEY (name, fire_at)
);
