CREATE TABLE `balance_watches` (
	`account_id` text PRIMARY KEY NOT NULL,
	`forecast_need_minor` integer DEFAULT 0 NOT NULL,
	`forecast_at` integer DEFAULT 0 NOT NULL,
	`low` integer DEFAULT false NOT NULL,
	`crossings` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `balance_watches_stalest` ON `balance_watches` (`forecast_at`);--> statement-breakpoint
CREATE TABLE `spend_budgets` (
	`account_id` text PRIMARY KEY NOT NULL,
	`amount_minor` integer NOT NULL,
	`thresholds` text NOT NULL,
	`hard_stop` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "spend_budgets_amount_positive" CHECK("spend_budgets"."amount_minor" > 0)
);
--> statement-breakpoint
CREATE INDEX `ledger_entries_account_time` ON `ledger_entries` (`account_id`,`created_at`);--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_batch_assertions` (
	`failed` text NOT NULL,
	CONSTRAINT "assert_inventory" CHECK("__new_batch_assertions"."failed" <> 'inventory'),
	CONSTRAINT "assert_state" CHECK("__new_batch_assertions"."failed" <> 'state'),
	CONSTRAINT "assert_quota" CHECK("__new_batch_assertions"."failed" <> 'quota'),
	CONSTRAINT "assert_budget" CHECK("__new_batch_assertions"."failed" <> 'budget')
);
--> statement-breakpoint
INSERT INTO `__new_batch_assertions`("failed") SELECT "failed" FROM `batch_assertions`;--> statement-breakpoint
DROP TABLE `batch_assertions`;--> statement-breakpoint
ALTER TABLE `__new_batch_assertions` RENAME TO `batch_assertions`;--> statement-breakpoint
PRAGMA foreign_keys=ON;