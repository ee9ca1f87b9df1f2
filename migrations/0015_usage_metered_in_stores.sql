CREATE TABLE `usage_settlements` (
	`account_id` text PRIMARY KEY NOT NULL,
	`seq` integer NOT NULL,
	`settled_at` integer NOT NULL
);
--> statement-breakpoint
DROP TABLE `usage_applied`;--> statement-breakpoint
DROP TABLE `usage_minute_requests`;--> statement-breakpoint
ALTER TABLE `usage_batches` ADD `copies` integer DEFAULT 1 NOT NULL;