CREATE TABLE `oauth_grants` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`member_id` text NOT NULL,
	`client_id` text NOT NULL,
	`client_name` text NOT NULL,
	`redirect_host` text NOT NULL,
	`scopes` text NOT NULL,
	`provider_grant_id` text,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	`revoked_at` integer,
	FOREIGN KEY (`member_id`) REFERENCES `members`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `oauth_grants_member` ON `oauth_grants` (`member_id`,`id`);--> statement-breakpoint
CREATE INDEX `oauth_grants_account` ON `oauth_grants` (`account_id`,`id`);--> statement-breakpoint
ALTER TABLE `audit_events` ADD `actor_client_id` text;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `actor_client_name` text;