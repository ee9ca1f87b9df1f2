CREATE TABLE `proxy_tests` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`result` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `proxy_tests_account` ON `proxy_tests` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `proxy_tests_created` ON `proxy_tests` (`created_at`);