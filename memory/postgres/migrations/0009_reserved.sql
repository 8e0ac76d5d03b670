-- 0009_reserved: a placeholder. Version 9 is another branch's migration
-- (the lead hands out numbers); migration.Load wants versions without
-- gaps, so this empty one stands in for it until that branch merges.
-- Delete this file then.
SELECT 1;
