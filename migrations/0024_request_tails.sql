CREATE TABLE `request_tails` (
	`account_id` text PRIMARY KEY NOT NULL,
	`opened_at` integer NOT NULL
);
