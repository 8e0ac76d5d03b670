-- 0014_reserved: the number is reserved for the incidents migration; this
-- file only keeps the versions without a gap until it is merged (then it is
-- deleted in favour of that migration).
SELECT 1;
