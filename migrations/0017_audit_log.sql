CREATE TABLE `audit_events` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`actor_key_id` text,
	`source_ip` text,
	`request_id` text NOT NULL,
	`action` text NOT NULL,
	`resource_type` text NOT NULL,
	`resource_id` text NOT NULL,
	`products` text,
	`changes` text,
	`previous` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_events_account` ON `audit_events` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `audit_events_resource` ON `audit_events` (`account_id`,`resource_id`,`id`);--> statement-breakpoint
CREATE INDEX `audit_events_actor` ON `audit_events` (`account_id`,`actor_key_id`,`id`);--> statement-breakpoint
CREATE INDEX `audit_events_action` ON `audit_events` (`account_id`,`action`,`id`);