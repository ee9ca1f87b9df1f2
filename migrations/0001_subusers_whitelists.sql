CREATE TABLE `subusers` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`label` text NOT NULL,
	`products` text NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`concurrent_max` integer NOT NULL,
	`rps_max` integer NOT NULL,
	`password_hash` text NOT NULL,
	`previous_password_hash` text,
	`previous_password_until` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "subusers_status_known" CHECK(status IN ('active', 'disabled')),
	CONSTRAINT "subusers_limits_range" CHECK(concurrent_max BETWEEN 1 AND 10000 AND rps_max BETWEEN 1 AND 10000)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `subusers_name_unique` ON `subusers` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `subusers_live_label` ON `subusers` (`account_id`,`label`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `subusers_account` ON `subusers` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `whitelist_entries` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`scope` text NOT NULL,
	`scope_id` text NOT NULL,
	`product` text NOT NULL,
	`ip` text NOT NULL,
	`label` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `whitelist_entries_unique` ON `whitelist_entries` (`scope`,`scope_id`,`product`,`ip`);--> statement-breakpoint
CREATE INDEX `whitelist_entries_account` ON `whitelist_entries` (`account_id`,`id`);