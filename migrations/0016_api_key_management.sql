ALTER TABLE `api_keys` ADD `scopes` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `name` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `expires_at` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `last_used_at` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `last_used_ip` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `previous_token_hash` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `previous_token_expires_at` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_previous_token_hash_unique` ON `api_keys` (`previous_token_hash`);