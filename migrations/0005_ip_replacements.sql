CREATE TABLE `ip_replacements` (
	`id` text PRIMARY KEY NOT NULL,
	`batch_id` text NOT NULL,
	`replaced_ip_id` text NOT NULL,
	`reason` text NOT NULL,
	`free` integer NOT NULL,
	`charged_minor` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `ip_replacements_batch` ON `ip_replacements` (`batch_id`,`id`);