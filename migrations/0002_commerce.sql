CREATE TABLE `bandwidth_pools` (
	`account_id` text NOT NULL,
	`product` text NOT NULL,
	`purchased_mb` integer DEFAULT 0 NOT NULL,
	`used_mb` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`account_id`, `product`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `bandwidth_prices` (
	`product` text PRIMARY KEY NOT NULL,
	`price_per_gb_minor` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `batch_assertions` (
	`failed` text NOT NULL,
	CONSTRAINT "assert_inventory" CHECK("batch_assertions"."failed" <> 'inventory'),
	CONSTRAINT "assert_state" CHECK("batch_assertions"."failed" <> 'state'),
	CONSTRAINT "assert_quota" CHECK("batch_assertions"."failed" <> 'quota')
);
--> statement-breakpoint
CREATE TABLE `custom_tiers` (
	`account_id` text NOT NULL,
	`product` text NOT NULL,
	`gb_included` integer NOT NULL,
	`monthly_price_minor` integer NOT NULL,
	PRIMARY KEY(`account_id`, `product`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`type` text NOT NULL,
	`payload` text NOT NULL,
	`dedupe_key` text NOT NULL,
	`created_at` integer NOT NULL,
	`delivered_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_dedupe_key_unique` ON `events` (`dedupe_key`);--> statement-breakpoint
CREATE INDEX `events_account` ON `events` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `isp_asns` (
	`country` text NOT NULL,
	`asn` integer NOT NULL,
	`carrier` text NOT NULL,
	`premium` integer DEFAULT false NOT NULL,
	`price_per_ip_month_minor` integer NOT NULL,
	PRIMARY KEY(`country`, `asn`)
);
--> statement-breakpoint
CREATE TABLE `isp_batches` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`subuser_id` text NOT NULL,
	`order_id` text NOT NULL,
	`status` text NOT NULL,
	`country` text NOT NULL,
	`city` text,
	`asn` integer NOT NULL,
	`quantity` integer NOT NULL,
	`price_per_ip_month_minor` integer NOT NULL,
	`purchased_at` integer NOT NULL,
	`period_start` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`auto_renew` integer DEFAULT true NOT NULL,
	`renewal_months` integer DEFAULT 1 NOT NULL,
	`replacements_used` integer DEFAULT 0 NOT NULL,
	`refresh_used` integer DEFAULT false NOT NULL,
	`provision_ready_at` integer,
	`grace_until` integer,
	`released_at` integer,
	`password_sealed` text NOT NULL,
	`password_hash` text NOT NULL,
	`previous_password_hash` text,
	`previous_password_until` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`subuser_id`) REFERENCES `subusers`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "isp_batches_quantity" CHECK(quantity BETWEEN 1 AND 5000)
);
--> statement-breakpoint
CREATE INDEX `isp_batches_account` ON `isp_batches` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `isp_batches_status` ON `isp_batches` (`status`);--> statement-breakpoint
CREATE TABLE `isp_ips` (
	`id` text PRIMARY KEY NOT NULL,
	`ip` text NOT NULL,
	`port` integer DEFAULT 8000 NOT NULL,
	`country` text NOT NULL,
	`city` text,
	`asn` integer NOT NULL,
	`carrier` text NOT NULL,
	`status` text DEFAULT 'available' NOT NULL,
	`batch_id` text,
	`assigned_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `isp_ips_ip_unique` ON `isp_ips` (`ip`);--> statement-breakpoint
CREATE INDEX `isp_ips_stock` ON `isp_ips` (`status`,`country`,`asn`,`city`);--> statement-breakpoint
CREATE INDEX `isp_ips_batch` ON `isp_ips` (`batch_id`);--> statement-breakpoint
CREATE TABLE `orders` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`product` text NOT NULL,
	`status` text NOT NULL,
	`total_minor` integer NOT NULL,
	`details` text NOT NULL,
	`batch_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `orders_account` ON `orders` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `subscription_tiers` (
	`product` text NOT NULL,
	`plan` text NOT NULL,
	`gb_included` integer NOT NULL,
	`monthly_price_minor` integer NOT NULL,
	PRIMARY KEY(`product`, `plan`)
);
--> statement-breakpoint
CREATE TABLE `subscriptions` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`product` text NOT NULL,
	`plan` text,
	`batch_id` text,
	`cycle` text NOT NULL,
	`quantity` integer,
	`gb_included` integer,
	`price_minor` integer NOT NULL,
	`status` text NOT NULL,
	`period_start` integer NOT NULL,
	`renews_at` integer NOT NULL,
	`period_start_used_mb` integer DEFAULT 0 NOT NULL,
	`pending_plan` text,
	`pending_cycle` text,
	`pending_quantity` integer,
	`past_due_since` integer,
	`archived_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `subscriptions_account` ON `subscriptions` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `subscriptions_due` ON `subscriptions` (`status`,`renews_at`);--> statement-breakpoint
ALTER TABLE `ledger_entries` ADD `unique_key` text;--> statement-breakpoint
CREATE UNIQUE INDEX `ledger_entries_unique_key_unique` ON `ledger_entries` (`unique_key`);