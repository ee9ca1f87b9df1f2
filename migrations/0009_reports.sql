CREATE TABLE `report_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`report_id` text NOT NULL,
	`trigger` text NOT NULL,
	`status` text NOT NULL,
	`period_from` integer NOT NULL,
	`period_to` integer NOT NULL,
	`format` text NOT NULL,
	`rows` integer,
	`bytes` integer,
	`file_key` text,
	`error` text,
	`schedule_key` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`started_at` integer,
	`completed_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`report_id`) REFERENCES `reports`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "report_runs_status_known" CHECK(status IN ('queued', 'running', 'completed', 'failed'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `report_runs_schedule_key_unique` ON `report_runs` (`schedule_key`);--> statement-breakpoint
CREATE INDEX `report_runs_account` ON `report_runs` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `report_runs_report` ON `report_runs` (`report_id`,`id`);--> statement-breakpoint
CREATE INDEX `report_runs_created` ON `report_runs` (`created_at`);--> statement-breakpoint
CREATE TABLE `reports` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`filters` text NOT NULL,
	`schedule` text,
	`format` text NOT NULL,
	`destination` text NOT NULL,
	`destination_secret_sealed` text,
	`next_run_at` integer,
	`period_start` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `reports_account` ON `reports` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `reports_due` ON `reports` (`next_run_at`) WHERE deleted_at IS NULL AND next_run_at IS NOT NULL;