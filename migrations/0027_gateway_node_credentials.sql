CREATE TABLE `gateway_node_credentials` (
	`id` text PRIMARY KEY NOT NULL,
	`node` text NOT NULL,
	`token_hash` text NOT NULL,
	`token_hint` text NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `gateway_node_credentials_token_hash_unique` ON `gateway_node_credentials` (`token_hash`);--> statement-breakpoint
CREATE INDEX `gateway_node_credentials_live` ON `gateway_node_credentials` (`node`) WHERE revoked_at IS NULL;