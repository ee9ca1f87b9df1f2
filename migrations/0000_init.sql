CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`company` text,
	`plan` text NOT NULL,
	`kyc_status` text DEFAULT 'not-submitted' NOT NULL,
	`risk_review` integer DEFAULT false NOT NULL,
	`balance_minor` integer DEFAULT 0 NOT NULL,
	`currency` text DEFAULT 'USD' NOT NULL,
	`billing_address` text,
	`tax_id` text,
	`default_currency` text DEFAULT 'USD' NOT NULL,
	`notification_email` text,
	`limits` text,
	`mfa_enabled` integer DEFAULT false NOT NULL,
	`mfa_secret_sealed` text,
	`mfa_pending_secret_sealed` text,
	`mfa_last_step` integer,
	`last_login_at` integer,
	`last_login_ip` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	CONSTRAINT "accounts_balance_non_negative" CHECK("accounts"."balance_minor" >= 0),
	CONSTRAINT "accounts_plan_known" CHECK(plan IN ('trial', 'pay-as-you-go', 'starter', 'pro', 'business', 'enterprise')),
	CONSTRAINT "accounts_kyc_known" CHECK(kyc_status IN ('not-submitted', 'pending', 'approved', 'rejected'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_email_unique` ON `accounts` (`email`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`token_hint` text NOT NULL,
	`products` text,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_token_hash_unique` ON `api_keys` (`token_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_account` ON `api_keys` (`account_id`);--> statement-breakpoint
CREATE TABLE `ledger_entries` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`amount_minor` integer NOT NULL,
	`reason` text NOT NULL,
	`reference` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `ledger_entries_account` ON `ledger_entries` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `mfa_recovery_codes` (
	`account_id` text NOT NULL,
	`code_hash` text NOT NULL,
	`pending` integer NOT NULL,
	`used_at` integer,
	PRIMARY KEY(`account_id`, `code_hash`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
