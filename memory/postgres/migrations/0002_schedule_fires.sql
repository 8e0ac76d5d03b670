-- 0002_schedule_fires: one row per fire of a schedule (docs/design.md §13). The
-- primary key makes a fire run once, whichever replica claims it first.
CREATE TABLE schedule_fires (
	name        text NOT NULL,
	fire_at     timestamptz NOT NULL,
	claimed_by  text NOT NULL,
	claimed_at  timestamptz NOT NULL,
	conv_key    text NOT NULL DEFAULT '',
	outcome     text NOT NULL,
	finished_at timestamptz,
	PRIMARY KEY (name, fire_at)
);
