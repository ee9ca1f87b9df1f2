CREATE TABLE `member_passkeys` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`member_id` text NOT NULL,
	`name` text NOT NULL,
	`credential_id` text NOT NULL,
	`public_key` text NOT NULL,
	`sign_count` integer NOT NULL,
	`transports` text NOT NULL,
	`backed_up` integer NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	FOREIGN KEY (`member_id`) REFERENCES `members`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `member_passkeys_credential_id_unique` ON `member_passkeys` (`credential_id`);--> statement-breakpoint
CREATE INDEX `member_passkeys_member` ON `member_passkeys` (`member_id`,`id`);--> statement-breakpoint
CREATE TABLE `passkey_challenges` (
	`challenge` text PRIMARY KEY NOT NULL,
	`purpose` text NOT NULL,
	`member_id` text,
	`expires_at` integer NOT NULL
);
