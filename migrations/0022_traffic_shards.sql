-- Busy accounts' traffic stores split by sub-user: the count per account, and settlements numbered per shard.
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_usage_settlements` (
	`account_id` text NOT NULL,
	`shard` integer DEFAULT 0 NOT NULL,
	`seq` integer NOT NULL,
	`settled_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `shard`)
);
--> statement-breakpoint
INSERT INTO `__new_usage_settlements`("account_id", "shard", "seq", "settled_at") SELECT "account_id", 0, "seq", "settled_at" FROM `usage_settlements`;--> statement-breakpoint
DROP TABLE `usage_settlements`;--> statement-breakpoint
ALTER TABLE `__new_usage_settlements` RENAME TO `usage_settlements`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
ALTER TABLE `accounts` ADD `traffic_shards` integer DEFAULT 1 NOT NULL;