ALTER TABLE `api_keys` ADD `subuser_ids` text;--> statement-breakpoint
ALTER TABLE `subusers` ADD `daily_limit_bytes` integer;--> statement-breakpoint
ALTER TABLE `subusers` ADD `lifetime_limit_bytes` integer;--> statement-breakpoint
ALTER TABLE `subusers` ADD `target_rules` text;--> statement-breakpoint
ALTER TABLE `subusers` ADD `expires_at` integer;--> statement-breakpoint
ALTER TABLE `subusers` ADD `expiry_announced_for` integer;--> statement-breakpoint
CREATE INDEX `subusers_expiring` ON `subusers` (`expires_at`) WHERE expires_at IS NOT NULL AND deleted_at IS NULL;