CREATE TABLE `subuser_monthly_usage` (
	`subuser_id` text NOT NULL,
	`month` text NOT NULL,
	`used_bytes` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`subuser_id`, `month`)
);
--> statement-breakpoint
CREATE TABLE `usage_applied` (
	`message_key` text PRIMARY KEY NOT NULL,
	`applied_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `usage_applied_at` ON `usage_applied` (`applied_at`);--> statement-breakpoint
CREATE TABLE `usage_batches` (
	`id` text PRIMARY KEY NOT NULL,
	`accepted` integer NOT NULL,
	`dropped` integer NOT NULL,
	`received_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `usage_batches_received` ON `usage_batches` (`received_at`);--> statement-breakpoint
ALTER TABLE `bandwidth_pools` ADD `purchased_bytes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `bandwidth_pools` ADD `used_bytes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `bandwidth_pools` ADD `top_up_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `bandwidth_pools` ADD `exhausted` integer DEFAULT false NOT NULL;--> statement-breakpoint
UPDATE `bandwidth_pools` SET `purchased_bytes` = `purchased_mb` * 1000000, `used_bytes` = `used_mb` * 1000000;--> statement-breakpoint
ALTER TABLE `bandwidth_pools` DROP COLUMN `purchased_mb`;--> statement-breakpoint
ALTER TABLE `bandwidth_pools` DROP COLUMN `used_mb`;--> statement-breakpoint
ALTER TABLE `subscriptions` ADD `period_start_used_bytes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE `subscriptions` SET `period_start_used_bytes` = `period_start_used_mb` * 1000000;--> statement-breakpoint
ALTER TABLE `subscriptions` DROP COLUMN `period_start_used_mb`;--> statement-breakpoint
ALTER TABLE `subusers` ADD `traffic_limit_bytes` integer;